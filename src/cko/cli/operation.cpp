// Long-verb support: signal-driven cancellation, detaching into a new session, progress on a TTY.
#include "cko/cli/operation.hpp"

#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace cko::cli {
namespace {

std::atomic<bool> g_cancel{false};

extern "C" void on_cancel_signal(int /*sig*/) { g_cancel.store(true); }

}  // namespace

const std::atomic<bool>* cancel_flag() { return &g_cancel; }

void install_cancel_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_cancel_signal;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGHUP, &sa, nullptr);
}

void add_root_option(CLI::App* verb, std::string& root) {
    const char* env = std::getenv("CKO_ROOT");
    root = env != nullptr && *env != '\0' ? env : "artifacts";
    verb->add_option("--root", root, "Artifact root (default $CKO_ROOT, else ./artifacts)");
}

void progress(bool json, const std::string& line) {
    if (json || ::isatty(STDERR_FILENO) == 0) {
        return;
    }
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    if (!line.empty() && line.back() == '\n') {
        return;
    }
    std::fflush(stderr);
}

CommandResult run_maybe_detached(bool detach, const std::function<CommandResult(const Announce&)>& operation) {
    if (!detach) {
        return operation([](const std::string&) {});
    }
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        throw Error(ErrorCode::io_error, "cannot create a pipe to detach");
    }
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        throw Error(ErrorCode::spawn_failed, "cannot fork to detach");
    }
    if (pid == 0) {
        ::close(fds[0]);
        ::setsid();
        const int null = ::open("/dev/null", O_RDWR);
        ::dup2(null, STDIN_FILENO);
        ::dup2(null, STDOUT_FILENO);
        ::dup2(null, STDERR_FILENO);
        int code = 0;
        bool announced = false;
        const auto announce = [&](const std::string& id) {
            const std::string line = "id " + id + "\n";
            [[maybe_unused]] ssize_t n = ::write(fds[1], line.data(), line.size());
            ::close(fds[1]);
            announced = true;
        };
        try {
            code = operation(announce).exit_code;
        } catch (const Error& e) {
            code = e.exit_code();
            if (!announced) {
                const std::string line = "error " + e.to_json().dump() + "\n";
                [[maybe_unused]] ssize_t n = ::write(fds[1], line.data(), line.size());
            }
        }
        std::_Exit(code);
    }
    ::close(fds[1]);
    std::string reply;
    char buf[4096];
    ssize_t n = 0;
    while ((n = ::read(fds[0], buf, sizeof buf)) != 0) {
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
    ::close(fds[0]);
    if (reply.starts_with("id ")) {
        const std::string id = reply.substr(3, reply.find('\n') - 3);
        return CommandResult{fmt::format("{}\n", id), Json{{"id", id}, {"detached", true}, {"pid", pid}}, 0};
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (reply.starts_with("error ")) {
        const Json e = Json::parse(reply.substr(6));
        const auto code = error_code_from_name(e["error"]["code"].get<std::string>()).value_or(ErrorCode::internal);
        throw Error(code, e["error"]["message"].get<std::string>(), e["error"]["details"]);
    }
    throw Error(ErrorCode::internal, "the detached operation ended before it created its invocation");
}

}  // namespace cko::cli
