// The decision record: falsify records, the falsified gate and the stage limit.
#include "cko/eval/decision.hpp"

#include "cko/eval/cited_evidence.hpp"
#include "cko/eval/experiment.hpp"
#include "cko/eval/field_problems.hpp"
#include "cko/eval/profile_evidence.hpp"
#include "cko/run/invocation.hpp"
#include "cko/store/catalogue.hpp"
#include "cko/store/snapshot.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/utf8.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace cko::eval {
namespace {

[[noreturn]] void evidence_not_found(const std::string& evidence, const std::string& why) {
    throw Error(ErrorCode::not_found,
                fmt::format("evidence: \"{}\" {}; cite an invocation (inv-…, see cko ls), a stored "
                            "profile or map (profile-…, see cko history), or an existing file "
                            "(stored content-addressed)",
                            evidence, why),
                Json{{"field", "evidence"}});
}

Json invocation_evidence(const Target& target, const std::string& id) {
    require_safe_name(id, "evidence");
    if (!target.store().exists(store::layout::invocation_request(id))) {
        evidence_not_found(id, "is no invocation of this store");
    }
    const store::InvocationRecord r = store::read_invocation_record(target.store(), id);
    return Json{{"kind", "invocation"}, {"id", id}, {"invocation_kind", r.kind}};
}

// A profile or map cited about `experiment`: not foreign, and of this Target, of the experiment's
// candidate or base, on one of its cases (cited_evidence.hpp). The record says which side it
// measured and the question it answers.
Json profile_evidence(const Target& target, const std::string& id,
                      const store::ExperimentRecord& experiment) {
    require_safe_name(id, "evidence");
    if (!target.store().exists(store::layout::profile_record(id))) {
        evidence_not_found(id, "is no profile or map of this store");
    }
    const Json p = load_profile(target.store(), id);
    refuse_foreign_citation(p, "evidence");
    require_profile_of_experiment(target, p, id, experiment, "evidence");
    Json cited{{"kind", p.value("kind", "") == "map" ? "map" : "profile"}, {"id", id}};
    if (p.value("question", Json()).is_string()) {
        cited["question"] = p["question"];
    }
    return cited;
}

}  // namespace

Json resolve_evidence(const Target& target, const std::string& evidence,
                      const store::ExperimentRecord& experiment) {
    if (evidence.empty()) {
        field_error(ErrorCode::invalid_argument, "evidence", "missing",
                    "cite the evidence: a stored id (inv-…, profile-…) or a file");
    }
    std::error_code ec;
    const std::filesystem::path path(evidence);
    if (std::filesystem::is_regular_file(std::filesystem::symlink_status(path, ec))) {
        const store::Snapshot s = store::take_snapshot(target.store(), path);
        return Json{{"kind", "file"}, {"digest", s.digest}, {"source", s.source.string()}};
    }
    if (evidence.starts_with("inv-")) {
        return invocation_evidence(target, evidence);
    }
    if (evidence.starts_with("profile-")) {
        return profile_evidence(target, evidence, experiment);
    }
    evidence_not_found(evidence, "is neither a stored id nor a file");
}

OperationOutcome record_falsify(const Target& target, const FalsifyOptions& o,
                                const std::function<void(const std::string&)>& announce) {
    FieldProblems problems(ErrorCode::invalid_argument);
    problems.check([&] {
        (void)closed_word<FalsifyOutcome>(ErrorCode::invalid_argument, "outcome", o.outcome);
    });
    problems.check([&] {
        if (o.evidence.empty()) {
            field_error(ErrorCode::invalid_argument, "evidence", "missing",
                        "cite the evidence: a stored id (inv-…, profile-…) or a file");
        }
    });
    problems.check([&] { require_free_text(o.note, "note"); });
    problems.throw_if_any();
    require_safe_name(o.experiment_id, "experiment id");
    const store::ExperimentRecord experiment =
        load_experiment(target.store(), o.experiment_id);  // not_found names it
    const Json evidence = resolve_evidence(target, o.evidence, experiment);
    const Json request{{"target", target.id()},
                       {"experiment_id", o.experiment_id},
                       {"outcome", o.outcome},
                       {"evidence", evidence},
                       {"note", o.note}};
    // The outcome's outputs are its request, without an exit class (as falsify records always had).
    InvocationSpec spec{std::string(kFalsifyKind), request, limits_for(target.spec()), nullptr};
    spec.records_exit_code = false;
    return run_in_invocation(
        target.store(), spec, announce, [&](run::Invocation& /*inv*/, OperationEnd& end) {
            end.reason = fmt::format("{} recorded {} on {} {}", o.experiment_id, o.outcome,
                                     evidence.value("kind", ""),
                                     evidence.value("id", evidence.value("digest", "")));
            end.outputs = request;
        });
}

Json FalsifyRecord::to_json() const {
    return Json{{"invocation_id", invocation_id},
                {"outcome", falsify_outcome_name(outcome)},
                {"evidence", evidence},
                {"note", note}};
}

std::optional<FalsifyRecord> latest_falsify_record(const InvocationLedger& ledger,
                                                   std::string_view experiment_id) {
    std::optional<FalsifyRecord> latest;
    for (const InvocationEntry& e : ledger.entries()) {
        const store::InvocationRecord& req = e.request;
        if (req.kind != kFalsifyKind || !e.succeeded() ||
            req.request.value("experiment_id", "") != experiment_id) {
            continue;
        }
        const auto outcome = falsify_outcome_from_name(req.request.value("outcome", ""));
        if (!outcome || (latest && latest->created_unix_ns > req.created_unix_ns)) {
            continue;
        }
        latest = FalsifyRecord{e.id(), *outcome, req.request.value("evidence", Json::object()),
                               req.request.value("note", ""), req.created_unix_ns};
    }
    return latest;
}

Json require_not_falsified(const InvocationLedger& ledger, std::string_view operation,
                           std::string_view experiment_id, const std::string& override_reason) {
    require_free_text(override_reason, "override_falsified");
    const std::optional<FalsifyRecord> record = latest_falsify_record(ledger, experiment_id);
    if (!record || record->outcome != FalsifyOutcome::falsified) {
        if (!override_reason.empty()) {
            throw Error(ErrorCode::invalid_argument,
                        fmt::format("--override-falsified: {} is not recorded as falsified; there "
                                    "is nothing to override (leave the option out)",
                                    experiment_id),
                        Json{{"field", "override_falsified"}});
        }
        return Json();
    }
    if (!override_reason.empty()) {
        return Json{{"reason", override_reason}, {"falsify_invocation", record->invocation_id}};
    }
    throw Error(ErrorCode::falsified,
                fmt::format("{} of {} refused: its hypothesis was recorded as falsified by {} "
                            "(evidence {} {}); a falsified experiment is not measured or "
                            "profiled further. To run it anyway, pass --override-falsified REASON "
                            "(recorded in the invocation)",
                            operation, experiment_id, record->invocation_id,
                            record->evidence.value("kind", ""),
                            record->evidence.value("id", record->evidence.value("digest", ""))),
                Json{{"experiment_id", std::string(experiment_id)},
                     {"falsify_invocation", record->invocation_id},
                     {"record", record->to_json()},
                     {"field", "override_falsified"}});
}

Json require_stage_allowed(const TargetSpec& spec, Stage stage, const std::string& stage_limit) {
    std::optional<Stage> limit = spec.farthest_stage;
    std::string set_by = "[limits] farthest_stage of the Target's spec (target.json)";
    if (!stage_limit.empty()) {
        const Stage asked =
            closed_word<Stage>(ErrorCode::invalid_argument, "stage_limit", stage_limit);
        if (!limit || asked < *limit) {
            limit = asked;
            set_by = "--stage-limit of this call";
        }
    }
    if (!limit) {
        return Json();
    }
    if (stage > *limit) {
        throw Error(
            ErrorCode::not_authorized,
            fmt::format("{} is not authorized: the farthest stage allowed is {}, set by "
                        "{}; a person (or a session with a wider limit) runs the next "
                        "stage",
                        stage_name(stage), stage_name(*limit), set_by),
            Json{{"stage", stage_name(stage)},
                 {"stage_limit", stage_name(*limit)},
                 {"set_by", set_by},
                 {"field", set_by.starts_with("--") ? "stage_limit" : "limits.farthest_stage"}});
    }
    return Json{{"stage", stage_name(*limit)}, {"set_by", set_by}};
}

namespace {

Json budget_of(double budget, double spent) {
    return Json{{"budget", budget > 0 ? Json(budget) : Json()},
                {"spent", spent},
                {"remaining", budget > 0 ? Json(std::max(0.0, budget - spent)) : Json()}};
}

std::string seconds_left(const char* what, const Json& b) {
    if (b.at("budget").is_null()) {
        return fmt::format("{} {:.1f} s spent, no budget set", what, b.value("spent", 0.0));
    }
    return fmt::format("{} {:.1f} s of {:.1f} s spent, {:.1f} s left", what, b.value("spent", 0.0),
                       b["budget"].get<double>(), b["remaining"].get<double>());
}

}  // namespace

Json budget_and_next_stage(const store::Store& store, const std::string& invocation_id,
                           const InvocationEntry* finished) {
    if (!store.exists(store::layout::kTarget)) {
        return Json();
    }
    const TargetSpec spec = frozen_spec(store::read_target_record(store));
    const InvocationLedger ledger = InvocationLedger::read(store, finished);
    const InvocationLedger::Spent spent = ledger.spent();
    Json j{{"budgets",
            {{"wall_s", budget_of(spec.wall_seconds_budget, spent.wall_s)},
             {"gpu_s", budget_of(spec.gpu_seconds_budget, spent.gpu_s)},
             {"deadline", spec.deadline_text.empty() ? Json() : Json(spec.deadline_text)}}},
           {"next_stage", Json()}};
    for (const InvocationEntry& e : ledger.entries()) {
        const std::string experiment = e.request.request.value("experiment_id", "");
        if (e.id() != invocation_id || (e.kind() != "screen" && e.kind() != "confirm") ||
            experiment.empty() || !store.exists(store::layout::experiment_record(experiment))) {
            continue;
        }
        const store::ExperimentRecord x = store::read_experiment_record(store, experiment);
        const Stage next = e.kind() == "screen" ? Stage::confirm : Stage::audit;
        j["next_stage"] = Json{
            {"stage", stage_name(next)},
            {"experiment_id", experiment},
            {"estimated_cost_s", x.estimated_cost_s > 0 ? Json(x.estimated_cost_s) : Json()},
            {"last_to_verdict", e.result ? e.result->outputs.value("to_verdict", Json()) : Json()},
            {"stage_limit", spec.farthest_stage ? Json(stage_name(*spec.farthest_stage)) : Json()},
            {"authorized", !spec.farthest_stage || next <= *spec.farthest_stage}};
    }
    return j;
}

void add_budget_and_next_stage(Json& document, const store::Store& store,
                               const std::string& invocation_id, const InvocationEntry* finished) {
    // Beside the invocation's own document, never in place of it: an operation that failed because
    // the Target could not be read (a tampered target.json) still reports its invocation, with why
    // its budget is missing.
    Json j;
    try {
        j = budget_and_next_stage(store, invocation_id, finished);
    } catch (const Error& e) {
        document["budget"] = Json();
        document["next_stage"] = Json();
        document["budget_note"] = fmt::format("budget and next stage not computed: error[{}] {}",
                                              error_code_name(e.code()), e.what());
        return;
    }
    document["budget"] = j.is_null() ? Json() : j["budgets"];
    document["next_stage"] = j.is_null() ? Json() : j["next_stage"];
}

std::string budget_and_next_stage_text(const Json& j) {
    if (j.is_null()) {
        return "";
    }
    const Json& b = j.at("budgets");
    std::string text =
        fmt::format("  budget: {}; {}{}\n", seconds_left("wall", b.at("wall_s")),
                    seconds_left("GPU", b.at("gpu_s")),
                    b.at("deadline").is_string() ? "; deadline " + b["deadline"].get<std::string>()
                                                 : std::string());
    const Json& n = j.at("next_stage");
    if (n.is_null()) {
        return text;
    }
    const Json& last = n.at("last_to_verdict");
    text += fmt::format(
        "  next stage: {} of {}, estimated {}; this verdict took {}{}\n", n.value("stage", ""),
        n.value("experiment_id", ""),
        n.at("estimated_cost_s").is_number()
            ? fmt::format("{:.1f} s (the experiment's estimated_cost_s)",
                          n["estimated_cost_s"].get<double>())
            : std::string("nothing (the experiment gave no estimated_cost_s)"),
        last.is_object()
            ? fmt::format("{} pairs, {:.1f} GPU s, {:.1f} wall s", last.value("pairs", 0),
                          last.value("gpu_s", 0.0), last.value("wall_s", 0.0))
            : std::string("nothing yet"),
        n.value("authorized", true)
            ? std::string()
            : fmt::format(" (not authorized: farthest_stage is {})", n.value("stage_limit", "")));
    return text;
}

Json falsify_history_entry(const InvocationEntry& entry) {
    const Json& r = entry.request.request;
    return Json{{"type", std::string(kFalsifyKind)},
                {"id", entry.id()},
                {"t_unix_s", entry.request.created_unix_ns / 1000000000},
                {"t_unix_ns", entry.request.created_unix_ns},
                {"experiment_id", r.value("experiment_id", "")},
                {"outcome", r.value("outcome", "")},
                {"evidence", r.value("evidence", Json::object())},
                {"note", r.value("note", "")}};
}

std::string falsify_history_line(const std::string& when, const Json& e) {
    const Json& ev = e.value("evidence", Json::object());
    const std::string cited = ev.value("kind", "") == "file"
                                  ? fmt::format("file {} (sha256 {})", ev.value("source", ""),
                                                ev.value("digest", "").substr(0, 12))
                                  : fmt::format("{} {}", ev.value("kind", ""), ev.value("id", ""));
    const std::string note = e.value("note", "");
    return fmt::format("{:<9} {:<10} {:<22} {} {} on {}{}\n", when, "falsify", e.value("id", ""),
                       e.value("experiment_id", ""), e.value("outcome", ""), cited,
                       note.empty() ? std::string() : " — " + note);
}

}  // namespace cko::eval
