// `cko mcp`: the Model Context Protocol server over the verb table (JSON-RPC 2.0, line-delimited on
// stdio).
#pragma once

#include "cko/util/json.hpp"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace cko::mcp {

inline constexpr const char* kLatestProtocol = "2025-06-18";
// The longest message (one line of the stdio transport) the server reads: a longer one is refused
// without being held (`cko mcp --max-message-bytes`).
inline constexpr std::size_t kDefaultMaxMessageBytes = std::size_t{16} << 20;

struct ServerOptions {
    bool read_only = false;  // offer only the verbs that change nothing
    // The default root of every tool call that names none, and a root resources/list offers.
    std::string root;
    std::size_t max_message_bytes = kDefaultMaxMessageBytes;
};

// One server session. handle() takes one parsed message; replies and notifications go to `send`
// as one serialized JSON line each, without its newline (from any thread, one message at a time).
// tools/call runs on a thread of its own, so that ping and notifications/cancelled are answered
// while an operation runs.
class Server {
public:
    Server(ServerOptions options, std::function<void(const std::string& line)> send);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    void handle(const Json& message);
    // Handles one line of the stdio transport (a parse error is answered, not thrown).
    void handle_line(const std::string& line);
    // Answers a line longer than max_message_bytes, which the transport discarded unread.
    void refuse_oversized_line();
    // Cancels every running call and waits for them to end (end of input, shutdown).
    void shut_down();
    // Waits until no call runs (tests).
    void wait_idle();

    [[nodiscard]] const Json& tool_list() const { return tools_; }

private:
    struct Call {
        std::shared_ptr<std::atomic<bool>> cancel;
        bool cancelled = false;
    };

    void send(const Json& message);
    void reply(const Json& id, Json result);
    void reply_error(const Json& id, int code, const std::string& message, Json data = Json());
    Json initialize(const Json& params) const;
    Json resources_list();
    Json resources_read(const Json& params);
    void start_tool_call(const Json& id, const Json& params);
    Json call_tool(const Json& params, const std::shared_ptr<std::atomic<bool>>& cancel,
                   const Json& progress_token);

    ServerOptions options_;
    std::function<void(const std::string& line)> send_;
    Json tools_;
    // tools_ serialized once: tools/list is answered from this text, since the list never changes
    // within a session and serializing it was most of the answer's cost ([21]).
    std::string tools_text_;
    std::mutex send_mutex_;
    std::mutex calls_mutex_;
    std::map<std::string, Call> calls_;  // by the request id's JSON text
    std::set<std::string> roots_;        // artifact roots the session used (offered as resources)
    std::condition_variable idle_;
    int running_ = 0;  // calls on their own threads
    // The calls' threads, joined, never detached: a detached thread could still be tearing down
    // its thread-local state (OpenSSL's among it) when the process exits, which LeakSanitizer
    // reports and a destructor could race. A finished call's thread is joined when the next one
    // starts; wait_idle and shut_down join them all.
    std::map<std::thread::id, std::thread> threads_;
    std::vector<std::thread::id> finished_;
    void join_finished(std::unique_lock<std::mutex>& lock);
};

// Serves stdin/stdout until stdin ends; returns the process exit code.
int serve_stdio(const ServerOptions& options);

}  // namespace cko::mcp
