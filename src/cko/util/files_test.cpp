// Atomic create-once writes survive a crash at any step; names, paths and symlinks are policed.
#include "cko/util/files.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <cstdlib>
#include <filesystem>

namespace cko {
namespace fs = std::filesystem;
namespace {

using FilesTest = test::ScratchTest;

TEST_F(FilesTest, CreateOnceWritesExactBytes) {
    const std::string data = "{\"a\":1}\n" + std::string(100000, 'z');
    write_file_create_once(dir_ / "r.json", data);
    EXPECT_EQ(slurp(dir_ / "r.json"), data);
}

TEST_F(FilesTest, RefusesToReplaceAndLeavesTheOriginal) {
    write_file_create_once(dir_ / "r.json", "first");
    EXPECT_CKO_ERROR(write_file_create_once(dir_ / "r.json", "second"), ErrorCode::already_exists);
    EXPECT_EQ(slurp(dir_ / "r.json"), "first");
    // No temp file left behind by the refused write.
    int entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) {
        ++entries;
    }
    EXPECT_EQ(entries, 1);
}

// A child process writes a record and dies (_exit, no cleanup, no unwinding) right after one step.
// Whatever the step, the record is either absent or complete: never partial.
TEST_F(FilesTest, CrashAtAnyStepLeavesNoPartialFile) {
    const std::string data(1 << 20, 'x');
    const AtomicWriteStep steps[] = {AtomicWriteStep::temp_created, AtomicWriteStep::temp_written,
                                     AtomicWriteStep::temp_synced, AtomicWriteStep::renamed,
                                     AtomicWriteStep::directory_synced};
    for (const AtomicWriteStep crash_at : steps) {
        const fs::path target =
            dir_ / ("rec-" + std::to_string(static_cast<int>(crash_at)) + ".json");
        const pid_t pid = ::fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            write_file_create_once(target, data, 0644, [&](AtomicWriteStep s) {
                if (s == crash_at) {
                    ::_exit(17);
                }
            });
            ::_exit(0);
        }
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        ASSERT_EQ(WEXITSTATUS(status), 17);
        if (crash_at < AtomicWriteStep::renamed) {
            EXPECT_FALSE(fs::exists(target))
                << "partial record visible after crash at step " << static_cast<int>(crash_at);
            // The next writer is not blocked by the stale temp file.
            write_file_create_once(target, data);
        }
        EXPECT_EQ(fs::file_size(target), data.size());
        EXPECT_EQ(slurp(target), data);
    }
}

TEST_F(FilesTest, ReadCappedRefusesLargeFiles) {
    write_file_create_once(dir_ / "big", std::string(5000, 'b'));
    EXPECT_EQ(read_file_capped(dir_ / "big", 5000).size(), 5000u);
    if (const auto e = EXPECT_CKO_ERROR((void)read_file_capped(dir_ / "big", 4999),
                                        ErrorCode::file_too_large)) {
        EXPECT_EQ(e->details()["size"], 5000);
    }
    EXPECT_CKO_ERROR((void)read_file_capped(dir_ / "missing", 10), ErrorCode::not_found);
}

// The end of a log: the last bytes, from a whole line on when the file is longer.
TEST_F(FilesTest, AFileTailStartsOnAWholeLine) {
    write_file_create_once(dir_ / "log", "first line\nsecond line\nthird\n");
    EXPECT_EQ(read_file_tail(dir_ / "log", 1000), "first line\nsecond line\nthird\n");
    // 14 bytes reach into "second line": its cut start is dropped.
    EXPECT_EQ(read_file_tail(dir_ / "log", 14), "third\n");
    EXPECT_EQ(read_file_tail(dir_ / "log", 19), "second line\nthird\n");
    // A window with no line break in it is kept whole.
    write_file_create_once(dir_ / "one-line", std::string(100, 'x'));
    EXPECT_EQ(read_file_tail(dir_ / "one-line", 10), std::string(10, 'x'));
    EXPECT_EQ(read_file_tail(dir_ / "missing", 10), "");
}

TEST_F(FilesTest, MappedFileHoldsTheBytesAndRefusesWhatReadCappedRefuses) {
    const std::string data = "\"ID\",\"Kernel Name\"\n" + std::string(70000, 'x');
    write_file_create_once(dir_ / "export.csv", data);
    const auto mapped = MappedFile::open(dir_ / "export.csv", data.size());
    EXPECT_EQ(mapped->bytes(), data);
    write_file_create_once(dir_ / "empty", "");
    EXPECT_TRUE(MappedFile::open(dir_ / "empty", 10)->bytes().empty());
    const auto code_of = [](const fs::path& path, std::uint64_t max_bytes) {
        return test::error_thrown_by([&] { (void)MappedFile::open(path, max_bytes); })->code();
    };
    EXPECT_EQ(code_of(dir_ / "export.csv", data.size() - 1), ErrorCode::file_too_large);
    EXPECT_EQ(code_of(dir_ / "missing", 10), ErrorCode::not_found);
    EXPECT_EQ(code_of(dir_, 10), ErrorCode::io_error);  // a directory is not a regular file
}

TEST_F(FilesTest, MakeTempDirHonoursTmpdirAndNamesTheFixWhenItCannot) {
    const char* saved = std::getenv("TMPDIR");
    const std::string old = saved != nullptr ? saved : "";
    ::setenv("TMPDIR", dir_.c_str(), 1);
    const fs::path made = make_temp_dir("cko-unit");
    EXPECT_EQ(made.parent_path(), dir_);
    EXPECT_EQ(made.filename().string().rfind("cko-unit-", 0), 0U) << made;
    EXPECT_EQ(fs::status(made).permissions() & fs::perms::all, fs::perms::owner_all);
    EXPECT_NE(make_temp_dir("cko-unit"), made);
    ::setenv("TMPDIR", "", 1);  // empty: /tmp, like unset
    EXPECT_EQ(temp_base(), fs::path("/tmp"));
    const fs::path missing = dir_ / "no-such-folder";
    ::setenv("TMPDIR", missing.c_str(), 1);
    if (const auto e = EXPECT_CKO_ERROR((void)make_temp_dir("cko-unit"), ErrorCode::io_error,
                                        missing.string(), "set TMPDIR")) {
        EXPECT_EQ(e->details()["dir"], missing.string());
    }
    if (saved != nullptr) {
        ::setenv("TMPDIR", old.c_str(), 1);
    } else {
        ::unsetenv("TMPDIR");
    }
}

TEST(SafeNames, AcceptsTheAllowedAlphabetOnly) {
    EXPECT_TRUE(is_safe_name("main"));
    EXPECT_TRUE(is_safe_name("long_rows-2.json"));
    EXPECT_TRUE(is_safe_name(std::string(128, 'a')));
    EXPECT_FALSE(is_safe_name(std::string(129, 'a')));
    EXPECT_FALSE(is_safe_name(""));
    EXPECT_FALSE(is_safe_name("."));
    EXPECT_FALSE(is_safe_name(".."));
    EXPECT_FALSE(is_safe_name("a/b"));
    EXPECT_FALSE(is_safe_name("a b"));
    EXPECT_FALSE(is_safe_name("caf\xc3\xa9"));
}

TEST(SafeNames, RelativePathsAreCheckedComponentByComponent) {
    EXPECT_TRUE(is_safe_relative_path("out/sub/result.json"));
    for (const char* bad : {"", "a//b", "../x", "a/..", "/abs", "x/\xff.bin", "a b"}) {
        EXPECT_FALSE(is_safe_relative_path(bad)) << bad;
    }
}

TEST(SafeJoin, RefusesTraversalAndAbsolutePaths) {
    EXPECT_EQ(safe_join("/root", "cases/main.json", "f"), fs::path("/root/cases/main.json"));
    for (const char* bad : {"../etc/passwd", "cases/../../x", "/etc/passwd", "", "a//b", "a/./b"}) {
        SCOPED_TRACE(bad);
        if (const auto e = EXPECT_CKO_ERROR((void)safe_join("/root", bad, "cases.dir"),
                                            ErrorCode::unsafe_path)) {
            EXPECT_EQ(e->details()["field"], "cases.dir");
        }
    }
}

// Issue 11 item 9: `original = "via/src"` with `via` a link out of the spec folder was accepted.
TEST_F(FilesTest, ResolveInsideRefusesLinksLeadingOut) {
    const fs::path spec = dir_ / "spec";
    const fs::path elsewhere = dir_ / "elsewhere";
    fs::create_directories(spec / "real" / "src");
    fs::create_directories(elsewhere / "src");
    fs::create_directory_symlink(elsewhere, spec / "via");
    fs::create_directory_symlink(spec / "real",
                                 spec / "inner");  // a link that stays inside is fine
    EXPECT_EQ(resolve_inside(spec, "real/src", "target.original"),
              fs::canonical(spec / "real" / "src"));
    EXPECT_EQ(resolve_inside(spec, "inner/src", "target.original"),
              fs::canonical(spec / "real" / "src"));
    EXPECT_EQ(resolve_inside(spec, "real/not-yet/x.cu", "f"),
              fs::canonical(spec / "real") / "not-yet" / "x.cu");
    for (const char* bad : {"via/src", "via", "via/missing/x"}) {
        SCOPED_TRACE(bad);
        if (const auto e = EXPECT_CKO_ERROR((void)resolve_inside(spec, bad, "target.original"),
                                            ErrorCode::unsafe_path)) {
            EXPECT_EQ(e->details()["field"], "target.original");
        }
    }
}

TEST_F(FilesTest, TreeRootRefusesSymlinksInside) {
    fs::create_directories(dir_ / "tree" / "sub");
    write_file_create_once(dir_ / "tree" / "sub" / "f.txt", "x");
    write_file_create_once(dir_ / "outside.txt", "secret");
    fs::create_symlink(dir_ / "outside.txt", dir_ / "tree" / "link.txt");
    fs::create_directory_symlink(dir_, dir_ / "tree" / "up");

    const TreeRoot root = TreeRoot::open(dir_ / "tree" / ".." / "tree");
    EXPECT_EQ(root.path(), fs::canonical(dir_ / "tree"));  // resolved once
    EXPECT_EQ(root.resolve("sub/f.txt", "f"), root.path() / "sub" / "f.txt");
    EXPECT_EQ(root.resolve("sub/new.txt", "f"), root.path() / "sub" / "new.txt");
    for (const char* bad : {"link.txt", "up/outside.txt"}) {
        SCOPED_TRACE(bad);
        EXPECT_CKO_ERROR((void)root.resolve(bad, "original"), ErrorCode::symlink_refused);
    }
    EXPECT_THROW((void)root.resolve("../outside.txt", "original"), Error);
}

// A tree may word its own refusal (the store does); it is given the link below the root.
TEST_F(FilesTest, ATreeWordsItsOwnLinkRefusal) {
    fs::create_directories(dir_ / "tree" / "sub");
    fs::create_directory_symlink(dir_, dir_ / "tree" / "sub" / "up");
    const TreeRoot root = TreeRoot::open(
        dir_ / "tree", [](std::string_view field, const fs::path& link, const fs::path& relative) {
            return Error(ErrorCode::symlink_refused,
                         std::string(field) + " " + relative.string() + " " + link.string());
        });
    if (const auto e =
            EXPECT_CKO_ERROR((void)root.resolve("sub/up/x", "f"), ErrorCode::symlink_refused)) {
        EXPECT_EQ(std::string(e->what()), "f sub/up " + (root.path() / "sub" / "up").string());
    }
}

}  // namespace
}  // namespace cko
