// Issue 18: every record read is checked against the digest the ledger recorded for it.
#include "cko/store/fsck.hpp"
#include "cko/store/store.hpp"

#include "cko/util/error.hpp"
#include "cko/util/sha256.hpp"
#include "cko_test_support.hpp"

#include <sys/stat.h>
#include <fstream>

namespace cko::store {
namespace {
namespace fs = std::filesystem;

class ReadCheckTest : public test::ScratchTest {
protected:
    void SetUp() override {
        ScratchTest::SetUp();
        store_ = std::make_unique<Store>(Store::create(dir_ / "art"));
    }
    // Rewrites a (read-only) record's bytes, as a hand edit or a driver running as the owner would.
    void rewrite(const std::string& rel, const std::string& bytes) const {
        const fs::path p = store_->root() / rel;
        ::chmod(p.c_str(), 0644);
        std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
    }
    void expect_tampered(const std::string& rel) const {
        for (const auto& read :
             {+[](const Store&s, const std::string&r) { (void)s.read_record(r); },
              +[](const Store&s, const std::string&r) { (void)s.read_record_hashed(r); },
              +[](const Store&s, const std::string&r) { s.verify_ledgered(r); }}) {
            if (const auto e = EXPECT_CKO_ERROR(read(*store_, rel), ErrorCode::tampered_record, rel,
                                                "cko fsck")) {
                EXPECT_EQ(e->details().at("path"), rel);
            }
        }
    }
    std::unique_ptr<Store> store_;
};

// target.json with its threshold edited, ledger untouched: read_record used to return the edit.
TEST_F(ReadCheckTest, ARecordEditedAfterItWasLedgeredIsRefused) {
    const Json target{{"format_version", "cko/t-v1"}, {"id", "t"}, {"threshold", 1e-6}};
    store_->write_record("target.json", target);
    EXPECT_EQ(store_->read_record("target.json"), target);
    Json edited = target;
    edited["threshold"] = 1.0;
    rewrite("target.json", canonical_json(edited));
    expect_tampered("target.json");
    bool altered = false;
    for (const auto& f : fsck_store(*store_).findings) {
        altered = altered || (f.kind == "altered" && f.path == "target.json");
    }
    EXPECT_TRUE(altered);
}

// The index is read once and caught up: a record written after the first read is checked too.
TEST_F(ReadCheckTest, RecordsWrittenAfterTheFirstReadAreCheckedToo) {
    store_->write_record("experiments/a.json", Json{{"format_version", "cko/t-v1"}, {"id", "a"}});
    (void)store_->read_record("experiments/a.json");
    const Store copy = *store_;  // copies share the index
    store_->write_record("experiments/b.json", Json{{"format_version", "cko/t-v1"}, {"id", "b"}});
    EXPECT_NO_THROW((void)copy.read_record("experiments/b.json"));
    rewrite("experiments/b.json", R"({"format_version":"cko/t-v1","id":"forged"})");
    expect_tampered("experiments/b.json");
    EXPECT_NO_THROW((void)store_->read_record("experiments/a.json"));
}

// A forger who appends a chained ledger line with the new digest is not believed: the first line
// of a path is what cko wrote, and fsck reports the second as `relisted` damage.
TEST_F(ReadCheckTest, AForgedSecondLedgerLineIsNotBelieved) {
    store_->write_record("experiments/a.json", Json{{"format_version", "cko/t-v1"}, {"id", "a"}});
    const std::string forged = R"({"format_version":"cko/t-v1","id":"forged"})";
    rewrite("experiments/a.json", forged);
    const fs::path ledger = store_->root() / kLedger;
    std::string text = slurp(ledger);
    const std::string last = text.substr(0, text.size() - 1);
    text += ledger_line("experiments/a.json", sha256_hex(forged), forged.size(), sha256_hex(last)) +
            "\n";
    std::ofstream(ledger, std::ios::binary | std::ios::trunc) << text;
    expect_tampered("experiments/a.json");
    const FsckReport r = fsck_store(*store_);
    EXPECT_TRUE(r.damaged()) << r.to_text();
    bool relisted = false;
    for (const auto& f : r.findings) {
        relisted = relisted || (f.kind == "relisted" && f.path == "experiments/a.json" && f.damage);
    }
    EXPECT_TRUE(relisted) << r.to_text();
}

// What the ledger has no line for is read as it is: the one mutable pointer, and a record a crash
// left between its rename and its ledger line (fsck notes it `unledgered`).
TEST_F(ReadCheckTest, UnledgeredFilesAreReadAsTheyAre) {
    put(store_->root() / "experiments/c.json", R"({"format_version":"cko/t-v1","id":"c"})");
    EXPECT_EQ(store_->read_record("experiments/c.json").at("id"), "c");
    (void)store_->compare_and_swap("champion/current.json", "",
                                   Json{{"format_version", "cko/p-v1"}, {"id", "p"}});
    (void)store_->compare_and_swap("champion/current.json",
                                   sha256_file_hex(store_->root() / "champion/current.json"),
                                   Json{{"format_version", "cko/p-v1"}, {"id", "q"}});
    EXPECT_EQ(store_->read_record_hashed("champion/current.json").value.at("id"), "q");
}

}  // namespace
}  // namespace cko::store
