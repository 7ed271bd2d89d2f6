// An nsys export for the importers' tests: a SQLite database built from SQL statements in a scratch
// directory of its own (a fixture's .sql under tests/fixtures/nsys/, or statements a test writes).
#pragma once

#include "cko_test_support.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <string>

namespace cko::profile::nsys::testing {

class SqlExport {
public:
    // Statements given as text.
    struct Sql {
        std::string text;
    };

    // The statements of `sql_file`, then `extra_sql`.
    explicit SqlExport(const std::filesystem::path& sql_file, const std::string& extra_sql = "")
        : SqlExport(Sql{cko::test::read_file(sql_file) + extra_sql}) {}

    // A statement SQLite refuses fails the test, naming SQLite's error.
    explicit SqlExport(const Sql& sql) {
        sqlite3* db = nullptr;
        sqlite3_open(path_.c_str(), &db);
        char* error = nullptr;
        if (sqlite3_exec(db, sql.text.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
            ADD_FAILURE() << error;
            sqlite3_free(error);
        }
        sqlite3_close(db);
    }

    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

private:
    cko::test::TempDir dir_{"cko-nsys"};
    std::filesystem::path path_ = dir_ / "export.sqlite";
};

}  // namespace cko::profile::nsys::testing
