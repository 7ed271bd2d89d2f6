// A GPU set is locked all or none: overlapping sets in opposite orders never deadlock nor overlap,
// and a set that waits holds no part of itself.
#include "cko/run/gpu_set_lock.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <array>
#include <atomic>
#include <cstdlib>
#include <future>
#include <map>
#include <thread>

namespace cko::run {
namespace {
using std::chrono::milliseconds;

class GpuSetLockTest : public test::ScratchTest {
protected:
    void SetUp() override {
        ScratchTest::SetUp();
        ::setenv("CKO_LOCK_DIR", (dir_ / "locks").c_str(), 1);
    }
    void TearDown() override {
        ::unsetenv("CKO_LOCK_DIR");
        ScratchTest::TearDown();
    }
};

TEST_F(GpuSetLockTest, HoldsEveryGpuOfTheSetOnceInSortedOrder) {
    const GpuSetLock set({"GPU-b", "GPU-a", "GPU-b"}, "inv-set", milliseconds(100));
    EXPECT_EQ(set.gpu_uuids(), (std::vector<std::string>{"GPU-a", "GPU-b"}));
    for (const char* uuid : {"GPU-a", "GPU-b"}) {
        std::string holder;
        EXPECT_EQ(GpuLock::try_take(uuid, "inv-other", holder), nullptr) << uuid;
        EXPECT_NE(holder.find("inv-set"), std::string::npos) << holder;
    }
    std::string holder;
    EXPECT_NE(GpuLock::try_take("GPU-c", "inv-other", holder), nullptr);  // not in the set
}

TEST_F(GpuSetLockTest, OverlappingSetsInOppositeOrderNeverDeadlockNorShareAGpu) {
    // Three holders whose sets overlap pairwise, two of them named in opposite orders. Each counts
    // itself on its GPUs while holding them: a count above one is two holders of one GPU.
    std::map<std::string, std::atomic<int>> holders;
    for (const char* uuid : {"GPU-a", "GPU-b", "GPU-c"}) {
        holders[uuid] = 0;
    }
    std::atomic<bool> overlap{false};
    const std::array<std::vector<std::string>, 3> sets{
        {{"GPU-a", "GPU-b"}, {"GPU-b", "GPU-a"}, {"GPU-c", "GPU-b"}}};
    std::vector<std::future<int>> runs;
    for (std::size_t t = 0; t < sets.size(); ++t) {
        runs.push_back(std::async(std::launch::async, [&, t] {
            for (int i = 0; i < 40; ++i) {
                const GpuSetLock set(sets[t], "inv-" + std::to_string(t), milliseconds(20000));
                for (const auto& uuid : set.gpu_uuids()) {
                    overlap = overlap || ++holders[uuid] > 1;
                }
                std::this_thread::sleep_for(milliseconds(1));
                for (const auto& uuid : set.gpu_uuids()) {
                    --holders[uuid];
                }
            }
            return 40;
        }));
    }
    for (auto& run : runs) {
        ASSERT_EQ(run.wait_for(std::chrono::seconds(60)), std::future_status::ready) << "deadlock";
        EXPECT_EQ(run.get(), 40);
    }
    EXPECT_FALSE(overlap.load());
}

TEST_F(GpuSetLockTest, AWaitingSetHoldsNoneOfItsGpusAndTimesOutNamingTheBusyOne) {
    auto held = std::make_unique<GpuLock>("GPU-b", "inv-holder-of-b", milliseconds(100));
    auto waiting = std::async(std::launch::async, [] {
        if (const auto e = EXPECT_CKO_ERROR(
                const GpuSetLock set({"GPU-a", "GPU-b"}, "inv-set", milliseconds(1500)),
                ErrorCode::resource_wait_timeout, "none of the set was taken")) {
            EXPECT_EQ(e->details()["gpu_uuid"], "GPU-b");
            EXPECT_NE(e->details()["holder"].get<std::string>().find("inv-holder-of-b"),
                      std::string::npos);
            return std::string();
        }
        return std::string("took the set while GPU-b was held");
    });
    // While the set waits for GPU-b, GPU-a stays free for anyone, again and again: the set only
    // touches it for the instant of an attempt (a probe waits up to 200 ms for that), never holds
    // it while it waits.
    int free_takes = 0;
    for (int i = 0; i < 10; ++i) {
        EXPECT_NO_THROW({
            const GpuLock probe("GPU-a", "inv-probe", milliseconds(200));
            ++free_takes;
        }) << "GPU-a held while its set waited";
        std::this_thread::sleep_for(milliseconds(20));
    }
    EXPECT_EQ(free_takes, 10);
    EXPECT_EQ(waiting.get(), "");
    held.reset();
    const GpuSetLock set({"GPU-b", "GPU-a"}, "inv-set",
                         milliseconds(100));  // free now: taken at once
    EXPECT_EQ(set.attempts(), 1U);
}

}  // namespace
}  // namespace cko::run
