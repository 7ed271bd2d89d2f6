// The typed records: round trips, strict readers (the member and the file named), and each
// to_json checked against its schema in schemas/ (schema_check_test_util.hpp; the combinators are
// left to tests/schemas/validate_store.py, which cli_schemas runs on the records the verbs write
// through these types).
#include "cko/store/records.hpp"
#include "cko/store/bundle_record.hpp"
#include "cko/store/catalogue.hpp"
#include "cko/store/hypothesis_record.hpp"
#include "cko/store/store.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko_test_support.hpp"
#include "schema_check_test_util.hpp"

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <optional>

namespace cko::store {
namespace {
namespace fs = std::filesystem;
using schema_check::problems_against;

const std::string kSha(64, 'a');
const std::string kShaB(64, 'b');

SnapshotRefRecord ref(const std::string& digest) {
    return SnapshotRefRecord{digest, "directory", "/src/original", 3, 4096};
}

TargetRecord sample_target() {
    TargetRecord t;
    t.id = "tgt-0123456789abcdef";
    t.spec = Json{{"name", "saxpy"}};
    t.spec_sha256 = kSha;
    t.spec_dir = "/src";
    t.environment = Json{{"host", {{"hostname", "h"}}}, {"gpus", Json::array()}};
    t.created_unix_s = 1796116000;
    t.created_by = "cko 0.1.0";
    t.original = ref(kSha);
    t.cases = std::vector<TargetRecord::Case>{{"small", ref(kShaB)}};
    t.driver_identity = Json::array();
    t.gpus = std::vector<std::string>{"GPU-1"};
    t.smoke = std::vector<std::string>{"inv-0123456789abcdef"};
    return t;
}

ExperimentRecord sample_experiment() {
    ExperimentRecord e;
    e.id = "exp-0123456789abcdef";
    e.target = {"tgt-0123456789abcdef", kSha};
    e.candidate = ref(kShaB);
    e.base = {BaseKind::original, std::nullopt, kSha};
    e.changed_files = {"~saxpy.cpp"};
    e.hypothesis = "rows are contiguous";
    e.mechanism = "loop-order";
    e.claim_layer = ClaimLayer::kernel;
    e.minimum_effect_pct = 5.0;
    e.no_falsifier_reason = "known";
    e.failure_closes = FailureCloses::mechanism;
    e.screen_design = ScreenDesign::conservative_bound;
    e.estimated_cost_s = 12.5;
    e.gain_bound = ExperimentRecord::GainBound{20.0, "map:profile-0123", std::nullopt};
    e.extra_correctness_gates = {"max_abs_err<=1e-3"};
    e.secondary_metrics = {{"peak_mem_bytes", 5.0}};
    e.relationship = Relationship::implementation_equivalence;
    e.lifecycle = Lifecycle::isolated_process;
    e.control = false;
    e.created_unix_s = 1796116060;
    e.tests_hypothesis = "hyp-0123456789abcdef";
    return e;
}

InvocationRecord sample_invocation() {
    InvocationRecord r;
    r.id = "inv-0123456789abcdef";
    r.kind = "baseline";
    r.created_unix_ns = 1796116000123456789;
    r.owner = {4242, 987654321, "boot", "host"};
    r.limits = {3600.0, 600.0, 60.0, 10.0};
    r.request = Json{
        {"target", "tgt-0123456789abcdef"}, {"calls_per_case", 3}, {"aa_pairs", 6}, {"seed", 1}};
    return r;
}

InvocationResultRecord sample_result() {
    InvocationResultRecord r;
    r.id = "inv-0123456789abcdef";
    r.kind = "confirm";
    r.state = "failed";
    r.reason = "the driver crashed";
    r.started_unix_ns = 1796116000123456789;
    r.finished_unix_ns = 1796116060123456789;
    r.cost = {12.5, 3.0, 4};
    r.outputs = Json{{"experiment_id", "exp-0123456789abcdef"}, {"exit_code", 3}};
    r.error = Json{
        {"code", "driver_failed"}, {"message", "the driver crashed"}, {"details", Json::object()}};
    return r;
}

// What the step that declares an invocation lost writes: no cost, no outputs, no error.
InvocationResultRecord sample_lost_result() {
    InvocationResultRecord r;
    r.id = "inv-00000000000000ff";
    r.kind = "baseline";
    r.state = "lost";
    r.reason = "owner process 4242 ended without a result; 0 leftover process(es) killed";
    r.started_unix_ns = 1796116000123456789;
    r.finished_unix_ns = 1796116060123456789;
    return r;
}

SelectionRecord sample_select() {
    SelectionRecord s;
    s.id = "sel-0123456789abcdef";
    s.experiment_id = "exp-0123456789abcdef";
    s.confirm = SelectionRecord::Confirm{"inv-0123456789abcdef", kSha};
    s.previous = {"original", kSha, ""};
    s.digest = kShaB;
    s.selected_unix_s = 1796116120;
    s.accepted_regressions = std::vector<std::string>{};
    return s;
}

SelectionRecord sample_restore() {
    SelectionRecord s;
    s.id = "sel-00000000000000ff";
    s.restore = Json{{"reason", "the audit regressed"}};
    s.previous = {"exp-0123456789abcdef", kShaB, kSha};
    s.digest = kSha;
    s.selected_unix_s = 1796116180;
    return s;
}

HypothesisRecord sample_hypothesis() {
    HypothesisRecord h;
    h.id = "hyp-0123456789abcdef";
    h.bottleneck = "map:profile-0123456789abcdef#gemm";
    h.bottleneck_map = HypothesisRecord::MapItem{"profile-0123456789abcdef", "gemm", "kernel",
                                                 "ProfilerStep#1", 41.5};
    h.explanation = "the GEMM is memory-bound: its tiles are too small";
    h.separated_by = "ncu dram throughput near peak with low SM utilization";
    h.rivals = {"hyp-00000000000000aa"};
    h.created_unix_ns = 1796116000123456789;
    return h;
}

HypothesisSettlementRecord sample_settlement() {
    HypothesisSettlementRecord s;
    s.id = "hset-0123456789abcdef";
    s.hypothesis = "hyp-0123456789abcdef";
    s.outcome = HypothesisOutcome::refuted;
    s.evidence = {SettlementEvidence::profile, "profile-0123456789abcdef"};
    s.note = "dram throughput at 30 % of peak";
    s.settled_unix_ns = 1796116060123456789;
    return s;
}

// The error a reader gives for `j`; fails the test if it gives none.
Error refusal(const std::function<void()>& read) {
    return *EXPECT_ANY_CKO_ERROR(read());
}

TEST(Records, RoundTripsAreExact) {
    const TargetRecord t = sample_target();
    EXPECT_EQ(TargetRecord::from_json(t.to_json(), "target.json"), t);
    const ExperimentRecord e = sample_experiment();
    EXPECT_EQ(ExperimentRecord::from_json(e.to_json(), "x"), e);
    const InvocationRecord r = sample_invocation();
    EXPECT_EQ(InvocationRecord::from_json(r.to_json(), "x"), r);
    for (const InvocationResultRecord& res : {sample_result(), sample_lost_result()}) {
        EXPECT_EQ(InvocationResultRecord::from_json(res.to_json(), "x"), res);
    }
    EXPECT_TRUE(sample_lost_result().to_json().at("cost").at("gpu_s").is_null());
    EXPECT_FALSE(sample_lost_result().to_json().contains("error"));
    for (const SelectionRecord& s : {sample_select(), sample_restore()}) {
        EXPECT_EQ(SelectionRecord::from_json(s.to_json(), "x"), s);
    }
    // JSON -> record -> JSON keeps every member, so a stored record reads back to its own bytes.
    const Json stored = e.to_json();
    EXPECT_EQ(canonical_json(ExperimentRecord::from_json(stored, "x").to_json()),
              canonical_json(stored));
    // A diagnostic Target: no original, cases, GPUs or smoke.
    TargetRecord diag = sample_target();
    diag.original.reset();
    diag.cases.reset();
    diag.driver_identity.reset();
    diag.gpus.reset();
    diag.smoke.reset();
    EXPECT_FALSE(diag.to_json().contains("original"));
    EXPECT_EQ(TargetRecord::from_json(diag.to_json(), "target.json"), diag);
}

TEST(Records, ToJsonValidatesAgainstItsSchema) {
    EXPECT_EQ(problems_against("target-v1", sample_target().to_json()), std::vector<std::string>{});
    EXPECT_EQ(problems_against("experiment-v1", sample_experiment().to_json()),
              std::vector<std::string>{});
    EXPECT_EQ(problems_against("invocation-request-v1", sample_invocation().to_json()),
              std::vector<std::string>{});
    EXPECT_EQ(problems_against("invocation-result-v1", sample_result().to_json()),
              std::vector<std::string>{});
    EXPECT_EQ(problems_against("invocation-result-v1", sample_lost_result().to_json()),
              std::vector<std::string>{});
    EXPECT_EQ(problems_against("selection-v1", sample_select().to_json()),
              std::vector<std::string>{});
    EXPECT_EQ(problems_against("selection-v1", sample_restore().to_json()),
              std::vector<std::string>{});
}

BundleManifest sample_bundle() {
    BundleManifest m;
    m.cko_version = "0.1.0";
    m.store_id = kSha;
    m.ledger_head = kShaB;
    m.target_id = "tgt-0123456789abcdef";
    m.files = {{"invocations/inv-0123456789abcdef/driver/0001/stderr.txt", kShaB, 91},
               {"target.json", kSha, 1234}};
    m.redacted = {{"invocations/inv-0123456789abcdef/driver/0001/stderr.txt", kSha, 20,
                   "holds a customer's hostname"}};
    m.left_out = {{"handoff.md", "the decision maker's own handoff"}};
    m.id = m.content_digest();
    return m;
}

// bundle-v1: a round trip, its schema, its id the digest of everything else, strict reading.
TEST(Records, ABundleManifestRoundTripsAndItsIdCoversEveryMember) {
    const BundleManifest m = sample_bundle();
    EXPECT_EQ(BundleManifest::from_json(m.to_json(), "bundle.json"), m);
    EXPECT_EQ(problems_against("bundle-v1", m.to_json()), std::vector<std::string>{});
    BundleManifest other = m;
    other.redacted[0].reason = "another reason";
    EXPECT_NE(other.content_digest(), m.content_digest());
    other = m;
    other.files[1].size += 1;
    EXPECT_NE(other.content_digest(), m.content_digest());
    Json j = m.to_json();
    j["files"][0]["sha256"] = "abc";
    const Error e = refusal([&] { (void)BundleManifest::from_json(j, "bundle.json"); });
    EXPECT_EQ(e.details()["field"], "$.files[0].sha256");
    j = m.to_json();
    j["created_unix_s"] = 1;  // nothing time- or path-dependent is part of a bundle
    EXPECT_EQ(refusal([&] { (void)BundleManifest::from_json(j, "bundle.json"); }).code(),
              ErrorCode::invalid_record);
}

TEST(Records, TheSchemaCheckCanFail) {
    Json e = sample_experiment().to_json();
    e["surprise"] = 1;
    e["base"]["kind"] = "elsewhere";
    e.erase("hypothesis");
    const auto problems = problems_against("experiment-v1", e);
    ASSERT_EQ(problems.size(), 3u) << Json(problems).dump();
    EXPECT_EQ(problems[0], "$: required member hypothesis missing");
    Json inv = sample_invocation().to_json();
    inv["owner"]["pid"] = "4242";
    EXPECT_EQ(problems_against("invocation-request-v1", inv),
              std::vector<std::string>{"$.owner.pid: not of type \"integer\""});
    Json t = sample_target().to_json();
    t["cases"][0]["snapshot"]["source"] = "relative/path";  // a cross-file $ref
    EXPECT_EQ(problems_against("target-v1", t).size(), 1u);
}

TEST(Records, AMissingMemberIsRefusedNamingTheMemberAndTheFile) {
    Json e = sample_experiment().to_json();
    e.erase("mechanism");
    const Error err =
        refusal([&] { (void)ExperimentRecord::from_json(e, "experiments/exp-1.json"); });
    EXPECT_EQ(err.code(), ErrorCode::invalid_record);
    EXPECT_NE(std::string(err.what()).find("experiments/exp-1.json: $.mechanism is missing"),
              std::string::npos)
        << err.what();
    EXPECT_EQ(err.details()["field"], "$.mechanism");
    EXPECT_EQ(err.details()["file"], "experiments/exp-1.json");
}

TEST(Records, AWrongTypeIsRefusedNamingTheMember) {
    Json r = sample_invocation().to_json();
    r["limits"]["command_timeout_s"] = "600";
    const Error a =
        refusal([&] { (void)InvocationRecord::from_json(r, "invocations/x/request.json"); });
    EXPECT_EQ(a.code(), ErrorCode::invalid_record);
    EXPECT_EQ(a.details()["field"], "$.limits.command_timeout_s");
    EXPECT_NE(std::string(a.what()).find("is string, not a number"), std::string::npos) << a.what();

    Json t = sample_target().to_json();
    t["cases"][0]["snapshot"]["file_count"] = 1.5;
    const Error b = refusal([&] { (void)TargetRecord::from_json(t, "target.json"); });
    EXPECT_EQ(b.details()["field"], "$.cases[0].snapshot.file_count");

    Json res = sample_result().to_json();
    res["cost"]["wall_s"] = "12.5";
    const Error e =
        refusal([&] { (void)InvocationResultRecord::from_json(res, "invocations/x/result.json"); });
    EXPECT_EQ(e.details()["field"], "$.cost.wall_s");
    res = sample_result().to_json();
    res["state"] = "running";  // a result is terminal
    EXPECT_EQ(
        refusal([&] { (void)InvocationResultRecord::from_json(res, "r"); }).details()["field"],
        "$.state");

    Json s = sample_select().to_json();
    s["experiment_id"] = 7;
    const Error c = refusal([&] { (void)SelectionRecord::from_json(s, "sel.json"); });
    EXPECT_EQ(c.details()["field"], "$.experiment_id");

    Json g = sample_experiment().to_json();
    g["changed_files"] = Json::array({"~a", 3});
    const Error d = refusal([&] { (void)ExperimentRecord::from_json(g, "e.json"); });
    EXPECT_EQ(d.details()["field"], "$.changed_files[1]");
}

// Each closed word of experiment-v1 is read as its enum: another word is refused naming the member
// and listing the allowed words.
TEST(Records, AWordOutsideItsClosedSetIsRefusedListingTheWords) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> words = {
        {{"base", "kind"}, "original, champion"},
        {{"claim_layer"}, "kernel, workload, serving"},
        {{"failure_closes"}, "implementation, integration, mechanism"},
        {{"screen_design"}, "conservative_bound, diagnostic_proxy"},
        {{"relationship"}, "implementation_equivalence, artifact_fidelity, deployment_effect"},
        {{"lifecycle"}, "isolated_process, same_process"},
    };
    for (const auto& [path, allowed] : words) {
        Json e = sample_experiment().to_json();
        Json& member = path.size() == 1 ? e[path[0]] : e[path[0]][path[1]];
        member = "system";
        const Error err = refusal([&] { (void)ExperimentRecord::from_json(e, "e.json"); });
        EXPECT_EQ(err.code(), ErrorCode::invalid_record);
        EXPECT_EQ(err.details()["field"], "$." + fmt::format("{}", fmt::join(path, ".")));
        EXPECT_NE(std::string(err.what()).find("is \"system\", not one of: " + allowed),
                  std::string::npos)
            << err.what();
    }
}

TEST(Records, UnknownMembersAndOtherKindsAreRefused) {
    Json e = sample_experiment().to_json();
    e["surprise"] = true;
    EXPECT_EQ(refusal([&] { (void)ExperimentRecord::from_json(e, "e"); }).details()["field"],
              "$.surprise");
    Json t = sample_target().to_json();
    t["format_version"] = "cko/experiment-v1";
    EXPECT_EQ(refusal([&] { (void)TargetRecord::from_json(t, "t"); }).details()["field"],
              "$.format_version");
    EXPECT_EQ(refusal([&] { (void)TargetRecord::from_json(Json::array(), "t"); }).code(),
              ErrorCode::invalid_record);
    // A selection is a select (confirm) or a restore, never both or neither.
    Json both = sample_select().to_json();
    both["restore"] = Json{{"reason", "x"}};
    EXPECT_EQ(refusal([&] { (void)SelectionRecord::from_json(both, "s"); }).code(),
              ErrorCode::invalid_record);
    Json neither = sample_restore().to_json();
    neither.erase("restore");
    EXPECT_EQ(refusal([&] { (void)SelectionRecord::from_json(neither, "s"); }).code(),
              ErrorCode::invalid_record);
}

class RecordsInAStore : public test::ScratchTest {
protected:
    void SetUp() override { store_.emplace(Store::create(dir_ / "art")); }
    std::optional<Store> store_;
};

TEST_F(RecordsInAStore, ReadersFindEachRecordWhereTheCatalogueSaysAndNameTheFile) {
    const Store& s = *store_;
    s.write_record(layout::kTarget, sample_target().to_json());
    s.write_record(layout::experiment_record("exp-0123456789abcdef"),
                   sample_experiment().to_json());
    s.write_record(layout::invocation_request("inv-0123456789abcdef"),
                   sample_invocation().to_json());
    s.write_record(layout::invocation_result("inv-0123456789abcdef"), sample_result().to_json());
    s.write_record(layout::selection_record("sel-0123456789abcdef"), sample_select().to_json());
    s.write_record(layout::selection_record("sel-00000000000000ff"), sample_restore().to_json());
    EXPECT_EQ(read_target_record(s), sample_target());
    EXPECT_EQ(read_experiment_record(s, "exp-0123456789abcdef"), sample_experiment());
    EXPECT_EQ(read_invocation_record(s, "inv-0123456789abcdef"), sample_invocation());
    EXPECT_EQ(read_invocation_result_record(s, "inv-0123456789abcdef"), sample_result());
    EXPECT_EQ(
        refusal([&] { (void)read_invocation_result_record(s, "inv-00000000000000ff"); }).code(),
        ErrorCode::not_found);
    EXPECT_EQ(read_selection_record(s, "sel-0123456789abcdef"), sample_select());
    EXPECT_EQ(list_selections(s),
              (std::vector<std::string>{"sel-00000000000000ff", "sel-0123456789abcdef"}));
    EXPECT_EQ(refusal([&] { (void)read_experiment_record(s, "exp-ffffffffffffffff"); }).code(),
              ErrorCode::not_found);
    EXPECT_EQ(refusal([&] { (void)read_experiment_record(s, "../target"); }).code(),
              ErrorCode::unsafe_path);

    Json damaged = sample_experiment().to_json();
    damaged.erase("lifecycle");
    damaged["id"] = "exp-00000000000000dd";
    s.write_record(layout::experiment_record("exp-00000000000000dd"), damaged);
    const Error e = refusal([&] { (void)read_experiment_record(s, "exp-00000000000000dd"); });
    EXPECT_EQ(e.code(), ErrorCode::invalid_record);
    EXPECT_EQ(e.details()["file"], "experiments/exp-00000000000000dd.json");
    EXPECT_EQ(e.details()["field"], "$.lifecycle");
}

TEST(Records, AHypothesisAndItsSettlementRoundTripAndMeetTheirSchemas) {
    const HypothesisRecord h = sample_hypothesis();
    EXPECT_EQ(HypothesisRecord::from_json(h.to_json(), "x"), h);
    HypothesisRecord text = h;  // a bottleneck in words cites no map
    text.bottleneck = "the softmax kernel";
    text.bottleneck_map.reset();
    text.rivals.clear();
    EXPECT_FALSE(text.to_json().contains("bottleneck_map"));
    EXPECT_EQ(HypothesisRecord::from_json(text.to_json(), "x"), text);
    const HypothesisSettlementRecord s = sample_settlement();
    EXPECT_EQ(HypothesisSettlementRecord::from_json(s.to_json(), "x"), s);
    EXPECT_EQ(problems_against("hypothesis-v1", h.to_json()), std::vector<std::string>{});
    EXPECT_EQ(problems_against("hypothesis-v1", text.to_json()), std::vector<std::string>{});
    EXPECT_EQ(problems_against("hypothesis-settlement-v1", s.to_json()),
              std::vector<std::string>{});
}

TEST(Records, AHypothesisWithoutItsSeparatingEvidenceOrASettlementWithAnotherWordIsRefused) {
    Json h = sample_hypothesis().to_json();
    h["separated_by"] = "";
    Error e = refusal([&] { (void)HypothesisRecord::from_json(h, "hypotheses/hyp-1.json"); });
    EXPECT_EQ(e.code(), ErrorCode::invalid_record);
    EXPECT_EQ(e.details()["field"], "$.separated_by");
    h = sample_hypothesis().to_json();
    h["bottleneck_map"]["extra"] = 1;
    EXPECT_EQ(refusal([&] { (void)HypothesisRecord::from_json(h, "h"); }).details()["field"],
              "$.bottleneck_map.extra");
    Json s = sample_settlement().to_json();
    s["outcome"] = "maybe";
    e = refusal([&] { (void)HypothesisSettlementRecord::from_json(s, "s"); });
    EXPECT_NE(std::string(e.what()).find("not one of: supported, refuted"), std::string::npos)
        << e.what();
    s = sample_settlement().to_json();
    s["evidence"]["kind"] = "file";
    EXPECT_EQ(
        refusal([&] { (void)HypothesisSettlementRecord::from_json(s, "s"); }).details()["field"],
        "$.evidence.kind");
}

TEST_F(RecordsInAStore, HypothesesAndSettlementsAreListedOldestFirstFromTheirDirectories) {
    const Store& s = *store_;
    EXPECT_TRUE(list_hypotheses(s).empty());  // no directory yet
    EXPECT_TRUE(list_settlements(s).empty());
    HypothesisRecord later = sample_hypothesis();
    HypothesisRecord earlier = sample_hypothesis();
    earlier.id = "hyp-00000000000000aa";
    earlier.rivals.clear();
    earlier.created_unix_ns -= 1;
    s.write_record(layout::hypothesis_record(later.id), later.to_json());
    s.write_record(layout::hypothesis_record(earlier.id), earlier.to_json());
    s.write_record(layout::settlement_record("hset-0123456789abcdef"),
                   sample_settlement().to_json());
    const std::vector<HypothesisRecord> all = list_hypotheses(s);
    ASSERT_EQ(all.size(), 2U);
    EXPECT_EQ(all[0], earlier);
    EXPECT_EQ(all[1], later);
    EXPECT_EQ(list_settlements(s), std::vector<HypothesisSettlementRecord>{sample_settlement()});
    EXPECT_EQ(read_hypothesis_record(s, later.id), later);
    EXPECT_EQ(refusal([&] { (void)read_hypothesis_record(s, "hyp-ffffffffffffffff"); }).code(),
              ErrorCode::not_found);
    EXPECT_EQ(layout::settlement_record("hset-1"), "hypotheses/settlements/hset-1.json");
}

TEST(Catalogue, NamesTheLayout) {
    EXPECT_EQ(layout::experiment_record("exp-1"), "experiments/exp-1.json");
    EXPECT_EQ(layout::invocation_request("inv-1"), "invocations/inv-1/request.json");
    EXPECT_EQ(layout::invocation_result("inv-1"), "invocations/inv-1/result.json");
    EXPECT_EQ(layout::call_dir("inv-1", 7), "invocations/inv-1/driver/0007");
    EXPECT_EQ(layout::session_dir("inv-1", 2), "invocations/inv-1/driver/session-02");
    EXPECT_EQ(layout::call_output_dir(layout::call_dir("inv-1", 1)),
              "invocations/inv-1/driver/0001/out");
    EXPECT_EQ(layout::selection_record("sel-1"), "champion/selections/sel-1.json");
    EXPECT_EQ(layout::snapshot_manifest("ab"), "objects/sha256/ab/manifest.json");
    EXPECT_EQ(layout::profile_record("profile-1"), "profiles/profile-1.json");
    EXPECT_TRUE(layout::is_driver_output("invocations/inv-1/driver/0001/out/x"));
    EXPECT_TRUE(layout::is_driver_output("invocations/inv-1/driver/0001/out"));
    EXPECT_FALSE(layout::is_driver_output("invocations/inv-1/driver/0001/process.json"));
    // A call's own files (ledgered when the call ends), and nothing else of the store.
    for (const char* own :
         {"invocations/inv-1/driver/0001/request.json",
          "invocations/inv-1/driver/0001/process.json", "invocations/inv-1/driver/0001/stdout.txt",
          "invocations/inv-1/driver/session-01/stderr.txt"}) {
        EXPECT_TRUE(layout::is_call_file(own)) << own;
    }
    for (const char* other :
         {"invocations/inv-1/request.json", "invocations/inv-1/driver/0001/out/request.json",
          "invocations/inv-1/driver/0001/slurm.json", "experiments/inv-1/driver/0001/request.json",
          "invocations/inv-1/workspace/0001/process.json"}) {
        EXPECT_FALSE(layout::is_call_file(other)) << other;
    }
    EXPECT_TRUE(layout::is_mutable_by_design("champion/current.json"));
    EXPECT_TRUE(layout::is_mutable_by_design("invocations/inv-1/events.jsonl"));
    EXPECT_TRUE(layout::is_mutable_by_design(".locks/confirm-x.lock"));
    EXPECT_FALSE(layout::is_mutable_by_design("invocations/inv-1/result.json"));
    EXPECT_TRUE(layout::is_invocation_dir("invocations/inv-1"));
    EXPECT_FALSE(layout::is_invocation_dir("invocations/inv-1/driver"));
    // A new root has exactly these directories.
    const test::TempDir dir("cko-layout");
    const Store s = Store::create(dir / "art");
    for (const auto d : layout::layout_dirs()) {
        EXPECT_TRUE(fs::is_directory(s.root() / d)) << d;
    }
}

}  // namespace
}  // namespace cko::store
