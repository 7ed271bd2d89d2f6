// GPU locks serialize holders of the same (machine, UUID) and time out naming the holder.
#include "cko/run/gpu_lock.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <cstdlib>

namespace cko::run {
namespace {
using GpuLockTest = test::ScratchTest;

TEST_F(GpuLockTest, SecondHolderWaitsThenTimesOutNamingTheFirst) {
    ::setenv("CKO_LOCK_DIR", (dir_ / "locks").c_str(), 1);
    {
        const GpuLock first("GPU-fake-0001", "inv-first", std::chrono::milliseconds(100));
        if (const auto e = EXPECT_CKO_ERROR(
                const GpuLock second("GPU-fake-0001", "inv-second", std::chrono::milliseconds(150)),
                ErrorCode::resource_wait_timeout)) {
            EXPECT_NE(e->details()["holder"].get<std::string>().find("inv-first"),
                      std::string::npos);
        }
        // Another GPU is independent.
        EXPECT_NO_THROW(
            const GpuLock other("GPU-fake-0002", "inv-other", std::chrono::milliseconds(100)));
    }
    EXPECT_NO_THROW(
        const GpuLock again("GPU-fake-0001", "inv-third", std::chrono::milliseconds(100)));
    ::unsetenv("CKO_LOCK_DIR");
}

}  // namespace
}  // namespace cko::run
