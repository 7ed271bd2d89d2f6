// Per-GPU exclusive lock across processes and users: flock on a file keyed by (machine-id, GPU UUID).
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

namespace cko::run {

// $CKO_LOCK_DIR, else /tmp/cko-locks (shared by every user of the host, mode 1777 like /tmp).
[[nodiscard]] std::filesystem::path gpu_lock_dir();
[[nodiscard]] std::string machine_id();

class GpuLock {
public:
    // Waits up to `wait` for the lock of `gpu_uuid` on this machine; throws resource_wait_timeout
    // naming the holder (pid and invocation written into the lock file) when it cannot be had.
    GpuLock(const std::string& gpu_uuid, const std::string& holder, std::chrono::milliseconds wait);
    ~GpuLock();
    GpuLock(const GpuLock&) = delete;
    GpuLock& operator=(const GpuLock&) = delete;

    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
    [[nodiscard]] std::chrono::milliseconds waited() const noexcept { return waited_; }

private:
    int fd_ = -1;
    std::filesystem::path path_;
    std::chrono::milliseconds waited_{0};
};

}  // namespace cko::run
