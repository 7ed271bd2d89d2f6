// GPU locks: one flock'ed file per (machine-id, GPU UUID), holder noted inside for error messages.
#include "cko/run/gpu_lock.hpp"

#include "cko/util/error.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

namespace cko::run {
namespace fs = std::filesystem;

fs::path gpu_lock_dir() {
    if (const char* env = std::getenv("CKO_LOCK_DIR"); env != nullptr && *env != '\0') {
        return fs::path(env);
    }
    return fs::path("/tmp/cko-locks");
}

std::string machine_id() {
    for (const char* path : {"/etc/machine-id", "/var/lib/dbus/machine-id"}) {
        std::ifstream in(path);
        std::string id;
        if (std::getline(in, id) && !id.empty()) {
            return id;
        }
    }
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return std::string("host:") + host;
}

bool GpuLock::open_and_try(const std::string& gpu_uuid, const std::string& holder) {
    if (fd_ < 0) {
        const fs::path dir = gpu_lock_dir();
        std::error_code ec;
        if (fs::create_directories(dir, ec)) {
            ::chmod(dir.c_str(), 01777);
        }
        path_ = dir / fmt::format("gpu-{}.lock",
                                  sha256_hex(machine_id() + '\0' + gpu_uuid).substr(0, 32));
        fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd_ < 0) {
            throw Error(
                ErrorCode::io_error,
                fmt::format(
                    "cannot open GPU lock {}: {} (set CKO_LOCK_DIR to a writable directory)",
                    path_.string(), std::strerror(errno)));
        }
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK && errno != EINTR) {
            const int err = errno;
            ::close(fd_);
            fd_ = -1;
            throw Error(ErrorCode::io_error,
                        fmt::format("flock {}: {}", path_.string(), std::strerror(err)));
        }
        return false;
    }
    const std::string note = fmt::format("pid {} {}\n", ::getpid(), holder);
    if (::ftruncate(fd_, 0) == 0) {
        [[maybe_unused]] const ssize_t n = ::pwrite(fd_, note.data(), note.size(), 0);
    }
    return true;
}

std::string GpuLock::current_holder() const {
    std::ifstream in(path_);
    std::string current;
    std::getline(in, current);
    return current;
}

GpuLock::GpuLock(const std::string& gpu_uuid, const std::string& holder,
                 std::chrono::milliseconds wait) {
    const auto start = std::chrono::steady_clock::now();
    while (!open_and_try(gpu_uuid, holder)) {
        if (std::chrono::steady_clock::now() - start >= wait) {
            const std::string current = current_holder();
            ::close(fd_);
            throw Error(
                ErrorCode::resource_wait_timeout,
                fmt::format("GPU {} is held by another measurement ({}) for more than {} ms; "
                            "wait for it or raise limits.resource_wait_timeout_s",
                            gpu_uuid, current.empty() ? "unknown holder" : current, wait.count()),
                nlohmann::json{
                    {"gpu_uuid", gpu_uuid}, {"holder", current}, {"lock", path_.string()}});
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    waited_ = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
}

std::unique_ptr<GpuLock> GpuLock::try_take(const std::string& gpu_uuid, const std::string& holder,
                                           std::string& current_holder) {
    std::unique_ptr<GpuLock> lock(new GpuLock());
    if (lock->open_and_try(gpu_uuid, holder)) {
        return lock;
    }
    current_holder = lock->current_holder();
    return nullptr;  // the destructor closes the file
}

GpuLock::~GpuLock() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

}  // namespace cko::run
