// The report model read from stores written record by record: statuses, lineage, goal, rejections,
// gaps.
#include "cko/report/report_model.hpp"

#include "cko/report/handoff.hpp"
#include "cko/report/html_printer.hpp"
#include "cko/report/markdown_printer.hpp"
#include "cko/report/termination.hpp"
#include "cko/report/testing/synthetic_store.hpp"
#include "cko/store/catalogue.hpp"
#include "cko/store/conclusion_record.hpp"
#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace cko::report {
namespace {

using testing::SyntheticStore;

class ReportModelTest : public test::ScratchTest {
protected:
    static const Json* find(const Json& array, const std::string& key, const std::string& value) {
        for (const auto& x : array) {
            if (x.value(key, "") == value) {
                return &x;
            }
        }
        return nullptr;
    }
    static std::vector<std::string> gap_kinds(const Json& model) {
        std::vector<std::string> kinds;
        for (const auto& g : model["findings"]["gaps"]) {
            kinds.push_back(g.value("kind", ""));
        }
        return kinds;
    }
    static bool has(const std::vector<std::string>& v, const std::string& s) {
        return std::find(v.begin(), v.end(), s) != v.end();
    }
};

// Seen on the H200 (a container without /etc/machine-id): the Target's identity holds machine_id
// null, and the report failed with error[internal] "type must be string, but is null".
TEST_F(ReportModelTest, AHostWithoutAMachineIdStillGetsItsReport) {
    SyntheticStore s(dir_ / "art", nullptr);
    (void)s.baseline();
    const Json m = build_report_model(s.store(), 42);
    EXPECT_EQ(m["target"]["identity"]["machine_id"], "");
    EXPECT_EQ(m["target"]["identity"]["hostname"], "bench-host");
}

// The demo's story and two more: a fast candidate selected and audited, a wrong one, a slow one,
// one that passed its screen and was never confirmed.
TEST_F(ReportModelTest, EveryExperimentGetsAConclusionAndTheChampionItsLineage) {
    SyntheticStore s(dir_ / "art");
    const std::string base = s.baseline();
    const std::string fast = s.experiment("loop-order");
    const std::string s1 = s.comparison("screen", fast, 0.9, "improved", "pass_to_confirm");
    const std::string c1 = s.comparison("confirm", fast, 0.9, "improved");
    const std::string sel = s.select(fast, c1);
    const std::string a1 = s.comparison("audit", fast, 0.85, "improved");
    const std::string wrong = s.experiment("loop-order", "mechanism");
    const std::string s2 = s.comparison("screen", wrong, 0, "invalid", "rejected");
    const std::string slow = s.experiment("unroll", "mechanism");
    const std::string c3 = s.comparison("confirm", slow, -0.2, "regressed");
    const std::string open = s.experiment("tiling");
    (void)s.comparison("screen", open, 0.3, "improved", "pass_to_confirm");

    const Json m = build_report_model(s.store(), 42);
    EXPECT_EQ(m["format_version"], "cko/report-v1");
    EXPECT_EQ(m["generated_unix_s"], 42);
    EXPECT_EQ(m["baseline"]["id"], base);
    ASSERT_EQ(m["experiments"].size(), 4u);
    EXPECT_EQ(m["experiments"][0]["id"], fast);  // time order
    EXPECT_EQ(m["experiments"][3]["id"], open);
    EXPECT_EQ(m["comparisons"].size(), 6u);

    EXPECT_EQ((*find(m["experiments"], "id", fast))["status"], "champion");
    EXPECT_EQ((*find(m["experiments"], "id", fast))["evidence"], Json::array({fast, s1, c1, a1}));
    const Json& w = *find(m["experiments"], "id", wrong);
    EXPECT_EQ(w["status"], "rejected");
    EXPECT_EQ(w["closes"], "implementation")
        << "a wrong result measures no performance: only the implementation is closed";
    EXPECT_EQ((*find(m["experiments"], "id", slow))["closes"], "mechanism");
    EXPECT_EQ((*find(m["experiments"], "id", open))["status"], "unconfirmed");

    EXPECT_EQ(m["champion"]["current"], fast);
    EXPECT_EQ(m["champion"]["selection"], sel);
    ASSERT_EQ(m["champion"]["lineage"].size(), 1u);
    EXPECT_EQ(m["champion"]["lineage"][0]["confirm"], c1);
    EXPECT_TRUE(m["champion"]["audited"].get<bool>());
    EXPECT_EQ(m["audits"].size(), 1u);

    const Json& goal = m["findings"]["goal"];
    EXPECT_TRUE(goal["reached"].get<bool>());
    EXPECT_EQ(goal["confirm"], c1);
    EXPECT_NE(goal["text"].get<std::string>().find("upheld by audit " + a1), std::string::npos);
    ASSERT_EQ(m["findings"]["rejected"].size(), 2u);
    EXPECT_EQ(m["findings"]["rejected"][0]["id"], wrong);
    EXPECT_EQ(m["findings"]["rejected"][1]["evidence"], Json::array({slow, c3}));

    const auto kinds = gap_kinds(m);
    EXPECT_TRUE(has(kinds, "unconfirmed"));
    EXPECT_TRUE(has(kinds, "no_termination"));
    EXPECT_TRUE(has(kinds, "no_profiles"));
    EXPECT_FALSE(has(kinds, "no_baseline"));
    EXPECT_FALSE(has(kinds, "not_audited"));
    EXPECT_EQ(m["profiles"], Json::array());

    // Cost: the baseline (28 s) and six comparisons (12 s each), against the one-hour wall budget.
    EXPECT_DOUBLE_EQ(m["cost"]["wall_s"].get<double>(), 28 + 6 * 12);
    EXPECT_DOUBLE_EQ(m["cost"]["by_kind"]["screen"]["count"].get<double>(), 3);
    EXPECT_DOUBLE_EQ(m["cost"]["budget"]["wall_s"].get<double>(), 3600);
    // Per-pair effects and per-case intervals come through the history.
    EXPECT_EQ((*find(m["comparisons"], "id", c1))["d"].size(), 10u);
    EXPECT_EQ((*find(m["comparisons"], "id", c1))["per_case"].size(), 2u);
    EXPECT_NE((*find(m["comparisons"], "id", c1))["effect_words"].get<std::string>().find("faster"),
              std::string::npos);
}

// docs/report.md "Cost against the budget": wall and GPU seconds and driver calls summed over every
// invocation (a failed one costs too), per kind and in total, the history's totals the same.
TEST_F(ReportModelTest, CostTotalsSumEveryInvocationPerKindAndOverall) {
    SyntheticStore s(dir_ / "art");
    (void)s.baseline();  // 28 wall s, 0 GPU s, 10 calls
    const std::string exp = s.experiment("loop-order");
    s.next_cost = Json{{"wall_s", 12.0}, {"gpu_s", 2.5}, {"driver_calls", 7}};
    (void)s.comparison("screen", exp, 0.9, "improved", "pass_to_confirm");
    s.next_cost = Json{{"wall_s", 3.0}, {"gpu_s", 0.5}, {"driver_calls", 1}};
    (void)s.comparison("screen", exp, 0.9, "improved", "pass_to_confirm");
    s.next_cost = Json{{"wall_s", 30.0}, {"gpu_s", 6.25}, {"driver_calls", 21}};
    (void)s.comparison("confirm", exp, 0.9, "improved");
    const Json m = build_report_model(s.store(), 42);
    const Json& cost = m["cost"];
    EXPECT_DOUBLE_EQ(cost["wall_s"].get<double>(), 28 + 12 + 3 + 30);
    EXPECT_DOUBLE_EQ(cost["gpu_s"].get<double>(), 2.5 + 0.5 + 6.25);
    EXPECT_DOUBLE_EQ(cost["driver_calls"].get<double>(), 10 + 7 + 1 + 21);
    EXPECT_DOUBLE_EQ(cost["by_kind"]["screen"]["wall_s"].get<double>(), 15);
    EXPECT_DOUBLE_EQ(cost["by_kind"]["screen"]["gpu_s"].get<double>(), 3);
    EXPECT_DOUBLE_EQ(cost["by_kind"]["screen"]["count"].get<double>(), 2);
    EXPECT_DOUBLE_EQ(cost["by_kind"]["confirm"]["gpu_s"].get<double>(), 6.25);
    EXPECT_DOUBLE_EQ(cost["by_kind"]["confirm"]["wall_s"].get<double>(), 30);
    EXPECT_DOUBLE_EQ(cost["by_kind"]["baseline"]["wall_s"].get<double>(), 28);
    EXPECT_DOUBLE_EQ(cost["by_kind"]["baseline"]["count"].get<double>(), 1);
    EXPECT_FALSE(cost["by_kind"].contains("experiment"));  // freezing costs no driver time
}

TEST_F(ReportModelTest, AFreshTargetHasNoBaselineNoChampionAndSaysSo) {
    SyntheticStore s(dir_ / "art");
    const Json m = build_report_model(s.store(), 0);
    EXPECT_TRUE(m["baseline"].is_null());
    EXPECT_EQ(m["champion"]["current"], "original");
    EXPECT_FALSE(m["findings"]["goal"]["reached"].get<bool>());
    const auto kinds = gap_kinds(m);
    EXPECT_TRUE(has(kinds, "no_baseline"));
    EXPECT_TRUE(has(kinds, "claim_layer"));
}

TEST_F(ReportModelTest, NotesMixedVerdictsAndAnUnresolvableBaselineAreGaps) {
    SyntheticStore s(dir_ / "art");
    (void)s.baseline("improved", false);
    const std::string x = s.experiment("vectorize");
    const std::string c =
        s.comparison("confirm", x, 0.2, "mixed", "", {"no baseline in this root"});
    const std::string y = s.experiment("fusion");
    const std::string f =
        s.invocation("confirm", y, Json{{"experiment_id", y}, {"d", Json::array()}}, "failed", 3,
                     "driver failed on case small");
    const Json m = build_report_model(s.store(), 0);
    const auto kinds = gap_kinds(m);
    EXPECT_TRUE(has(kinds, "unresolvable_minimum_effect"));
    EXPECT_TRUE(has(kinds, "aa_not_equivalent"));
    EXPECT_TRUE(has(kinds, "mixed"));
    EXPECT_TRUE(has(kinds, "failed_invocation"));
    const Json* note = find(m["findings"]["gaps"], "kind", "note");
    ASSERT_NE(note, nullptr);
    EXPECT_EQ((*note)["text"], "no baseline in this root");
    EXPECT_EQ((*note)["evidence"], Json::array({c}));
    EXPECT_EQ((*find(m["experiments"], "id", x))["status"], "mixed");
    EXPECT_EQ((*find(m["experiments"], "id", y))["status"], "unresolved");
}

// Issue [19]: a mixed verdict's cases were printed as JSON (`regressed on ["small"]`).
TEST_F(ReportModelTest, AMixedVerdictNamesItsRegressedCasesInWords) {
    SyntheticStore s(dir_ / "art");
    const std::string x = s.experiment("vectorize");
    s.next_regressed = {"small", "large"};
    const std::string c = s.comparison("confirm", x, 0.2, "mixed");
    const Json m = build_report_model(s.store(), 0);
    EXPECT_EQ((*find(m["experiments"], "id", x))["conclusion"],
              "improved overall but regressed on small, large");
    const Json* gap = find(m["findings"]["gaps"], "kind", "mixed");
    ASSERT_NE(gap, nullptr);
    EXPECT_EQ((*gap)["text"], "confirm " + c + " is mixed: regressed on small, large");
    EXPECT_EQ(m.dump().find(R"(regressed on [)"), std::string::npos);
}

// Issue [19]: comparisons were known by their experiment's id only; each now carries the
// experiment's mechanism and hypothesis, and the name the printers show.
TEST_F(ReportModelTest, AComparisonIsNamedByItsExperimentsMechanism) {
    SyntheticStore s(dir_ / "art");
    const std::string x = s.experiment("loop-order", "mechanism", "rows first halves misses");
    const std::string c = s.comparison("confirm", x, 0.5, "improved");
    (void)s.select(x, c);
    (void)s.comparison("audit", x, 0.5, "improved");
    const std::string y = s.experiment("", "mechanism", "a hypothesis without a mechanism");
    (void)s.comparison("screen", y, 0.5, "improved", "pass_to_confirm");
    const Json m = build_report_model(s.store(), 0);
    ASSERT_EQ(m["comparisons"].size(), 3u);
    const Json& confirm = m["comparisons"][0];
    EXPECT_EQ(confirm["subject"], x);
    EXPECT_EQ(confirm["mechanism"], "loop-order");
    EXPECT_EQ(confirm["hypothesis"], "rows first halves misses");
    EXPECT_EQ(confirm["name"], "loop-order");
    const Json& audit = m["comparisons"][1];
    EXPECT_EQ(audit["subject"], x) << "an audit measures the champion's experiment";
    EXPECT_EQ(audit["name"], "loop-order");
    EXPECT_EQ(m["comparisons"][2]["name"], "a hypothesis without a mechanism");
}

TEST_F(ReportModelTest, AnAuditThatFailsTheChampionMeansTheGoalIsNotReached) {
    SyntheticStore s(dir_ / "art");
    const std::string x = s.experiment("loop-order");
    const std::string c = s.comparison("confirm", x, 0.5, "improved");
    (void)s.select(x, c);
    const std::string a = s.comparison("audit", x, 0.01, "equivalent");
    const Json m = build_report_model(s.store(), 0);
    EXPECT_FALSE(m["findings"]["goal"]["reached"].get<bool>());
    const Json* gap = find(m["findings"]["gaps"], "kind", "audit_not_improved");
    ASSERT_NE(gap, nullptr);
    EXPECT_EQ((*gap)["evidence"], Json::array({a}));
}

TEST_F(ReportModelTest, ASelectedChampionNeverAuditedIsAGap) {
    SyntheticStore s(dir_ / "art");
    const std::string x = s.experiment("loop-order");
    (void)s.select(x, s.comparison("confirm", x, 0.5, "improved"));
    const Json m = build_report_model(s.store(), 0);
    EXPECT_TRUE(m["findings"]["goal"]["reached"].get<bool>());
    EXPECT_NE(m["findings"]["goal"]["text"].get<std::string>().find("not audited yet"),
              std::string::npos);
    EXPECT_TRUE(has(gap_kinds(m), "not_audited"));
}

// Stores written before per_case became an array keep it as an object keyed by case id.
TEST_F(ReportModelTest, PerCaseResultsOfTheOlderLayoutAreRead) {
    SyntheticStore s(dir_ / "art");
    const std::string x = s.experiment("loop-order");
    const Json old_layout{{"experiment_id", x},
                          {"verdict", "improved"},
                          {"d", Json::array({0.5, 0.6})},
                          {"per_case",
                           {{"small", {{"verdict", "improved"}, {"estimate", {{"hl_pct", 60.0}}}}},
                            {"large", "not an object"}}},
                          {"constraints", Json::array({1, 2})}};
    const std::string c = s.invocation("confirm", x, old_layout, "succeeded", 5);
    const Json m = build_report_model(s.store(), 0);
    ASSERT_EQ(m["comparisons"].size(), 1u);
    const Json& pc = m["comparisons"][0]["per_case"];
    ASSERT_EQ(pc.size(), 1u);
    EXPECT_EQ(pc[0]["case_id"], "small");
    EXPECT_EQ(pc[0]["effect_pct"], 60.0);
    EXPECT_TRUE(m["comparisons"][0]["constraints"].empty());
}

TEST_F(ReportModelTest, AStoreWithoutATargetIsRefused) {
    const store::Store st = store::Store::create(dir_ / "empty");
    EXPECT_CKO_ERROR((void)build_report_model(st, 0), ErrorCode::not_found);
}

TEST_F(ReportModelTest, TheStopRecordClosesTheTerminationGap) {
    SyntheticStore s(dir_ / "art");
    (void)record_stop(s.store(), "goal reached");
    const Json m = build_report_model(s.store(), 0);
    EXPECT_EQ(m["stop"]["reason"], "goal reached");
    EXPECT_FALSE(has(gap_kinds(m), "no_termination"));
}

// Issue [23]: identity gaps lower the claim the report and the handoff state, saying why; a
// manual lowering combines with them (the lower wins); a clean identity changes nothing.
using Options = SyntheticStore::TargetOptions;

class IdentityClaimReportTest : public test::ScratchTest {
protected:
    // A champion confirmed improved and upheld by its audit: the goal is reached unless the claim
    // is lowered.
    static void champion(SyntheticStore& s) {
        const std::string x = s.experiment("loop-order");
        (void)s.select(x, s.comparison("confirm", x, 0.5, "improved"));
        (void)s.comparison("audit", x, 0.5, "improved");
    }
    // A `cko conclusion lower` record written as the verb writes it.
    static void lower(const SyntheticStore& s, store::ClaimLayer from, store::LoweredTo to) {
        store::ConclusionRecord r;
        r.lowered_from = from;
        r.lowered_to = to;
        r.reason = "the decision maker's reason";
        r.champion = "original";
        r.lowered_unix_ns = (SyntheticStore::t0 + 100000) * 1000000000;
        r.id = "low-00000000000000" + std::string(store::lowered_to_name(to)).substr(0, 2);
        (void)s.store().write_record(store::layout::conclusion_record(r.id), r.to_json());
    }
    static bool contains(const std::string& hay, const std::string& needle) {
        return hay.find(needle) != std::string::npos;
    }
};

TEST_F(IdentityClaimReportTest, ANullMachineIdLowersAWorkloadClaimToKernelSayingWhy) {
    SyntheticStore s(dir_ / "art", Options{nullptr, store::ClaimLayer::workload, false, {}});
    champion(s);
    const Json m = build_report_model(s.store(), 0);
    const Json& goal = m["findings"]["goal"];
    EXPECT_FALSE(goal["reached"].get<bool>());
    EXPECT_EQ(goal["stated_claim"], "kernel");
    EXPECT_EQ(goal["identity"]["supports"], "kernel");
    EXPECT_TRUE(goal["identity"]["lowers"].get<bool>());
    EXPECT_EQ(goal["identity"]["gaps"][0]["gap"], "no_machine_id");
    const std::string text = goal["text"].get<std::string>();
    EXPECT_TRUE(contains(text,
                         "not claimed at the workload layer: the environment identity "
                         "supports kernel at most: no machine id was recorded"))
        << text;
    EXPECT_TRUE(contains(text, "(before: reached at the workload layer")) << text;

    const std::string stated =
        "- **Claim lowered by the environment identity:** the claim stated is now kernel: the "
        "environment identity supports kernel at most: no machine id was recorded";
    const std::string handoff = render_handoff(m);
    EXPECT_TRUE(contains(handoff, stated)) << handoff;
    EXPECT_TRUE(contains(handoff, "identity gap (no_machine_id): no machine id was recorded"));
    EXPECT_TRUE(contains(render_markdown(m), stated));
    EXPECT_TRUE(contains(render_html(m), "claim lowered by the environment identity to kernel"));
}

TEST_F(IdentityClaimReportTest, ACleanIdentityLeavesTheGoalAndThePrintedClaimAsTheyWere) {
    SyntheticStore s(dir_ / "art", Options{"m1", store::ClaimLayer::workload, false, {}});
    champion(s);
    const Json m = build_report_model(s.store(), 0);
    const Json& goal = m["findings"]["goal"];
    EXPECT_TRUE(goal["reached"].get<bool>());
    EXPECT_FALSE(goal.contains("stated_claim"));
    EXPECT_EQ(goal["identity"]["supports"], "workload");
    EXPECT_FALSE(contains(render_handoff(m), "Claim lowered by the environment identity"));
}

TEST_F(IdentityClaimReportTest, AContainerUnderAKernelClaimIsAGapThatLowersNothing) {
    SyntheticStore s(dir_ / "art", Options{"m1", store::ClaimLayer::kernel, true, {}});
    champion(s);
    const Json m = build_report_model(s.store(), 0);
    EXPECT_TRUE(m["findings"]["goal"]["reached"].get<bool>());
    EXPECT_FALSE(m["findings"]["goal"]["identity"]["lowers"].get<bool>());
    const std::string handoff = render_handoff(m);
    EXPECT_TRUE(contains(handoff,
                         "identity gap (container): measured inside a container "
                         "(/.dockerenv exists)"))
        << handoff;
    EXPECT_FALSE(contains(handoff, "Claim lowered by the environment identity"));
}

TEST_F(IdentityClaimReportTest, AManualLoweringAndTheIdentityCombineAndTheLowerIsStated) {
    // The manual lowering is lower: unconfirmed (manual) beats kernel (container).
    SyntheticStore a(dir_ / "a", Options{"m1", store::ClaimLayer::serving, true, {}});
    champion(a);
    lower(a, store::ClaimLayer::serving, store::LoweredTo::unconfirmed);
    Json goal = build_report_model(a.store(), 0)["findings"]["goal"];
    EXPECT_EQ(goal["stated_claim"], "unconfirmed");
    EXPECT_TRUE(goal.contains("lowered"));
    EXPECT_TRUE(contains(goal["text"].get<std::string>(),
                         "the conclusion was lowered from "
                         "serving to unconfirmed"));
    EXPECT_TRUE(contains(goal["text"].get<std::string>(), "inside a container"));
    // The identity is lower: target GPUs never verified (unconfirmed) beat a manual kernel.
    SyntheticStore b(dir_ / "b", Options{"m1", store::ClaimLayer::workload, false, {"GPU-1"}});
    const std::string x = b.experiment("loop-order");
    b.next_observation = Json{{"applied", false}, {"gpu", nullptr}};
    (void)b.select(x, b.comparison("confirm", x, 0.5, "improved"));
    lower(b, store::ClaimLayer::workload, store::LoweredTo::kernel);
    goal = build_report_model(b.store(), 0)["findings"]["goal"];
    EXPECT_EQ(goal["stated_claim"], "unconfirmed");
    EXPECT_EQ(goal["identity"]["gaps"][0]["gap"], "gpu_unverified");
    EXPECT_TRUE(contains(goal["identity"]["text"].get<std::string>(),
                         "the driver ran on a node this host's monitor does not observe"));
}

}  // namespace
}  // namespace cko::report
