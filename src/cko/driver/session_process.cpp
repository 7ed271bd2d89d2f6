// Persistent driver sessions: start, serve one request at a time with its own deadline, kill.
#include "cko/driver/session_process.hpp"

#include "cko/driver/stderr_tail.hpp"

#include "cko/run/owner.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/utf8.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace cko::driver {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kTick{10};
constexpr std::size_t kMaxNoticeBytes = 64 * 1024;

std::uint64_t file_size_or_zero(const fs::path& p) {
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    return ec ? 0 : size;
}

// The bytes [from, to) of a capture file, written as the call's own stdout.txt / stderr.txt, so
// that every call keeps its log and its stderr tail as a call of its own process would.
std::uint64_t copy_slice(const fs::path& from_file, std::uint64_t from, std::uint64_t to,
                         const fs::path& dest) {
    std::string bytes;
    if (to > from) {
        std::ifstream in(from_file, std::ios::binary);
        in.seekg(static_cast<std::streamoff>(from));
        bytes.resize(static_cast<std::size_t>(to - from));
        in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        bytes.resize(static_cast<std::size_t>(in.gcount()));
    }
    std::ofstream out(dest, std::ios::binary | std::ios::trunc);
    out << bytes;
    return bytes.size();
}

int open_fifo(const fs::path& path) {
    if (::mkfifo(path.c_str(), 0600) != 0) {
        throw Error(ErrorCode::io_error, fmt::format("cannot make the session FIFO {}: {}",
                                                     path.string(), std::strerror(errno)));
    }
    // O_RDWR: opening never blocks, and neither end ever sees EOF or SIGPIPE because of the other;
    // the driver's death is seen from its process, not from the pipe.
    const int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        throw Error(ErrorCode::io_error, fmt::format("cannot open the session FIFO {}: {}",
                                                     path.string(), std::strerror(errno)));
    }
    return fd;
}

std::string how_it_ended(const ProcessResult& p) {
    return p.exited ? fmt::format("exited with status {}", p.exit_code)
                    : fmt::format("was killed by signal {}", p.signal);
}

// What is wrong with the notice a session driver sent for call `number`, if anything: it must be
// one JSON line {"call": number, "status": "done" | "failed"}. `parsed` holds what it parsed to.
std::optional<std::string> notice_problem(const std::string& notice, long long number,
                                          Json& parsed) {
    try {
        parsed = Json::parse(notice);
    } catch (const std::exception&) {
        return fmt::format("the session driver's notice for call {} is not a JSON line: {}", number,
                           utf8_tail(notice, 200));
    }
    const bool well_formed = parsed.is_object() && parsed.contains("call") &&
                             parsed["call"].is_number_integer() && parsed.contains("status") &&
                             parsed["status"].is_string() &&
                             (parsed["status"] == "done" || parsed["status"] == "failed");
    if (!well_formed) {
        return fmt::format(
            "the session driver's notice for call {} must be {{\"call\": {}, "
            "\"status\": \"done\" | "
            "\"failed\"}}, got {}",
            number, number, utf8_tail(notice, 200));
    }
    if (parsed["call"].get<long long>() != number) {
        return fmt::format(
            "the session driver answered call {} while call {} was pending: "
            "one notice per request, "
            "in order (a second result for an earlier request?)",
            parsed["call"].get<long long>(), number);
    }
    return std::nullopt;
}

// The error of a call the session driver answered "failed" for: its message and stderr's tail.
Error failed_call_error(long long number, const Json& parsed, Json details) {
    const std::string message = parsed.value("message", "");
    const std::string tail = details["stderr_tail"].get<std::string>();
    return Error(ErrorCode::driver_failed,
                 fmt::format("the session driver could not run call {}{}{}", number,
                             message.empty() ? "" : ": " + std::string(utf8_tail(message, 600)),
                             tail.empty() ? "" : "; stderr ends with: " + tail),
                 std::move(details));
}

}  // namespace

SessionProcess::SessionProcess(run::Invocation& invocation, const DriverSpec& driver, int number,
                               const std::function<void(pid_t)>& on_spawn)
    : invocation_(invocation), number_(number) {
    fifo_dir_ = make_temp_dir("cko-session");  // the session's FIFOs
    requests_fd_ = open_fifo(fifo_dir_ / "requests");
    notices_fd_ = open_fifo(fifo_dir_ / "notices");
    relative_dir_ = store::layout::session_dir(invocation.id(), number);
    make_directories(invocation.store().real_path_of(relative_dir_));
    invocation.relist_before_next_call();  // the session's logs are ledgered when it ends
    stdout_path_ = invocation.store().root() / store::layout::call_stdout(relative_dir_);
    stderr_path_ = invocation.store().root() / store::layout::call_stderr(relative_dir_);

    ProcessSpec ps;
    ps.argv = driver.argv;
    ps.argv.emplace_back("--session");
    ps.working_dir = driver.working_dir;
    ps.env_allow = driver.env_allow;
    ps.env_set = {{"CKO_SESSION_REQUESTS", (fifo_dir_ / "requests").string()},
                  {"CKO_SESSION_NOTICES", (fifo_dir_ / "notices").string()}};
    ps.stdout_path = stdout_path_;
    ps.stderr_path = stderr_path_;
    ps.output_cap_bytes = std::uint64_t{64} << 20;
    ps.barrier = &capture_;
    // The session may live as long as its operation; every request has its own, shorter deadline.
    const auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(invocation.deadline() - Clock::now());
    ps.timeout = std::max(std::chrono::milliseconds(1), remaining);
    ps.kill_grace = invocation.limits().cleanup;
    ps.cancel = &kill_;
    ps.on_spawn = [this, on_spawn](pid_t pid) {
        if (on_spawn) {
            on_spawn(pid);
        }
        const std::lock_guard lock(mutex_);
        pid_ = pid;
        spawn_seen_ = true;
        spawned_cv_.notify_all();
    };
    started_ = Clock::now();
    thread_ = std::thread([this, ps] {
        try {
            result_ = run_process(ps);
        } catch (const Error& e) {
            const std::lock_guard lock(mutex_);
            spawn_error_ = e;
        }
        {
            const std::lock_guard lock(mutex_);
            spawn_seen_ = true;
            spawned_cv_.notify_all();
        }
        ended_.store(true);
    });
    std::unique_lock lock(mutex_);
    spawned_cv_.wait(lock, [this] { return spawn_seen_; });
    if (spawn_error_) {
        const Error e = *spawn_error_;
        lock.unlock();
        thread_.join();
        dead_ = true;
        ::close(requests_fd_);
        ::close(notices_fd_);
        std::error_code ec;
        fs::remove_all(fifo_dir_, ec);
        throw e;
    }
    const pid_t pid = pid_;
    lock.unlock();
    const auto who = run::process_identity_of(pid);
    start_ticks_ = who ? who->start_ticks : 0;
    invocation_.event("driver_session_started", Json{{"session", number_},
                                                     {"pgid", pid},
                                                     {"pid", pid},
                                                     {"start_ticks", start_ticks_},
                                                     {"argv", ps.argv},
                                                     {"dir", relative_dir_}});
}

SessionProcess::~SessionProcess() {
    if (!process_ended()) {
        // Ask politely; a driver that does not leave within the grace is killed with its group.
        const std::string bye = "{\"exit\":true}\n";
        [[maybe_unused]] const ssize_t n = ::write(requests_fd_, bye.data(), bye.size());
        const auto until = Clock::now() + invocation_.limits().cleanup;
        while (!process_ended() && Clock::now() < until) {
            std::this_thread::sleep_for(kTick);
        }
    }
    kill_and_join();
    ::close(requests_fd_);
    ::close(notices_fd_);
    std::error_code ec;
    fs::remove_all(fifo_dir_, ec);
    try {
        std::vector<std::string> logs;  // ledgered in one commit
        for (const std::string& rel : {store::layout::call_stdout(relative_dir_),
                                       store::layout::call_stderr(relative_dir_)}) {
            if (fs::exists(invocation_.store().root() / rel)) {
                logs.push_back(rel);
            }
        }
        invocation_.store().ledger_files(logs);
        invocation_.event(
            "driver_session_ended",
            Json{{"session", number_},
                 {"pid", pid_},
                 {"requests_served", served_},
                 {"wall_s", std::chrono::duration<double>(Clock::now() - started_).count()},
                 {"process", result_.to_json()}});
    } catch (const Error&) {
        // A destructor records what it can; the invocation's result still says how it ended.
    }
}

void SessionProcess::kill_and_join() {
    kill_.store(true);
    if (thread_.joinable()) {
        thread_.join();
    }
    dead_ = true;
}

void SessionProcess::read_available() {
    char buffer[4096];
    while (true) {
        const ssize_t n = ::read(notices_fd_, buffer, sizeof buffer);
        if (n > 0) {
            pending_.append(buffer, static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR) {
            continue;
        }
        return;  // EAGAIN: nothing more now
    }
}

std::optional<std::string> SessionProcess::next_line() {
    read_available();
    const std::size_t nl = pending_.find('\n');
    if (nl == std::string::npos) {
        return std::nullopt;
    }
    std::string line = pending_.substr(0, nl);
    pending_.erase(0, nl + 1);
    return line;
}

std::variant<std::string, SessionProcess::NoAnswer> SessionProcess::await_notice(
    const std::string& line, const run::CallOutcome& call, Clock::time_point deadline,
    std::chrono::milliseconds timeout, ProcessResult& process) {
    std::size_t written = 0;
    while (true) {
        if (written < line.size()) {
            const ssize_t n = ::write(requests_fd_, line.data() + written, line.size() - written);
            if (n > 0) {
                written += static_cast<std::size_t>(n);
            }
        }
        if (written == line.size()) {
            if (std::optional<std::string> notice = next_line()) {
                return *std::move(notice);
            }
            if (pending_.size() > kMaxNoticeBytes) {
                return NoAnswer{ErrorCode::invalid_driver_result,
                                fmt::format("the session driver wrote more than {} bytes without a "
                                            "newline on its notice "
                                            "channel while serving call {}",
                                            kMaxNoticeBytes, call.number)};
            }
        }
        if (process_ended()) {
            kill_and_join();
            process = result_;
            // It may have answered just before it ended.
            if (std::optional<std::string> notice = next_line()) {
                return *std::move(notice);
            }
            return NoAnswer{
                ErrorCode::driver_failed,
                fmt::format("the session driver {} before answering call {} (after {} request{}){}",
                            how_it_ended(result_), call.number, served_, served_ == 1 ? "" : "s",
                            [&] {
                                const std::string tail = stderr_tail(stderr_path_, 1000, 600);
                                return tail.empty() ? std::string() : "; stderr ends with: " + tail;
                            }())};
        }
        if (invocation_.cancelled()) {
            process.cancelled = true;
            return NoAnswer{
                ErrorCode::interrupted,
                "the driver call was cancelled; the session's process group was killed"};
        }
        if (Clock::now() >= deadline) {
            process.timed_out = true;
            return NoAnswer{
                ErrorCode::timed_out,
                fmt::format("the session driver did not answer call {} within its {} s limit; its "
                            "process group "
                            "was killed (raise limits.command_timeout_s or make the driver faster)",
                            call.number, static_cast<double>(timeout.count()) / 1000.0)};
        }
        pollfd pfd{notices_fd_, POLLIN, 0};
        (void)::poll(&pfd, 1, static_cast<int>(kTick.count()));
    }
}

SessionProcess::Served SessionProcess::serve(const run::CallOutcome& call,
                                             std::chrono::milliseconds timeout) {
    Served served;
    const auto started = Clock::now();
    const std::uint64_t out_from = file_size_or_zero(stdout_path_);
    const std::uint64_t err_from = file_size_or_zero(stderr_path_);
    const Json details_base{
        {"call_dir", call.call_dir.string()}, {"session", number_}, {"session_dir", relative_dir_}};

    std::optional<Clock::time_point>
        answered;  // the call's wall ends there (the log copy is cko's)
    auto finish_logs = [&] {
        // The driver flushed before it answered; what it wrote is in the pipes, maybe not yet in
        // the capture files (a timed-out wait still cuts what is there).
        (void)capture_.wait(std::chrono::seconds(2));
        served.process.stdout_bytes =
            copy_slice(stdout_path_, out_from, file_size_or_zero(stdout_path_),
                       call.call_dir / store::layout::kStdoutFile);
        served.process.stderr_bytes =
            copy_slice(stderr_path_, err_from, file_size_or_zero(stderr_path_),
                       call.call_dir / store::layout::kStderrFile);
        served.process.pid = pid_;
        served.process.wall = std::chrono::duration_cast<std::chrono::nanoseconds>(
            answered.value_or(Clock::now()) - started);
    };
    auto fail = [&](ErrorCode code, const std::string& message) {
        kill_and_join();
        finish_logs();
        Json details = details_base;
        details["stderr_tail"] =
            stderr_tail(call.call_dir / store::layout::kStderrFile, 1000, 2000);
        details["process"] = result_.to_json();
        served.error = Error(code, message, details);
        return served;
    };

    if (process_ended()) {
        served.process = result_;
        return fail(ErrorCode::driver_failed,
                    fmt::format("the session driver {} before call {} was sent",
                                how_it_ended(result_), call.number));
    }
    const std::string line =
        Json{{"call", call.number},
             {"request", (call.call_dir / store::layout::kRequestFile).string()}}
            .dump() +
        "\n";
    const auto answer = await_notice(line, call, started + timeout, timeout, served.process);
    answered = Clock::now();
    if (const auto* no_answer = std::get_if<NoAnswer>(&answer)) {
        return fail(no_answer->code, no_answer->message);
    }
    Json parsed;
    if (auto problem = notice_problem(std::get<std::string>(answer), call.number, parsed)) {
        return fail(ErrorCode::invalid_driver_result, *problem);
    }
    // A second notice already there for the same request is a protocol violation too.
    read_available();
    if (pending_.find('\n') != std::string::npos) {
        return fail(
            ErrorCode::invalid_driver_result,
            fmt::format(
                "the session driver sent more than one notice for call {}: one result per request",
                call.number));
    }
    ++served_;
    if (!process_ended()) {
        served.process.exited = true;
        served.process.exit_code = parsed["status"] == "done" ? 0 : parsed.value("exit_code", 1);
    } else {
        served.process = result_;
    }
    finish_logs();
    if (parsed["status"] == "failed") {
        Json details = details_base;
        details["stderr_tail"] =
            stderr_tail(call.call_dir / store::layout::kStderrFile, 1000, 2000);
        served.error = failed_call_error(call.number, parsed, std::move(details));
    }
    return served;
}

std::optional<Error> SessionProcess::wait_ready(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    const auto fail = [&](ErrorCode code, const std::string& message) {
        kill_and_join();
        const std::string tail = stderr_tail(stderr_path_, 1000, 600);
        return Error(code, tail.empty() ? message : message + "; stderr ends with: " + tail,
                     Json{{"session", number_},
                          {"session_dir", relative_dir_},
                          {"stderr_tail", stderr_tail(stderr_path_, 1000, 2000)},
                          {"process", result_.to_json()}});
    };
    const std::string expected =
        "a session driver's first notice on CKO_SESSION_NOTICES is {\"ready\": true}, written "
        "once it has started (imports done), before it reads a request (docs/PROTOCOL.md)";
    while (true) {
        std::optional<std::string> line = next_line();
        if (!line && process_ended()) {
            kill_and_join();
            line = next_line();  // it may have said so just before it ended
            if (!line) {
                return fail(ErrorCode::driver_failed,
                            fmt::format("the session driver {} before it was ready ({})",
                                        how_it_ended(result_), expected));
            }
        }
        if (line) {
            Json parsed;
            try {
                parsed = Json::parse(*line);
            } catch (const std::exception&) {
                parsed = nullptr;
            }
            if (!parsed.is_object() || parsed.size() != 1 || !parsed.contains("ready") ||
                parsed["ready"] != true) {
                return fail(ErrorCode::invalid_driver_result,
                            fmt::format("the session driver's first notice was {}: {}",
                                        utf8_tail(*line, 200), expected));
            }
            if (process_ended()) {
                return fail(ErrorCode::driver_failed,
                            fmt::format("the session driver {} right after it was ready",
                                        how_it_ended(result_)));
            }
            invocation_.event(
                "driver_session_ready",
                Json{{"session", number_},
                     {"ready_s", std::chrono::duration<double>(Clock::now() - started_).count()}});
            return std::nullopt;
        }
        if (pending_.size() > kMaxNoticeBytes) {
            return fail(ErrorCode::invalid_driver_result,
                        fmt::format("the session driver wrote more than {} bytes without a newline "
                                    "on its notice channel before it was ready",
                                    kMaxNoticeBytes));
        }
        if (invocation_.cancelled()) {
            return fail(ErrorCode::interrupted,
                        "cancelled while the session driver started; its process group was killed");
        }
        if (Clock::now() >= deadline) {
            return fail(ErrorCode::timed_out,
                        fmt::format("the session driver was not ready within {} s "
                                    "(limits.command_timeout_s); its process group was killed: {}",
                                    static_cast<double>(timeout.count()) / 1000.0, expected));
        }
        pollfd pfd{notices_fd_, POLLIN, 0};
        (void)::poll(&pfd, 1, static_cast<int>(kTick.count()));
    }
}

DriverSessions::DriverSessions(run::Invocation& invocation, DriverSpec driver,
                               std::function<void(pid_t)> on_spawn)
    : invocation_(invocation), driver_(std::move(driver)), on_spawn_(std::move(on_spawn)) {}

std::optional<Error> DriverSessions::start() {
    if (current_ && current_->alive()) {
        return std::nullopt;
    }
    current_.reset();
    if (started_ >= kMaxStarts) {
        return Error(
            ErrorCode::driver_failed,
            fmt::format("the session driver failed {} times in this operation; it is not started "
                        "again",
                        started_));
    }
    try {
        current_ = std::make_unique<SessionProcess>(invocation_, driver_, ++started_, on_spawn_);
    } catch (const Error& e) {
        return e;
    }
    if (auto error = current_->wait_ready(invocation_.limits().command)) {
        current_.reset();  // records driver_session_ended
        return error;
    }
    return std::nullopt;
}

CallReport DriverSessions::call(const Request& request) {
    CallReport report;
    if (auto error = start()) {
        report.error = std::move(error);
        return report;
    }
    const run::CallSlot slot = invocation_.open_call();
    report.outcome = invocation_.begin_call(
        slot, call_request_json(request, slot.output_dir, slot.deadline_unix_ns));
    invocation_.event("call_started",
                      Json{{"call", report.outcome.number},
                           {"pgid", current_->pid()},
                           {"start_ticks", current_->start_ticks()},
                           {"session", started_},
                           {"request_in_session", current_->requests_served() + 1}});
    SessionProcess::Served served = current_->serve(report.outcome, slot.timeout);
    if (!current_->alive()) {
        current_.reset();  // records driver_session_ended before the call is judged
    }
    try {
        invocation_.end_call(report.outcome, served.process);
    } catch (const Error& e) {
        report.error = e;
        return report;
    }
    report.error = served.error;
    judge_call(invocation_, request, report);
    return report;
}

}  // namespace cko::driver
