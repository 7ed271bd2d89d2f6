// Which subject ran when a driver died: the SDKs' file in the call's output directory first (exact
// at every change of subject, with nothing on stderr), else the last stderr marker of a driver
// without it.
#include "cko/driver/running_subject.hpp"

#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace cko::driver {
namespace {

namespace fs = std::filesystem;

// A call's directory with its output directory in it.
struct CallDir {
    test::TempDir scratch{"cko-running-subject"};
    fs::path dir = scratch.path();
    CallDir() { fs::create_directories(dir / "out"); }
    void note(const std::string& text) const {
        test::write_file(dir / "out" / "cko-running-subject.txt", text);
    }
};

TEST(RunningSubject, TheSdkFileNamesWhoRanWhateverStderrSays) {
    const CallDir call;
    call.note("cko: subject reference case b\n");
    EXPECT_EQ(running_subject(call.dir, ""), "reference");
    // A stale or misleading stderr line does not override the file.
    EXPECT_EQ(running_subject(call.dir, "cko: subject candidate case b\nboom"), "reference");
    call.note("cko: subject candidate case b\n");
    EXPECT_EQ(running_subject(call.dir, "cko: subject reference case b"), "candidate");
}

TEST(RunningSubject, WithoutTheFileTheLastStderrMarkerSays) {
    const CallDir call;
    EXPECT_EQ(running_subject(call.dir,
                              "cko: subject reference case a\ncko: subject candidate "
                              "case a\nSegmentation fault"),
              "candidate");
    EXPECT_EQ(running_subject(call.dir,
                              "(3 subject marker lines left out)\ncko: subject "
                              "reference case a\nframe 7"),
              "reference");
    EXPECT_EQ(running_subject(call.dir, "nothing said"), "");
    EXPECT_EQ(running_subject("", "cko: subject candidate case a"), "candidate");
    // An empty or unreadable file (a request that failed before any subject ran) falls back too.
    call.note("");
    EXPECT_EQ(running_subject(call.dir, "cko: subject candidate case a"), "candidate");
    call.note("garbage");
    EXPECT_EQ(running_subject(call.dir, "cko: subject reference case a"), "reference");
}

TEST(RunningSubject, OnlyTheTwoRolesAndNeverThroughALink) {
    const CallDir call;
    call.note("cko: subject someone case a\n");
    EXPECT_EQ(running_subject(call.dir, ""), "");
    fs::remove(call.dir / "out" / "cko-running-subject.txt");
    test::write_file(call.dir / "elsewhere.txt", "cko: subject candidate case a\n");
    fs::create_symlink(call.dir / "elsewhere.txt", call.dir / "out" / "cko-running-subject.txt");
    EXPECT_EQ(running_subject(call.dir, ""), "");
    fs::remove(call.dir / "out" / "cko-running-subject.txt");
    ASSERT_EQ(::mkfifo((call.dir / "out" / "cko-running-subject.txt").c_str(), 0600), 0);
    EXPECT_EQ(running_subject(call.dir, "cko: subject reference case a"), "reference");
}

TEST(RunningSubject, RoleOfASubjectLine) {
    EXPECT_EQ(role_of_subject_line("cko: subject candidate case a\n"), "candidate");
    EXPECT_EQ(role_of_subject_line("cko: subject reference"), "reference");
    EXPECT_EQ(role_of_subject_line("cko: subject referenced case a"), "");
    EXPECT_EQ(role_of_subject_line("subject candidate case a"), "");
}

}  // namespace
}  // namespace cko::driver
