// Persistent driver sessions (protocol v2, capability `session`): one driver process serves many
// requests of one operation over a pair of FIFOs; every request keeps its own deadline.
#pragma once

#include "cko/driver/call.hpp"
#include "cko/run/invocation.hpp"
#include "cko/util/process.hpp"

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>

namespace cko::driver {

// One running session driver: `argv --session`, with CKO_SESSION_REQUESTS / CKO_SESSION_NOTICES
// naming the two FIFOs (JSON lines: {"call", "request"} in, {"call", "status"} out). It runs under
// run_process on a thread of its own, so its process group, containment and watchdog are those of
// every driver call; a request that is not answered in time, a process that ends early and a
// protocol violation kill the whole group.
class SessionProcess {
public:
    // Starts the driver and waits until it exists; records driver_session_started (session number,
    // pid, start ticks, argv). Throws spawn_failed when it cannot be started.
    SessionProcess(run::Invocation& invocation, const DriverSpec& driver, int number,
                   const std::function<void(pid_t)>& on_spawn);
    // Asks the driver to exit, waits the cleanup grace, kills the group; records
    // driver_session_ended.
    ~SessionProcess();
    SessionProcess(const SessionProcess&) = delete;
    SessionProcess& operator=(const SessionProcess&) = delete;

    struct Served {
        ProcessResult process;  // what to record as the call's process
        std::optional<Error>
            error;  // the session failed this request (it is dead unless driver_failed by notice)
    };
    // Sends the request of `call` (request.json already written) and waits for its notice until
    // `timeout`. Copies what the driver wrote to stdout/stderr meanwhile into the call directory.
    [[nodiscard]] Served serve(const run::CallOutcome& call, std::chrono::milliseconds timeout);
    // Waits for the driver's first notice, {"ready": true}: its imports and process-wide setup
    // are done. Records driver_session_ready (ready_s). On an error the session is dead (killed).
    [[nodiscard]] std::optional<Error> wait_ready(std::chrono::milliseconds timeout);
    [[nodiscard]] bool alive() const { return !dead_; }
    [[nodiscard]] int requests_served() const noexcept { return served_; }
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }
    [[nodiscard]] std::uint64_t start_ticks() const noexcept { return start_ticks_; }

private:
    void kill_and_join();
    [[nodiscard]] bool process_ended() const { return ended_.load(); }
    [[nodiscard]] std::optional<std::string> next_line();
    void read_available();
    // Why a request got no answer to check: the code and message of the session's error.
    struct NoAnswer {
        ErrorCode code;
        std::string message;
    };
    // Writes the request `line` of `call` and waits for one notice line until `deadline`. Without
    // one, `process` says how the session ended (its result, cancelled, timed out).
    [[nodiscard]] std::variant<std::string, NoAnswer> await_notice(
        const std::string& line, const run::CallOutcome& call,
        std::chrono::steady_clock::time_point deadline, std::chrono::milliseconds timeout,
        ProcessResult& process);

    run::Invocation& invocation_;
    int number_;
    std::filesystem::path fifo_dir_;
    std::string relative_dir_;  // invocations/<id>/driver/session-NN
    std::filesystem::path stdout_path_;
    std::filesystem::path stderr_path_;
    CaptureBarrier capture_;  // a request's log slice is cut only after the pipes were read dry
    int requests_fd_ = -1;
    int notices_fd_ = -1;
    std::string pending_;  // notice bytes read but not yet parsed
    std::atomic<bool> kill_{false};
    std::atomic<bool> ended_{false};
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable spawned_cv_;
    pid_t pid_ = 0;
    std::uint64_t start_ticks_ = 0;
    bool spawn_seen_ = false;
    std::optional<Error> spawn_error_;
    ProcessResult result_;  // of the whole session, once ended
    std::chrono::steady_clock::time_point started_;
    int served_ = 0;
    bool dead_ = false;
};

// The sessions of one operation: starts the first (or on demand) and restarts a failed one once;
// a third start is refused (driver_failed). Never outlives the operation that owns it.
class DriverSessions {
public:
    DriverSessions(run::Invocation& invocation, DriverSpec driver,
                   std::function<void(pid_t)> on_spawn);
    // Starts a session unless one is alive, and waits until it is ready. eval::Session calls it
    // before taking the GPU locks, so a driver's start (imports) is not GPU time; a restart after a
    // failure happens inside a call, under the locks.
    [[nodiscard]] std::optional<Error> start();
    // One driver call through the session, judged exactly as call_driver judges a process.
    [[nodiscard]] CallReport call(const Request& request);
    [[nodiscard]] int started() const noexcept { return started_; }

    static constexpr int kMaxStarts = 2;

private:
    run::Invocation& invocation_;
    DriverSpec driver_;
    std::function<void(pid_t)> on_spawn_;
    std::unique_ptr<SessionProcess> current_;
    int started_ = 0;
};

}  // namespace cko::driver
