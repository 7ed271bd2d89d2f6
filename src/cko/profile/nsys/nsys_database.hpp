// Read-only access to an Nsight Systems SQLite export: schema version, tables, typed columns,
// queries.
#pragma once

#include "cko/profile/utf8_repair.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace cko::profile::nsys {

// Export schema versions cko has a fixture for (see docs/profile-traces.md): the real export
// tests/fixtures/nsys/vec.sqlite (3.20.3), tests/fixtures/nsys/schema_3_24_14.sql and the
// databases the tests build (3.25.0). Other 3.x versions are read too when every table and
// column cko needs is present with its type: compatibility is probed, not pinned.
[[nodiscard]] const std::vector<std::string>& schema_versions_with_fixtures();

// One prepared statement; step() returns false when done. text() is always valid UTF-8: invalid
// bytes (Latin-1 names) become U+FFFD and are counted in `repairs` when given.
class Statement {
public:
    Statement(sqlite3* db, std::string_view sql, Utf8Repairs* repairs = nullptr);
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    bool step();
    void bind_int64(int index, std::int64_t value);
    void bind_text(int index, std::string_view value);
    void reset();
    [[nodiscard]] bool is_null(int column) const;
    [[nodiscard]] std::int64_t int64(int column) const;
    [[nodiscard]] std::string text(int column) const;

private:
    sqlite3* db_;
    sqlite3_stmt* stmt_ = nullptr;
    std::string sql_;
    Utf8Repairs* repairs_;
};

// The storage class a column must have, checked against its declared type by SQLite's affinity
// rules (INT → integer; CHAR, CLOB, TEXT → text).
enum class ColumnType { integer, text };

class NsysDatabase {
public:
    // Opens read-only and immutable (the user's export is never written or locked), checks that
    // it is an SQLite database whose metadata table (META_DATA_EXPORT, or EXPORT_META_DATA as
    // Nsight Systems 2023.2 and the 2.x exports name it) holds a 3.x EXPORT_SCHEMA_VERSION.
    // Throws not_found/io_error, empty_input, unsupported_format (not SQLite; another major
    // version than 3, naming it and the table), missing_field (no metadata table or no single
    // EXPORT_SCHEMA_VERSION row).
    explicit NsysDatabase(const std::filesystem::path& path);
    ~NsysDatabase();
    NsysDatabase(const NsysDatabase&) = delete;
    NsysDatabase& operator=(const NsysDatabase&) = delete;

    [[nodiscard]] const std::string& schema_version() const { return schema_version_; }
    // The metadata table's value for a name; empty when absent.
    [[nodiscard]] std::string metadata(std::string_view name) const;
    // "META_DATA_EXPORT", or "EXPORT_META_DATA" in exports that name it so.
    [[nodiscard]] const std::string& metadata_table() const { return metadata_table_; }
    [[nodiscard]] bool has_table(std::string_view table) const;
    [[nodiscard]] std::set<std::string> columns(std::string_view table) const;
    // Fails closed: missing_field naming the table and the absent columns; unsupported_format
    // naming a column whose declared type does not hold the values cko reads from it. The type
    // expected is text for name/value/label/text columns, integer for every other.
    void require_columns(std::string_view table, const std::vector<std::string>& required) const;
    [[nodiscard]] static ColumnType expected_type(std::string_view column) noexcept;
    [[nodiscard]] bool has_column(std::string_view table, std::string_view column) const;

    [[nodiscard]] Statement prepare(std::string_view sql) const {
        return Statement(db_, sql, &repairs_);
    }
    // Strings read so far that held invalid UTF-8 (repaired to U+FFFD).
    [[nodiscard]] const Utf8Repairs& repairs() const noexcept { return repairs_; }
    // StringIds.value for an id; nullopt when the id is dangling.
    [[nodiscard]] std::optional<std::string> string_id(std::int64_t id) const;
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }
    // Tables of GPU work cko does not place on a timeline, with their row counts: every
    // CUPTI_ACTIVITY_KIND_* table whose kind names a kernel, copy, memset or graph
    // (CUPTI_ACTIVITY_KIND_GRAPH_TRACE: `nsys --cuda-graph-trace=graph` records a graph's run as
    // one row and no kernel rows) other than the three cko reads (KERNEL, MEMCPY, MEMSET). Empty
    // tables are left out. Counted so that an export whose GPU work lives only there is said, not
    // read as an idle GPU.
    [[nodiscard]] std::vector<std::pair<std::string, std::int64_t>> unmodeled_gpu_rows() const;

private:
    std::filesystem::path path_;
    sqlite3* db_ = nullptr;
    std::set<std::string> tables_;
    std::string schema_version_;
    std::string metadata_table_ = "META_DATA_EXPORT";
    mutable Utf8Repairs repairs_;
    mutable std::unique_ptr<Statement> string_lookup_;
};

}  // namespace cko::profile::nsys
