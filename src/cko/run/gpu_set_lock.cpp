// GpuSetLock: try the whole sorted set without waiting, release everything on the first busy GPU,
// retry.
#include "cko/run/gpu_set_lock.hpp"

#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

namespace cko::run {

GpuSetLock::GpuSetLock(std::vector<std::string> gpu_uuids, const std::string& holder,
                       std::chrono::milliseconds wait)
    : uuids_(std::move(gpu_uuids)) {
    std::sort(uuids_.begin(), uuids_.end());
    uuids_.erase(std::unique(uuids_.begin(), uuids_.end()), uuids_.end());
    const auto start = std::chrono::steady_clock::now();
    // Backoff grows to 50 ms so that two waiting sets do not retry in lockstep forever.
    auto pause = std::chrono::milliseconds(5);
    for (;;) {
        ++attempts_;
        std::string busy;
        std::string current;
        for (const auto& uuid : uuids_) {
            auto lock = GpuLock::try_take(uuid, holder, current);
            if (!lock) {
                busy = uuid;
                break;
            }
            locks_.push_back(std::move(lock));
        }
        if (busy.empty()) {
            waited_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - start);
            return;
        }
        locks_.clear();  // all or none: never keep part of the set while waiting
        if (std::chrono::steady_clock::now() - start >= wait) {
            throw Error(
                ErrorCode::resource_wait_timeout,
                fmt::format(
                    "GPU {} of the Target's set [{}] is held by another measurement ({}) for more "
                    "than {} ms; none of the set was taken. Wait for it or raise "
                    "limits.resource_wait_timeout_s",
                    busy, fmt::join(uuids_, ", "), current.empty() ? "unknown holder" : current,
                    wait.count()),
                nlohmann::json{{"gpu_uuid", busy}, {"gpu_uuids", uuids_}, {"holder", current}});
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(50));
    }
}

}  // namespace cko::run
