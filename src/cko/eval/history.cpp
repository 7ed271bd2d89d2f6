// The Target's history from its records: read-only, time-ordered, one entry per thing that
// happened.
#include "cko/eval/history.hpp"

#include "cko/eval/conclusion.hpp"
#include "cko/eval/decision.hpp"
#include "cko/eval/experiment.hpp"
#include "cko/eval/hypothesis.hpp"
#include "cko/eval/judge.hpp"
#include "cko/eval/ledger.hpp"
#include "cko/eval/profile_evidence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>

namespace cko::eval {
namespace {

double number_or(const Json& j, const char* key, double fallback) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

// A comparison's summary fields: who, when, the verdict, its estimate and cost, and the compact
// evidence the report draws and the handoff cites (per-pair effects, notes).
Json comparison_summary(const store::InvocationRecord& request, const Json& result) {
    const Json& out = result.value("outputs", Json::object());
    const Json& cost = result.value("cost", Json::object());
    Json e{
        {"type", request.kind},
        {"id", result.value("id", "")},
        {"t_unix_s", result.value("started_unix_ns", std::int64_t{0}) / 1000000000},
        {"t_unix_ns", result.value("started_unix_ns", std::int64_t{0})},
        {"state", result.value("state", "?")},
        {"experiment_id", out.value("experiment_id", request.request.value("experiment_id", ""))},
        {"reference", out.value("reference", Json::object()).value("label", "")},
        {"candidate", out.value("candidate", Json::object()).value("label", "")},
        {"verdict", out.value("verdict", "")},
        {"decision", out.value("decision", "")},
        {"reason", result.value("reason", "")},
        {"pairs", out.value("d", Json::array()).size()},
        {"gpu_s", number_or(cost, "gpu_s", 0)},
        {"wall_s", number_or(cost, "wall_s", 0)},
        {"regressed_cases", out.value("regressed_cases", Json::array())}};
    if (out.contains("estimate")) {
        e["effect_pct"] = out["estimate"].value("hl_pct", Json());
        e["ci_low_pct"] = out["estimate"].value("ci_low_pct", Json());
        e["ci_high_pct"] = out["estimate"].value("ci_high_pct", Json());
        e["effect_text"] = out.value("effect_text", "");
        e["deciding"] = out.value("deciding", Json());
    }
    // What the report draws and the handoff cites: per-pair effects, per-case intervals,
    // constraints, notes (compact: percent fields only).
    e["minimum_effect_pct"] = out.value("minimum_effect_pct", Json());
    e["d"] = out.value("d", Json::array());
    e["driver_calls"] = cost.value("driver_calls", Json());
    e["infrastructure_failure"] = out.value("infrastructure_failure", false);
    e["notes"] = out.value("notes", Json::array());
    // Whether the monitor watched the target GPUs (the identity rule reads it: identity_claim).
    const Json observation = out.value("observation", Json());
    e["observation"] = observation.is_object()
                           ? Json{{"applied", observation.value("applied", true)},
                                  {"gpu", observation.value("gpu", Json())}}
                           : Json();
    return e;
}

// The outputs' per-case verdicts and intervals, compact, as an array of {case_id, ...}.
Json per_case_entries(const Json& out) {
    // per_case is an array of {case_id, ...}; stores written before that layout keep an object
    // keyed by case id. Anything else (or a non-object entry) is skipped, never a crash.
    Json entries = Json::array();
    const auto add_case = [&entries](const std::string& case_id, const Json& c) {
        if (!c.is_object()) {
            return;
        }
        const Json est = c.value("estimate", Json::object());
        entries.push_back(Json{{"case_id", case_id},
                               {"verdict", c.value("verdict", "")},
                               {"regressed", c.value("regressed", false)},
                               {"effect_pct", est.value("hl_pct", Json())},
                               {"ci_low_pct", est.value("ci_low_pct", Json())},
                               {"ci_high_pct", est.value("ci_high_pct", Json())}});
    };
    const Json per_case = out.value("per_case", Json::array());
    if (per_case.is_array()) {
        for (const auto& c : per_case) {
            add_case(c.is_object() ? c.value("case_id", "") : "", c);
        }
    } else if (per_case.is_object()) {
        for (const auto& [case_id, c] : per_case.items()) {
            add_case(case_id, c);
        }
    }
    return entries;
}

// One constraint's per-case statuses and intervals (stores written before [18] have the pooled
// status only: an empty array).
Json constraint_case_entries(const Json& c) {
    Json cases_of_constraint = Json::array();
    const Json per_case_of = c.value("per_case", Json::array());
    for (const auto& pc : per_case_of) {
        if (!pc.is_object()) {
            continue;
        }
        const Json pe = pc.value("estimate", Json::object());
        cases_of_constraint.push_back(Json{{"case_id", pc.value("case_id", "")},
                                           {"status", pc.value("status", "")},
                                           {"effect_pct", pe.value("hl_pct", Json())},
                                           {"ci_low_pct", pe.value("ci_low_pct", Json())},
                                           {"ci_high_pct", pe.value("ci_high_pct", Json())}});
    }
    return cases_of_constraint;
}

// The outputs' constraints, compact, keyed by name (a non-object constraint is skipped).
Json constraint_entries(const Json& out) {
    Json constraints = Json::object();
    const Json constraints_of = out.value("constraints", Json::object());
    for (const auto& [name, c] : constraints_of.items()) {
        if (!c.is_object()) {
            continue;
        }
        const Json est = c.value("estimate", Json::object());
        constraints[name] = Json{{"status", c.value("status", "")},
                                 {"pooled_status", c.value("pooled_status", c.value("status", ""))},
                                 {"max_regression_pct", c.value("max_regression_pct", Json())},
                                 {"effect_pct", est.value("hl_pct", Json())},
                                 {"ci_low_pct", est.value("ci_low_pct", Json())},
                                 {"ci_high_pct", est.value("ci_high_pct", Json())},
                                 {"per_case", constraint_case_entries(c)},
                                 {"regressed_cases", c.value("regressed_cases", Json::array())}};
    }
    return constraints;
}

// Makes `e` the entry of a baseline's A/A check: its verdict, interval, resolution and the
// original's per-case spread, in place of a comparison's.
void add_baseline_check(const Json& out, Json& e) {
    e["verdict"] = out["aa"].value("verdict", "");
    e["pairs"] = out["aa"].value("pairs", 0);
    e["reference"] = "original";
    e["candidate"] = "original (A/A check)";
    e["resolution"] = out.value("resolution", Json()).value("statement", "");
    e["resolution_facts"] = out.value("resolution", Json());
    if (out.contains("instrument_check")) {
        e["instrument_check"] = out["instrument_check"];
    }
    e["d"] = out["aa"].value("d", Json::array());
    const Json& aa = out["aa"].value("estimate", Json::object());
    e["effect_pct"] = aa.value("hl_pct", Json());
    e["ci_low_pct"] = aa.value("ci_low_pct", Json());
    e["ci_high_pct"] = aa.value("ci_high_pct", Json());
    e["cases"] = Json::object();
    // Bound first: a temporary inside a range-for initializer dies before the loop (C++20).
    const Json cases_of = out.value("cases", Json::object());
    for (const auto& [id, c] : cases_of.items()) {
        if (!c.is_object()) {
            continue;
        }
        e["cases"][id] = Json{{"median", c.value("median", Json())},
                              {"unit", c.value("unit", "")},
                              {"cv", c.value("cv", Json())},
                              {"samples", c.value("samples", Json::array()).size()}};
    }
}

Json comparison_entry(const store::InvocationRecord& request, const Json& result) {
    const Json& out = result.value("outputs", Json::object());
    Json e = comparison_summary(request, result);
    e["per_case"] = per_case_entries(out);
    e["constraints"] = constraint_entries(out);
    e["constraint_regressions"] = out.value("constraint_regressions", Json::array());
    for (const char* key : {"thresholds", "instrument_bias", "instrument_check"}) {
        if (out.contains(key)) {
            e[key] = out[key];
        }
    }
    if (out.contains("nominal_estimate")) {
        e["nominal"] = Json{{"confidence", out["nominal_estimate"].value("confidence", Json())},
                            {"ci_low_pct", out["nominal_estimate"].value("ci_low_pct", Json())},
                            {"ci_high_pct", out["nominal_estimate"].value("ci_high_pct", Json())}};
    }
    if (request.kind == "baseline" && out.contains("aa")) {
        add_baseline_check(out, e);
    }
    return e;
}

// The history entry of an experiment: its claim, its base and what it changed.
Json experiment_entry(const std::string& id, const store::ExperimentRecord& x) {
    return Json{{"type", "experiment"},
                {"id", id},
                {"t_unix_s", x.created_unix_s.value_or(0)},
                {"hypothesis", x.hypothesis},
                {"mechanism", x.mechanism},
                {"control", x.is_control()},
                {"base", store::base_kind_name(x.base.kind)},
                {"base_experiment", x.base.experiment_id ? Json(*x.base.experiment_id) : Json()},
                {"changed_files", x.changed_files},
                {"claim_layer", store::claim_layer_name(x.claim_layer)},
                {"failure_closes", store::failure_closes_name(x.failure_closes)},
                {"minimum_effect_pct", x.minimum_effect_pct},
                {"relationship", store::relationship_name(x.relationship)},
                {"screen_design", store::screen_design_name(x.screen_design)},
                {"estimated_cost_s", x.estimated_cost_s},
                {"tests_hypothesis", x.tests_hypothesis ? Json(*x.tests_hypothesis) : Json()}};
}

// Appends the entries of the ledger's invocations that history shows: succeeded falsifies and
// every screen, confirm, audit and baseline (one still running as such).
void add_invocation_entries(const store::Store& store, Json& entries) {
    // Bound first: a temporary inside a range-for initializer dies before the loop (C++20).
    const InvocationLedger ledger = InvocationLedger::read(store);
    for (const InvocationEntry& inv : ledger.entries()) {
        const store::InvocationRecord& request = inv.request;
        const std::string& kind = request.kind;
        if (kind == kFalsifyKind && inv.succeeded()) {
            entries.push_back(falsify_history_entry(inv));  // decision.hpp
            continue;
        }
        if (kind != "screen" && kind != "confirm" && kind != "audit" && kind != "baseline") {
            continue;
        }
        if (!inv.result) {
            entries.push_back(Json{{"type", kind},
                                   {"id", inv.id()},
                                   {"state", "running"},
                                   {"t_unix_s", request.created_unix_ns / 1000000000},
                                   {"experiment_id", request.request.value("experiment_id", "")}});
            continue;
        }
        entries.push_back(comparison_entry(request, inv.result->to_json()));
    }
}

// The history entry of a champion selection, or of a restore of the original.
Json selection_entry(const store::SelectionRecord& s) {
    const bool restore = !s.experiment_id.has_value();
    return Json{
        {"type", restore ? "restore" : "select"},
        {"id", s.id},
        {"t_unix_s", s.selected_unix_s},
        {"experiment_id", s.experiment_id.value_or("original")},
        {"confirm", s.confirm ? s.confirm->id : std::string()},
        {"accepted_regressions", s.accepted_regressions.value_or(std::vector<std::string>{})},
        {"restore", s.restore.value_or(Json())}};
}

// Sorts the entries by time, stably. Invocations know their start to the nanosecond, experiments
// and selections only to the second: within one second an experiment comes before the comparisons
// that measure it and a selection after the confirm it cites.
void sort_by_time(Json& entries) {
    const auto order_key = [](const Json& e) {
        const std::int64_t s = e.value("t_unix_s", std::int64_t{0});
        if (e.contains("t_unix_ns")) {
            return e["t_unix_ns"].get<std::int64_t>();
        }
        const std::string type = e.value("type", "");
        return s * 1000000000 + (type == "select" || type == "restore" ? 999999999 : 0);
    };
    std::stable_sort(entries.begin(), entries.end(), [&order_key](const Json& a, const Json& b) {
        return order_key(a) < order_key(b);
    });
}

// The entry's time of day (UTC), HH:MM:SS.
std::string time_of_day(const Json& e) {
    const std::time_t t = e.value("t_unix_s", std::int64_t{0});
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    char when[16];
    std::strftime(when, sizeof when, "%H:%M:%S", &tm);
    return when;
}

// The history line of an experiment.
std::string experiment_line(const std::string& when, const Json& e) {
    const Json& tests = e.value("tests_hypothesis", Json());
    return fmt::format("{:<9} {:<10} {:<22} {}{} (mechanism {}, base {}{})\n", when, "experiment",
                       e.value("id", ""), e.value("control", false) ? "[A/A control] " : "",
                       e.value("hypothesis", ""), e.value("mechanism", ""), e.value("base", ""),
                       tests.is_string() ? ", tests " + tests.get<std::string>() : std::string());
}

// The history line of a profile: its sources, what it is tied to, who collected it.
std::string profile_line(const std::string& when, const Json& e) {
    const Json& sources = e.value("sources", Json::array());
    std::string what;
    for (const auto& s : sources) {
        what += (what.empty() ? "" : ", ") +
                std::filesystem::path(s.value("path", "")).filename().string() + " (sha256 " +
                s.value("report_sha256", "").substr(0, 12) + ")";
    }
    const bool tied = e.value("experiment_id", Json()).is_string();
    std::string collected;
    if (e.contains("collection")) {
        const Json& c = e["collection"];
        const std::string version = c.value("tool_version", "");
        collected =
            fmt::format(", collected by {} (case {}, {}{})", c.value("invocation_id", ""),
                        c.value("case_id", ""), c.value("tool", ""),
                        version.empty() ? std::string(" version not stated") : " " + version);
    }
    return fmt::format(
        "{:<9} {:<10} {:<22} {} of {}{}{}{}{}\n", when, "profile", e.value("id", ""),
        e.value("kind", ""), what,
        tied ? fmt::format(" for {} {}", e["experiment_id"].get<std::string>(),
                           e.value("subject", Json("")).get<std::string>())
             : std::string(),
        collected, e.value("foreign", false) ? " [foreign evidence: not citable]" : "",
        e.value("question", Json()).is_string() ? " — question: " + e["question"].get<std::string>()
                                                : std::string());
}

// The history line of a selection or a restore (`type`).
std::string selection_line(const std::string& when, const std::string& type, const Json& e) {
    return fmt::format(
        "{:<9} {:<10} {:<22} champion -> {}{}\n", when, type, e.value("id", ""),
        e.value("experiment_id", Json("original")).get<std::string>(),
        type == "select" ? fmt::format(" (confirm {})", e.value("confirm", "")) : std::string());
}

// The history line of a comparison or a baseline (`type`) in the table's columns, and its effect
// text on a line of its own when it has one.
std::string comparison_lines(const std::string& when, const std::string& type, const Json& e) {
    std::string effect = "-";
    if (e.contains("effect_pct") && e["effect_pct"].is_number()) {
        effect = fmt::format("{:+.2f}% [{:+.2f}%, {:+.2f}%]", e["effect_pct"].get<double>(),
                             number_or(e, "ci_low_pct", std::nan("")),
                             number_or(e, "ci_high_pct", std::nan("")));
    }
    std::string verdict = e.value("verdict", "");
    if (verdict.empty()) {
        verdict = e.value("state", "?");
    }
    if (!e.value("decision", "").empty()) {
        verdict += fmt::format(
            "/{}", e.value("decision", "").substr(0, 4));  // (GCC 12 -Wrestrict on "/" + s)
    }
    const std::string subject =
        type == "baseline" ? "A/A check" : e.value("candidate", e.value("experiment_id", ""));
    std::string text = fmt::format(
        "{:<9} {:<10} {:<22} {:<22} {:<22} {:<14} {:<36} {:>5} {:>7.1f} {:>7.1f}\n", when, type,
        e.value("id", ""), subject.substr(0, 22), e.value("reference", "").substr(0, 22), verdict,
        effect, e.value("pairs", 0), number_or(e, "gpu_s", 0), number_or(e, "wall_s", 0));
    if (e.contains("effect_text") && !e["effect_text"].get<std::string>().empty()) {
        text += fmt::format("{:<9} {:<10} {}\n", "", "", e["effect_text"].get<std::string>());
    }
    return text;
}

}  // namespace

Json target_history(const store::Store& store) {
    Json entries = Json::array();
    std::optional<store::TargetRecord> target;
    if (store.exists(store::layout::kTarget)) {
        target = store::read_target_record(store);
    }
    for (const auto& id : list_experiments(store)) {
        entries.push_back(experiment_entry(id, store::read_experiment_record(store, id)));
    }
    add_invocation_entries(store, entries);
    for (const auto& id : list_selections(store)) {
        entries.push_back(selection_entry(store::read_selection_record(store, id)));
    }
    for (const auto& lowering : store::list_conclusions(store)) {
        entries.push_back(lowering_history_entry(lowering));  // conclusion.hpp
    }
    for (const auto& h : store::list_hypotheses(store)) {
        entries.push_back(hypothesis_history_entry(h));  // hypothesis.hpp
    }
    for (const auto& s : store::list_settlements(store)) {
        entries.push_back(settlement_history_entry(s));
    }
    for (Json p : list_profiles(store)) {
        p["type"] = "profile";
        p["t_unix_s"] = p["created_unix_s"];
        p.erase("created_unix_s");
        entries.push_back(std::move(p));
    }
    sort_by_time(entries);
    double gpu = 0;
    double wall = 0;
    for (const auto& e : entries) {
        gpu += number_or(e, "gpu_s", 0);
        wall += number_or(e, "wall_s", 0);
    }
    // The objective typed from the frozen spec: a member it lacks is an error, not a default.
    const std::optional<TargetSpec> spec =
        target ? std::optional<TargetSpec>(frozen_spec(*target)) : std::nullopt;
    return Json{{"format_version", "cko/history-v1"},
                {"target", target ? target->id : std::string()},
                {"name", spec ? spec->name : std::string()},
                {"metric", spec ? spec->primary_json() : Json::object()},
                {"minimum_effect_pct", spec ? spec->minimum_effect_pct : 0.0},
                {"entries", entries},
                {"totals", {{"gpu_s", gpu}, {"wall_s", wall}}}};
}

std::string history_text(const Json& h) {
    std::string text =
        fmt::format("history of Target {} ({}), minimum effect {}%\n", h.value("target", ""),
                    h.value("name", ""), h.value("minimum_effect_pct", 0.0));
    text += fmt::format("{:<9} {:<10} {:<22} {:<22} {:<22} {:<14} {:<36} {:>5} {:>7} {:>7}\n",
                        "time", "what", "id", "subject", "reference", "verdict",
                        "effect [deciding interval]", "pairs", "GPU s", "wall s");
    for (const auto& e : h.at("entries")) {
        const std::string when = time_of_day(e);
        const std::string type = e.value("type", "?");
        if (type == "experiment") {
            text += experiment_line(when, e);
        } else if (type == "profile") {
            text += profile_line(when, e);
        } else if (type == kFalsifyKind) {
            text += falsify_history_line(when, e);
        } else if (type == "select" || type == "restore") {
            text += selection_line(when, type, e);
        } else if (type == "lower") {
            text += lowering_history_line(when, e);
        } else if (type == "hypothesis" || type == "settle") {
            text += hypothesis_history_line(when, e);
        } else {
            text += comparison_lines(when, type, e);
        }
    }
    text += fmt::format("total: {:.1f} GPU s, {:.1f} wall s\n", h["totals"].value("gpu_s", 0.0),
                        h["totals"].value("wall_s", 0.0));
    return text;
}

}  // namespace cko::eval
