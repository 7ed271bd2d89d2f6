// `cko mcp` on stdin/stdout: one message a line read with a cap (LineReader), answers written
// one a line, and SIGTERM/SIGINT/SIGHUP ending the server as the end of its input does.
#include "cko/mcp/line_reader.hpp"
#include "cko/mcp/server.hpp"
#include "cko/util/error.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <csignal>
#include <iostream>
#include <string>

namespace cko::mcp {
namespace {

// SIGTERM, SIGINT and SIGHUP end the server the way the end of its input does: running calls are
// cancelled (their drivers ended, their invocations `cancelled`) and answered. Killed outright,
// it left them to be declared `lost`. The handler only writes to a self-pipe the reader waits on.
int g_stop_write_fd = -1;

extern "C" void on_stop_signal(int /*sig*/) {
    const char byte = 1;
    [[maybe_unused]] const ssize_t n = ::write(g_stop_write_fd, &byte, 1);
}

// The read end of the self-pipe, or -1 when it cannot be made (then signals act as before).
int install_stop_signals() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
        return -1;
    }
    g_stop_write_fd = fds[1];
    // A handler, not SIG_IGN: exec resets it, so drivers start with the default dispositions.
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (const int sig : {SIGTERM, SIGINT, SIGHUP}) {
        ::sigaction(sig, &sa, nullptr);
    }
    return fds[0];
}

}  // namespace

int serve_stdio(const ServerOptions& options) {
    std::ios::sync_with_stdio(false);
    Server server(options, [](const std::string& line) {
        std::cout << line << '\n';
        std::cout.flush();
    });
    // Read with a cap: std::getline would hold a line of any length (a 300 MB one took 1.7 GB).
    LineReader reader(STDIN_FILENO, options.max_message_bytes, install_stop_signals());
    std::string line;
    for (;;) {
        const LineReader::Next next = reader.next(line);
        if (next == LineReader::Next::stopped) {
            server.shut_down();
            return static_cast<int>(ExitClass::interrupted);
        }
        if (next == LineReader::Next::end) {
            break;
        }
        if (next == LineReader::Next::too_long) {
            server.refuse_oversized_line();
        } else {
            server.handle_line(line);
        }
    }
    server.shut_down();
    return 0;
}

}  // namespace cko::mcp
