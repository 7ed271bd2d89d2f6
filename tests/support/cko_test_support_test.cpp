// The test support checks itself: EXPECT_CKO_ERROR fails on every way a statement can miss the
// error asked for, and the scratch directory and file helpers leave nothing behind.
#include "cko_test_support.hpp"

#include <gtest/gtest-spi.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <cstdlib>
#include <stdexcept>

namespace cko::test {
namespace {
namespace fs = std::filesystem;

void refuse(ErrorCode code, const std::string& message) {
    throw Error(code, message, nlohmann::json{{"field", "cases.dir"}});
}

TEST(ExpectCkoError, PassesOnTheCodeAndSubstringsAskedForAndGivesTheError) {
    const CaughtError e =
        EXPECT_CKO_ERROR(refuse(ErrorCode::unsafe_path, "cases/../x leaves the root"),
                         ErrorCode::unsafe_path, "cases/../x", "the root");
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), ErrorCode::unsafe_path);
    EXPECT_EQ(e->details()["field"], "cases.dir");
    EXPECT_EQ((*e).what(), std::string("cases/../x leaves the root"));
}

TEST(ExpectCkoError, FailsWhenNothingIsThrown) {
    CaughtError e(Error(ErrorCode::io_error, "stale"));
    EXPECT_NONFATAL_FAILURE(e = EXPECT_CKO_ERROR((void)0, ErrorCode::not_found),
                            "(void)0 throws cko::Error not_found\n  Actual: it throws nothing");
    EXPECT_FALSE(e);
    // The stand-in error fails a caller's checks of the code.
    EXPECT_EQ(e->code(), ErrorCode::internal);
}

TEST(ExpectCkoError, FailsWhenAnotherExceptionTypeIsThrown) {
    CaughtError e;
    EXPECT_NONFATAL_FAILURE(
        e = EXPECT_CKO_ERROR(throw std::runtime_error("not ours"), ErrorCode::not_found),
        "it throws another exception: not ours");
    EXPECT_FALSE(e);
    EXPECT_NONFATAL_FAILURE((void)EXPECT_ANY_CKO_ERROR(throw 7),
                            "it throws something that is no std::exception");
}

TEST(ExpectCkoError, FailsOnAnotherCodeNamingItsMessageAndDetails) {
    CaughtError e;
    EXPECT_NONFATAL_FAILURE(
        e = EXPECT_CKO_ERROR(refuse(ErrorCode::symlink_refused, "a link"), ErrorCode::unsafe_path),
        "it throws cko::Error symlink_refused: a link\n  details: {\"field\":\"cases.dir\"}");
    // The error is still given, so that the caller's further checks run as they did.
    ASSERT_TRUE(e);
    EXPECT_EQ(e->code(), ErrorCode::symlink_refused);
}

TEST(ExpectCkoError, FailsWhenASubstringIsMissing) {
    EXPECT_NONFATAL_FAILURE(
        (void)EXPECT_CKO_ERROR(refuse(ErrorCode::unsafe_path, "leaves the root"),
                               ErrorCode::unsafe_path, "leaves", "cases.dir"),
        "its message lacks \"cases.dir\"");
}

TEST(ExpectCkoError, AnyCodeIsAcceptedOnlyWhereNoneIsAskedFor) {
    EXPECT_TRUE(EXPECT_ANY_CKO_ERROR(refuse(ErrorCode::tampered_record, "x")));
    EXPECT_NONFATAL_FAILURE((void)EXPECT_ANY_CKO_ERROR((void)0), "it throws nothing");
}

TEST(ErrorThrownBy, ReportsNothingAndLetsOtherExceptionsThrough) {
    EXPECT_FALSE(error_thrown_by([] {}));
    EXPECT_EQ(error_thrown_by([] {})->code(), ErrorCode::internal);
    EXPECT_EQ(error_thrown_by([] { refuse(ErrorCode::not_found, "gone"); })->code(),
              ErrorCode::not_found);
    EXPECT_THROW((void)error_thrown_by([] { throw std::runtime_error("x"); }), std::runtime_error);
}

TEST(TempDir, IsFreshAndGoesWithReadOnlyFilesInside) {
    fs::path kept;
    {
        const TempDir a("cko-support");
        const TempDir b("cko-support");
        EXPECT_NE(a.path(), b.path());
        EXPECT_TRUE(fs::is_empty(a.path()));
        write_file(a / "sub" / "deeper" / "f.txt", "bytes");
        ::chmod((a / "sub" / "deeper" / "f.txt").c_str(), 0444);
        ::chmod((a / "sub" / "deeper").c_str(), 0555);
        kept = a.path();
    }
    EXPECT_FALSE(fs::exists(kept));
}

TEST(Files, AreWrittenAndReadWholeAndABitFlips) {
    const TempDir d;
    const std::string bytes("a\0b\r\n", 5);
    EXPECT_EQ(write_file(d / "x" / "f", bytes), d / "x" / "f");
    EXPECT_EQ(read_file(d / "x" / "f"), bytes);
    write_file(d / "x" / "f", "c");  // replaced, not appended
    EXPECT_EQ(read_file(d / "x" / "f"), "c");
    EXPECT_EQ(read_file(d / "missing"), "");
    ::chmod((d / "x" / "f").c_str(), 0444);
    flip_bit(d / "x" / "f", 0);
    EXPECT_EQ(read_file(d / "x" / "f"), "b");
}

TEST(Files, AStandInToolRuns) {
    const TempDir d;
    const fs::path tool = write_executable(d / "bin" / "tool", "#!/bin/sh\nexit 3\n");
    EXPECT_EQ(fs::status(tool).permissions() & fs::perms::all,
              fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                  fs::perms::others_read | fs::perms::others_exec);
    EXPECT_EQ(WEXITSTATUS(std::system(tool.c_str())), 3);
}

class ScratchFixture : public ScratchTest {};

TEST_F(ScratchFixture, GivesEachTestADirectoryAndTheFileMembers) {
    EXPECT_TRUE(fs::is_directory(dir_));
    put(dir_ / "a" / "b.txt", "text");
    EXPECT_EQ(slurp(dir_ / "a" / "b.txt"), "text");
    flip_byte(dir_ / "a" / "b.txt", 3);
    EXPECT_EQ(slurp(dir_ / "a" / "b.txt"), "texu");
}

}  // namespace
}  // namespace cko::test
