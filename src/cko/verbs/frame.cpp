// The operation frame: request normalization, detaching into a new session, signal cancellation.
#include "cko/verbs/frame.hpp"

#include "cko/util/containment.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace cko::verbs {
namespace {

std::atomic<bool> g_cancel{false};

extern "C" void on_cancel_signal(int /*sig*/) {
    g_cancel.store(true);
}

void write_all(int fd, const std::string& line) {
    std::size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
        if (n <= 0) {
            return;
        }
        done += static_cast<std::size_t>(n);
    }
}

// The detached child: a session of its own, /dev/null for stdin/stdout/stderr; it writes
// "id <invocation>" (or "error <document>" when it fails before it has one) to `reply_fd`.
[[noreturn]] void run_as_detached_child(const Verb& verb, const Request& request, int reply_fd,
                                        const std::function<void()>& before_run) {
    ::setsid();
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, STDIN_FILENO);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    int code = 0;
    bool announced = false;
    Context child;
    child.cancel = signal_cancel_flag();
    child.want_text = false;
    child.announce = [&](const std::string& id) {
        write_all(reply_fd, "id " + id + "\n");
        ::close(reply_fd);
        announced = true;
    };
    try {
        install_signal_cancel();
        if (before_run) {
            before_run();
        }
        code = verb.run(request, child).exit_code;
    } catch (const Error& e) {
        code = e.exit_code();
        if (!announced) {
            write_all(reply_fd, "error " + e.to_json().dump() + "\n");
        }
    } catch (const std::exception& e) {
        code = Error(ErrorCode::internal, "").exit_code();
        if (!announced) {
            write_all(reply_fd,
                      "error " + Error(ErrorCode::internal, e.what()).to_json().dump() + "\n");
        }
    }
    std::_Exit(code);
}

// The child's first reply line (or what it wrote before it ended without one).
std::string read_reply(int fd) {
    std::string reply;
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(fd, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        reply.append(buf, static_cast<std::size_t>(n));
        if (reply.find('\n') != std::string::npos) {
            break;
        }
    }
    return reply;
}

// Runs the operation in a forked child in its own session; returns once the child announced its
// invocation (or failed before it could).
Outcome run_detached(const Verb& verb, const Request& request, Context& context,
                     const std::function<void()>& before_run) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        throw Error(ErrorCode::io_error, "cannot create a pipe to detach");
    }
    std::fflush(nullptr);
    const pid_t pid = fork_own_child();  // ours on purpose: no orphan sweep ends it
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        throw Error(ErrorCode::spawn_failed, "cannot fork to detach");
    }
    if (pid == 0) {
        ::close(fds[0]);
        run_as_detached_child(verb, request, fds[1], before_run);
    }
    ::close(fds[1]);
    const std::string reply = read_reply(fds[0]);
    ::close(fds[0]);
    if (reply.starts_with("id ")) {
        const std::string id = reply.substr(3, reply.find('\n') - 3);
        context.announce_invocation(id);
        return Outcome{
            fmt::format("{}\n", id), Json{{"id", id}, {"detached", true}, {"pid", pid}}, 0, {}};
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    forget_own_child(pid);
    if (reply.starts_with("error ")) {
        const Json e = Json::parse(reply.substr(6));
        const auto code = error_code_from_name(e["error"]["code"].get<std::string>())
                              .value_or(ErrorCode::internal);
        throw Error(code, e["error"]["message"].get<std::string>(), e["error"]["details"]);
    }
    throw Error(ErrorCode::internal,
                "the detached operation ended before it created its invocation");
}

}  // namespace

Json Outcome::materialized_document() const {
    if (!write_document) {
        return document;
    }
    std::ostringstream out;
    write_document(out);
    return Json::parse(out.str());
}

Outcome run_operation(const Verb& verb, const Json& request, Context& context,
                      const std::function<void()>& before_run) {
    return run_operation(verb, Request(verb.request, verb.request.normalize(request)), context,
                         before_run);
}

Outcome run_operation(const Verb& verb, const Request& r, Context& context,
                      const std::function<void()>& before_run) {
    if (verb.detachable && r.flag("detach")) {
        return run_detached(verb, r, context, before_run);
    }
    if (before_run) {
        before_run();
    }
    return verb.run(r, context);
}

Json error_document(const Error& error) {
    return error.to_json();
}

const std::atomic<bool>* signal_cancel_flag() {
    return &g_cancel;
}

void install_signal_cancel() {
    struct sigaction sa {};
    sa.sa_handler = on_cancel_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGHUP, &sa, nullptr);
}

}  // namespace cko::verbs
