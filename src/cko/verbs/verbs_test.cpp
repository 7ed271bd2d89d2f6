// Every verb of the table run in process through the operation frame: the documents an MCP call
// and `cko VERB --json` print, without a process or CLI11.
#include "cko/run/invocation.hpp"
#include "cko/store/catalogue.hpp"
#include "cko/store/store.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/verbs/frame.hpp"
#include "cko/verbs/verb.hpp"
#include "cko_test_support.hpp"

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <set>

namespace cko::verbs {
namespace {
namespace fs = std::filesystem;

class VerbsTest : public test::ScratchTest {
protected:
    // Runs the verb named as an MCP tool is; the outcome carries the document and exit class.
    Outcome run(const std::string& tool, const Json& request) {
        const Verb* verb = find_verb_by_tool_name(tool);
        EXPECT_NE(verb, nullptr) << tool;
        ran_.insert(tool);
        Context context;
        context.cancel = &cancel_;
        context.announce = [this](const std::string& id) { announced_.push_back(id); };
        Outcome out = run_operation(*verb, request, context);
        document_ = out.materialized_document();
        return out;
    }
    // The code of the cko::Error the verb throws; `internal` when it throws none.
    ErrorCode error_of(const std::string& tool, const Json& request) {
        return test::error_thrown_by([&] { (void)run(tool, request); })->code();
    }
    static std::string fixture(const std::string& path) {
        return (fs::current_path() / "tests/fixtures" / path).string();
    }

    // A one-case Target whose fake driver reads each subject's latency from its values.json.
    fs::path write_target() {
        const fs::path t = dir_ / "t";
        put(t / "original" / "k.cu", "kernel v0\n");
        put(t / "original" / "values.json", R"({"latency_us": 1.5})");
        put(t / "cases" / "c.json", "{}");
        const std::string driver =
            (fs::current_path() / "tests" / "cli" / "fake_driver.py").string();
        put(t / "cko.toml", R"([target]
name = "verbs-test"
claim_layer = "kernel"
original = "original"
change_scope = ["original/k.cu", "original/values.json"]
[cases]
dir = "cases"
ids = ["c"]
[driver]
argv = ["python3", ")" + driver +
                                R"(", "from_files"]
capabilities = ["single_subject"]
env_allow = ["PATH"]
[objective]
primary = { name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }
minimum_effect_pct = 5.0
[observation]
# cko's own tests run on a shared, loaded CI host: their verdicts check cko's rules, not a claim
# about this host, so host load is not let decide them (tests/cli/observation_test.sh checks the rule)
max_host_load_per_cpu = 1000
[correctness]
metric = "max_rel_err"
operator = "<="
threshold = 1e-6
[statistics]
min_pairs = 6
max_pairs = 8
samples_per_call = 2
[limits]
command_timeout_s = 60
operation_timeout_s = 600
)");
        return t;
    }

    std::atomic<bool> cancel_{false};
    std::vector<std::string> announced_;
    std::set<std::string> ran_;
    Json document_;
};

TEST_F(VerbsTest, TheTableNamesEachVerbOnceWithASchemaAndHelpListsThemAll) {
    std::set<std::string> names;
    for (const Verb& v : verb_table()) {
        EXPECT_TRUE(names.insert(v.tool_name()).second) << v.tool_name();
        EXPECT_NE(v.run, nullptr);
        EXPECT_FALSE(v.summary.empty());
        EXPECT_EQ(v.request.schema()["type"], "object");
        EXPECT_EQ(v.detachable, v.request.find("detach") != nullptr) << v.tool_name();
    }
    EXPECT_GE(names.size(), 30U);
    (void)run("help", Json::object());
    EXPECT_EQ(document_["format_version"], "cko/help-v1");
    std::string rows = document_.dump();
    for (const Verb& v : verb_table()) {
        EXPECT_NE(rows.find("\"" + v.path.back() + "\""), std::string::npos) << v.cli_name();
    }
}

TEST_F(VerbsTest, SelfCheckAndDoctorReportWithoutAGpu) {
    EXPECT_EQ(run("self-check", Json::object()).exit_code, 0);
    EXPECT_EQ(document_["format_version"], "cko/self-check-v1");
    const Outcome d = run("doctor", Json{{"require_tool", Json::array({"no-such-tool-cko-test"})},
                                         {"tool_timeout_ms", 500}});
    EXPECT_EQ(d.exit_code, 3);  // a required tool is missing: blocked
    EXPECT_NE(document_.dump().find("no-such-tool-cko-test"), std::string::npos);
    EXPECT_EQ(error_of("doctor", Json{{"tool_timeout_ms", 5}}), ErrorCode::invalid_request);
}

// conclusion lower through the table: only lower than the claim stated now (the Target's kernel
// layer here), for a recorded reason.
TEST_F(VerbsTest, ConclusionLowerRecordsOnlyALowerClaim) {
    const fs::path t = write_target();
    const std::string root = (t / "art").string();
    (void)run("target_freeze", Json{{"spec", (t / "cko.toml").string()}, {"root", root}});
    EXPECT_EQ(error_of("conclusion_lower", Json{{"root", root}, {"to", "kernel"}, {"reason", "r"}}),
              ErrorCode::invalid_argument);
    EXPECT_EQ(error_of("conclusion_lower", Json{{"root", root}, {"to", "unconfirmed"}}),
              ErrorCode::invalid_request);  // the reason is required
    EXPECT_EQ(run("conclusion_lower",
                  Json{{"root", root}, {"to", "unconfirmed"}, {"reason", "not reproduced"}})
                  .exit_code,
              0);
    EXPECT_EQ(document_["lowered_from"], "kernel");
    EXPECT_EQ(document_["lowered_to"], "unconfirmed");
    EXPECT_EQ(document_["reason"], "not reproduced");
    EXPECT_EQ(error_of("conclusion_lower",
                       Json{{"root", root}, {"to", "unconfirmed"}, {"reason", "again"}}),
              ErrorCode::invalid_argument);
}

// Competing hypotheses through the table: two rivals of one bottleneck, listed; an experiment that
// tests one settles it; settled twice is refused; the handoff lists the one still open.
TEST_F(VerbsTest, HypothesesAddListAndSettleThroughTheTable) {
    const fs::path t = write_target();
    const std::string root = (t / "art").string();
    (void)run("target_freeze", Json{{"spec", (t / "cko.toml").string()}, {"root", root}});
    const Json first{{"root", root},
                     {"bottleneck", "the softmax kernel"},
                     {"explanation", "its loads are not coalesced"},
                     {"separated_by", "ncu sectors per request above 4"}};
    EXPECT_EQ(run("hypotheses_add", first).exit_code, 0);
    const std::string a = document_.at("id");
    EXPECT_EQ(error_of("hypotheses_add", Json{{"root", root}, {"bottleneck", "x"}}),
              ErrorCode::invalid_request);  // explanation and separated_by are required
    (void)run("hypotheses_add", Json{{"root", root},
                                     {"bottleneck", "the softmax kernel"},
                                     {"explanation", "it is launch-bound"},
                                     {"separated_by", "gaps between launches in nsys"},
                                     {"rival", Json::array({a})}});
    const std::string b = document_.at("id");
    const Outcome listed = run("hypotheses_list", Json{{"root", root}});
    EXPECT_EQ(document_.at("open"), 2);
    EXPECT_NE(listed.text.find("separated by: gaps between launches in nsys"), std::string::npos);

    const fs::path cand = dir_ / "cand";
    put(cand / "k.cu", "kernel v1\n");
    put(cand / "values.json", R"({"latency_us": 1.0})");
    EXPECT_EQ(error_of("experiment_new", Json{{"root", root},
                                              {"candidate", cand.string()},
                                              {"hypothesis", "coalesced"},
                                              {"mechanism", "m"},
                                              {"failure_closes", "mechanism"},
                                              {"no_falsifier_reason", "test"},
                                              {"tests_hypothesis", "hyp-0000000000000000"}}),
              ErrorCode::not_found);
    (void)run("experiment_new", Json{{"root", root},
                                     {"candidate", cand.string()},
                                     {"hypothesis", "coalesced"},
                                     {"mechanism", "m"},
                                     {"failure_closes", "mechanism"},
                                     {"no_falsifier_reason", "test"},
                                     {"tests_hypothesis", a}});
    const std::string exp = document_.at("id");
    EXPECT_EQ(document_.at("tests_hypothesis"), a);
    const Json settle{{"root", root},
                      {"hypothesis", a},
                      {"outcome", "supported"},
                      {"evidence", exp},
                      {"note", "the coalesced candidate"}};
    EXPECT_EQ(run("hypotheses_settle", settle).exit_code, 0);
    EXPECT_EQ(document_.at("evidence"), (Json{{"kind", "experiment"}, {"id", exp}}));
    EXPECT_EQ(error_of("hypotheses_settle", settle), ErrorCode::already_exists);
    (void)run("hypotheses_list", Json{{"root", root}});
    EXPECT_EQ(document_.at("open"), 1);
    (void)run("show", Json{{"root", root}, {"id", b.substr(0, 10)}});
    EXPECT_EQ(document_.at("id"), b);
    const Outcome handoff = run("handoff", Json{{"root", root}});
    EXPECT_NE(handoff.text.find("open `" + b + "`: it is launch-bound"), std::string::npos)
        << handoff.text;
    EXPECT_NE(handoff.text.find("settled rivals: `" + a + "` supported"), std::string::npos)
        << handoff.text;
}

TEST_F(VerbsTest, TheLoopFromInitToReportRunsThroughTheTable) {
    const std::string spec = (dir_ / "init" / "cko.toml").string();
    fs::create_directories(dir_ / "init");
    (void)run("init", Json{{"spec", spec}, {"name", "x"}});
    EXPECT_TRUE(fs::exists(spec));
    EXPECT_EQ(error_of("init", Json{{"spec", spec}}), ErrorCode::already_exists);

    const fs::path t = write_target();
    const std::string root = (t / "art").string();
    (void)run("target_freeze", Json{{"spec", (t / "cko.toml").string()}, {"root", root}});
    const std::string target_id = document_.at("id");

    EXPECT_EQ(
        run("baseline", Json{{"root", root}, {"calls_per_case", 2}, {"aa_pairs", 6}}).exit_code, 0);
    EXPECT_EQ(document_["state"], "succeeded");
    ASSERT_EQ(announced_.size(), 1U);
    EXPECT_EQ(document_["id"], announced_.back());

    const fs::path cand = dir_ / "cand";
    put(cand / "k.cu", "kernel v1\n");
    put(cand / "values.json", R"({"latency_us": 1.0})");
    (void)run("experiment_new", Json{{"root", root},
                                     {"candidate", cand.string()},
                                     {"hypothesis", "faster"},
                                     {"mechanism", "m"},
                                     {"failure_closes", "mechanism"},
                                     {"no_falsifier_reason", "test"}});
    const std::string exp = document_.at("id");

    // Profiles of one driver call: a missing profiler is named before anything runs; a driver
    // that ignores the request's `profile` (this fake one) leaves no profile record.
    EXPECT_EQ(error_of("profile_collect_nsys", Json{{"root", root},
                                                    {"experiment", exp},
                                                    {"subject", "candidate"},
                                                    {"nsys", (dir_ / "no-nsys").string()}}),
              ErrorCode::not_found);
    EXPECT_EQ(error_of("profile_collect_ncu", Json{{"root", root},
                                                   {"experiment", exp},
                                                   {"subject", "candidate"},
                                                   {"ncu", (dir_ / "no-ncu").string()}}),
              ErrorCode::not_found);
    EXPECT_EQ(error_of("profile_collect_torch",
                       Json{{"root", root}, {"experiment", exp}, {"subject", "reference"}}),
              ErrorCode::missing_result);
    EXPECT_FALSE(fs::exists(fs::path(root) / "profiles"));

    const Outcome screen = run("screen", Json{{"root", root}, {"experiment", exp}});
    EXPECT_EQ(document_["kind"], "screen");
    EXPECT_EQ(screen.exit_code, 0) << document_.dump();
    const std::string screen_id = document_.at("id");
    // The decision record: an outcome on cited evidence, a closed word checked.
    EXPECT_EQ(error_of("experiment_falsify", Json{{"root", root},
                                                  {"experiment", exp},
                                                  {"outcome", "maybe"},
                                                  {"evidence", screen_id}}),
              ErrorCode::invalid_argument);
    (void)run(
        "experiment_falsify",
        Json{
            {"root", root}, {"experiment", exp}, {"outcome", "survived"}, {"evidence", screen_id}});
    EXPECT_EQ(document_["kind"], "falsify");
    EXPECT_EQ(document_["result"]["outputs"]["evidence"]["id"], screen_id);
    const Outcome confirm = run("confirm", Json{{"root", root}, {"experiment", exp}});
    const std::string confirm_id = document_.at("id");
    EXPECT_EQ(document_["result"]["outputs"]["verdict"], "improved") << document_.dump();
    EXPECT_EQ(confirm.exit_code, 0);

    // The same document and exit class from status as from the run itself.
    const Json confirm_doc = document_;
    EXPECT_EQ(run("status", Json{{"root", root}, {"id", confirm_id}}).exit_code, confirm.exit_code);
    EXPECT_EQ(document_, confirm_doc);
    EXPECT_EQ(run("wait", Json{{"root", root}, {"id", confirm_id}, {"timeout", 1}}).exit_code,
              confirm.exit_code);
    EXPECT_EQ(document_, confirm_doc);
    (void)run("cancel", Json{{"root", root}, {"id", confirm_id}});
    EXPECT_EQ(document_["state"], "succeeded");  // a finished invocation stays as it ended

    (void)run("champion_select",
              Json{{"root", root}, {"experiment", exp}, {"confirm", confirm_id}});
    (void)run("champion_show", Json{{"root", root}});
    EXPECT_EQ(document_["champion"], exp) << document_.dump();
    (void)run("champion_export", Json{{"root", root}, {"to", (dir_ / "exported").string()}});
    EXPECT_TRUE(fs::exists(dir_ / "exported" / "values.json"));
    const Outcome audit = run("audit", Json{{"root", root}});
    EXPECT_EQ(document_["kind"], "audit");
    (void)audit;
    (void)run("champion_restore",
              Json{{"root", root}, {"reason", "the test restores the original"}});
    (void)run("champion_show", Json{{"root", root}});
    EXPECT_EQ(document_["champion"], "original");

    (void)run("history", Json{{"root", root}});
    EXPECT_NE(document_.dump().find(confirm_id), std::string::npos);
    (void)run("ls", Json{{"root", root}});
    EXPECT_EQ(document_["target"], target_id);
    EXPECT_EQ(document_["experiments"], Json::array({exp}));
    (void)run("show", Json{{"root", root}, {"id", exp.substr(0, 8)}});
    EXPECT_EQ(document_["id"], exp);
    EXPECT_EQ(run("fsck", Json{{"root", root}}).exit_code, 0);

    const Outcome md = run("report", Json{{"root", root}, {"format", "md"}});
    EXPECT_NE(md.text.find(exp), std::string::npos);
    (void)run("handoff", Json{{"root", root}});
    EXPECT_TRUE(document_.contains("markdown"));
    (void)run("stop", Json{{"root", root}, {"reason", "goal reached"}});
    EXPECT_EQ(document_["reason"], "goal reached");

    // The root as a bundle: verified and rendered with the root gone, the same report but for the
    // header line, which names the bundle where the root's names its path.
    const std::string out = (dir_ / "case.tar.zst").string();
    EXPECT_EQ(run("bundle", Json{{"root", root}, {"out", out}}).exit_code, 0);
    const std::string bundle_id = document_.at("id");
    EXPECT_EQ(document_["manifest"]["target_id"], target_id);
    EXPECT_EQ(error_of("bundle", Json{{"root", root}, {"out", out}}), ErrorCode::already_exists);
    const std::string from_root = run("report", Json{{"root", root}, {"format", "md"}}).text;
    remove_tree_forcibly(root);
    EXPECT_EQ(run("fsck", Json{{"bundle", out}}).exit_code, 0);
    EXPECT_EQ(document_["bundle"]["id"], bundle_id);
    const std::string from_bundle = run("report", Json{{"bundle", out}, {"format", "md"}}).text;
    EXPECT_NE(from_bundle.find("from `bundle " + bundle_id + "`"), std::string::npos);
    const auto without_header = [](const std::string& md) {
        const std::size_t at = md.find("\nTarget `");
        return md.substr(0, at) + md.substr(md.find('\n', at + 1));
    };
    EXPECT_EQ(without_header(from_bundle), without_header(from_root));
}

TEST_F(VerbsTest, ADetachedBaselineAnnouncesItsIdAndWaitGivesItsDocument) {
    const fs::path t = write_target();
    const std::string root = (t / "art").string();
    (void)run("target_freeze", Json{{"spec", (t / "cko.toml").string()}, {"root", root}});
    const Outcome detached = run(
        "baseline", Json{{"root", root}, {"calls_per_case", 2}, {"aa_pairs", 6}, {"detach", true}});
    EXPECT_EQ(detached.document["detached"], true);
    const std::string id = detached.document.at("id");
    ASSERT_FALSE(announced_.empty());
    EXPECT_EQ(announced_.back(), id);
    EXPECT_EQ(run("wait", Json{{"root", root}, {"id", id}, {"timeout", 120}}).exit_code, 0);
    EXPECT_EQ(document_["state"], "succeeded");
}

TEST_F(VerbsTest, DriverRunRecordsOneCallAndRejectsABadMode) {
    put(dir_ / "ref" / "values.json", R"({"latency_us": 2.0})");
    put(dir_ / "case.json", "{}");
    const Json request{
        {"root", (dir_ / "art").string()},
        {"case_file", (dir_ / "case.json").string()},
        {"reference", (dir_ / "ref").string()},
        {"argv", Json::array({"python3", (fs::current_path() / "tests/cli/fake_driver.py").string(),
                              "from_files"})}};
    EXPECT_EQ(run("driver_run", request).exit_code, 0);
    EXPECT_EQ(document_["state"], "succeeded");
    Json bad = request;
    bad["mode"] = "triple";
    EXPECT_EQ(error_of("driver_run", bad), ErrorCode::invalid_argument);
    EXPECT_EQ(error_of("driver_run", Json{{"root", (dir_ / "art").string()}, {"sampels", 1}}),
              ErrorCode::invalid_request);
}

// An operation's verb builds its document from the invocation the operation finished, not from a
// second read of the records it has just written; the document is what `status` reads back.
TEST_F(VerbsTest, BaselineAndDriverRunDoNotRereadTheirOwnInvocation) {
    const fs::path t = write_target();
    const std::string root = (t / "art").string();
    (void)run("target_freeze", Json{{"spec", (t / "cko.toml").string()}, {"root", root}});
    ASSERT_EQ(
        run("baseline", Json{{"root", root}, {"calls_per_case", 2}, {"aa_pairs", 6}}).exit_code, 0);
    const std::string baseline = document_.at("id");
    EXPECT_EQ(store::records_read(store::layout::invocation_dir(baseline) + "/"), 0U)
        << "records of its own invocation the baseline verb read";
    const Json baseline_document = document_;

    put(dir_ / "ref" / "values.json", R"({"latency_us": 2.0})");
    put(dir_ / "case.json", "{}");
    ASSERT_EQ(
        run("driver_run",
            Json{{"root", (dir_ / "art-driver").string()},
                 {"case_file", (dir_ / "case.json").string()},
                 {"reference", (dir_ / "ref").string()},
                 {"argv", Json::array({"python3",
                                       (fs::current_path() / "tests/cli/fake_driver.py").string(),
                                       "from_files"})}})
            .exit_code,
        0);
    const std::string call = document_.at("id");
    EXPECT_EQ(store::records_read(store::layout::invocation_dir(call) + "/"), 0U)
        << "records of its own invocation the driver run verb read";

    // What was printed is what a later read gives.
    EXPECT_EQ(document_,
              run::invocation_status(store::Store::open(dir_ / "art-driver"), call).to_json());
    const Json driver_document = document_;

    // experiment falsify: its invocation through the same frame, not read back either (it was
    // read once before).
    ASSERT_EQ(run("experiment_new", Json{{"root", root}, {"control", true}}).exit_code, 0);
    const std::string exp = document_.at("id");
    ASSERT_EQ(run("experiment_falsify", Json{{"root", root},
                                             {"experiment", exp},
                                             {"outcome", "survived"},
                                             {"evidence", baseline}})
                  .exit_code,
              0);
    const std::string falsify = document_.at("id");
    EXPECT_EQ(store::records_read(store::layout::invocation_dir(falsify) + "/"), 0U)
        << "records of its own invocation the falsify verb read";
    EXPECT_EQ(document_, run::invocation_status(store::Store::open(root), falsify).to_json());
    document_ = driver_document;
    Json status = run::invocation_status(store::Store::open(root), baseline).to_json();
    for (const char* key : {"budget", "next_stage"}) {
        status[key] = baseline_document.at(key);  // added as `status` adds them
    }
    EXPECT_EQ(baseline_document, status);
}

TEST_F(VerbsTest, ProfileVerbsReadTheirFixtures) {
    const Outcome ncu = run("profile_ncu", Json{{"file", fixture("ncu/ncu_raw.csv")}});
    EXPECT_EQ(ncu.exit_code, 0);
    EXPECT_FALSE(ncu.text.empty());
    EXPECT_FALSE(document_["launches"].empty());
    (void)run("profile_diff", Json{{"a", fixture("ncu/ncu_flops_raw.csv")},
                                   {"b", fixture("ncu/ncu_flops_raw_b.csv")}});
    EXPECT_TRUE(document_.contains("pairs"));
    (void)run("profile_torch", Json{{"files", Json::array({fixture("torch/torch_trace.json")})}});
    EXPECT_FALSE(document_.empty());
    (void)run("profile_nsys", Json{{"file", fixture("nsys/vec.sqlite")}});
    EXPECT_FALSE(document_.empty());
    EXPECT_EQ(error_of("profile_collect_ncu", Json{{"command", Json::array({"true"})},
                                                   {"ncu", (dir_ / "no-such-ncu").string()},
                                                   {"out", (dir_ / "ncu").string()}}),
              error_of("profile_collect_ncu", Json{{"command", Json::array({"true"})},
                                                   {"ncu", (dir_ / "no-such-ncu").string()},
                                                   {"out", (dir_ / "ncu2").string()}}));
    EXPECT_EQ(error_of("profile_ncu", Json::object()), ErrorCode::usage);
}

// The CLI refuses `--timeout 0` for `profile collect ncu` (ncu killed before it starts); a
// request or an MCP call must be refused the same way, by the table's exclusive minimum.
TEST_F(VerbsTest, ProfileCollectNcuRefusesAZeroTimeoutFromARequestAsTheCliDoes) {
    const Verb* verb = find_verb_by_tool_name("profile_collect_ncu");
    ASSERT_NE(verb, nullptr);
    EXPECT_EQ(verb->request.schema()["properties"]["timeout"]["exclusiveMinimum"], 0);
    for (const double t : {0.0, -1.0}) {
        SCOPED_TRACE(t);
        EXPECT_CKO_ERROR(
            (void)verb->request.normalize(Json{{"command", Json::array({"true"})}, {"timeout", t}}),
            ErrorCode::invalid_request, "\"timeout\"");
    }
    EXPECT_EQ(verb->request.normalize(Json{{"command", Json::array({"true"})}, {"timeout", 0.5}})
                  .at("timeout"),
              0.5);
}

// A negative, zero or oversized minimum_effect_pct given to `experiment new` is refused with the
// key named, through the request as through the CLI and MCP (it was silently dropped when <= 0).
TEST_F(VerbsTest, ExperimentNewRefusesAMinimumEffectOutsideTheTargetsRule) {
    const Verb* verb = find_verb_by_tool_name("experiment_new");
    ASSERT_NE(verb, nullptr);
    for (const double m : {-1.0, 0.0, 1000.5}) {
        SCOPED_TRACE(m);
        EXPECT_CKO_ERROR(
            (void)verb->request.normalize(Json{{"candidate", "c"}, {"minimum_effect_pct", m}}),
            ErrorCode::invalid_request, "\"minimum_effect_pct\"");
    }
    EXPECT_EQ(verb->request.normalize(Json{{"candidate", "c"}, {"minimum_effect_pct", 1000}})
                  .at("minimum_effect_pct"),
              1000);
}

TEST_F(VerbsTest, MapComputesAndKeepsItsDocumentOnlyWithARoot) {
    (void)run("map", Json{{"files", Json::array({fixture("torch/torch_trace.json")})}});
    EXPECT_EQ(document_["format_version"], "cko/map-v1");
    EXPECT_FALSE(document_.contains("stored"));
    EXPECT_EQ(error_of("map", Json{{"files", Json::array({fixture("torch/torch_trace.json")})},
                                   {"experiment", "exp-1"}}),
              ErrorCode::invalid_argument);
    // Storing needs a frozen Target (its identity goes into the record); cli_map and the demo
    // store one into a frozen root.
    const std::string root = (dir_ / "evidence-root").string();
    (void)store::Store::create(root);
    EXPECT_EQ(error_of("map", Json{{"files", Json::array({fixture("torch/torch_trace.json")})},
                                   {"root", root}}),
              ErrorCode::not_found);
}

TEST_F(VerbsTest, CompilerAndKnowledgeVerbsReadTheirFixtures) {
    (void)run("ptxas", Json{{"log", fixture("compiler/mix.sm_80.ptxas.txt")}});
    EXPECT_FALSE(document_["functions"].empty());
    (void)run("sass", Json{{"file", fixture("compiler/mix.sm_80.cuobjdump.sass")}});
    EXPECT_NE(document_.dump().find("sm_80"), std::string::npos);
    (void)run("sass_diff", Json{{"a", fixture("compiler/mix.sm_80.cuobjdump.sass")},
                                {"b", fixture("compiler/tma.sm_90.cuobjdump.sass")}});
    EXPECT_FALSE(document_.empty());
    (void)run("triton", Json{{"dir", fixture("compiler/triton-cache")}, {"no_sass", true}});
    EXPECT_FALSE(document_.empty());
    (void)run("knowledge_query", Json{{"arch", "sm_90"}, {"cuda", "13.0"}});
    EXPECT_NE(document_.dump().find("sm_90"), std::string::npos);
    EXPECT_EQ(error_of("knowledge_query", Json{{"arch", "gfx90a"}}), ErrorCode::invalid_argument);
}

// Last: every row of the table was run by one of the tests above (gtest runs a file's tests in
// order within one process; under ctest each test is its own process, so this one reruns none and
// checks the list of tool names the tests above use instead).
TEST(VerbsCoverage, EveryVerbHasAnInProcessTest) {
    const std::set<std::string> tested{"help",
                                       "self-check",
                                       "doctor",
                                       "init",
                                       "target_freeze",
                                       "baseline",
                                       "experiment_new",
                                       "experiment_falsify",
                                       "conclusion_lower",
                                       "hypotheses_add",
                                       "hypotheses_list",
                                       "hypotheses_settle",
                                       "screen",
                                       "confirm",
                                       "audit",
                                       "champion_show",
                                       "champion_select",
                                       "champion_export",
                                       "champion_restore",
                                       "history",
                                       "ls",
                                       "show",
                                       "fsck",
                                       "bundle",
                                       "status",
                                       "wait",
                                       "cancel",
                                       "driver_run",
                                       "report",
                                       "handoff",
                                       "stop",
                                       "profile_ncu",
                                       "profile_diff",
                                       "profile_collect_ncu",
                                       "profile_collect_nsys",
                                       "profile_collect_torch",
                                       "profile_torch",
                                       "profile_nsys",
                                       "ptxas",
                                       "sass",
                                       "sass_diff",
                                       "triton",
                                       "knowledge_query",
                                       "map"};
    for (const Verb& v : verb_table()) {
        EXPECT_TRUE(tested.contains(v.tool_name()))
            << v.tool_name() << " has no in-process test in verbs_test.cpp";
    }
}

}  // namespace
}  // namespace cko::verbs
