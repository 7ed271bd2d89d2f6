// The MCP server: initialize with version negotiation, ping, tools (one per verb of the table),
// resources (the store's records), progress notifications and cancellation.
#include "cko/mcp/server.hpp"

#include "cko/eval/store_listing.hpp"
#include "cko/util/build_info.hpp"
#include "cko/util/error.hpp"
#include "cko/verbs/frame.hpp"
#include "cko/verbs/verb.hpp"

#include <fmt/format.h>

#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

namespace cko::mcp {
namespace fs = std::filesystem;
namespace {

// JSON-RPC 2.0 error codes, and MCP's for a resource that does not exist.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;
constexpr int kInternalError = -32603;
constexpr int kResourceNotFound = -32002;

// The text half of a tool result: the human summary, cut where a model would not read on.
constexpr std::size_t kMaxText = 8000;

const std::vector<std::string>& supported_protocols() {
    static const std::vector<std::string> versions{kLatestProtocol, "2025-03-26", "2024-11-05"};
    return versions;
}

// With `cko mcp --root R`, R is the default root of every tool (a call may still name another).
Json build_tool_list(bool read_only, const std::string& default_root) {
    Json tools = Json::array();
    for (const verbs::Verb& v : verbs::verb_table()) {
        if (read_only && !v.read_only) {
            continue;
        }
        std::string description = v.summary;
        if (v.detachable) {
            description +=
                " (long: pass detach=true to get the invocation id at once, then status/wait)";
        }
        Json schema = v.request.schema();
        const verbs::Param* root = v.request.find("root");
        // Only a root other than the table's own default ($CKO_ROOT, else ./artifacts) changes
        // the description (the table's words stay true otherwise, for --request too).
        const char* env = std::getenv("CKO_ROOT");
        const std::string table_default = env != nullptr && *env != '\0' ? env : "artifacts";
        if (root != nullptr && root->root_default && !default_root.empty() &&
            default_root != table_default) {
            schema["properties"]["root"]["description"] =
                fmt::format("Artifact root (default: the server's --root, here {})", default_root);
        }
        tools.push_back(Json{{"name", v.tool_name()},
                             {"title", "cko " + v.cli_name()},
                             {"description", description},
                             {"inputSchema", std::move(schema)},
                             {"annotations",
                              {{"readOnlyHint", v.read_only},
                               {"destructiveHint", false},
                               {"openWorldHint", false}}}});
    }
    return tools;
}

std::string absolute_root(const std::string& root) {
    std::error_code ec;
    const fs::path p = fs::absolute(root, ec);
    return (ec ? fs::path(root) : p).lexically_normal().string();
}

std::string resource_uri(const std::string& root, const std::string& rest) {
    return "cko://" + absolute_root(root) + "/" + rest;
}

std::string short_text(const std::string& text) {
    if (text.size() <= kMaxText) {
        return text;
    }
    std::size_t cut = kMaxText;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
        --cut;  // never split a UTF-8 sequence
    }
    return text.substr(0, cut) +
           fmt::format("\n… ({} bytes in all; structuredContent holds the whole document)\n",
                       text.size());
}

bool is_word_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
}

// Verbs phrase their errors for the command line (`--retry-of`); a tool's caller knows argument
// names (`retry_of`). Each `--flag` of one of the verb's own parameters is written as its key;
// any other text (another program's flags, `cko ...` command lines of other verbs) stays.
std::string argument_spelling(std::string text, const verbs::RequestDef& request) {
    for (const verbs::Param& p : request.params) {
        const std::string flag = verbs::cli_option_name(p.key);
        std::size_t at = 0;
        while ((at = text.find(flag, at)) != std::string::npos) {
            const std::size_t end = at + flag.size();
            if ((at == 0 || !is_word_char(text[at - 1])) &&
                (end == text.size() || !is_word_char(text[end]))) {
                text.replace(at, flag.size(), p.key);
                at += p.key.size();
            } else {
                at = end;
            }
        }
    }
    return text;
}

// The error as a tool's caller reads it: message and fix in argument names.
Error for_tool_caller(const Error& e, const verbs::Verb* verb) {
    if (verb == nullptr) {
        return e;
    }
    Json details = e.details();
    if (details.is_object() && details.contains("fix") && details["fix"].is_string()) {
        details["fix"] = argument_spelling(details["fix"].get<std::string>(), verb->request);
    }
    return Error(e.code(), argument_spelling(e.what(), verb->request), std::move(details));
}

std::string error_line(const Error& e) {
    return fmt::format("cko: error[{}]: {}", error_code_name(e.code()), e.what());
}

}  // namespace

Server::Server(ServerOptions options, std::function<void(const std::string& line)> send)
    : options_(std::move(options)),
      send_(std::move(send)),
      tools_(build_tool_list(options_.read_only, options_.root)),
      tools_text_(tools_.dump(-1, ' ', false, Json::error_handler_t::replace)) {
    if (!options_.root.empty()) {
        roots_.insert(absolute_root(options_.root));
    }
}

Server::~Server() {
    shut_down();
}

void Server::send(const Json& message) {
    const std::string line = message.dump(-1, ' ', false, Json::error_handler_t::replace);
    const std::lock_guard<std::mutex> lock(send_mutex_);
    send_(line);
}

void Server::reply(const Json& id, Json result) {
    send(Json{{"jsonrpc", "2.0"}, {"id", id}, {"result", std::move(result)}});
}

void Server::reply_error(const Json& id, int code, const std::string& message, Json data) {
    Json error{{"code", code}, {"message", message}};
    if (!data.is_null()) {
        error["data"] = std::move(data);
    }
    send(Json{{"jsonrpc", "2.0"}, {"id", id}, {"error", std::move(error)}});
}

Json Server::initialize(const Json& params) const {
    const std::string asked = params.is_object() ? params.value("protocolVersion", "") : "";
    const auto& versions = supported_protocols();
    const std::string chosen = std::find(versions.begin(), versions.end(), asked) != versions.end()
                                   ? asked
                                   : std::string(kLatestProtocol);
    return Json{
        {"protocolVersion", chosen},
        {"capabilities",
         {{"tools", {{"listChanged", false}}}, {"resources", {{"listChanged", false}}}}},
        {"serverInfo",
         {{"name", "cko"}, {"title", "cuda-kernel-optimizer"}, {"version", build_version()}}},
        {"instructions",
         "cko measures GPU kernel changes as evidence. The loop: doctor, target_freeze, baseline, "
         "experiment_new, screen, confirm, champion_select, history, report. Each tool is one cko "
         "verb; "
         "structuredContent is the verb's --json document. Long verbs (baseline, screen, confirm, "
         "audit, "
         "driver_run) report progress and may run with detach=true (then status/wait with the "
         "id)."}};
}

Json Server::resources_list() {
    std::set<std::string> roots;
    {
        const std::lock_guard<std::mutex> lock(calls_mutex_);
        roots = roots_;
    }
    Json resources = Json::array();
    const auto add = [&](const std::string& root, const std::string& rest, const std::string& name,
                         const std::string& description) {
        resources.push_back(Json{{"uri", resource_uri(root, rest)},
                                 {"name", name},
                                 {"description", description},
                                 {"mimeType", "application/json"}});
    };
    for (const std::string& root : roots) {
        std::optional<eval::StoreListing> listing;
        try {
            // As `cko ls` lists it: declaring a dead owner's invocation `lost` unless read-only.
            listing = eval::list_store_at(root, !options_.read_only);
        } catch (const Error&) {
            continue;  // a damaged root is for fsck; it offers no resources
        }
        if (!listing) {
            continue;  // no store there (yet)
        }
        if (listing->target) {
            add(root, "target", "target", "The frozen Target of " + root);
            add(root, "champion", "champion", "The current champion of " + root);
        }
        for (const std::string& id : listing->experiments) {
            add(root, "experiments/" + id, id, "Experiment record");
        }
        for (const eval::ListedInvocation& inv : listing->invocations) {
            // An invocation that could not be read has no kind or state to say.
            const std::string kind = inv.status ? inv.status->kind : "";
            const std::string state =
                inv.status ? std::string(run::state_name(inv.status->state)) : "";
            add(root, "invocations/" + inv.id, inv.id,
                fmt::format("{} invocation, {}", kind, state));
        }
    }
    return Json{{"resources", resources}};
}

Json Server::resources_read(const Json& params) {
    const std::string uri = params.is_object() ? params.value("uri", "") : "";
    if (!uri.starts_with("cko://")) {
        throw Error(
            ErrorCode::invalid_argument,
            fmt::format(
                "resource \"{}\": cko resources are cko://ROOT/target, cko://ROOT/champion, "
                "cko://ROOT/experiments/ID or cko://ROOT/invocations/ID",
                uri),
            Json{{"uri", uri}});
    }
    const std::string path = uri.substr(6);
    std::string root;
    std::string id;
    for (const char* tail : {"/target", "/champion"}) {
        if (path.ends_with(tail)) {
            root = path.substr(0, path.size() - std::string(tail).size());
            id = std::string(tail).substr(1);
        }
    }
    for (const char* kind : {"/experiments/", "/invocations/"}) {
        const std::size_t at = path.rfind(kind);
        if (id.empty() && at != std::string::npos) {
            root = path.substr(0, at);
            id = path.substr(at + std::string(kind).size());
        }
    }
    if (root.empty() || id.empty()) {
        throw Error(ErrorCode::not_found,
                    fmt::format("resource \"{}\" names no record (see resources/list)", uri),
                    Json{{"uri", uri}});
    }
    // As `cko show` reads it (a read never writes).
    const Json record = eval::show_record(store::Store::open(root), id);
    return Json{
        {"contents", Json::array({Json{
                         {"uri", uri},
                         {"mimeType", "application/json"},
                         {"text", record.dump(2, ' ', false, Json::error_handler_t::replace)}}})}};
}

namespace {

// A tools/call result of an operation that ran: its document as structuredContent, its summary
// as text; a failure is a tool error with the reason beside the document.
Json tool_result(const verbs::Outcome& outcome, const verbs::Verb* verb) {
    Json document = outcome.materialized_document();
    if (!document.is_object()) {
        document = Json{{"value", std::move(document)}};
    }
    std::string text = outcome.text.empty()
                           ? document.dump(2, ' ', false, Json::error_handler_t::replace)
                           : outcome.text;
    if (outcome.failure) {
        // The operation ran and failed: a tool error, with the invocation's document and
        // the reason beside it (the summary alone says only "failed").
        const Error e = for_tool_caller(*outcome.failure, verb);
        document["error"] = verbs::error_document(e)["error"];
        text = short_text(text);
        text += fmt::format("{}{}", text.ends_with('\n') ? "" : "\n", error_line(e));
    } else {
        text = short_text(text);
    }
    return Json{{"content", Json::array({Json{{"type", "text"}, {"text", std::move(text)}}})},
                {"structuredContent", std::move(document)},
                {"isError", outcome.failure.has_value()},
                {"_meta", {{"cko/exit_code", outcome.exit_code}}}};
}

// A call's progress notifications. MCP wants `progress` to increase with every notification: a step
// that is not counted (the invocation's id, "confirm running…") adds one, a counted step (pairs of
// a comparison, calls of a baseline) is its units done after those, with `total` the same offset
// plus the units planned at most; `_meta` carries the exact counts, the running effect and the
// time left, and the message says them in words.
class ProgressNotifier {
public:
    explicit ProgressNotifier(Json token) : token_(std::move(token)) {}
    [[nodiscard]] bool wanted() const { return !token_.is_null(); }

    Json notification(const Progress& step) {
        Json params{{"progressToken", token_}, {"message", step.text()}};
        if (step.counted()) {
            last_ = std::max(offset_ + step.done, last_ + 1e-3);
            counting_ = true;
            params["total"] = offset_ + step.total;
            Json meta{{"cko/unit", step.unit}, {"cko/done", step.done}, {"cko/total", step.total}};
            if (step.effect_pct) {
                meta["cko/effect_pct_so_far"] = *step.effect_pct;
            }
            if (step.eta_s) {
                meta["cko/eta_s"] = *step.eta_s;
            }
            params["_meta"] = std::move(meta);
        } else {
            last_ = counting_ ? last_ + 1e-3 : last_ + 1;
            offset_ = counting_ ? offset_ : last_ + 1;
        }
        params["progress"] = last_;
        return Json{{"jsonrpc", "2.0"}, {"method", "notifications/progress"}, {"params", params}};
    }

private:
    Json token_;
    double last_ = -1;   // the progress value last sent
    double offset_ = 0;  // where counted units start: after the uncounted steps before them
    bool counting_ = false;
};

}  // namespace

Json Server::call_tool(const Json& params, const std::shared_ptr<std::atomic<bool>>& cancel,
                       const Json& progress_token) {
    const std::string name = params.value("name", "");
    const verbs::Verb* verb = verbs::find_verb_by_tool_name(name);
    Json arguments = params.value("arguments", Json::object());
    if (arguments.is_null()) {
        arguments = Json::object();
    }
    verbs::Context context;
    context.cancel = cancel.get();
    context.read_only = options_.read_only;
    auto notifier = std::make_shared<ProgressNotifier>(progress_token);
    if (!progress_token.is_null()) {
        context.progress = [this, notifier](const Progress& step) {
            if (!step.line.empty()) {
                send(notifier->notification(step));
            }
        };
    }
    // The invocation id goes out as soon as it exists, so that a client can follow or cancel it.
    context.announce = [this, notifier](const std::string& id) {
        if (notifier->wanted()) {
            send(notifier->notification(Progress{"invocation " + id}));
        }
    };
    try {
        const verbs::Param* root = verb != nullptr ? verb->request.find("root") : nullptr;
        if (root != nullptr && root->root_default && !options_.root.empty() &&
            arguments.is_object() && arguments.value("root", Json()).is_null()) {
            arguments["root"] = options_.root;  // the server's root, not ./artifacts of its cwd
        }
        const verbs::Request request(verb->request, verb->request.normalize(arguments));
        if (root != nullptr) {
            const std::lock_guard<std::mutex> lock(calls_mutex_);
            roots_.insert(absolute_root(request.json().value("root", "artifacts")));
        }
        const verbs::Outcome outcome = verbs::run_operation(*verb, request, context);
        return tool_result(outcome, verb);
    } catch (const Error& thrown) {
        const Error e = for_tool_caller(thrown, verb);
        return Json{{"content", Json::array({Json{{"type", "text"}, {"text", error_line(e)}}})},
                    {"structuredContent", verbs::error_document(e)},
                    {"isError", true},
                    {"_meta", {{"cko/exit_code", e.exit_code()}}}};
    } catch (const std::exception& e) {
        const Error wrapped(ErrorCode::internal, fmt::format("internal error: {}", e.what()));
        return Json{{"content", Json::array({Json{{"type", "text"}, {"text", wrapped.what()}}})},
                    {"structuredContent", verbs::error_document(wrapped)},
                    {"isError", true},
                    {"_meta", {{"cko/exit_code", wrapped.exit_code()}}}};
    }
}

void Server::start_tool_call(const Json& id, const Json& params) {
    const std::string name = params.is_object() ? params.value("name", "") : "";
    const verbs::Verb* verb = verbs::find_verb_by_tool_name(name);
    if (verb == nullptr || (options_.read_only && !verb->read_only)) {
        reply_error(id, kInvalidParams,
                    fmt::format("unknown tool \"{}\"{} (tools/list names them)", name,
                                options_.read_only && verb != nullptr ? " under --read-only" : ""),
                    Json{{"tool", name}});
        return;
    }
    const Json progress_token = params.contains("_meta") && params["_meta"].is_object()
                                    ? params["_meta"].value("progressToken", Json())
                                    : Json();
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    const std::string key = id.dump();
    std::unique_lock<std::mutex> lock(calls_mutex_);
    join_finished(lock);
    calls_[key] = Call{cancel, false};
    ++running_;
    std::thread thread([this, id, params, cancel, progress_token, key] {
        Json result = call_tool(params, cancel, progress_token);
        bool cancelled = false;
        {
            const std::lock_guard<std::mutex> lock(calls_mutex_);
            cancelled = calls_[key].cancelled;
            calls_.erase(key);
        }
        if (!cancelled) {  // a cancelled request gets no response (MCP cancellation)
            reply(id, std::move(result));
        }
        const std::lock_guard<std::mutex> lock(calls_mutex_);
        finished_.push_back(std::this_thread::get_id());
        --running_;
        idle_.notify_all();
    });
    const std::thread::id thread_id = thread.get_id();
    threads_.emplace(thread_id, std::move(thread));
}

// Joins the threads of calls that have answered (they are past their last lock, so a join waits
// only for their exit). Called with calls_mutex_ held; releases it while joining.
void Server::join_finished(std::unique_lock<std::mutex>& lock) {
    std::vector<std::thread> done;
    for (const std::thread::id& finished : finished_) {
        if (auto it = threads_.find(finished); it != threads_.end()) {
            done.push_back(std::move(it->second));
            threads_.erase(it);
        }
    }
    finished_.clear();
    if (done.empty()) {
        return;
    }
    lock.unlock();
    for (std::thread& t : done) {
        t.join();
    }
    lock.lock();
}

void Server::handle(const Json& message) {
    if (!message.is_object() || message.value("jsonrpc", "") != "2.0" ||
        !message.contains("method") || !message["method"].is_string()) {
        if (message.is_object() && (message.contains("result") || message.contains("error"))) {
            return;  // a response to a request we never send
        }
        reply_error(message.is_object() ? message.value("id", Json()) : Json(), kInvalidRequest,
                    "not a JSON-RPC 2.0 request: expected {\"jsonrpc\":\"2.0\",\"method\":...}");
        return;
    }
    const std::string method = message["method"].get<std::string>();
    const Json params = message.value("params", Json::object());
    if (!message.contains("id")) {  // a notification: never answered
        if (method == "notifications/cancelled" && params.is_object() &&
            params.contains("requestId")) {
            const std::lock_guard<std::mutex> lock(calls_mutex_);
            const auto it = calls_.find(params["requestId"].dump());
            if (it != calls_.end()) {
                it->second.cancelled = true;
                it->second.cancel->store(true);
            }
        }
        return;
    }
    const Json id = message["id"];
    try {
        if (method == "initialize") {
            reply(id, initialize(params));
        } else if (method == "ping") {
            reply(id, Json::object());
        } else if (method == "tools/list") {
            const std::string line =
                fmt::format(R"({{"jsonrpc":"2.0","id":{},"result":{{"tools":{}}}}})",
                            id.dump(-1, ' ', false, Json::error_handler_t::replace), tools_text_);
            const std::lock_guard<std::mutex> lock(send_mutex_);
            send_(line);
        } else if (method == "tools/call") {
            start_tool_call(id, params);
        } else if (method == "resources/list") {
            reply(id, resources_list());
        } else if (method == "resources/templates/list") {
            reply(id, Json{{"resourceTemplates", Json::array()}});
        } else if (method == "resources/read") {
            try {
                reply(id, resources_read(params));
            } catch (const Error& e) {
                reply_error(id,
                            e.code() == ErrorCode::not_found ? kResourceNotFound : kInvalidParams,
                            e.what(), verbs::error_document(e));
            }
        } else {
            reply_error(id, kMethodNotFound,
                        fmt::format("method \"{}\" is not offered by cko", method),
                        Json{{"method", method}});
        }
    } catch (const std::exception& e) {
        reply_error(id, kInternalError, e.what());
    }
}

void Server::handle_line(const std::string& line) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
        return;
    }
    Json message;
    try {
        message = Json::parse(line);
    } catch (const Json::parse_error& e) {
        // Where, never what: the parser's own message quotes the input it read, however long.
        reply_error(Json(), kParseError,
                    fmt::format("not JSON: parse error at byte {} of a {}-byte message", e.byte,
                                line.size()));
        return;
    } catch (const Json::exception&) {
        reply_error(Json(), kParseError, "not JSON");
        return;
    }
    if (message.is_array()) {  // a batch (2025-03-26); answered one by one
        for (const auto& m : message) {
            handle(m);
        }
        return;
    }
    handle(message);
}

void Server::refuse_oversized_line() {
    // The id is unknown (the message was not read): JSON-RPC answers such a request with id null.
    reply_error(Json(), kInvalidRequest,
                fmt::format("message refused: longer than {} bytes (cko mcp --max-message-bytes "
                            "sets the limit); it was discarded unread",
                            options_.max_message_bytes),
                Json{{"max_message_bytes", options_.max_message_bytes}});
}

void Server::wait_idle() {
    std::unique_lock<std::mutex> lock(calls_mutex_);
    idle_.wait(lock, [this] { return running_ == 0; });
    join_finished(lock);
}

void Server::shut_down() {
    {
        const std::lock_guard<std::mutex> lock(calls_mutex_);
        for (auto& [key, call] : calls_) {
            call.cancel->store(true);
        }
    }
    wait_idle();
}

}  // namespace cko::mcp
