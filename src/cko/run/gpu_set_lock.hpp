// The locks of a Target's whole GPU set: taken all or none, in one sorted order, never a partial
// set held.
#pragma once

#include "cko/run/gpu_lock.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace cko::run {

class GpuSetLock {
public:
    // Waits up to `wait` until every GPU of `gpu_uuids` (duplicates ignored) is free at once, then
    // holds them all. Each attempt tries them in sorted order without waiting and, when one is
    // busy, lets go of those it took before trying again: two sets that overlap in any order never
    // deadlock, and while waiting this holds nothing (a measurement on one GPU of the set is not
    // blocked by a waiting set). Throws resource_wait_timeout naming the busy GPU and its holder.
    GpuSetLock(std::vector<std::string> gpu_uuids, const std::string& holder,
               std::chrono::milliseconds wait);

    [[nodiscard]] const std::vector<std::string>& gpu_uuids() const noexcept {
        return uuids_;
    }  // sorted
    [[nodiscard]] std::chrono::milliseconds waited() const noexcept { return waited_; }
    [[nodiscard]] std::size_t attempts() const noexcept { return attempts_; }

private:
    std::vector<std::string> uuids_;
    std::vector<std::unique_ptr<GpuLock>> locks_;
    std::chrono::milliseconds waited_{0};
    std::size_t attempts_ = 0;
};

}  // namespace cko::run
