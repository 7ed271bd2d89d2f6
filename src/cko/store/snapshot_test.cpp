// Snapshots: content-addressed, symlinks refused, ignore list recorded, read-only materialization.
#include "cko/store/snapshot.hpp"

#include "cko/util/error.hpp"
#include "cko/util/sha256.hpp"
#include "cko_test_support.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <algorithm>
#include <csignal>
#include <fstream>
#include <optional>

namespace cko::store {
namespace {
namespace fs = std::filesystem;
using SnapshotTest = test::ScratchTest;

TEST_F(SnapshotTest, ManifestListsPathModeSizeSha256AndSkipsIgnoredNames) {
    put(dir_ / "src" / "softmax.cu", "__global__ void k() {}\n");
    put(dir_ / "src" / "include" / "util.h", "#pragma once\n");
    put(dir_ / "src" / "__pycache__" / "x.pyc", "junk");
    put(dir_ / "src" / ".git" / "HEAD", "ref");
    ::chmod((dir_ / "src" / "softmax.cu").c_str(), 0755);
    const Store s = Store::create(dir_ / "art");
    const Snapshot snap = take_snapshot(s, dir_ / "src");
    ASSERT_EQ(snap.entries.size(), 2u);
    EXPECT_EQ(snap.entries[0].path, "include/util.h");
    EXPECT_EQ(snap.entries[1].path, "softmax.cu");
    EXPECT_EQ(snap.entries[1].mode, 0755u);
    EXPECT_EQ(snap.entries[1].size, 23u);
    EXPECT_EQ(snap.entries[1].sha256, sha256_hex("__global__ void k() {}\n"));
    const std::string manifest = slurp(s.root() / snapshot_dir(snap.digest) / "manifest.json");
    EXPECT_EQ(sha256_hex(manifest), snap.digest);
    EXPECT_NE(manifest.find("\"ignored\":[\".git\",\"__pycache__\"]"), std::string::npos)
        << manifest;
    EXPECT_EQ(manifest.find("mtime"), std::string::npos);
}

TEST_F(SnapshotTest, SameContentSameDigestStoredOnceDifferentContentDiffers) {
    put(dir_ / "a" / "f.txt", "one");
    put(dir_ / "b" / "f.txt", "one");
    put(dir_ / "c" / "f.txt", "two");
    const Store s = Store::create(dir_ / "art");
    const Snapshot a = take_snapshot(s, dir_ / "a");
    const Snapshot b = take_snapshot(s, dir_ / "b");
    const Snapshot c = take_snapshot(s, dir_ / "c");
    EXPECT_EQ(a.digest, b.digest);
    EXPECT_NE(a.digest, c.digest);
    int objects = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(s.root() / "objects" / "sha256")) {
        ++objects;
    }
    EXPECT_EQ(objects, 2);
    // The listing names each stored snapshot once, and no staging leftover.
    fs::create_directories(s.root() / "objects" / "sha256" / ".staging-x");
    std::vector<std::string> listed = list_snapshots(s);
    std::sort(listed.begin(), listed.end());
    std::vector<std::string> stored{a.digest, c.digest};
    std::sort(stored.begin(), stored.end());
    EXPECT_EQ(listed, stored);
}

TEST_F(SnapshotTest, SymlinkInsideTheTreeIsRefusedAndNothingIsStored) {
    put(dir_ / "src" / "real.cu", "x");
    fs::create_symlink(dir_ / "src" / "real.cu", dir_ / "src" / "link.cu");
    const Store s = Store::create(dir_ / "art");
    EXPECT_CKO_ERROR((void)take_snapshot(s, dir_ / "src"), ErrorCode::symlink_refused, "link.cu");
    EXPECT_TRUE(fs::is_empty(s.root() / "objects" / "sha256"));
}

TEST_F(SnapshotTest, SingleFileSnapshot) {
    put(dir_ / "kernel.cu", "body");
    const Store s = Store::create(dir_ / "art");
    const Snapshot snap = take_snapshot(s, dir_ / "kernel.cu");
    EXPECT_EQ(snap.kind, "file");
    materialize_snapshot(s, snap, dir_ / "out" / "kernel.cu");
    EXPECT_EQ(slurp(dir_ / "out" / "kernel.cu"), "body");
}

TEST_F(SnapshotTest, MaterializedTreeIsAReadOnlyCopyAndLoadRoundTrips) {
    put(dir_ / "src" / "sub" / "k.cu", "kernel");
    const Store s = Store::create(dir_ / "art");
    const Snapshot snap = take_snapshot(s, dir_ / "src");
    const Snapshot loaded = load_snapshot(s, snap.digest);
    ASSERT_EQ(loaded.entries.size(), 1u);
    materialize_snapshot(s, loaded, dir_ / "work");
    EXPECT_EQ(slurp(dir_ / "work" / "sub" / "k.cu"), "kernel");
    struct stat st {};
    ASSERT_EQ(::stat((dir_ / "work" / "sub" / "k.cu").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0222, 0u);
    // A copy, not the store's inode: changing it cannot change the evidence.
    struct stat stored {};
    ASSERT_EQ(
        ::stat((s.root() / snapshot_dir(snap.digest) / "files" / "sub" / "k.cu").c_str(), &stored),
        0);
    EXPECT_NE(st.st_ino, stored.st_ino);
    EXPECT_THROW(materialize_snapshot(s, loaded, dir_ / "work"), Error);
}

// Issue 11 item 8: a replaced original was measured as "the original". Materializing re-hashes.
TEST_F(SnapshotTest, MaterializingAnAlteredSnapshotIsRefusedAndLeavesNothing) {
    put(dir_ / "src" / "sub" / "k.cu", "kernel");
    const Store s = Store::create(dir_ / "art");
    const Snapshot snap = take_snapshot(s, dir_ / "src");
    const fs::path stored = s.root() / snapshot_dir(snap.digest) / "files" / "sub" / "k.cu";
    ::chmod(stored.parent_path().c_str(), 0755);
    ::chmod(stored.c_str(), 0644);
    std::ofstream(stored, std::ios::trunc) << "kernal";  // same size, other bytes
    if (const auto e =
            EXPECT_CKO_ERROR(materialize_snapshot(s, load_snapshot(s, snap.digest), dir_ / "work"),
                             ErrorCode::invalid_record)) {
        EXPECT_EQ(e->details()["path"], "sub/k.cu");
    }
    EXPECT_FALSE(fs::exists(dir_ / "work"));
}

// Issue 18: a disk that fills while a subject is copied into an invocation's workspace gave
// error[internal] (a std::filesystem exception no operation catches) and a `lost` invocation.
// RLIMIT_FSIZE stands in for the full disk: the copy's write fails the same way.
TEST_F(SnapshotTest, ACopyCutShortByAFullDiskIsAnIoErrorAndLeavesNothing) {
    put(dir_ / "src" / "k.cu", std::string(4096, 'k'));
    const Store s = Store::create(dir_ / "art");
    const Snapshot snap = take_snapshot(s, dir_ / "src");
    struct rlimit before {};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
    const auto old_handler = ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit tiny = before;
    tiny.rlim_cur = 100;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &tiny), 0);
    std::optional<ErrorCode> code;
    std::string message;
    try {
        materialize_snapshot(s, snap, dir_ / "work");
    } catch (const Error& e) {
        code = e.code();
        message = e.what();
    } catch (const std::exception& e) {
        message = e.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &before);
    ::signal(SIGXFSZ, old_handler);
    EXPECT_EQ(code, std::optional<ErrorCode>(ErrorCode::io_error)) << message;
    EXPECT_NE(message.find("k.cu"), std::string::npos) << message;
    EXPECT_FALSE(fs::exists(dir_ / "work"));
}

}  // namespace
}  // namespace cko::store

namespace cko::store {
namespace {

TEST_F(SnapshotTest, DigestWithoutStoringMatchesTheSnapshotAndSeesEdits) {
    put(dir_ / "drv" / "driver.py", "print(1)\n");
    put(dir_ / "drv" / "lib" / "util.py", "x = 1\n");
    const Store s = Store::create(dir_ / "art");
    const Snapshot snap = take_snapshot(s, dir_ / "drv");
    EXPECT_EQ(snapshot_digest_of(dir_ / "drv"), snap.digest);
    put(dir_ / "drv" / "lib" / "util.py", "x = 2\n");
    EXPECT_NE(snapshot_digest_of(dir_ / "drv"), snap.digest);
}

}  // namespace
}  // namespace cko::store

namespace cko::store {
namespace {

TEST_F(SnapshotTest, ChangedEntriesNamesEveryFileAndIgnoresSkippedNames) {
    put(dir_ / "drv" / "driver.py", "print(1)\n");
    put(dir_ / "drv" / "lib" / "util.py", "x = 1\n");
    put(dir_ / "drv" / "gone.py", "\n");
    const Store s = Store::create(dir_ / "art");
    const Snapshot frozen = take_snapshot(s, dir_ / "drv");
    // Bytecode changes the digest (the manifest lists what it skipped) but no file of the snapshot.
    put(dir_ / "drv" / "__pycache__" / "driver.cpython-310.pyc", "bytecode");
    EXPECT_NE(snapshot_digest_of(dir_ / "drv"), frozen.digest);
    EXPECT_TRUE(changed_entries(frozen, snapshot_manifest_of(dir_ / "drv")).empty());

    put(dir_ / "drv" / "lib" / "util.py", "x = 2\n");
    put(dir_ / "drv" / "new.py", "\n");
    fs::remove(dir_ / "drv" / "gone.py");
    const auto changes = changed_entries(frozen, snapshot_manifest_of(dir_ / "drv"));
    ASSERT_EQ(changes.size(), 3U);
    EXPECT_EQ(changes[0].path, "gone.py");
    EXPECT_EQ(changes[0].kind, EntryChangeKind::vanished);
    EXPECT_EQ(changes[1].path, "lib/util.py");
    EXPECT_EQ(changes[1].kind, EntryChangeKind::changed);
    EXPECT_EQ(changes[2].path, "new.py");
    EXPECT_EQ(entry_change_name(changes[2].kind), "appeared");
}

}  // namespace
}  // namespace cko::store
