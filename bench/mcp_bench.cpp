// `cko mcp` answers: tools/list (every verb's schema, the goal is well under 50 ms) through the
// server in process (no pipe), so the number is the server's own cost; and what a client waits
// for: the binary started, initialize and tools/list answered over its stdio.
#include "cko/mcp/server.hpp"

#include <benchmark/benchmark.h>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

extern char** environ;

namespace {

void BM_ToolsList(benchmark::State& state) {
    std::size_t bytes = 0;
    cko::mcp::Server server(cko::mcp::ServerOptions{},
                            [&bytes](const std::string& line) { bytes += line.size(); });
    const cko::Json request{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}};
    for (auto _ : state) {
        server.handle(request);
    }
    state.SetItemsProcessed(state.iterations());
    state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
}
BENCHMARK(BM_ToolsList)->Unit(benchmark::kMillisecond);

// A fresh server builds its tool list once (the verb table and every schema): the start-up cost.
void BM_ServerStartAndToolsList(benchmark::State& state) {
    const cko::Json request{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}};
    for (auto _ : state) {
        cko::mcp::Server server(cko::mcp::ServerOptions{},
                                [](const std::string& line) { benchmark::DoNotOptimize(line); });
        server.handle(request);
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ServerStartAndToolsList)->Unit(benchmark::kMillisecond);

// `cko mcp` started with its stdin and stdout on pipes; pid 0 when it could not be started.
struct McpChild {
    pid_t pid = 0;
    int to_child = -1;    // its stdin
    int from_child = -1;  // its stdout
};

McpChild spawn_mcp() {
    std::string binary = CKO_BINARY;
    std::string verb = "mcp";
    std::vector<char*> argv = {binary.data(), verb.data(), nullptr};
    int to_child[2];
    int from_child[2];
    if (pipe(to_child) != 0) {
        return {};
    }
    if (pipe(from_child) != 0) {
        close(to_child[0]);
        close(to_child[1]);
        return {};
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    posix_spawn_file_actions_addclose(&actions, to_child[1]);
    posix_spawn_file_actions_addclose(&actions, from_child[0]);
    pid_t pid = 0;
    const int spawned = posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(to_child[0]);
    close(from_child[1]);
    if (spawned != 0) {
        close(to_child[1]);
        close(from_child[0]);
        return {};
    }
    return {pid, to_child[1], from_child[0]};
}

// Ends it: stdin closed (the server ends), stdout closed, reaped.
void end_mcp(const McpChild& child) {
    close(child.to_child);
    close(child.from_child);
    int status = 0;
    waitpid(child.pid, &status, 0);
}

// `cko mcp` as a client starts it: spawn the binary, send initialize, initialized and tools/list
// on its stdin, read its stdout until the tools/list answer (id 2) has arrived, close stdin and
// reap it. Wall time (the child's CPU is not this process's).
void BM_ProcessStartToToolsList(benchmark::State& state) {
    const std::string messages =
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
        R"("capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})"
        "\n"
        R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
        "\n"
        R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})"
        "\n";
    for (auto _ : state) {
        const McpChild child = spawn_mcp();
        if (child.pid == 0) {
            state.SkipWithError("cannot start cko mcp");
            return;
        }
        bool answered = write(child.to_child, messages.data(), messages.size()) ==
                        static_cast<ssize_t>(messages.size());
        // The answers come one a line; tools/list's is the second.
        std::string out;
        char buffer[65536];
        int lines = 0;
        while (answered && lines < 2) {
            const ssize_t n = read(child.from_child, buffer, sizeof buffer);
            if (n <= 0) {
                answered = false;
                break;
            }
            for (ssize_t i = 0; i < n; ++i) {
                lines += buffer[i] == '\n' ? 1 : 0;
            }
            out.append(buffer, static_cast<std::size_t>(n));
        }
        end_mcp(child);
        if (!answered || out.find("\"id\":2") == std::string::npos) {
            state.SkipWithError("cko mcp did not answer tools/list");
            return;
        }
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ProcessStartToToolsList)->Unit(benchmark::kMillisecond)->UseRealTime();

// A live session: one `cko mcp` started and initialized before the clock, then tools/list sent
// on its stdin and its answer read back from stdout, round trip by round trip — what an agent
// waits for each time it lists the tools ([21]: goal ≤ 0.5 ms). Wall time per round trip.
void BM_LiveSessionToolsList(benchmark::State& state) {
    const McpChild child = spawn_mcp();
    if (child.pid == 0) {
        state.SkipWithError("cannot start cko mcp");
        return;
    }
    std::string pending;  // bytes read past the last complete line
    const auto send_and_read_line = [&](const std::string& message) {
        if (write(child.to_child, message.data(), message.size()) !=
            static_cast<ssize_t>(message.size())) {
            return false;
        }
        char buffer[65536];
        while (pending.find('\n') == std::string::npos) {
            const ssize_t n = read(child.from_child, buffer, sizeof buffer);
            if (n <= 0) {
                return false;
            }
            pending.append(buffer, static_cast<std::size_t>(n));
        }
        pending.erase(0, pending.find('\n') + 1);
        return true;
    };
    bool ok = send_and_read_line(
        R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
        R"("capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})"
        "\n");
    const std::string initialized = R"({"jsonrpc":"2.0","method":"notifications/initialized"})"
                                    "\n";
    ok = ok && write(child.to_child, initialized.data(), initialized.size()) ==
                   static_cast<ssize_t>(initialized.size());
    const std::string list = R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})"
                             "\n";
    for (auto _ : state) {
        if (!ok || !send_and_read_line(list)) {
            state.SkipWithError("cko mcp did not answer tools/list");
            break;
        }
    }
    end_mcp(child);
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LiveSessionToolsList)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
