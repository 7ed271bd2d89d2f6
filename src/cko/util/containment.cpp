// Containment: environment markers found through /proc, and a fork()ed watchdog that only makes
// async-signal-safe calls.
#include "cko/util/containment.hpp"

#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <vector>

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

// Our own children and the calls in flight. One lock for both, held while a call's leader is
// spawned or an own child forked, so that a sweep never sees a child before it is registered.
struct ChildRegistry {
    std::mutex mutex;
    std::multiset<pid_t> own;  // a multiset: a reused pid may be registered again before erased
    std::map<const CallOrphans*, unsigned long long> calls;  // in flight -> start ticks
};

ChildRegistry& registry() {
    static ChildRegistry r;
    return r;
}

struct ProcEntry {
    pid_t pid = 0;
    char state = '?';
    pid_t ppid = 0;
    unsigned long long start_ticks = 0;
};

// Parses /proc/<pid>/stat: state, ppid and start time (field 22), after the last ')' (comm may
// hold anything).
bool read_proc_entry(const char* pid_text, ProcEntry& out) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%s/stat", pid_text);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    char buffer[1024];
    const ssize_t n = ::read(fd, buffer, sizeof buffer - 1);
    ::close(fd);
    if (n <= 0) {
        return false;
    }
    buffer[n] = '\0';
    const char* paren = std::strrchr(buffer, ')');
    if (paren == nullptr || paren[1] == '\0') {
        return false;
    }
    out.pid = static_cast<pid_t>(std::strtol(pid_text, nullptr, 10));
    out.state = paren[2];
    const char* field = paren + 2;
    for (int i = 3; i < 22 && field != nullptr; ++i) {  // field 3 is the state
        field = std::strchr(field, ' ');
        field = field != nullptr ? field + 1 : nullptr;
        if (i == 3 && field != nullptr) {
            out.ppid = static_cast<pid_t>(std::strtol(field, nullptr, 10));
        }
    }
    if (field == nullptr) {
        return false;
    }
    out.start_ticks = std::strtoull(field, nullptr, 10);
    return true;
}

std::vector<ProcEntry> children_of(pid_t parent) {
    std::vector<ProcEntry> out;
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) {
        return out;
    }
    while (const dirent* entry = ::readdir(proc)) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') {
            continue;
        }
        ProcEntry e;
        if (read_proc_entry(entry->d_name, e) && e.ppid == parent) {
            out.push_back(e);
        }
    }
    ::closedir(proc);
    return out;
}

// Reaps `pid` (a child we killed) within about `limit_ms`; one stuck in the kernel stays a zombie
// for a later sweep.
void reap_within(pid_t pid, long limit_ms) {
    int status = 0;
    for (long waited = 0; waited <= limit_ms; waited += 5) {
        const pid_t got = ::waitpid(pid, &status, WNOHANG);
        if (got == pid || (got < 0 && errno != EINTR)) {
            return;
        }
        sleep_ms(5);
    }
}

}  // namespace

void become_child_subreaper() noexcept {
    static std::once_flag once;
    std::call_once(once, [] { (void)::prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L); });
}

pid_t fork_own_child() noexcept {
    ChildRegistry& r = registry();
    r.mutex.lock();
    const pid_t pid = ::fork();
    if (pid > 0) {
        try {
            r.own.insert(pid);
        } catch (...) {
        }
    }
    // In the child: the only thread, the one that locked it.
    r.mutex.unlock();
    return pid;
}

void forget_own_child(pid_t pid) noexcept {
    ChildRegistry& r = registry();
    const std::lock_guard lock(r.mutex);
    if (const auto it = r.own.find(pid); it != r.own.end()) {
        r.own.erase(it);
    }
}

CallOrphans::CallOrphans(const std::function<pid_t()>& spawn) {
    become_child_subreaper();
    ChildRegistry& r = registry();
    const std::lock_guard lock(r.mutex);
    leader_ = spawn();  // throws: nothing was started, nothing registered
    r.own.insert(leader_);
    ProcEntry e;
    const std::string pid_text = std::to_string(leader_);
    start_ticks_ = read_proc_entry(pid_text.c_str(), e) ? e.start_ticks : 0;
    r.calls[this] = start_ticks_;
}

CallOrphans::~CallOrphans() {
    end_orphans();
    forget_own_child(leader_);
}

int CallOrphans::end_orphans() noexcept {
    if (ended_) {
        return 0;
    }
    ended_ = true;
    int killed = 0;
    try {
        ChildRegistry& r = registry();
        const std::lock_guard lock(r.mutex);
        r.calls.erase(this);
        // Each round kills the orphans there are now; their children become ours in turn. Only
        // children of ours are signalled, so no pid can have been reused under us.
        for (int round = 0; round < 200; ++round) {
            std::vector<pid_t> victims;
            for (const ProcEntry& p : children_of(::getpid())) {
                if (r.own.contains(p.pid) || p.start_ticks < start_ticks_) {
                    continue;  // ours on purpose, or older than this call
                }
                bool shared = false;  // another call in flight may have started it
                for (const auto& [call, start] : r.calls) {
                    shared = shared || start <= p.start_ticks;
                }
                if (shared) {
                    continue;
                }
                if (p.state == 'Z' || p.state == 'X') {
                    reap_within(p.pid, 0);
                    continue;
                }
                victims.push_back(p.pid);
            }
            if (victims.empty()) {
                break;
            }
            for (const pid_t v : victims) {
                if (::kill(v, SIGKILL) == 0) {
                    ++killed;
                }
            }
            for (const pid_t v : victims) {
                reap_within(v, 2000);
            }
        }
    } catch (...) {
    }
    return killed;
}

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
    pid_ = fork_own_child();
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
        forget_own_child(pid_);
    }
}

}  // namespace cko
