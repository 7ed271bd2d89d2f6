// Containment: environment markers found through /proc, and a fork()ed watchdog that only makes
// async-signal-safe calls.
#include "cko/util/containment.hpp"

#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <string_view>

namespace cko {
namespace {

// Reads /proc/<pid>/environ (unreadable for other users' processes: those are not ours anyway).
bool environment_holds(const std::string& pid, const std::string& needle) {
    const int fd = ::open(("/proc/" + pid + "/environ").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    std::string env;
    char buffer[8192];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n <= 0 || env.size() > (std::size_t{4} << 20)) {
            break;
        }
        env.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(fd);
    std::size_t at = 0;
    while (at < env.size()) {
        const std::size_t end = env.find('\0', at);
        const std::string_view entry(env.data() + at,
                                     (end == std::string::npos ? env.size() : end) - at);
        if (entry == needle) {
            return true;
        }
        at = end == std::string::npos ? env.size() : end + 1;
    }
    return false;
}

void sleep_ms(long ms) {
    timespec ts{ms / 1000, (ms % 1000) * 1000000L};
    while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

long now_ms() {
    timespec ts{};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

}  // namespace

std::string new_containment_token() {
    static std::atomic<unsigned> counter{0};
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return sha256_hex(
               fmt::format("{}-{}-{}-{}", ::getpid(), ts.tv_sec, ts.tv_nsec, counter.fetch_add(1)))
        .substr(0, 24);
}

int kill_marked_processes(const std::string& token) noexcept {
    int killed = 0;
    try {
        const std::string needle = fmt::format("{}={}", kContainmentVariable, token);
        // Twice: a process forking while we scan may have started a child we missed.
        for (int round = 0; round < 2; ++round) {
            DIR* proc = ::opendir("/proc");
            if (proc == nullptr) {
                return killed;
            }
            while (const dirent* entry = ::readdir(proc)) {
                char* end = nullptr;
                const long pid = std::strtol(entry->d_name, &end, 10);
                if (*end != '\0' || pid <= 1 || pid == ::getpid()) {
                    continue;
                }
                if (environment_holds(entry->d_name, needle) &&
                    ::kill(static_cast<pid_t>(pid), SIGKILL) == 0) {
                    ++killed;
                }
            }
            ::closedir(proc);
        }
    } catch (...) {
    }
    return killed;
}

Watchdog::Watchdog(pid_t pgid, std::chrono::milliseconds deadline,
                   std::chrono::milliseconds grace) noexcept {
    const pid_t parent = ::getpid();
    const long start = now_ms();
    const long until = deadline.count() > 0 ? start + static_cast<long>(deadline.count()) : 0;
    const long grace_ms = static_cast<long>(grace.count());
    pid_ = ::fork();
    if (pid_ != 0) {
        return;  // parent (or fork failed: no watchdog, the in-process deadline still holds)
    }
    // Child: only async-signal-safe calls from here on (the parent may have other threads).
    ::setsid();  // a terminal's signals to our group do not reach it
    // Hold no descriptor of the parent (the store's lock above all, or a pipe end).
#ifdef SYS_close_range
    const bool closed = ::syscall(SYS_close_range, 0U, ~0U, 0U) == 0;
#else
    const bool closed = false;
#endif
    for (int fd = 0; !closed && fd < 4096; ++fd) {
        ::close(fd);
    }
    while (::getppid() == parent && (until == 0 || now_ms() < until)) {
        sleep_ms(50);
    }
    if (::kill(-pgid, SIGTERM) == 0) {
        ::kill(-pgid, SIGCONT);
        // The grace ends early once the group is gone (nothing to wait for then).
        for (long waited = 0; waited < grace_ms && ::kill(-pgid, 0) == 0; waited += 20) {
            sleep_ms(20);
        }
        ::kill(-pgid, SIGKILL);
    }
    ::_exit(0);
}

Watchdog::~Watchdog() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
        }
    }
}

}  // namespace cko
