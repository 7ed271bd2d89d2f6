// Per-GPU exclusive lock across processes and users: flock on a file keyed by (machine-id, GPU
// UUID).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
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
    // The lock of `gpu_uuid` when it is free right now, else nullptr with the holder's note (pid
    // and invocation) in `current_holder`. Never waits; throws io_error only when the lock file
    // cannot be used.
    [[nodiscard]] static std::unique_ptr<GpuLock> try_take(const std::string& gpu_uuid,
                                                           const std::string& holder,
                                                           std::string& current_holder);
    ~GpuLock();
    GpuLock(const GpuLock&) = delete;
    GpuLock& operator=(const GpuLock&) = delete;

    [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }
    [[nodiscard]] std::chrono::milliseconds waited() const noexcept { return waited_; }

private:
    GpuLock() = default;
    // Opens the lock file of `gpu_uuid`; true when the flock was taken (then the holder note is
    // written).
    bool open_and_try(const std::string& gpu_uuid, const std::string& holder);
    [[nodiscard]] std::string current_holder() const;

    int fd_ = -1;
    std::filesystem::path path_;
    std::chrono::milliseconds waited_{0};
};

}  // namespace cko::run
