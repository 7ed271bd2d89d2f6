// What cko's unit tests share: the check that a statement throws a cko::Error, a scratch directory,
// and a file written or read whole. Depends on util and GoogleTest only, so every layer's tests
// may use it; a fixture that needs a layer above util lives beside that layer's tests.
#pragma once

#include "cko/util/error.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

// EXPECT_CKO_ERROR(statement, code, substrings...): `statement` throws a cko::Error with `code`
// whose message holds each substring. Anything else is a test failure (not fatal, as EXPECT_*)
// naming what happened: nothing thrown, another exception type, another code (with its message and
// details), a substring missing. It gives the error (a cko::test::CaughtError) for further checks:
//
//     if (const auto e = EXPECT_CKO_ERROR(s.lock(), ErrorCode::store_locked, "cko fsck")) {
//         EXPECT_EQ(e->details()["holder"], "inv-1");
//     }
//
// A statement with a comma outside parentheses goes in parentheses, as with EXPECT_THROW.
#define EXPECT_CKO_ERROR(statement, code, ...)                                                  \
    ::cko::test::expect_error([&] { statement; }, #statement,                                   \
                              ::std::optional<::cko::ErrorCode>(code), {__VA_ARGS__}, __FILE__, \
                              __LINE__)

// EXPECT_ANY_CKO_ERROR(statement): `statement` throws a cko::Error, whatever its code; gives it.
#define EXPECT_ANY_CKO_ERROR(statement)                                                     \
    ::cko::test::expect_error([&] { statement; }, #statement, ::std::nullopt, {}, __FILE__, \
                              __LINE__)

namespace cko::test {

// What a statement threw: a cko::Error, or none (a failure of the check that ran it is reported).
class CaughtError {
public:
    CaughtError() = default;
    explicit CaughtError(Error error) : error_(std::move(error)) {}

    // True when the statement threw a cko::Error, whatever its code.
    explicit operator bool() const noexcept { return error_.has_value(); }
    // The error; where none was thrown, an `internal` one saying so, so that a caller's checks of
    // its code fail too (a helper that returns "the error of X" returns *this).
    [[nodiscard]] const Error& operator*() const noexcept;
    [[nodiscard]] const Error* operator->() const noexcept { return &**this; }

private:
    std::optional<Error> error_;
};

// The cko::Error `statement` throws, reporting nothing: for a test that compares what two ways
// give, a thrown error or a result. Any other exception passes through.
[[nodiscard]] CaughtError error_thrown_by(const std::function<void()>& statement);

// The check behind EXPECT_CKO_ERROR and EXPECT_ANY_CKO_ERROR (no code: any code); the statement's
// text, the file and the line name it in a failure.
CaughtError expect_error(const std::function<void()>& statement, const char* statement_text,
                         std::optional<ErrorCode> code,
                         std::initializer_list<std::string_view> substrings, const char* file,
                         int line);

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it at the end of its scope,
// read-only files and directories too; links inside are removed, never followed.
class TempDir {
public:
    explicit TempDir(std::string_view prefix = "cko-test");
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
    [[nodiscard]] std::filesystem::path operator/(const std::filesystem::path& p) const {
        return path_ / p;
    }

private:
    std::filesystem::path path_;
};

// Writes `bytes` to `path`, replacing what is there, with the directories above it created;
// gives `path`.
std::filesystem::path write_file(const std::filesystem::path& path, std::string_view bytes);
// write_file, then made executable (0755): a stand-in for a tool, its text starting "#!/bin/sh".
std::filesystem::path write_executable(const std::filesystem::path& path, std::string_view text);
// Every byte of `path`; "" when it cannot be opened.
[[nodiscard]] std::string read_file(const std::filesystem::path& path);
// Flips the lowest bit of byte `offset` of `path`, made writable first (a record's bytes altered).
void flip_bit(const std::filesystem::path& path, std::size_t offset);

// A scratch directory per test (dir_), removed afterwards, with the file helpers as members.
class ScratchTest : public ::testing::Test {
protected:
    static void put(const std::filesystem::path& p, std::string_view text) {
        (void)write_file(p, text);
    }
    static std::string slurp(const std::filesystem::path& p) { return read_file(p); }
    static void flip_byte(const std::filesystem::path& p, std::size_t offset) {
        flip_bit(p, offset);
    }

    TempDir scratch_;
    std::filesystem::path dir_ = scratch_.path();
};

}  // namespace cko::test
