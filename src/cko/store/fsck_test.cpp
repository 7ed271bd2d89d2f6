// fsck finds a flipped byte in any stored file, and tells crash leftovers from damage.
#include "cko/store/fsck.hpp"

#include "cko/store/snapshot.hpp"
#include "cko_test_support.hpp"

#include <sys/stat.h>

namespace cko::store {
namespace {
namespace fs = std::filesystem;

class FsckTest : public test::ScratchTest {
protected:
    void SetUp() override {
        ScratchTest::SetUp();
        put(dir_ / "src" / "a.cu", "kernel a");
        put(dir_ / "src" / "d" / "b.cu", "kernel b");
        store_ = std::make_unique<Store>(Store::create(dir_ / "art"));
        snap_ = take_snapshot(*store_, dir_ / "src");
        store_->write_record("experiments/exp-1.json",
                             Json{{"format_version", "cko/t-v1"}, {"id", "exp-1"}});
        store_->write_record("invocations/inv-1/request.json",
                             Json{{"format_version", "cko/t-v1"}, {"id", "inv-1"}});
    }
    std::unique_ptr<Store> store_;
    Snapshot snap_;
};

TEST_F(FsckTest, AFreshStoreIsConsistent) {
    const FsckReport r = fsck_store(*store_);
    EXPECT_FALSE(r.damaged()) << r.to_text();
    EXPECT_EQ(r.files_checked, 2u + 1u + 2u);  // two records, the manifest, two payload files
}

TEST_F(FsckTest, AFlippedByteInAnyStoredFileIsDamage) {
    const std::string dir = snapshot_dir(snap_.digest);
    for (const std::string& rel :
         {std::string("experiments/exp-1.json"), std::string("invocations/inv-1/request.json"),
          dir + "/manifest.json", dir + "/files/a.cu", dir + "/files/d/b.cu"}) {
        flip_byte(store_->root() / rel, 3);
        const FsckReport r = fsck_store(*store_);
        EXPECT_TRUE(r.damaged()) << rel;
        bool named = false;
        for (const auto& f : r.findings) {
            named = named || (f.path == rel && f.damage);
        }
        EXPECT_TRUE(named) << rel << "\n" << r.to_text();
        flip_byte(store_->root() / rel, 3);  // restore
        EXPECT_FALSE(fsck_store(*store_).damaged()) << rel;
    }
}

TEST_F(FsckTest, MissingAndExtraFilesAreDamage) {
    const fs::path payload = store_->root() / snapshot_dir(snap_.digest) / "files";
    ::chmod(payload.c_str(), 0755);
    put(payload / "planted.cu", "x");
    EXPECT_TRUE(fsck_store(*store_).damaged());
    fs::remove(payload / "planted.cu");
    fs::remove(store_->root() / "experiments/exp-1.json");
    const FsckReport r = fsck_store(*store_);
    ASSERT_TRUE(r.damaged());
    EXPECT_EQ(r.findings.at(0).kind, "missing");
}

TEST_F(FsckTest, CrashLeftoversAreNotesNotDamage) {
    put(store_->root() / "experiments" / ".exp-2.json.tmp-123-0", "{\"partial");
    put(store_->root() / "experiments" / "exp-3.json",
        "{\"format_version\":\"cko/t-v1\",\"id\":\"exp-3\"}");
    const FsckReport r = fsck_store(*store_);
    EXPECT_FALSE(r.damaged()) << r.to_text();
    ASSERT_EQ(r.findings.size(), 2u) << r.to_text();
    put(store_->root() / "experiments" / "exp-4.json", "{\"broken");
    EXPECT_TRUE(fsck_store(*store_).damaged());
}

}  // namespace
}  // namespace cko::store
