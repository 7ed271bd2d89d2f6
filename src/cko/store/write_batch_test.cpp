// The group commit ([21]): a step's files are durable before the one ledger append that cites them.
#include "cko/store/write_batch.hpp"

#include "cko/store/fsck.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"
#include "cko_test_support.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <utility>
#include <vector>

namespace cko::store {
namespace {
namespace fs = std::filesystem;

// What was synced since observing began, in order: an inode (fsync) or, for a syncfs, the device.
struct Synced {
    dev_t dev = 0;
    ino_t ino = 0;
    bool whole_filesystem = false;
    bool operator==(const Synced&) const = default;
};

std::vector<Synced>& synced() {
    static std::vector<Synced> seen;
    return seen;
}

void record_sync(int fd, bool whole_filesystem) {
    struct stat st {};
    if (::fstat(fd, &st) == 0) {
        synced().push_back(Synced{st.st_dev, whole_filesystem ? 0 : st.st_ino, whole_filesystem});
    }
}

Synced inode_of(const fs::path& p) {
    struct stat st {};
    EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
    return {st.st_dev, st.st_ino, false};
}

class WriteBatchTest : public test::ScratchTest {
protected:
    void SetUp() override { store_ = std::make_unique<Store>(Store::create(dir_ / "art")); }
    void TearDown() override {
        observe_syncs(nullptr);
        override_syncfs_for_tests(std::nullopt);
    }
    // A session request's files: its directories made, its request and process.json written by
    // the batch, its captures and `outputs` files written in place; committed while syncs are
    // observed. Returns the syncs the commit made.
    std::uint64_t commit_a_call(int outputs) {
        fs::create_directories(store_->root() / "invocations/inv-a/driver");  // the invocation's
        WriteBatch batch(*store_);
        batch.make_directories(call_ + "/out");
        (void)batch.write_file(call_ + "/request.json", "{\"mode\":\"paired\"}", "req");
        (void)batch.write_record(call_ + "/process.json",
                                 Json{{"format_version", "cko/process-v1"}, {"id", "p"}});
        put(store_->root() / call_ / "stdout.txt", "");
        put(store_->root() / call_ / "stderr.txt", "warming up\n");
        batch.add(call_ + "/stdout.txt");
        batch.add(call_ + "/stderr.txt");
        for (int i = 0; i < outputs; ++i) {
            const std::string name = i == 0 ? "result.json" : fmt::format("o{}.bin", i);
            put(store_->root() / call_ / "out" / name, "{}");
            batch.add(call_ + "/out/" + name);
        }
        observe_syncs(&record_sync);
        synced().clear();
        const std::uint64_t before = durable_syncs();
        batch.commit();
        observe_syncs(nullptr);
        EXPECT_TRUE(batch.empty());
        return durable_syncs() - before;
    }
    [[nodiscard]] std::vector<std::string> ledger_lines() const {
        std::vector<std::string> lines;
        std::istringstream in(slurp(store_->root() / kLedger));
        for (std::string line; std::getline(in, line);) {
            lines.push_back(line);
        }
        return lines;
    }
    [[nodiscard]] bool noted(const FsckReport& r, const std::string& kind,
                             const std::string& path) const {
        return std::any_of(r.findings.begin(), r.findings.end(),
                           [&](const FsckFinding& f) { return f.kind == kind && f.path == path; });
    }
    std::unique_ptr<Store> store_;
    const std::string call_ = "invocations/inv-a/driver/0001";
};

// Where one syncfs makes the store's file system durable (ext4, XFS, btrfs on Linux 5.8 or later),
// a step of any number of files costs two syncs: the file system, then the ledger after its one
// append. One by one (Store::write_file, ledger_files) a session request's files made three ledger
// appends and fsynced its request and process.json with their directory each time (7 fsyncs, ~13
// with its events), and its captures and outputs were ledgered without ever being fsynced.
TEST_F(WriteBatchTest, ManyFilesCostOneSyncOfTheFileSystemAndOneOfTheLedger) {
    override_syncfs_for_tests(true);
    const std::size_t lines_before = ledger_lines().size();
    EXPECT_EQ(commit_a_call(1), 2U);
    ASSERT_EQ(synced().size(), 2U);
    EXPECT_TRUE(synced().front().whole_filesystem);
    EXPECT_EQ(synced().front().dev, inode_of(store_->root()).dev);
    EXPECT_EQ(synced().back(), inode_of(store_->root() / kLedger));
    // One append of five lines, in the order given; the request's digest is of the bytes written.
    const auto lines = ledger_lines();
    ASSERT_EQ(lines.size(), lines_before + 5);
    EXPECT_NE(lines[lines_before].find(call_ + "/request.json"), std::string::npos);
    EXPECT_NE(lines[lines_before].find(sha256_hex("{\"mode\":\"paired\"}")), std::string::npos);
    EXPECT_NE(lines.back().find(call_ + "/out/result.json"), std::string::npos);
    EXPECT_FALSE(fsck_store(*store_).damaged());
}

TEST_F(WriteBatchTest, AHundredOutputsStillCostTwoSyncs) {
    override_syncfs_for_tests(true);
    EXPECT_EQ(commit_a_call(100), 2U);
    EXPECT_TRUE(store_->is_ledgered(call_ + "/out/o99.bin"));
}

// Elsewhere each file and each directory that gained an entry is fsynced once (their writeback
// started together), all before the ledger's one fsync: files + directories + 1.
TEST_F(WriteBatchTest, OneByOneEveryFileIsFsyncedBeforeTheOneLedgerAppendThatCitesIt) {
    override_syncfs_for_tests(false);
    // 5 files, 3 directories (driver/ for 0001's entry, 0001/ and out/), the ledger.
    EXPECT_EQ(commit_a_call(1), 5U + 3U + 1U);
    ASSERT_EQ(synced().size(), 9U);
    EXPECT_EQ(synced().back(), inode_of(store_->root() / kLedger));  // last, and only once
    EXPECT_EQ(std::count(synced().begin(), synced().end(), synced().back()), 1);
    for (const char* name : {"request.json", "process.json", "stdout.txt", "stderr.txt",
                             "out/result.json", "out", ""}) {
        EXPECT_EQ(std::count(synced().begin(), synced().end() - 1,
                             inode_of(store_->root() / call_ / name)),
                  1)
            << name;
    }
    EXPECT_EQ(std::count(synced().begin(), synced().end(),
                         inode_of(store_->root() / "invocations/inv-a/driver")),
              1);
    EXPECT_FALSE(fsck_store(*store_).damaged());
}

// Until its commit a file is whole and read-only but unledgered (what a crash leaves: a note for
// fsck, never damage); after it, ledgered.
TEST_F(WriteBatchTest, BeforeItsCommitAFileIsWholeAndUnledgered) {
    WriteBatch batch(*store_);
    (void)batch.write_file(call_ + "/request.json", "{}", "req");
    EXPECT_EQ(slurp(store_->root() / call_ / "request.json"), "{}");
    EXPECT_EQ(fs::status(store_->root() / call_ / "request.json").permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    EXPECT_FALSE(store_->is_ledgered(call_ + "/request.json"));
    const FsckReport crashed_here = fsck_store(*store_);
    EXPECT_FALSE(crashed_here.damaged());
    EXPECT_TRUE(noted(crashed_here, "unledgered", call_ + "/request.json"));
    batch.commit();
    EXPECT_TRUE(store_->is_ledgered(call_ + "/request.json"));
    EXPECT_FALSE(noted(fsck_store(*store_), "unledgered", call_ + "/request.json"));
}

// The ledger records what cko wrote: a driver that rewrites the request it was handed before the
// call's commit is reported (fsck `altered`) and the file is refused on read.
TEST_F(WriteBatchTest, TheLedgerKeepsTheDigestOfTheBytesWrittenNotOfWhatIsThereAtCommit) {
    WriteBatch batch(*store_);
    const RecordRef ref = batch.write_file(call_ + "/request.json", "{\"n\":1}", "req");
    const fs::path file = store_->root() / call_ / "request.json";
    ::chmod(file.c_str(), 0644);
    put(file, "{\"n\":2}");
    batch.commit();
    EXPECT_EQ(ref.sha256, sha256_hex("{\"n\":1}"));
    EXPECT_TRUE(noted(fsck_store(*store_), "altered", call_ + "/request.json"));
    EXPECT_CKO_ERROR((void)store_->read_record(call_ + "/request.json"),
                     ErrorCode::tampered_record);
}

// A file that cannot be ledgered (here a link) throws after the ones before it are ledgered; the
// batch is empty afterwards, so a later commit does not meet it again.
TEST_F(WriteBatchTest, ARefusedFileThrowsAfterTheOnesBeforeItAreLedgered) {
    WriteBatch batch(*store_);
    batch.make_directories(call_ + "/out");
    put(store_->root() / call_ / "out/a.txt", "a");
    put(dir_ / "outside.txt", "secret");
    fs::create_symlink(dir_ / "outside.txt", store_->root() / call_ / "out/b.txt");
    put(store_->root() / call_ / "out/c.txt", "c");
    for (const char* name : {"a.txt", "b.txt", "c.txt"}) {
        batch.add(call_ + "/out/" + name);
    }
    EXPECT_CKO_ERROR(batch.commit(), ErrorCode::symlink_refused);
    EXPECT_TRUE(batch.empty());
    EXPECT_TRUE(store_->is_ledgered(call_ + "/out/a.txt"));
    EXPECT_FALSE(store_->is_ledgered(call_ + "/out/b.txt"));
    EXPECT_FALSE(store_->is_ledgered(call_ + "/out/c.txt"));
    EXPECT_EQ(slurp(dir_ / "outside.txt"), "secret");
}

// Only a call's own files are written outside the store's lock (a concurrent call's guard knows
// them); a record elsewhere goes through Store::write_file, and a second write of a path is
// refused.
TEST_F(WriteBatchTest, OnlyACallsOwnFilesAreWrittenInABatchAndEachOnce) {
    WriteBatch batch(*store_);
    EXPECT_CKO_ERROR((void)batch.write_file("experiments/exp-1.json", "{}", "exp-1"),
                     ErrorCode::internal);
    EXPECT_FALSE(fs::exists(store_->root() / "experiments/exp-1.json"));
    (void)batch.write_file(call_ + "/request.json", "{}", "req");
    EXPECT_THROW((void)batch.write_file(call_ + "/request.json", "{}", "req"), Error);
    batch.commit();
    EXPECT_TRUE(store_->is_ledgered(call_ + "/request.json"));
}

}  // namespace
}  // namespace cko::store
