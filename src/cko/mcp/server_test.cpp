// The MCP server in process: one JSON-RPC message in, the replies a client would read out.
#include "cko/mcp/server.hpp"

#include "cko/eval/store_listing.hpp"
#include "cko/run/invocation.hpp"
#include "cko/store/store.hpp"
#include "cko/verbs/verb.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <mutex>

namespace cko::mcp {
namespace {

class ServerTest : public ::testing::Test {
protected:
    Json ask(Server& server, const Json& message) {
        server.handle(message);
        server.wait_idle();
        const std::lock_guard<std::mutex> lock(mutex_);
        for (auto it = sent_.rbegin(); it != sent_.rend(); ++it) {
            if (it->contains("id") && (*it)["id"] == message.value("id", Json())) {
                return *it;
            }
        }
        return Json();
    }
    Server make(bool read_only = false, std::string root = "") {
        return Server(ServerOptions{read_only, std::move(root)}, [this](const std::string& line) {
            const std::lock_guard<std::mutex> lock(mutex_);
            EXPECT_EQ(line.find('\n'), std::string::npos) << "one message is one line";
            sent_.push_back(Json::parse(line));
        });
    }
    static Json request(int id, const std::string& method, Json params = Json::object()) {
        return Json{
            {"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
    }

    std::mutex mutex_;
    std::vector<Json> sent_;
};

TEST_F(ServerTest, InitializeNegotiatesTheProtocolVersion) {
    Server s = make();
    Json r = ask(s, request(1, "initialize",
                            {{"protocolVersion", "2025-06-18"}, {"capabilities", Json::object()}}));
    EXPECT_EQ(r["result"]["protocolVersion"], "2025-06-18");
    EXPECT_EQ(r["result"]["serverInfo"]["name"], "cko");
    EXPECT_TRUE(r["result"]["capabilities"].contains("tools"));
    r = ask(s, request(2, "initialize", {{"protocolVersion", "2024-11-05"}}));
    EXPECT_EQ(r["result"]["protocolVersion"], "2024-11-05");
    r = ask(s, request(3, "initialize", {{"protocolVersion", "1999-01-01"}}));
    EXPECT_EQ(r["result"]["protocolVersion"], kLatestProtocol);
    EXPECT_EQ(ask(s, request(4, "ping"))["result"], Json::object());
}

TEST_F(ServerTest, ToolsListOffersOneToolPerVerbWithItsRequestSchema) {
    Server s = make();
    const Json r = ask(s, request(1, "tools/list"));
    const Json& tools = r["result"]["tools"];
    ASSERT_EQ(tools.size(), verbs::verb_table().size());
    for (std::size_t i = 0; i < tools.size(); ++i) {
        const verbs::Verb& v = verbs::verb_table()[i];
        EXPECT_EQ(tools[i]["name"], v.tool_name());
        EXPECT_EQ(tools[i]["inputSchema"], v.request.schema());
    }
}

// tools/list is answered from text serialized once: the answer still echoes each request's id,
// whatever its JSON type, and carries the same list every time.
TEST_F(ServerTest, ToolsListEchoesAnyIdAroundTheSameList) {
    Server s = make();
    const Json first = ask(s, request(1, "tools/list"));
    for (const Json& id : {Json("a \"quoted\" id"), Json(-7), Json(2.5)}) {
        Json message = request(0, "tools/list");
        message["id"] = id;
        const Json r = ask(s, message);
        EXPECT_EQ(r["id"], id);
        EXPECT_EQ(r["jsonrpc"], "2.0");
        EXPECT_EQ(r["result"], first["result"]);
        EXPECT_EQ(r["result"]["tools"], s.tool_list());
    }
}

TEST_F(ServerTest, ReadOnlyOffersOnlyVerbsThatChangeNothing) {
    Server s = make(true);
    const Json tools = ask(s, request(1, "tools/list"))["result"]["tools"];
    bool has_ls = false;
    for (const auto& t : tools) {
        const verbs::Verb* v = verbs::find_verb_by_tool_name(t["name"]);
        ASSERT_NE(v, nullptr);
        EXPECT_TRUE(v->read_only) << v->tool_name();
        has_ls = has_ls || t["name"] == "ls";
    }
    EXPECT_TRUE(has_ls);
    const Json r = ask(
        s, request(2, "tools/call", {{"name", "target_freeze"}, {"arguments", Json::object()}}));
    EXPECT_EQ(r["error"]["code"], -32602);
}

TEST_F(ServerTest, ToolsCallGivesTheOutcomeDocumentAndToolErrorsCarryCkosCode) {
    Server s = make();
    Json r =
        ask(s, request(1, "tools/call", {{"name", "self-check"}, {"arguments", Json::object()}}));
    EXPECT_EQ(r["result"]["isError"], false);
    EXPECT_EQ(r["result"]["structuredContent"]["format_version"], "cko/self-check-v1");
    EXPECT_EQ(r["result"]["content"][0]["type"], "text");
    r = ask(s, request(2, "tools/call",
                       {{"name", "show"},
                        {"arguments", {{"root", "/nonexistent/cko"}, {"id", "target"}}}}));
    EXPECT_EQ(r["result"]["isError"], true);
    EXPECT_TRUE(r["result"]["structuredContent"]["error"].contains("code"));
    r = ask(s, request(3, "tools/call", {{"name", "ls"}, {"arguments", {{"rooot", "x"}}}}));
    EXPECT_EQ(r["result"]["structuredContent"]["error"]["code"], "invalid_request");
    r = ask(s, request(4, "tools/call", {{"name", "no_such_tool"}}));
    EXPECT_EQ(r["error"]["code"], -32602);
}

TEST_F(ServerTest, TheServersRootIsEveryToolsDefaultRoot) {
    // `cko mcp --root R`: a call without root works on R, not on ./artifacts of the server's
    // working directory; a call may still name another root.
    const test::TempDir scratch("cko-mcp-root");
    const auto& dir = scratch.path();
    const std::string root = (dir / "art").string();
    (void)store::Store::create(root);
    Server s = make(false, root);
    Json r = ask(s, request(1, "tools/call", {{"name", "ls"}, {"arguments", Json::object()}}));
    EXPECT_EQ(r["result"]["isError"], false) << r.dump();
    r = ask(s, request(2, "tools/call", {{"name", "ls"}}));
    EXPECT_EQ(r["result"]["isError"], false) << r.dump();
    r = ask(s, request(3, "tools/call",
                       {{"name", "ls"}, {"arguments", {{"root", (dir / "other").string()}}}}));
    EXPECT_EQ(r["result"]["isError"], true);
    EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("other"), std::string::npos)
        << r.dump();
    // The schema says so. (The listing is held: a range-for over a temporary's member would read
    // freed memory, which ASan reported.)
    const Json listing = ask(s, request(4, "tools/list"));
    for (const auto& tool : listing["result"]["tools"]) {
        if (tool["name"] == "baseline") {
            EXPECT_NE(
                tool["inputSchema"]["properties"]["root"]["description"].get<std::string>().find(
                    root),
                std::string::npos);
        }
    }
}

// resources/list offers the records of each root the server knows that holds a store (as `cko ls`
// lists them), resources/read gives one as `cko show` does.
TEST_F(ServerTest, ResourcesAreTheStoresRecordsReadAsShowReadsThem) {
    const test::TempDir scratch("cko-mcp-resources");
    const auto& dir = scratch.path();
    std::filesystem::create_directories(dir / "empty");
    const std::string root = (dir / "art").string();
    const store::Store store = store::Store::create(root);
    run::Invocation inv =
        run::Invocation::create(store, "screen", Json::object(), run::Limits{}, nullptr);
    (void)inv.finish(run::InvocationState::succeeded, "planted by the test",
                     Json{{"verdict", "improved"}});
    Server s = make(false, root);
    // A root the server met in a call but that holds no store offers nothing.
    Json r = ask(s, request(1, "tools/call",
                            {{"name", "ls"}, {"arguments", {{"root", (dir / "empty").string()}}}}));
    EXPECT_EQ(r["result"]["isError"], true);

    r = ask(s, request(2, "resources/list"));
    const Json resources = r["result"]["resources"];
    ASSERT_EQ(resources.size(), 1u) << r.dump();  // no Target yet: no target, no champion
    const std::string uri = "cko://" + std::filesystem::absolute(root).lexically_normal().string() +
                            "/invocations/" + inv.id();
    EXPECT_EQ(resources[0]["uri"], uri);
    EXPECT_EQ(resources[0]["name"], inv.id());
    EXPECT_EQ(resources[0]["description"], "screen invocation, succeeded");
    EXPECT_EQ(resources[0]["mimeType"], "application/json");

    r = ask(s, request(3, "resources/read", {{"uri", uri}}));
    EXPECT_EQ(r["result"]["contents"][0]["uri"], uri);
    EXPECT_EQ(r["result"]["contents"][0]["text"], eval::show_record(store, inv.id()).dump(2));
    r = ask(s, request(4, "resources/read", {{"uri", "cko://" + root + "/experiments/exp-none"}}));
    EXPECT_EQ(r["error"]["code"], -32002) << r.dump();  // MCP's resource not found
}

TEST_F(ServerTest, AFailedOperationIsAToolErrorWithItsReason) {
    // The driver call runs, is recorded, and fails: a tool error whose document is still the
    // invocation's, with the reason beside it (it was isError false, the text only "failed").
    const test::TempDir scratch("cko-mcp-failed");
    const auto& dir = scratch.path();
    test::write_file(dir / "case.json", "{}\n");
    test::write_file(dir / "ref" / "k.cu", "// kernel\n");
    Server s = make();
    const Json args{{"root", (dir / "art").string()},
                    {"case_file", (dir / "case.json").string()},
                    {"reference", (dir / "ref").string()},
                    {"argv", {"false"}}};
    const Json r =
        ask(s, request(1, "tools/call", {{"name", "driver_run"}, {"arguments", args}}))["result"];
    EXPECT_EQ(r["isError"], true) << r.dump();
    EXPECT_EQ(r["structuredContent"]["state"], "failed");
    EXPECT_EQ(r["structuredContent"]["error"]["code"], "driver_failed");
    EXPECT_EQ(r["structuredContent"]["error"], r["structuredContent"]["result"]["error"]);
    const std::string text = r["content"][0]["text"];
    EXPECT_NE(text.find("cko: error[driver_failed]: the driver exited with status 1"),
              std::string::npos)
        << text;
    EXPECT_EQ(r["_meta"]["cko/exit_code"], 3);
    // wait on it ends as the direct call did.
    const Json w = ask(s, request(2, "tools/call",
                                  {{"name", "wait"},
                                   {"arguments",
                                    {{"root", (dir / "art").string()},
                                     {"id", r["structuredContent"]["id"]}}}}))["result"];
    EXPECT_EQ(w["isError"], true) << w.dump();
    EXPECT_EQ(w["structuredContent"]["error"]["code"], "driver_failed");
}

TEST_F(ServerTest, ErrorsNameArgumentsNotCommandLineFlags) {
    // A verb's message says `--mode paired needs --candidate` on the command line; a tool caller
    // passes `mode` and `candidate`.
    Server s = make();
    const Json args{{"root", "/nonexistent/cko"},
                    {"case_file", "c.json"},
                    {"reference", "ref"},
                    {"mode", "paired"},
                    {"capability", {"single_subject", "paired_in_process"}},
                    {"argv", {"false"}}};
    Json r =
        ask(s, request(1, "tools/call", {{"name", "driver_run"}, {"arguments", args}}))["result"];
    EXPECT_EQ(r["isError"], true);
    EXPECT_EQ(r["structuredContent"]["error"]["message"], "mode paired needs candidate");
    EXPECT_EQ(r["content"][0]["text"], "cko: error[invalid_argument]: mode paired needs candidate");
    Json more = args;
    more.erase("mode");
    more["samples"] = 0;
    r = ask(s, request(2, "tools/call", {{"name", "driver_run"}, {"arguments", more}}))["result"];
    EXPECT_EQ(r["structuredContent"]["error"]["message"], "samples must be between 1 and 100000");
}

TEST_F(ServerTest, ProtocolErrorsAreJsonRpcErrors) {
    Server s = make();
    EXPECT_EQ(ask(s, request(1, "no/such/method"))["error"]["code"], -32601);
    s.handle_line("{not json");
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        ASSERT_FALSE(sent_.empty());
        EXPECT_EQ(sent_.back()["error"]["code"], -32700);
    }
    const std::size_t before = sent_.size();
    s.handle(Json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
    EXPECT_EQ(sent_.size(), before);  // notifications are never answered
    const Json r = ask(
        s, request(2, "resources/read", {{"uri", "cko:///nonexistent/root/experiments/exp-x"}}));
    EXPECT_TRUE(r.contains("error"));
}

}  // namespace
}  // namespace cko::mcp
