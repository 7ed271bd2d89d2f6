// A store written record by record (no driver runs) for the report's tests and benchmark.
#pragma once

#include "cko/eval/target_spec.hpp"
#include "cko/store/store.hpp"
#include "cko/util/json.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cko::report::testing {

// Builds a Target's evidence as the real verbs would leave it: target.json, a baseline,
// experiments with screens and confirms, champion selections and audits. Times are fixed (one
// minute apart from `t0`), ids are made from counters, so every build is identical.
class SyntheticStore {
public:
    // What target.json records of the Target's claim and environment.
    struct TargetOptions {
        Json machine_id = "m1";  // null: a host without /etc/machine-id (containers)
        store::ClaimLayer claim_layer = store::ClaimLayer::kernel;
        bool in_container = false;
        std::vector<std::string> gpus;  // the GPU uuids it measures on; empty: CPU only
    };

    explicit SyntheticStore(const std::filesystem::path& root, Json machine_id = "m1")
        : SyntheticStore(
              root, TargetOptions{std::move(machine_id), store::ClaimLayer::kernel, false, {}}) {}
    SyntheticStore(const std::filesystem::path& root, TargetOptions options)
        : store_(store::Store::create(root)), options_(std::move(options)) {
        target();
    }

    [[nodiscard]] const store::Store& store() const noexcept { return store_; }

    // A baseline whose A/A check says `verdict`; `resolvable` false adds the unresolvable note.
    std::string baseline(const std::string& verdict = "equivalent", bool resolvable = true) {
        Json out{{"aa",
                  {{"d", Json::array({0.01, -0.02, 0.005, 0.0, -0.01, 0.012})},
                   {"estimate", estimate(-0.3, -1.8, 1.1)},
                   {"pairs", 6},
                   {"verdict", verdict}}},
                 {"resolution",
                  {{"statement", "A/A noise 1.2 % over 6 pairs"},
                   {"resolvable", resolvable},
                   {"mde_pct", resolvable ? 2.0 : 9.0}}},
                 {"cases",
                  {{"small",
                    {{"median", 250.0},
                     {"unit", "us"},
                     {"cv", 0.02},
                     {"samples", Json::array({1, 2})}}}}}};
        return invocation("baseline", "", out, "succeeded", 28.0);
    }

    // An experiment frozen now; returns its id.
    std::string experiment(const std::string& mechanism,
                           const std::string& failure_closes = "mechanism",
                           const std::string& hypothesis = "") {
        const std::string id = fmt::format("exp-{:016x}", ++experiments_);
        store_.write_record(
            "experiments/" + id + ".json",
            Json{{"format_version", "cko/experiment-v1"},
                 {"id", id},
                 {"target", {{"id", "tgt-00000000000000aa"}, {"sha256", std::string(64, 't')}}},
                 {"created_unix_s", tick()},
                 {"hypothesis", hypothesis.empty() ? "hypothesis about " + mechanism : hypothesis},
                 {"mechanism", mechanism},
                 {"claim_layer", "kernel"},
                 {"failure_closes", failure_closes},
                 {"minimum_effect_pct", 5.0},
                 {"falsifier", nullptr},
                 {"no_falsifier_reason", "synthetic"},
                 {"estimated_cost_s", 0.0},
                 {"gain_bound", nullptr},
                 {"extra_correctness_gates", Json::array()},
                 {"secondary_metrics", Json::array()},
                 {"diagnostics_only", Json::array()},
                 {"relationship", "implementation_equivalence"},
                 {"lifecycle", "isolated_process"},
                 {"premises", Json::array()},
                 {"control", false},
                 {"screen_design", "conservative_bound"},
                 {"base",
                  {{"kind", "original"},
                   {"experiment_id", nullptr},
                   {"digest", std::string(64, 'a')}}},
                 {"candidate", snapshot_ref('c', "/src/candidate")},
                 {"changed_files", Json::array({"~k.cu"})}});
        return id;
    }

    // A screen/confirm/audit of `experiment` whose pairs all have log ratio near `effect_log`.
    // verdict "invalid" writes no estimate (a correctness failure); `notes` go into the outputs.
    std::string comparison(const std::string& kind, const std::string& experiment,
                           double effect_log, const std::string& verdict,
                           const std::string& decision = "",
                           const std::vector<std::string>& notes = {}, std::size_t pairs = 10) {
        Json d = Json::array();
        Json out{{"experiment_id", kind == "audit" ? "" : experiment},
                 {"reference", {{"label", "original"}, {"digest", std::string(64, 'a')}}},
                 {"candidate", {{"label", experiment}, {"digest", std::string(64, 'c')}}},
                 {"minimum_effect_pct", 5.0},
                 {"verdict", verdict},
                 {"infrastructure_failure", false},
                 {"notes", notes},
                 {"regressed_cases", Json::array()}};
        if (verdict != "invalid") {
            for (std::size_t i = 0; i < pairs; ++i) {
                d.push_back(effect_log + 0.01 * (static_cast<double>(i % 5) - 2.0));
            }
            const double pct = 100 * (std::exp(effect_log) - 1);
            out["estimate"] = estimate(pct, 100 * (std::exp(effect_log - 0.03) - 1),
                                       100 * (std::exp(effect_log + 0.03) - 1));
            out["nominal_estimate"] = estimate(pct, 100 * (std::exp(effect_log - 0.02) - 1),
                                               100 * (std::exp(effect_log + 0.02) - 1));
            out["deciding"] = {{"look", 2}, {"looks_planned", 3}, {"level", 0.975}};
            out["effect_text"] = "effect";
            out["per_case"] = Json::array({Json{{"case_id", "small"},
                                                {"verdict", verdict},
                                                {"regressed", false},
                                                {"estimate", estimate(pct, pct - 3, pct + 3)}},
                                           Json{{"case_id", "large"},
                                                {"verdict", verdict},
                                                {"regressed", false},
                                                {"estimate", estimate(pct, pct - 4, pct + 4)}}});
        }
        out["d"] = d;
        if (!next_observation.is_null()) {
            out["observation"] = std::exchange(next_observation, Json());
        }
        regress_cases(out, std::exchange(next_regressed, {}));
        if (!decision.empty()) {
            out["decision"] = decision;
        }
        const std::string reason =
            verdict == "invalid"
                ? "the candidate failed correctness on case small: no performance claim"
                : fmt::format("{} after {} pairs", verdict, d.size());
        return invocation(kind, experiment, out, "succeeded", 12.0, reason);
    }

    // champion select of `experiment` on `confirm`.
    std::string select(const std::string& experiment, const std::string& confirm) {
        const std::string id = fmt::format("sel-{:016x}", ++selections_);
        const store::RecordRef ref = store_.write_record(
            "champion/selections/" + id + ".json",
            Json{{"format_version", "cko/selection-v1"},
                 {"id", id},
                 {"experiment_id", experiment},
                 {"confirm", {{"id", confirm}, {"sha256", std::string(64, '0')}}},
                 {"digest", std::string(64, 'c')},
                 {"selected_unix_s", tick()},
                 {"previous",
                  {{"champion", "original"},
                   {"digest", std::string(64, 'a')},
                   {"current_sha256", ""}}}});
        current_sha_ = store_.compare_and_swap("champion/current.json", current_sha_,
                                               Json{{"format_version", "cko/champion-v1"},
                                                    {"id", "champion"},
                                                    {"experiment_id", experiment},
                                                    {"digest", std::string(64, 'c')},
                                                    {"selection", ref.to_json()}});
        return id;
    }

    std::string invocation(const std::string& kind, const std::string& experiment,
                           const Json& outputs, const std::string& state, double wall_s,
                           const std::string& reason = "done") {
        const std::string id = fmt::format("inv-{:016x}", ++invocations_);
        const std::int64_t t = tick();
        store_.write_record("invocations/" + id + "/request.json",
                            Json{{"format_version", "cko/invocation-request-v1"},
                                 {"id", id},
                                 {"kind", kind},
                                 {"created_unix_ns", t * 1000000000},
                                 {"owner",
                                  {{"pid", 1},
                                   {"start_ticks", 0},
                                   {"boot_id", "synthetic"},
                                   {"hostname", "bench-host"}}},
                                 {"limits",
                                  {{"operation_timeout_s", 3600.0},
                                   {"command_timeout_s", 600.0},
                                   {"resource_wait_timeout_s", 60.0},
                                   {"cleanup_timeout_s", 10.0}}},
                                 {"request", {{"experiment_id", experiment}}}});
        store_.write_record(
            "invocations/" + id + "/result.json",
            Json{{"format_version", "cko/invocation-result-v1"},
                 {"id", id},
                 {"kind", kind},
                 {"state", state},
                 {"reason", reason},
                 {"started_unix_ns", t * 1000000000},
                 {"finished_unix_ns", (t + 30) * 1000000000},
                 {"cost", next_cost.is_null()
                              ? Json{{"wall_s", wall_s}, {"gpu_s", 0.0}, {"driver_calls", 10}}
                              : std::exchange(next_cost, Json())},
                 {"outputs", outputs}});
        return id;
    }

    static constexpr std::int64_t t0 = 1796116000;
    // When set, the next invocation's cost ({wall_s, gpu_s, driver_calls}) instead of the default.
    Json next_cost;
    // When set, the next comparison's outputs.observation ({applied, gpu, ...}).
    Json next_observation;
    // When set, the cases the next comparison regressed on: each its own verdict regressed at
    // −10 % (an interval left of the band), all of them named in regressed_cases.
    std::vector<std::string> next_regressed;

private:
    std::int64_t tick() { return t0 + 60 * ++clock_; }

    static Json snapshot_ref(char digit, const std::string& source) {
        return Json{{"digest", std::string(64, digit)},
                    {"kind", "directory"},
                    {"source", source},
                    {"file_count", 1},
                    {"total_bytes", 100}};
    }

    static void regress_cases(Json& out, const std::vector<std::string>& cases) {
        if (!out.contains("per_case")) {
            return;
        }
        for (auto& c : out["per_case"]) {
            if (std::find(cases.begin(), cases.end(), c.value("case_id", "")) != cases.end()) {
                c["verdict"] = "regressed";
                c["regressed"] = true;
                c["estimate"] = estimate(-10, -12, -8);
            } else if (!cases.empty()) {
                c["verdict"] = "improved";
            }
        }
        out["regressed_cases"] = cases;
    }

    static Json estimate(double hl_pct, double lo_pct, double hi_pct) {
        return Json{{"hl_pct", hl_pct},
                    {"ci_low_pct", lo_pct},
                    {"ci_high_pct", hi_pct},
                    {"confidence", 0.95}};
    }

    void target() {
        Json record{
            {"format_version", "cko/target-v1"},
            {"id", "tgt-00000000000000aa"},
            {"created_unix_s", t0},
            {"created_by", "cko synthetic"},
            {"spec_sha256", std::string(64, 's')},
            {"spec_dir", "/src"},
            {"original", snapshot_ref('a', "/src/original")},
            {"cases",
             Json::array(
                 {Json{{"id", "small"}, {"snapshot", snapshot_ref('1', "/src/cases/small.json")}},
                  Json{{"id", "large"},
                       {"snapshot", snapshot_ref('2', "/src/cases/large.json")}}})},
            {"environment",
             {{"host",
               {{"hostname", "bench-host"},
                {"machine_id", options_.machine_id},
                {"cpu_model", "CPU"},
                {"logical_cpus", 2},
                {"kernel_release", "6.1"},
                {"in_container", options_.in_container},
                {"container_hints",
                 options_.in_container ? Json::array({"/.dockerenv exists"}) : Json::array()}}},
              {"gpus", Json::array()},
              {"driver_version", nullptr}}},
            {"spec", spec(options_.claim_layer)}};
        if (!options_.gpus.empty()) {
            record["gpus"] = options_.gpus;
        }
        store_.write_record("target.json", record);
    }

    // A complete frozen spec (every member TargetSpec::to_json writes): the report reads it typed.
    static Json spec(store::ClaimLayer claim_layer) {
        eval::TargetSpec s;
        s.name = "synthetic";
        s.claim_layer = claim_layer;
        s.original = "original";
        s.change_scope = {"original/k.cu"};
        s.cases_dir = "cases";
        s.case_ids = {"small", "large"};
        s.driver_argv = {"python3", "driver.py"};
        s.capabilities = {"single_subject"};
        s.primary = {"latency_us", "us", stats::Direction::lower, "median"};
        s.minimum_effect_pct = 5.0;
        s.correctness_metric = "max_rel_err";
        s.correctness_operator = "<=";
        s.correctness_threshold = 1e-6;
        s.max_pairs = 20;
        s.wall_seconds_budget = 3600.0;
        s.gpus_mode = "none";
        return s.to_json();
    }

    store::Store store_;
    TargetOptions options_;
    std::int64_t clock_ = 0;
    int experiments_ = 0;
    int invocations_ = 0;
    int selections_ = 0;
    std::string current_sha_;
};

}  // namespace cko::report::testing
