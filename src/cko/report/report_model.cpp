// The report model from the store: Target, baseline, experiments, comparisons, champion, cost,
// findings.
#include "cko/report/report_model.hpp"

#include "cko/eval/champion.hpp"
#include "cko/eval/conclusion.hpp"
#include "cko/eval/history.hpp"
#include "cko/eval/hypothesis.hpp"
#include "cko/eval/identity_claim.hpp"
#include "cko/eval/judge.hpp"
#include "cko/eval/target_spec.hpp"
#include "cko/report/evidence_gaps.hpp"
#include "cko/report/termination.hpp"
#include "cko/report/text.hpp"
#include "cko/store/records.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <set>

namespace cko::report {
namespace {

bool is_comparison(const std::string& type) {
    return type == "screen" || type == "confirm" || type == "audit";
}

double number_or(const Json& j, const char* key, double fallback) {
    const auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

// The Target as the report shows it, its spec typed (frozen_spec): a member the frozen spec lacks
// is an error, not a default.
Json target_section(const store::TargetRecord& t, const eval::TargetSpec& spec) {
    const Json frozen = spec.to_json();
    const Json& env = t.environment;
    const Json host = env.value("host", Json::object());
    Json cases = Json::array();
    for (const auto& c : t.cases.value_or(std::vector<store::TargetRecord::Case>{})) {
        cases.push_back(c.id);
    }
    Json gpus = Json::array();
    for (const auto& g : env.value("gpus", Json::array())) {
        gpus.push_back(Json{{"name", text_of(g, "name")},
                            {"uuid", text_of(g, "uuid")},
                            {"compute_capability", g.value("compute_capability", Json())}});
    }
    const store::SnapshotRefRecord original = t.original.value_or(store::SnapshotRefRecord{});
    return Json{{"id", t.id},
                {"name", spec.name},
                {"claim_layer", frozen.at("claim_layer")},
                {"created_unix_s", t.created_unix_s},
                {"original",
                 {{"source", original.source},
                  {"digest", original.digest},
                  {"file_count", original.file_count}}},
                {"change_scope", spec.change_scope},
                {"cases", cases},
                {"metric", spec.primary_json()},
                {"minimum_effect_pct", spec.minimum_effect_pct},
                {"constraints", spec.constraints_json()},
                {"correctness", frozen.at("correctness")},
                {"statistics", frozen.at("statistics")},
                {"budget",
                 {{"gpu_s", spec.gpu_seconds_budget},
                  {"wall_s", spec.wall_seconds_budget},
                  {"deadline", frozen.at("limits").at("deadline")}}},
                {"identity",
                 {{"hostname", text_of(host, "hostname")},
                  {"machine_id", text_of(host, "machine_id")},
                  {"cpu_model", text_of(host, "cpu_model")},
                  {"logical_cpus", host.value("logical_cpus", Json())},
                  {"kernel_release", text_of(host, "kernel_release")},
                  {"in_container", host.value("in_container", Json())},
                  {"driver_version", env.value("driver_version", Json())},
                  {"cuda_driver_version", env.value("cuda_driver_version", Json())},
                  {"gpus", gpus}}}};
}

// The latest comparison of `type` among an experiment's, or null.
Json latest(const Json& comparisons, const std::string& type) {
    Json found;
    for (const auto& c : comparisons) {
        if (text_of(c, "type") == type && text_of(c, "state") != "running") {
            found = c;
        }
    }
    return found;
}

bool negative(const std::string& verdict) {
    return verdict == "regressed" || verdict == "equivalent" || verdict == "below_minimum";
}

// Status and conclusion of one experiment from its comparisons and the champion lineage; a
// rejection says what it closed (the contract's failure_closes; a wrong result closes only the
// implementation, since it measured no performance).
void conclude(Json& x, const Json& comparisons, const std::string& champion,
              const std::set<std::string>& ever_selected) {
    const std::string id = text_of(x, "id");
    const Json screen = latest(comparisons, "screen");
    const Json confirm = latest(comparisons, "confirm");
    std::string status;
    std::string conclusion;
    Json closes;
    if (x.value("control", false)) {
        status = "control";
        conclusion = "A/A control";
        if (!confirm.is_null() || !screen.is_null()) {
            const Json& c = confirm.is_null() ? screen : confirm;
            conclusion +=
                fmt::format(": {} {}", text_of(c, "type"), c.value("verdict", text_of(c, "state")));
        }
    } else if (id == champion) {
        status = "champion";
        conclusion = fmt::format("the champion: confirm {} {}", text_of(confirm, "id"),
                                 text_of(confirm, "verdict"));
    } else if (ever_selected.count(id) != 0) {
        status = "replaced";
        conclusion = "was the champion, since replaced";
    } else if (!confirm.is_null()) {
        const std::string v = text_of(confirm, "verdict");
        if (v == "improved") {
            status = "confirmed";
            conclusion = "confirmed improved, never selected";
        } else if (v == "invalid" && !confirm.value("infrastructure_failure", false) &&
                   text_of(confirm, "state") == "succeeded") {
            status = "rejected";
            conclusion = "wrong result (correctness failed): " + text_of(confirm, "reason");
            closes = "implementation";
        } else if (negative(v)) {
            status = "rejected";
            conclusion = fmt::format("confirm {}: {}", v, text_of(confirm, "reason"));
            closes = text_of(x, "failure_closes");
        } else if (v == "mixed") {
            status = "mixed";
            conclusion = "improved overall but regressed on " +
                         list_text(Json(eval::cases_to_accept(confirm)));
        } else {
            status = "unresolved";
            conclusion = fmt::format("confirm {}: {}", v.empty() ? text_of(confirm, "state") : v,
                                     text_of(confirm, "reason"));
        }
    } else if (!screen.is_null() && text_of(screen, "decision") == "rejected") {
        const std::string v = text_of(screen, "verdict");
        status = "rejected";
        conclusion = fmt::format("rejected at screen ({}): {}", v, text_of(screen, "reason"));
        closes = v == "invalid" ? Json("implementation") : Json(text_of(x, "failure_closes"));
    } else if (!screen.is_null()) {
        status = "unconfirmed";
        conclusion = fmt::format("screen {} ({}), never confirmed",
                                 screen.value("verdict", text_of(screen, "state")),
                                 screen.value("decision", "no decision"));
    } else {
        status = "unmeasured";
        conclusion = "frozen, never measured";
    }
    x["status"] = status;
    x["conclusion"] = one_line(conclusion);
    x["closes"] = closes;
    Json ids = Json::array({id});
    for (const auto& c : comparisons) {
        ids.push_back(text_of(c, "id"));
    }
    x["evidence"] = ids;
}

// The history's entries sorted by what they are; cost is summed per kind of invocation.
struct HistoryParts {
    Json baseline;
    Json experiments = Json::array();
    Json comparisons = Json::array();
    Json lineage = Json::array();
    Json profiles = Json::array();  // parsed profiler documents and maps kept as evidence
    std::map<std::string, Json> by_experiment;
    std::map<std::string, Json> outcomes;  // the latest falsify record of each experiment
    Json lowered;                          // the latest lowered conclusion, or null
    double driver_calls = 0;
    Json cost_by_kind = Json::object();
};

HistoryParts sort_history(const Json& history, stats::Direction direction,
                          const std::string& metric) {
    HistoryParts parts;
    // Each comparison is named by its experiment's mechanism and hypothesis, not by ids alone.
    std::map<std::string, Json> experiment_of;
    for (const auto& e : history.at("entries")) {
        if (text_of(e, "type") == "experiment") {
            experiment_of[text_of(e, "id")] = e;
        }
    }
    for (Json e : history.at("entries")) {
        const std::string type = text_of(e, "type");
        if (type == "experiment") {
            parts.experiments.push_back(e);
            continue;
        }
        if (type == "select" || type == "restore") {
            parts.lineage.push_back(e);
            continue;
        }
        if (type == "profile") {
            parts.profiles.push_back(e);
            continue;
        }
        if (type == "falsify") {  // entries are in time order: a later record supersedes
            parts.outcomes[text_of(e, "experiment_id")] = e;
            continue;
        }
        if (type == "lower") {  // each lowering goes lower: the latest is the claim stated now
            parts.lowered = e;
            continue;
        }
        if (type == "hypothesis" || type == "settle") {  // the board (hypothesis.hpp) holds them
            continue;
        }
        parts.driver_calls += number_or(e, "driver_calls", 0);
        Json& k = parts.cost_by_kind[type];
        k["gpu_s"] = number_or(k, "gpu_s", 0) + number_or(e, "gpu_s", 0);
        k["wall_s"] = number_or(k, "wall_s", 0) + number_or(e, "wall_s", 0);
        k["count"] = number_or(k, "count", 0) + 1;
        if (type == "baseline") {
            if (text_of(e, "state") == "succeeded") {
                parts.baseline = e;
            }
            continue;
        }
        if (!is_comparison(type)) {
            continue;
        }
        e["effect_words"] = effect_words(e.value("effect_pct", Json()), direction, metric);
        for (auto& c : e["per_case"]) {
            c["effect_words"] = effect_words(c.value("effect_pct", Json()), direction, metric);
        }
        // An audit measures the champion: it belongs to the experiment the candidate label names.
        const std::string owner =
            type == "audit" ? text_of(e, "candidate") : text_of(e, "experiment_id");
        const Json& x = experiment_of[owner];
        e["subject"] = owner;
        e["mechanism"] = text_of(x, "mechanism");
        e["hypothesis"] = text_of(x, "hypothesis");
        e["name"] = !text_of(x, "mechanism").empty()    ? text_of(x, "mechanism")
                    : !text_of(x, "hypothesis").empty() ? one_line(text_of(x, "hypothesis"), 60)
                                                        : owner;
        parts.by_experiment[owner].push_back(e);
        parts.comparisons.push_back(e);
    }
    return parts;
}

// The decision record's outcome of an experiment (`cko experiment falsify`), in its conclusion and
// evidence; `outcome` is null when none was recorded.
void add_outcome(Json& x, const std::map<std::string, Json>& outcomes) {
    const auto found = outcomes.find(text_of(x, "id"));
    if (found == outcomes.end()) {
        x["outcome"] = Json();
        return;
    }
    const Json& o = found->second;
    x["outcome"] = Json{{"outcome", text_of(o, "outcome")},
                        {"invocation_id", text_of(o, "id")},
                        {"evidence", o.value("evidence", Json::object())},
                        {"note", text_of(o, "note")}};
    x["conclusion"] = one_line(fmt::format("{}; hypothesis {} ({})", text_of(x, "conclusion"),
                                           text_of(o, "outcome"), text_of(o, "id")));
    x["evidence"].push_back(text_of(o, "id"));
}

// The stage an experiment would run next (screen when unmeasured, confirm after a passing screen,
// audit for the champion) and what it would cost: the experiment's estimated_cost_s, and what its
// last comparison took to its verdict; null when no stage follows.
void add_next_stage(Json& x, const Json& comparisons, const eval::TargetSpec& spec) {
    const std::string status = text_of(x, "status");
    const char* next = status == "unmeasured"    ? "screen"
                       : status == "unconfirmed" ? "confirm"
                       : status == "champion"    ? "audit"
                                                 : nullptr;
    const bool falsified =
        x["outcome"].is_object() && x["outcome"].value("outcome", "") == "falsified";
    if (next == nullptr || falsified) {
        x["next_stage"] = Json();
        return;
    }
    Json last;
    if (!comparisons.empty()) {
        const Json& c = comparisons.back();
        last = Json{{"invocation_id", text_of(c, "id")},
                    {"pairs", c.value("pairs", 0)},
                    {"gpu_s", number_or(c, "gpu_s", 0)},
                    {"wall_s", number_or(c, "wall_s", 0)}};
    }
    const double estimate = number_or(x, "estimated_cost_s", 0);
    x["next_stage"] = Json{{"stage", next},
                           {"estimated_cost_s", estimate > 0 ? Json(estimate) : Json()},
                           {"last_to_verdict", last},
                           {"authorized", !spec.farthest_stage || *eval::stage_from_name(next) <=
                                                                      *spec.farthest_stage}};
}

// The champion section: current, lineage, selection, and whether an audit since the selection
// measured it. Every audit goes to `audits`.
Json champion_section_of(const eval::Champion& champion, const std::string& current,
                         const HistoryParts& parts, Json& audits) {
    Json champion_section{
        {"current", current},
        {"digest", champion.digest},
        {"lineage", parts.lineage},
        {"selection", champion.record.is_object()
                          ? Json(text_of(champion.record.value("selection", Json::object()), "id"))
                          : Json("")},
        {"audited", false}};
    std::int64_t selected_at = 0;
    if (!parts.lineage.empty()) {
        selected_at = parts.lineage.back().value("t_unix_s", std::int64_t{0});
    }
    for (const auto& c : parts.comparisons) {
        if (text_of(c, "type") != "audit") {
            continue;
        }
        audits.push_back(c);
        if (current != "original" && text_of(c, "candidate") == current &&
            c.value("t_unix_s", std::int64_t{0}) >= selected_at &&
            text_of(c, "state") == "succeeded") {
            champion_section["audited"] = true;
            champion_section["audit"] = text_of(c, "id");
            champion_section["audit_verdict"] = text_of(c, "verdict");
        }
    }
    return champion_section;
}

// The goal: a champion other than the original, selected on an improved confirm (select allows
// nothing else) and, when audited since, upheld by the audit. `of_champion`: the comparisons of
// the champion's experiment.
Json goal_of(const std::string& claim_layer, const std::string& current, const Json& of_champion,
             const Json& champion_section) {
    Json goal{{"claim_layer", claim_layer}, {"reached", false}};
    if (current != "original") {
        Json confirm;
        for (const auto& c : of_champion) {
            if (text_of(c, "type") == "confirm" && text_of(c, "verdict") == "improved") {
                confirm = c;
            }
        }
        goal["confirm"] = confirm.is_null() ? Json() : confirm["id"];
        goal["effect_words"] = confirm.is_null() ? Json("") : confirm["effect_words"];
        goal["interval"] = confirm.is_null() ? Json("–") : Json(interval_text(confirm));
        const bool audit_ok = !champion_section.value("audited", false) ||
                              text_of(champion_section, "audit_verdict") == "improved";
        goal["reached"] = !confirm.is_null() && audit_ok;
        goal["text"] =
            !confirm.is_null() && audit_ok
                ? fmt::format("reached at the {} layer: champion {} is {} (confirm {}{})",
                              goal["claim_layer"].get<std::string>(), current,
                              text_of(confirm, "effect_words"), text_of(confirm, "id"),
                              champion_section.value("audited", false)
                                  ? ", upheld by audit " + text_of(champion_section, "audit")
                                  : ", not audited yet")
                : fmt::format("not reached: the audit of champion {} says {}", current,
                              text_of(champion_section, "audit_verdict"));
    } else {
        goal["text"] =
            "not reached: the original is the champion (no experiment was selected, or it was "
            "restored)";
    }
    return goal;
}

// "the environment identity supports kernel at most: REASON; REASON": how the goal states an
// identity that lowers the claim.
std::string identity_text(const eval::IdentityClaim& identity) {
    std::vector<std::string> reasons;
    for (const auto& g : identity.gaps) {
        if (eval::claim_rank(g.caps_at) < eval::claim_rank(identity.target_layer)) {
            reasons.push_back(g.reason);
        }
    }
    return fmt::format("the environment identity supports {} at most: {}", identity.word(),
                       fmt::join(reasons, "; "));
}

// What the identity the evidence was measured under supports (eval::identity_claim): the Target's
// frozen environment and every comparison's observation of its GPUs.
eval::IdentityClaim identity_claim_of(const store::TargetRecord& t, const eval::TargetSpec& spec,
                                      const HistoryParts& parts) {
    const bool gpu_target = t.gpus && !t.gpus->empty();
    return eval::identity_claim(
        eval::measured_identity(t.environment, gpu_target, parts.comparisons), spec.claim_layer);
}

// The claim stated: the lower of the Target's layer, the latest manual lowering (`lowered`: its
// history entry, or null) and what the environment identity supports. Below the Target's layer
// the goal is not claimed there, whatever the evidence said before; `lowered` and `identity` say
// why.
Json stated_goal(Json goal, const Json& lowered, const eval::IdentityClaim& identity) {
    goal["identity"] = identity.to_json();
    int manual = eval::claim_rank(identity.target_layer);
    std::vector<std::string> why;
    if (!lowered.is_null()) {
        goal["lowered"] = lowered;
        goal["lowered"]["text"] = eval::lowering_text(lowered);
        manual = eval::claim_rank(store::lowered_to_from_name(text_of(lowered, "lowered_to"))
                                      .value_or(store::LoweredTo::unconfirmed));
        why.push_back("the conclusion was " + eval::lowering_text(lowered));
    }
    if (identity.lowers()) {
        why.push_back(identity_text(identity));
        goal["identity"]["text"] = why.back();
    }
    if (why.empty()) {
        return goal;
    }
    const std::string before = text_of(goal, "text");
    goal["reached"] = false;
    goal["stated_claim"] = eval::claim_word(eval::combined_claim_rank(manual, identity));
    goal["text"] = fmt::format("not claimed at the {} layer: {} (before: {})",
                               text_of(goal, "claim_layer"), fmt::join(why, "; "), before);
    return goal;
}

Json rejected_directions(const Json& experiments) {
    Json rejected = Json::array();
    for (const auto& x : experiments) {
        if (text_of(x, "status") == "rejected") {
            rejected.push_back(Json{{"id", x["id"]},
                                    {"mechanism", x["mechanism"]},
                                    {"hypothesis", x["hypothesis"]},
                                    {"closes", x["closes"]},
                                    {"declared_closes", x["failure_closes"]},
                                    {"conclusion", x["conclusion"]},
                                    {"evidence", x["evidence"]}});
        }
    }
    return rejected;
}

}  // namespace

Json build_report_model(const store::Store& store, std::int64_t now_unix_s) {
    if (!store.exists(store::layout::kTarget)) {
        throw Error(
            ErrorCode::not_found,
            fmt::format("no Target is frozen in {}: nothing to report (cko target freeze first)",
                        store.root().string()));
    }
    const store::TargetRecord target_record = store::read_target_record(store);
    const eval::TargetSpec spec = eval::frozen_spec(target_record);
    const Json history = eval::target_history(store);
    Json model{{"format_version", "cko/report-v1"},
               {"generated_unix_s", now_unix_s},
               {"root", store.root().string()},
               {"target", target_section(target_record, spec)}};
    HistoryParts parts = sort_history(history, spec.primary.direction, spec.primary.name);

    const eval::Champion champion = eval::read_champion(store);
    const std::string current = champion.experiment_id.value_or("original");
    std::set<std::string> ever_selected;
    for (const auto& s : parts.lineage) {
        if (text_of(s, "type") == "select") {
            ever_selected.insert(text_of(s, "experiment_id"));
        }
    }
    for (auto& x : parts.experiments) {
        const std::string id = text_of(x, "id");
        const Json mine =
            parts.by_experiment.count(id) != 0 ? parts.by_experiment[id] : Json::array();
        Json ids = Json::array();
        for (const auto& c : mine) {
            ids.push_back(text_of(c, "id"));
        }
        x["comparisons"] = ids;
        conclude(x, mine, current, ever_selected);
        add_outcome(x, parts.outcomes);
        add_next_stage(x, mine, spec);
    }
    Json audits = Json::array();
    const Json champion_section = champion_section_of(champion, current, parts, audits);

    const Json totals = history.value("totals", Json::object());
    model["baseline"] = parts.baseline;
    model["experiments"] = parts.experiments;
    model["comparisons"] = parts.comparisons;
    model["champion"] = champion_section;
    model["audits"] = audits;
    model["cost"] = Json{{"gpu_s", number_or(totals, "gpu_s", 0)},
                         {"wall_s", number_or(totals, "wall_s", 0)},
                         {"driver_calls", parts.driver_calls},
                         {"by_kind", parts.cost_by_kind},
                         {"budget", model["target"]["budget"]}};
    model["profiles"] = parts.profiles;
    model["hypotheses"] = eval::hypothesis_board(store);
    const auto stop = read_stop(store);
    model["stop"] = stop ? *stop : Json();

    Json goal = goal_of(model["target"].value("claim_layer", ""), current,
                        parts.by_experiment[current], champion_section);
    goal =
        stated_goal(std::move(goal), parts.lowered, identity_claim_of(target_record, spec, parts));
    model["findings"] = Json{{"goal", goal},
                             {"rejected", rejected_directions(parts.experiments)},
                             {"gaps", evidence_gaps(model, parts.comparisons, goal["identity"])}};
    return model;
}

}  // namespace cko::report
