// Runs one argv as a child process (no shell) and reports exactly how it ended.
#pragma once

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace cko {

// Lets another thread wait until everything the child wrote before the wait began is in the capture
// files. A session driver flushes its output before it answers a request, so after its notice,
// wait() makes that request's slice of the logs complete (the pipes are read by run_process's
// thread, which may lag behind). Give one to ProcessSpec::barrier; it must outlive run_process.
class CaptureBarrier {
public:
    CaptureBarrier();
    ~CaptureBarrier();
    CaptureBarrier(const CaptureBarrier&) = delete;
    CaptureBarrier& operator=(const CaptureBarrier&) = delete;

    // True once run_process has read both pipes dry after this call began (or had already ended
    // and drained them); false when `limit` passed first.
    [[nodiscard]] bool wait(std::chrono::milliseconds limit);

    // For run_process: the descriptor it polls, the request count to answer before a drain, the
    // answer after it, and the end (every later wait returns at once).
    [[nodiscard]] int event_fd() const noexcept { return fd_; }
    [[nodiscard]] std::uint64_t begin_drain();
    void drained(std::uint64_t upto);
    void close();

private:
    int fd_ = -1;  // eventfd
    std::mutex mutex_;
    std::condition_variable cv_;
    std::uint64_t asked_ = 0;
    std::uint64_t done_ = 0;
    bool closed_ = false;
};

struct ProcessSpec {
    // argv[0] without a '/' is looked up in the PATH of the scrubbed environment (absolute entries
    // only; "/bin:/usr/bin" when it has no PATH, as execvp does). With a '/', it is used as is, so
    // a relative one is relative to working_dir.
    std::vector<std::string> argv;
    std::filesystem::path working_dir;   // empty = inherit
    std::vector<std::string> env_allow;  // names copied from our environment; others dropped
    std::map<std::string, std::string> env_set;  // explicit values, added or overriding
    // Capture files, created or truncated before the child starts; empty = discard (the bytes are
    // still read and counted). Both may name the same file: it is opened O_APPEND.
    std::filesystem::path stdout_path;
    std::filesystem::path stderr_path;
    // Per stream: bytes beyond the cap are read and dropped, so a chatty child never blocks.
    std::uint64_t output_cap_bytes = std::uint64_t{16} << 20;
    std::chrono::milliseconds timeout{0};        // 0 = none; the deadline counts from the start
    std::chrono::milliseconds kill_grace{2000};  // SIGTERM, this long, then SIGKILL
    std::string stdin_data;                      // given on stdin; empty = /dev/null
    // When set and it becomes true: the same kill sequence as a deadline, result.cancelled.
    const std::atomic<bool>* cancel = nullptr;
    // Called once right after the spawn with the child's pid (= its process group id), before
    // waiting: lets the caller record the group so that it can be cleaned up if we die.
    std::function<void(pid_t)> on_spawn;
    // Called once when a deadline or cancel starts the kill sequence, before the first signal: a
    // launcher whose work runs elsewhere (a Slurm job) ends it there first. Exceptions are ignored.
    std::function<void()> before_kill;
    // When set: run_process answers barrier->wait() calls by reading the pipes dry (sessions).
    CaptureBarrier* barrier = nullptr;
};

struct ProcessResult {
    bool exited = false;  // exit_code is valid
    int exit_code = 0;
    bool signaled = false;  // signal is valid
    int signal = 0;
    bool timed_out = false;         // we sent the kill sequence because the deadline passed
    bool cancelled = false;         // ... because the cancel flag became true
    bool stdout_truncated = false;  // the capture file holds less than the child wrote
    bool stderr_truncated = false;
    std::uint64_t stdout_bytes = 0;  // bytes the child wrote, dropped ones included
    std::uint64_t stderr_bytes = 0;
    std::chrono::nanoseconds wall{0};  // from just before the spawn to the leader's exit
    // Members of the child's process group were still alive when the leader ended; they were
    // killed.
    bool leftovers_killed = false;
    pid_t pid = 0;

    // Always the same keys; exit_code / signal are null when not valid.
    [[nodiscard]] nlohmann::json to_json() const;
};

// Runs spec.argv in its own process group with only stdin/stdout/stderr open, and returns when the
// leader has ended and the rest of its group has been killed, the child reaped. Throws
// cko::Error: invalid_argument (empty argv, NUL bytes, bad variable names), io_error (a capture
// file cannot be opened or written), spawn_failed (the program cannot be found or executed, or
// working_dir cannot be entered). Safe to call from several threads at once; installs no signal
// handlers. Processes that leave the group (setsid, daemons) are found by the environment marker
// of util/containment.hpp and killed when the leader ends (unless they scrubbed their
// environment); a watchdog process kills the group if we die first. Output still arriving
// kill_grace after the group was killed is not waited for.
[[nodiscard]] ProcessResult run_process(const ProcessSpec& spec);

// Where run_process would find `name` in environment `env` ("NAME=value" entries): `name` itself if
// it holds a '/', else the first executable regular file of that name in env's PATH (absolute
// entries only; "/bin:/usr/bin" without PATH). Empty when there is none.
[[nodiscard]] std::optional<std::string> find_program(const std::string& name,
                                                      const std::vector<std::string>& env);

// "NAME=value" entries, sorted by name: each allowed name set in our environment, then env_set on
// top. Throws cko::Error(invalid_argument) for an empty name, or one holding '=' or NUL.
[[nodiscard]] std::vector<std::string> scrubbed_environment(
    const std::vector<std::string>& allow, const std::map<std::string, std::string>& set);

}  // namespace cko
