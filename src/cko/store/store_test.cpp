// The artifact root: created whole or not at all, create-once records, the lock, the CAS pointer.
#include "cko/store/store.hpp"

#include "cko/util/error.hpp"
#include "cko/util/sha256.hpp"
#include "cko_test_support.hpp"

#include <atomic>
#include <thread>

namespace cko::store {
namespace {
namespace fs = std::filesystem;
using StoreTest = test::ScratchTest;

TEST_F(StoreTest, CreateBuildsTheLayoutAndOpenFindsIt) {
    const Store s = Store::create(dir_ / "art");
    for (const char* d : {"objects/sha256", "experiments", "invocations", "champion/selections"}) {
        EXPECT_TRUE(fs::is_directory(s.root() / d)) << d;
    }
    EXPECT_EQ(Store::open(dir_ / "art").root(), fs::canonical(dir_ / "art"));
    // No staging directory left next to it.
    int entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) {
        ++entries;
    }
    EXPECT_EQ(entries, 1);
}

TEST_F(StoreTest, CreateRefusesAnExistingPathEvenAnEmptyDirectory) {
    fs::create_directory(dir_ / "art");
    EXPECT_CKO_ERROR((void)Store::create(dir_ / "art"), ErrorCode::already_exists);
    EXPECT_TRUE(fs::is_empty(dir_ / "art"));
}

TEST_F(StoreTest, OpenRejectsADirectoryThatIsNotAStore) {
    fs::create_directory(dir_ / "plain");
    EXPECT_CKO_ERROR((void)Store::open(dir_ / "plain"), ErrorCode::not_a_store);
}

TEST_F(StoreTest, RecordsAreCanonicalCreateOnceAndLedgered) {
    const Store s = Store::create(dir_ / "art");
    const Json rec{{"format_version", "cko/test-v1"}, {"id", "exp-1"}, {"b", 1}, {"a", "x"}};
    const RecordRef ref = s.write_record("experiments/exp-1.json", rec);
    EXPECT_EQ(slurp(s.root() / "experiments/exp-1.json"),
              R"({"a":"x","b":1,"format_version":"cko/test-v1","id":"exp-1"})");
    EXPECT_EQ(ref.sha256, sha256_hex(slurp(s.root() / "experiments/exp-1.json")));
    EXPECT_EQ(s.read_record("experiments/exp-1.json"), rec);
    EXPECT_NE(slurp(s.root() / "ledger.jsonl").find(ref.sha256), std::string::npos);
    EXPECT_CKO_ERROR(s.write_record("experiments/exp-1.json", rec), ErrorCode::already_exists);
    EXPECT_THROW(s.write_record("../escape.json", rec), Error);
}

TEST_F(StoreTest, CompareAndSwapReplacesOnlyTheExpectedVersion) {
    const Store s = Store::create(dir_ / "art");
    const std::string v1 =
        s.compare_and_swap("champion/current.json", "", Json{{"champion", "original"}});
    const std::string v2 =
        s.compare_and_swap("champion/current.json", v1, Json{{"champion", "exp-1"}});
    EXPECT_NE(v1, v2);
    if (const auto e = EXPECT_CKO_ERROR(
            s.compare_and_swap("champion/current.json", v1, Json{{"champion", "exp-2"}}),
            ErrorCode::cas_conflict)) {
        EXPECT_EQ(e->details()["found"], v2);
    }
    EXPECT_EQ(s.read_record("champion/current.json")["champion"], "exp-1");
}

// A pointer read once gives the digest of the very bytes parsed: what a swap decided on it expects,
// and what makes a swap decided on an older read fail.
TEST_F(StoreTest, AHashedReadGivesTheDigestOfTheBytesParsed) {
    const Store s = Store::create(dir_ / "art");
    const std::string v1 =
        s.compare_and_swap("champion/current.json", "", Json{{"champion", "original"}});
    const HashedRecord read = s.read_record_hashed("champion/current.json");
    EXPECT_EQ(read.value["champion"], "original");
    EXPECT_EQ(read.sha256, v1);
    (void)s.compare_and_swap("champion/current.json", read.sha256, Json{{"champion", "exp-1"}});
    EXPECT_THROW(
        s.compare_and_swap("champion/current.json", read.sha256, Json{{"champion", "exp-2"}}),
        Error);
}

TEST_F(StoreTest, EveryRecordReadIsCountedByItsPath) {
    const Store s = Store::create(dir_ / "art");
    (void)s.write_record("experiments/count-a.json", Json{{"format_version", "x"}, {"id", "a"}});
    (void)s.write_record("experiments/count-b.json", Json{{"format_version", "x"}, {"id", "b"}});
    const std::uint64_t all = records_read();
    EXPECT_EQ(records_read("experiments/count-"), 0U);  // writing is not reading
    (void)s.read_record("experiments/count-a.json");
    (void)s.read_record_hashed("experiments/count-a.json");
    (void)s.read_record("experiments/count-b.json");
    EXPECT_EQ(records_read("experiments/count-a"), 2U);
    EXPECT_EQ(records_read("experiments/count-"), 3U);
    EXPECT_EQ(records_read(), all + 3);
}

TEST_F(StoreTest, TheLockIsExclusiveAndTimesOut) {
    const Store s = Store::create(dir_ / "art");
    std::atomic<bool> held{false};
    std::atomic<bool> release{false};
    std::thread holder([&] {
        const StoreLock lock = s.lock();
        held = true;
        while (!release) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
    });
    while (!held) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_CKO_ERROR(const StoreLock second = s.lock(std::chrono::milliseconds(100)),
                     ErrorCode::store_locked);
    release = true;
    holder.join();
    EXPECT_NO_THROW(const StoreLock again = s.lock(std::chrono::milliseconds(100)));
}

}  // namespace
}  // namespace cko::store
