// Runs one argv as a child process in its own process group, captures its output, and kills it and
// everything it started at a deadline or on cancel.
#include "cko/util/process.hpp"

#include "cko/util/containment.hpp"
#include "cko/util/error.hpp"
#include "cko/util/process_spawn.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

namespace cko {
namespace {

using namespace process_detail;  // NOLINT(google-build-using-namespace): the other half of this
                                 // file

using Clock = std::chrono::steady_clock;

// How often we look at the cancel flag, and at the leader when no pidfd can tell us it ended.
constexpr std::chrono::milliseconds kPollTick{10};
// Output still arriving this long after the group was killed is waited for even with kill_grace 0:
// SIGKILLed processes need a moment to close their pipe ends.
constexpr std::chrono::milliseconds kMinDrain{200};
// Reads per stream per wakeup, so that one flooding stream cannot starve the deadline checks.
constexpr int kReadsPerWakeup = 16;
constexpr std::size_t kReadChunk = std::size_t{64} * 1024;
// Longer timeouts count as none, and longer graces as this, so that time arithmetic cannot
// overflow.
constexpr std::chrono::milliseconds kForever = std::chrono::hours(24 * 365 * 100);

// Owns the unreaped child: whatever happens, it is killed with its group and reaped, so no path
// out of run_process leaves a zombie or a running tree behind.
class ChildProcess {
public:
    explicit ChildProcess(pid_t pid) : pid_(pid) {}
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    ~ChildProcess() {
        if (!reaped_) {
            signal_group(SIGKILL);
            int status = 0;
            while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
            }
        }
    }

    // Safe until reap(): an unreaped leader keeps its pid, and so its process group id, from
    // being reused.
    void signal_group(int sig) const noexcept { ::kill(-pid_, sig); }

    // Whether the leader has ended, without reaping it (WNOWAIT).
    bool has_ended() {
        siginfo_t info{};
        while (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
            if (errno != EINTR) {
                lost_child(errno);
            }
        }
        return info.si_pid == pid_;
    }

    int reap() {
        int status = 0;
        while (::waitpid(pid_, &status, 0) < 0) {
            if (errno != EINTR) {
                lost_child(errno);
            }
        }
        reaped_ = true;
        return status;
    }

private:
    // ECHILD: someone else reaped our child (SIGCHLD set to SIG_IGN, or a waitpid(-1) elsewhere).
    // Its pid may already be reused, so we must not signal its group any more.
    [[noreturn]] void lost_child(int err) {
        reaped_ = true;
        nlohmann::json details = errno_details(err);
        details["pid"] = pid_;
        throw Error(ErrorCode::internal,
                    "child process " + std::to_string(pid_) +
                        " was reaped elsewhere (is SIGCHLD ignored?): " + errno_text(err),
                    std::move(details));
    }

    pid_t pid_;
    bool reaped_ = false;
};

// Whether a process other than the leader, neither dead nor a zombie, is in process group pgid.
// Read from /proc because while the zombie leader holds the group, kill(-pgid, 0) always succeeds.
bool group_has_other_live_members(pid_t pgid, pid_t leader) {
    std::error_code ec;
    std::array<char, 512> stat{};
    for (std::filesystem::directory_iterator it("/proc", ec), end; !ec && it != end;
         it.increment(ec)) {
        const std::string name = it->path().filename().string();
        pid_t pid = 0;
        const auto [digits_end, parse_error] =
            std::from_chars(name.data(), name.data() + name.size(), pid);
        if (parse_error != std::errc() || digits_end != name.data() + name.size() ||
            pid == leader) {
            continue;
        }
        const UniqueFd fd(::open((it->path() / "stat").c_str(), O_RDONLY | O_CLOEXEC));
        ssize_t n = -1;
        while (fd.valid() && (n = ::read(fd.get(), stat.data(), stat.size())) < 0 &&
               errno == EINTR) {
        }
        if (n <= 0) {
            continue;
        }
        // "pid (comm) state ppid pgrp ...": comm may hold anything, so parse after the last ')'.
        const std::string_view text(stat.data(), static_cast<std::size_t>(n));
        const std::size_t paren = text.rfind(')');
        if (paren == std::string_view::npos || paren + 4 >= text.size()) {
            continue;
        }
        const char state = text[paren + 2];
        const std::size_t ppid_end = text.find(' ', paren + 4);
        if (ppid_end == std::string_view::npos) {
            continue;
        }
        pid_t pgrp = 0;
        std::from_chars(text.data() + ppid_end + 1, text.data() + text.size(), pgrp);
        if (pgrp == pgid && state != 'Z' && state != 'X') {
            return true;
        }
    }
    return false;
}

// One of the child's output pipes and where its bytes go.
struct OutputStream {
    UniqueFd pipe;
    UniqueFd file;
    std::filesystem::path path;
    std::uint64_t cap = 0;
    std::uint64_t produced = 0;
    std::uint64_t written = 0;
    int write_errno = 0;

    bool dry = false;  // the last drain() stopped because the pipe was empty (or closed)

    [[nodiscard]] bool open() const { return pipe.valid(); }

    // Reads what is there now (up to kReadsPerWakeup chunks), writing up to the cap into the file.
    // Returns false when a capture write failed.
    bool drain(std::vector<char>& buffer) {
        dry = !pipe.valid();
        for (int i = 0; i < kReadsPerWakeup && pipe.valid(); ++i) {
            const ssize_t n = ::read(pipe.get(), buffer.data(), buffer.size());
            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                if (errno != EAGAIN) {
                    pipe.reset();  // Not expected on a pipe; treat as end of output.
                }
                dry = true;
                break;
            }
            if (n == 0) {
                pipe.reset();
                dry = true;
                break;
            }
            const auto size = static_cast<std::uint64_t>(n);
            produced += size;
            if (file.valid() && write_errno == 0 && written < cap) {
                const std::uint64_t keep = std::min(size, cap - written);
                write_errno = write_all(file.get(), buffer.data(), static_cast<std::size_t>(keep));
                written += keep;
            }
        }
        return write_errno == 0;
    }

    [[nodiscard]] bool truncated() const { return file.valid() && produced > written; }
};

void validate(const ProcessSpec& spec) {
    if (spec.argv.empty()) {
        throw Error(ErrorCode::invalid_argument, "cannot run a process: argv is empty");
    }
    for (const std::string& arg : spec.argv) {
        if (contains_nul(arg)) {
            throw Error(ErrorCode::invalid_argument, "an argument holds a NUL byte",
                        {{"argv0", spec.argv.front()}});
        }
    }
}

}  // namespace

std::vector<std::string> scrubbed_environment(const std::vector<std::string>& allow,
                                              const std::map<std::string, std::string>& set) {
    auto check_name = [](const std::string& name) {
        if (name.empty() || name.find('=') != std::string::npos || contains_nul(name)) {
            throw Error(ErrorCode::invalid_argument,
                        "invalid environment variable name '" + name + "'", {{"name", name}});
        }
    };
    std::map<std::string, std::string> merged;
    for (const std::string& name : allow) {
        check_name(name);
        // Races only with setenv, which cko does not call once threads run.
        const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe)
        if (value != nullptr) {
            merged[name] = value;
        }
    }
    for (const auto& [name, value] : set) {
        check_name(name);
        if (contains_nul(value)) {
            throw Error(ErrorCode::invalid_argument,
                        "the value of environment variable '" + name + "' holds a NUL byte",
                        {{"name", name}});
        }
        merged[name] = value;
    }
    std::vector<std::string> env;
    env.reserve(merged.size());
    for (const auto& [name, value] : merged) {
        std::string& entry = env.emplace_back(name);
        entry += '=';
        entry += value;
    }
    return env;
}

CaptureBarrier::CaptureBarrier() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (fd_ < 0) {
        throw Error(ErrorCode::io_error, "eventfd failed: " + errno_text(errno),
                    errno_details(errno));
    }
}

CaptureBarrier::~CaptureBarrier() {
    ::close(fd_);
}

bool CaptureBarrier::wait(std::chrono::milliseconds limit) {
    std::unique_lock lock(mutex_);
    if (closed_) {
        return true;
    }
    const std::uint64_t ticket = ++asked_;
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(fd_, &one, sizeof one);
    return cv_.wait_for(lock, limit, [&] { return closed_ || done_ >= ticket; });
}

std::uint64_t CaptureBarrier::begin_drain() {
    std::uint64_t count = 0;
    [[maybe_unused]] const ssize_t n = ::read(fd_, &count, sizeof count);  // resets the eventfd
    const std::lock_guard lock(mutex_);
    return asked_;
}

void CaptureBarrier::drained(std::uint64_t upto) {
    {
        const std::lock_guard lock(mutex_);
        done_ = std::max(done_, upto);
    }
    cv_.notify_all();
}

void CaptureBarrier::close() {
    {
        const std::lock_guard lock(mutex_);
        closed_ = true;
    }
    cv_.notify_all();
}

namespace {

// The SIGTERM, grace, SIGKILL sequence sent to the child's group; started at most once.
class GroupKill {
public:
    GroupKill(const ProcessSpec& spec, ChildProcess& child)
        : spec_(spec),
          child_(child),
          grace_(std::clamp(spec.kill_grace, std::chrono::milliseconds{0}, kForever)) {}

    [[nodiscard]] std::chrono::milliseconds grace() const { return grace_; }
    [[nodiscard]] bool started() const { return term_sent_; }

    void begin(Clock::time_point now) {
        if (term_sent_) {
            return;
        }
        term_sent_ = true;
        if (spec_.before_kill) {
            try {
                spec_.before_kill();
            } catch (...) {
            }
            now = Clock::now();  // the grace counts from the first signal
        }
        term_sent_at_ = now;
        child_.signal_group(SIGTERM);
        child_.signal_group(SIGCONT);  // A stopped process cannot act on SIGTERM.
        if (grace_.count() == 0) {
            child_.signal_group(SIGKILL);
            kill_sent_ = true;
        }
    }

    // Sends SIGKILL once the grace has passed; returns when it is due while it still is.
    std::optional<Clock::time_point> escalate(Clock::time_point now) {
        if (!term_sent_ || kill_sent_) {
            return std::nullopt;
        }
        if (now >= term_sent_at_ + grace_) {
            child_.signal_group(SIGKILL);
            kill_sent_ = true;
            return std::nullopt;
        }
        return term_sent_at_ + grace_;
    }

private:
    const ProcessSpec& spec_;
    ChildProcess& child_;
    const std::chrono::milliseconds grace_;
    bool term_sent_ = false;
    Clock::time_point term_sent_at_;
    bool kill_sent_ = false;
};

// Sleeps until a stream, the leader's pidfd (while `watch_leader`) or the barrier has something,
// or until `wake`; then reads what the streams hold, and at a barrier request reads them dry first.
// False when a capture failed.
bool wait_and_capture(const ProcessSpec& spec, OutputStream& out, OutputStream& err,
                      const UniqueFd& pidfd, bool watch_leader, Clock::time_point now,
                      Clock::time_point wake, std::vector<char>& buffer) {
    std::array<pollfd, 4> fds{};
    nfds_t count = 0;
    for (const OutputStream* stream : {&out, &err}) {
        if (stream->open()) {
            fds[count++] = pollfd{stream->pipe.get(), POLLIN, 0};
        }
    }
    if (watch_leader && pidfd.valid()) {
        fds[count++] = pollfd{pidfd.get(), POLLIN, 0};
    }
    const nfds_t barrier_slot = count;
    if (spec.barrier != nullptr) {
        fds[count++] = pollfd{spec.barrier->event_fd(), POLLIN, 0};
    }
    int timeout_ms = -1;
    if (wake != Clock::time_point::max()) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(wake - now).count();
        timeout_ms = static_cast<int>(std::clamp<std::int64_t>(left, 0, INT_MAX));
    }
    if (::poll(fds.data(), count, timeout_ms) < 0 && errno != EINTR) {
        throw Error(ErrorCode::internal, "poll failed: " + errno_text(errno), errno_details(errno));
    }
    bool capture_ok = out.drain(buffer);
    capture_ok = err.drain(buffer) && capture_ok;
    if (spec.barrier != nullptr && (fds[barrier_slot].revents & POLLIN) != 0) {
        // Everything written before these waits began is in the pipes: read them dry.
        // A pipe holds at most 1 MiB (fs.pipe-max-size): past 2 MiB more, what a child that
        // never stops writing had written before the wait has been read.
        const std::uint64_t upto = spec.barrier->begin_drain();
        const std::uint64_t before = out.produced + err.produced;
        while (capture_ok && !(out.dry && err.dry) &&
               out.produced + err.produced - before < (std::uint64_t{2} << 20)) {
            capture_ok = out.drain(buffer) && capture_ok;
            capture_ok = err.drain(buffer) && capture_ok;
        }
        spec.barrier->drained(upto);
    }
    return capture_ok;
}

// Watches the spawned child until its leader has ended and its output is drained (or the drain
// time is up). Cancel, the deadline and a capture that failed start the kill.
void supervise(const ProcessSpec& spec, ChildProcess& child, CallOrphans& orphans,
               const std::string& token, Clock::time_point start, OutputStream& out,
               OutputStream& err, ProcessResult& result) {
    // Becomes readable when the leader ends; without one (old kernel, seccomp) we look every tick.
    const UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, result.pid, 0)));

    const bool has_deadline = spec.timeout.count() > 0 && spec.timeout < kForever;
    const Clock::time_point deadline = has_deadline ? start + spec.timeout : start;
    GroupKill kill(spec, child);
    bool leader_ended = false;
    Clock::time_point drain_until;
    std::vector<char> buffer(kReadChunk);

    while (true) {
        Clock::time_point now = Clock::now();
        if (!leader_ended && child.has_ended()) {
            leader_ended = true;
            result.wall = now - start;
            // The zombie leader still pins the group id, so killing the group is safe. Anything
            // left in it would keep our pipes open and outlive the measurement.
            result.leftovers_killed = group_has_other_live_members(result.pid, result.pid);
            child.signal_group(SIGKILL);
            if (kill_marked_processes(token) > 0) {  // escaped the group: setsid, daemon()
                result.leftovers_killed = true;
            }
            // Escaped the group and scrubbed the marker, then orphaned: reparented to us.
            if (orphans.end_orphans() > 0) {
                result.leftovers_killed = true;
            }
            drain_until = now + std::max<std::chrono::milliseconds>(kill.grace(), kMinDrain);
        }
        if (leader_ended && ((!out.open() && !err.open()) || now >= drain_until)) {
            // Whatever is still buffered; a writer that escaped the group is not waited for.
            out.drain(buffer);
            err.drain(buffer);
            break;
        }

        Clock::time_point wake = Clock::time_point::max();
        auto wake_by = [&wake](Clock::time_point t) { wake = std::min(wake, t); };
        if (leader_ended) {
            wake_by(drain_until);
        } else {
            if (spec.cancel != nullptr && spec.cancel->load() && !kill.started()) {
                result.cancelled = true;
                kill.begin(now);
            }
            if (has_deadline && now >= deadline && !kill.started()) {
                result.timed_out = true;
                kill.begin(now);
            }
            if (const auto kill_due = kill.escalate(now)) {
                wake_by(*kill_due);
            }
            if (has_deadline && !kill.started()) {
                wake_by(deadline);
            }
            if (!pidfd.valid() || (spec.cancel != nullptr && !kill.started())) {
                wake_by(now + kPollTick);
            }
        }
        const bool capture_ok =
            wait_and_capture(spec, out, err, pidfd, !leader_ended, now, wake, buffer);
        if (!capture_ok && !leader_ended) {
            kill.begin(Clock::now());  // The run can no longer be recorded faithfully.
        }
    }
}

// The reaped leader's wait status and what the capture of each stream came to.
void record_exit(int status, const OutputStream& out, const OutputStream& err,
                 ProcessResult& result) {
    if (WIFEXITED(status)) {
        result.exited = true;
        result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        result.signaled = true;
        result.signal = WTERMSIG(status);
    }
    for (const OutputStream* stream : {&out, &err}) {
        if (stream->write_errno != 0) {
            throw_io_error("write capture file", stream->path, stream->write_errno);
        }
    }
    result.stdout_bytes = out.produced;
    result.stderr_bytes = err.produced;
    result.stdout_truncated = out.truncated();
    result.stderr_truncated = err.truncated();
}

}  // namespace

ProcessResult run_process(const ProcessSpec& spec) {
    validate(spec);
    // However run_process ends, a barrier waiter is not left waiting for it.
    struct BarrierClose {
        CaptureBarrier* barrier;
        ~BarrierClose() {
            if (barrier != nullptr) {
                barrier->close();
            }
        }
    } barrier_close{spec.barrier};
    std::vector<std::string> env = scrubbed_environment(spec.env_allow, spec.env_set);
    const std::string program = resolve_program(spec, env);
    // Everything the child starts inherits this marker, so processes that leave its group (setsid
    // daemons) are still found and killed when it ends.
    const std::string token = new_containment_token();
    env.push_back(std::string(kContainmentVariable) + "=" + token);
    if (!spec.working_dir.empty()) {
        std::error_code ec;
        if (!std::filesystem::is_directory(spec.working_dir, ec)) {
            throw_spawn_failed(spec, program, ec ? ec.value() : ENOTDIR,
                               "working directory '" + spec.working_dir.string() + "' is unusable");
        }
    }
    std::vector<std::string> argv = spec.argv;

    OutputStream out;
    OutputStream err;
    out.file = open_capture_file(spec.stdout_path);
    err.file = open_capture_file(spec.stderr_path);
    out.path = spec.stdout_path;
    err.path = spec.stderr_path;
    out.cap = err.cap = spec.output_cap_bytes;
    UniqueFd stdin_fd = make_stdin(spec.stdin_data);
    Pipe out_pipe = make_output_pipe();
    Pipe err_pipe = make_output_pipe();

    const Clock::time_point start = Clock::now();
    // Registered as ours with its start, so that the orphans it leaves are ended with it.
    CallOrphans orphans([&] {
        return spawn(spec, program, argv, env,
                     {stdin_fd.get(), out_pipe.write_end.get(), err_pipe.write_end.get()});
    });
    ChildProcess child(orphans.leader());  // destroyed (the leader reaped) before `orphans`
    // Only the child's group holds the write ends now, so end-of-file means it let go of them.
    stdin_fd.reset();
    out_pipe.write_end.reset();
    err_pipe.write_end.reset();
    out.pipe = std::move(out_pipe.read_end);
    err.pipe = std::move(err_pipe.read_end);

    ProcessResult result;
    result.pid = child.pid();
    // Kills the child's group if we die (SIGKILL included) or hang past the deadline; ended before
    // the leader is reaped, so that it can never signal a reused group id.
    const auto grace_for_watchdog =
        std::clamp(spec.kill_grace, std::chrono::milliseconds{0}, std::chrono::milliseconds{60000});
    std::optional<Watchdog> watchdog;
    watchdog.emplace(result.pid,
                     spec.timeout.count() > 0 && spec.timeout < kForever
                         ? spec.timeout + grace_for_watchdog + kMinDrain + std::chrono::seconds(1)
                         : std::chrono::milliseconds{0},
                     grace_for_watchdog);
    if (spec.on_spawn) {
        spec.on_spawn(
            result.pid);  // an exception here still kills and reaps the child (~ChildProcess)
    }
    supervise(spec, child, orphans, token, start, out, err, result);
    watchdog.reset();
    record_exit(child.reap(), out, err, result);
    return result;
}

nlohmann::json ProcessResult::to_json() const {
    return {
        {"pid", pid},
        {"exited", exited},
        {"exit_code", exited ? nlohmann::json(exit_code) : nlohmann::json(nullptr)},
        {"signaled", signaled},
        {"signal", signaled ? nlohmann::json(signal) : nlohmann::json(nullptr)},
        {"timed_out", timed_out},
        {"cancelled", cancelled},
        {"stdout_bytes", stdout_bytes},
        {"stderr_bytes", stderr_bytes},
        {"stdout_truncated", stdout_truncated},
        {"stderr_truncated", stderr_truncated},
        {"wall_ns", wall.count()},
        {"leftovers_killed", leftovers_killed},
    };
}

}  // namespace cko
