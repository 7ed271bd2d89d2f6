// Issue 11: the store never follows a link out, chains its ledger, survives torn tails, swaps with
// its record.
#include "cko/store/fsck.hpp"
#include "cko/store/store.hpp"

#include "cko/util/error.hpp"
#include "cko/util/sha256.hpp"
#include "cko_test_support.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <fstream>

namespace cko::store {
namespace {
namespace fs = std::filesystem;

class HardeningTest : public test::ScratchTest {
protected:
    void SetUp() override {
        ScratchTest::SetUp();
        store_ = std::make_unique<Store>(Store::create(dir_ / "art"));
    }
    void record(const std::string& rel, const std::string& id) const {
        store_->write_record(rel, Json{{"format_version", "cko/t-v1"}, {"id", id}});
    }
    [[nodiscard]] bool has_finding(const FsckReport& r, const std::string& kind,
                                   bool damage) const {
        for (const auto& f : r.findings) {
            if (f.kind == kind && f.damage == damage) {
                return true;
            }
        }
        return false;
    }
    std::unique_ptr<Store> store_;
};

// Item 2: a directory of the store replaced by a link to the outside: nothing is written or
// chmodded through it (a 0600 file outside became 0444 before).
TEST_F(HardeningTest, NeverWritesOrChmodsThroughALink) {
    const fs::path outside = dir_ / "outside";
    put(outside / "victim.txt", "precious");
    ::chmod((outside / "victim.txt").c_str(), 0600);
    fs::create_directory_symlink(outside, store_->root() / "invocations" / "inv-x");
    for (const auto& attempt :
         {+[](const Store& s) { (void)s.write_file("invocations/inv-x/new.txt", "x", "n"); },
          +[](const Store& s) { s.ledger_file("invocations/inv-x/victim.txt"); }}) {
        EXPECT_CKO_ERROR(attempt(*store_), ErrorCode::symlink_refused);
    }
    EXPECT_FALSE(fs::exists(outside / "new.txt"));
    EXPECT_EQ(fs::status(outside / "victim.txt").permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
    // A final-component link is refused too (O_NOFOLLOW), even where no directory is a link.
    fs::create_symlink(outside / "victim.txt", store_->root() / "experiments" / "l.json");
    EXPECT_THROW(store_->ledger_file("experiments/l.json"), Error);
    EXPECT_EQ(fs::status(outside / "victim.txt").permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write);
}

// The store words a link it meets (util's TreeRoot walk) by its path below the root, and says why.
TEST_F(HardeningTest, ALinkInsideTheStoreIsNamedBelowTheRoot) {
    const fs::path outside = dir_ / "elsewhere";
    fs::create_directories(outside);
    fs::create_directory_symlink(outside, store_->root() / "invocations" / "inv-y");
    if (const auto e =
            EXPECT_CKO_ERROR((void)store_->real_path_of("invocations/inv-y/request.json"),
                             ErrorCode::symlink_refused)) {
        EXPECT_STREQ(e->what(),
                     "invocations/inv-y inside the store is a symbolic link; cko never follows a "
                     "link in the store (something replaced a store directory or file with one)");
        EXPECT_EQ(e->details(), (Json{{"path", "invocations/inv-y"}}));
    }
    // What is not there yet resolves below the root; an unsafe path is refused by name.
    EXPECT_EQ(store_->real_path_of("experiments/new.json"),
              store_->root() / "experiments" / "new.json");
    EXPECT_THROW((void)store_->real_path_of("../outside.json"), Error);
}

// Item 8: each ledger line carries the hash of the previous one; rewriting a record together with
// its line breaks the chain.
TEST_F(HardeningTest, ARewrittenLedgerLineBreaksTheChain) {
    record("experiments/a.json", "a");
    record("experiments/b.json", "b");
    EXPECT_FALSE(fsck_store(*store_).damaged());
    const fs::path a = store_->root() / "experiments" / "a.json";
    ::chmod(a.c_str(), 0644);
    const std::string forged = R"({"format_version":"cko/t-v1","id":"forged"})";
    std::ofstream(a, std::ios::binary | std::ios::trunc) << forged;
    // The attacker fixes a's ledger line (digest and size), keeping its prev.
    const fs::path ledger = store_->root() / kLedger;
    std::string text = slurp(ledger);
    const std::size_t nl = text.find('\n');
    const Json first = Json::parse(text.substr(0, nl));
    text = ledger_line("experiments/a.json", sha256_hex(forged), forged.size(), first.at("prev")) +
           text.substr(nl);
    std::ofstream(ledger, std::ios::binary | std::ios::trunc) << text;
    const FsckReport r = fsck_store(*store_);
    EXPECT_TRUE(has_finding(r, "chain_broken", true)) << r.to_text();
}

// Item 6: a torn last ledger line (a crash or ENOSPC inside the write) is a note, and the next
// append cuts it off, so fsck never reports damage forever.
TEST_F(HardeningTest, ATornLedgerTailIsANoteAndIsRepaired) {
    record("experiments/a.json", "a");
    {
        std::ofstream(store_->root() / kLedger, std::ios::app | std::ios::binary)
            << R"({"path":"experi)";
    }
    FsckReport r = fsck_store(*store_);
    EXPECT_FALSE(r.damaged()) << r.to_text();
    EXPECT_TRUE(has_finding(r, "torn_tail", false)) << r.to_text();
    record("experiments/b.json", "b");
    r = fsck_store(*store_);
    EXPECT_FALSE(r.damaged()) << r.to_text();
    EXPECT_FALSE(has_finding(r, "torn_tail", false)) << r.to_text();
    EXPECT_EQ(r.files_checked, 2u);
}

// Item 10: a losing swap leaves no record behind; a retry with the same record reuses it.
TEST_F(HardeningTest, SwapWithRecordWritesTheRecordOnlyWhenItSwaps) {
    const auto pointer = [](const RecordRef& ref) {
        return Json{{"format_version", "cko/p-v1"},
                    {"id", "p"},
                    {"digest", "d1"},
                    {"experiment_id", "exp-1"},
                    {"selection", ref.to_json()}};
    };
    // A selection record as the champion rules write it (fsck reads it through SelectionRecord).
    const Json sel{
        {"format_version", "cko/selection-v1"},
        {"id", "sel-1"},
        {"digest", "d1"},
        {"experiment_id", "exp-1"},
        {"confirm", {{"id", "inv-1"}, {"sha256", "s"}}},
        {"previous", {{"champion", "original"}, {"digest", "d0"}, {"current_sha256", ""}}},
        {"selected_unix_s", 1}};
    EXPECT_CKO_ERROR(store_->swap_with_record("champion/current.json", "not-the-current-digest",
                                              "champion/selections/sel-1.json", sel, pointer),
                     ErrorCode::cas_conflict);
    EXPECT_FALSE(fs::exists(store_->root() / "champion/selections/sel-1.json"));
    // A record already there with the same bytes (a run killed between record and swap) is reused.
    store_->write_record("champion/selections/sel-1.json", sel);
    const RecordRef ref = store_->swap_with_record("champion/current.json", "",
                                                   "champion/selections/sel-1.json", sel, pointer);
    EXPECT_EQ(store_->read_verified(ref), sel);
    FsckReport r = fsck_store(*store_);
    EXPECT_FALSE(r.damaged()) << r.to_text();
    // Item 8: a hand-edited pointer (another digest) is no longer backed by its selection record.
    const fs::path current = store_->root() / "champion/current.json";
    Json edited = Json::parse(slurp(current));
    edited["digest"] = "d2";
    std::ofstream(current, std::ios::binary | std::ios::trunc) << edited.dump();
    r = fsck_store(*store_);
    EXPECT_TRUE(has_finding(r, "champion_unbacked", true)) << r.to_text();
}

// Item 8: evidence cited by digest is verified when read.
TEST_F(HardeningTest, ReadVerifiedRefusesAlteredBytes) {
    const RecordRef ref = store_->write_record("experiments/a.json",
                                               Json{{"format_version", "cko/t-v1"}, {"id", "a"}});
    flip_byte(store_->root() / "experiments/a.json", 5);
    EXPECT_CKO_ERROR((void)store_->read_verified(ref), ErrorCode::invalid_record);
}

// Item 1: a staged directory appears whole or not at all.
TEST_F(HardeningTest, StagedDirectoriesAppearWhole) {
    const fs::path staging = store_->stage_directory("invocations/inv-a");
    EXPECT_FALSE(fs::exists(store_->root() / "invocations/inv-a"));
    put(staging / "request.json", R"({"format_version":"cko/t-v1","id":"inv-a"})");
    FsckReport r = fsck_store(*store_);
    EXPECT_TRUE(has_finding(r, "stale_temp", false)) << r.to_text();  // a crash here: a note only
    store_->publish_directory(staging, "invocations/inv-a", {"request.json"});
    r = fsck_store(*store_);
    EXPECT_TRUE(r.findings.empty()) << r.to_text();
    EXPECT_FALSE(fs::exists(staging));
}

// Item 5: a named lock excludes a second holder and does not block store writes.
TEST_F(HardeningTest, NamedLocksAreExclusiveAndIndependentOfTheStoreLock) {
    const StoreLock held = store_->lock_named("confirm-exp-1");
    EXPECT_NO_THROW(record("experiments/a.json", "a"));
    EXPECT_CKO_ERROR(
        const StoreLock second = store_->lock_named("confirm-exp-1", std::chrono::milliseconds(50)),
        ErrorCode::store_locked);
    EXPECT_FALSE(fsck_store(*store_).damaged());
}

}  // namespace
}  // namespace cko::store
