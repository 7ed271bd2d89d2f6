// The comparison engine shared by screen, confirm and audit: plan, measure rounds, judge, record.
#include "cko/eval/compare.hpp"

#include "cko/driver/protocol.hpp"
#include "cko/env/observation.hpp"
#include "cko/eval/champion.hpp"
#include "cko/eval/compare_context.hpp"
#include "cko/eval/decision.hpp"
#include "cko/eval/experiment.hpp"
#include "cko/eval/failure_gate.hpp"
#include "cko/eval/judge.hpp"
#include "cko/eval/session.hpp"
#include "cko/stats/stats.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

#include <chrono>
#include <optional>
#include <random>
#include <set>

namespace cko::eval {
namespace {

// What the measuring loop hands to the judge and the record.
struct Rounds {
    std::vector<std::vector<double>> d;                                    // [round][case]
    std::map<std::string, std::vector<std::vector<double>>> constraint_d;  // name -> [round][case]
    Json pairs = Json::array();
    std::optional<stats::Verdict> verdict;  // set when the measuring itself decided (invalid)
    std::string reason;
    bool infrastructure_failure = false;
    env::WindowObservation observation;     // what the monitors of every call saw
    std::set<std::string> unchecked_roles;  // no loaded digest tied them to a subject (v1 results)
};

std::string correctness_reason(const TargetSpec& spec, const std::string& case_id,
                               const SubjectMeasurement& cand) {
    return fmt::format(
        "the candidate failed correctness on case {} ({} = {}, rule {} {}, driver status {}{}): no "
        "performance claim",
        case_id, spec.correctness_metric, cand.correctness_value, spec.correctness_operator,
        spec.correctness_threshold, driver::correctness_status_name(cand.status),
        cand.failed_gates.empty()
            ? ""
            : fmt::format("; failed gates: {}", fmt::join(cand.failed_gates, ", ")));
}

// A paired call died. When the candidate may be the cause, the reference runs alone on that case
// once: if it passes, the candidate is `invalid` (it crashed the driver); otherwise the machine or
// the driver is at fault and the comparison is an infrastructure failure.
void attribute_crash(Session& session, const std::string& case_id, const Measurement& m, Rounds& r,
                     Json& pair) {
    const Error& e = *m.error;
    const std::string running =
        m.failed_role.empty() ? subject_running_at_failure(e) : m.failed_role;
    const bool candidate_may_be_cause =
        e.code() == ErrorCode::driver_failed && running != "reference";
    if (!candidate_may_be_cause) {
        r.infrastructure_failure = true;
        throw e;
    }
    const Measurement alone = session.measure_single(case_id, "reference");
    pair["reference_alone"] = alone.to_json();
    if (alone.error || !alone.subjects.at("reference").correct) {
        r.infrastructure_failure = true;
        throw Error(e.code(),
                    fmt::format("{} (the reference alone also failed on case {}: an infrastructure "
                                "failure, not the "
                                "candidate's)",
                                e.what(), case_id),
                    e.details());
    }
    r.verdict = stats::Verdict::invalid;
    r.reason = fmt::format(
        "the candidate crashed the driver on case {}{}: {}; the reference alone passed on that "
        "case "
        "(call {}), so the failure is the candidate's: no performance claim",
        case_id, running.empty() ? "" : " (" + running + " was running)", e.what(),
        alone.calls.empty() ? 0 : alone.calls.front());
}

// Where a comparison stands before it measures case `c` of round `round`.
struct Step {
    std::size_t round;
    std::size_t c;
    const std::vector<std::string>& case_ids;
};

// Counted in pairs (a pair is a round over every case, so a case inside one is a fraction): the
// running effect over the whole rounds so far and, at the rate so far, the time left at most.
Progress pair_progress(const std::string& kind, const ComparisonPlan& plan, const Rounds& r,
                       const Step& at, std::chrono::steady_clock::time_point started) {
    Progress p;
    p.line = fmt::format("{}: pair {}/{} (at most), case {}", kind, at.round + 1, plan.max_rounds,
                         at.case_ids[at.c]);
    p.unit = "pairs";
    p.done = static_cast<double>(at.round) +
             static_cast<double>(at.c) / static_cast<double>(at.case_ids.size());
    p.total = static_cast<double>(plan.max_rounds);
    if (!r.d.empty()) {
        p.effect_pct = stats::log_to_pct(stats::median(pooled_rounds(r.d)));
    }
    if (p.done > 0) {
        const double elapsed =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        p.eta_s = elapsed / p.done * (p.total - p.done);
    }
    return p;
}

// Stops the comparison, after `round` pairs, when it was cancelled or reached its operation
// timeout.
void stop_if_cancelled_or_late(const run::Invocation& inv, const std::string& kind,
                               std::size_t round) {
    if (inv.cancelled()) {
        throw Error(ErrorCode::interrupted,
                    fmt::format("{} cancelled after {} pairs", kind, round));
    }
    if (inv.past_deadline()) {
        throw Error(ErrorCode::timed_out,
                    fmt::format("{} reached its operation timeout after {} pairs", kind, round));
    }
}

// Whether a measured pair voids the comparison at once: its window was contaminated, or a subject
// failed correctness. The verdict and its reason go into r.
bool pair_voids_comparison(const TargetSpec& spec, const std::string& case_id, const Measurement& m,
                           Rounds& r) {
    if (!m.contamination.empty()) {
        r.infrastructure_failure = true;
        r.verdict = stats::Verdict::invalid;
        r.reason = fmt::format("the measurement window was contaminated: {}",
                               fmt::join(m.contamination, "; "));
        return true;
    }
    const auto& ref = m.subjects.at("reference");
    const auto& cand = m.subjects.at("candidate");
    if (!ref.correct || !cand.correct) {
        r.verdict = stats::Verdict::invalid;
        r.reason = !cand.correct
                       ? correctness_reason(spec, case_id, cand)
                       : fmt::format(
                             "the reference failed correctness on case {}: the comparison is "
                             "void",
                             case_id);
        r.reason += driver_notes_of(m);
        r.infrastructure_failure = ref.correct ? false : true;
        return true;
    }
    return false;
}

// One round's paired log-ratios, case by case: of the primary metric and of each constraint.
struct RoundRatios {
    std::vector<double> d;
    std::map<std::string, std::vector<double>> constraints;
};

// Adds a pair's log-ratios (primary and constraints) to its round's.
void add_pair_ratios(const TargetSpec& spec, const Measurement& m, RoundRatios& round) {
    const auto& ref = m.subjects.at("reference");
    const auto& cand = m.subjects.at("candidate");
    round.d.push_back(stats::paired_log_ratio(ref.primary_median(), cand.primary_median(),
                                              spec.primary.direction));
    for (const auto& con : spec.constraints) {
        round.constraints[con.name].push_back(
            stats::paired_log_ratio(stats::median(ref.constraints.at(con.name)),
                                    stats::median(cand.constraints.at(con.name)), con.direction));
    }
}

// Adds a finished round to r and records the progress event; returns whether a sequential look
// stops the comparison here.
bool close_round(run::Invocation& inv, const ComparisonPlan& plan, Rounds& r, RoundRatios round,
                 std::chrono::steady_clock::time_point started) {
    r.d.push_back(std::move(round.d));
    for (auto& [name, values] : round.constraints) {
        r.constraint_d[name].push_back(std::move(values));
    }
    const std::vector<double> pooled = pooled_rounds(r.d);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    inv.event("progress", Json{{"pairs_done", r.d.size()},
                               {"pairs_at_most", plan.max_rounds},
                               {"effect_pct_so_far", stats::log_to_pct(stats::median(pooled))},
                               {"elapsed_s", elapsed},
                               {"expected_s_at_most", elapsed / static_cast<double>(r.d.size()) *
                                                          static_cast<double>(plan.max_rounds)}});
    if (plan.sequential && at_look(*plan.sequential, r.d.size())) {
        const stats::LookDecision look =
            stats::sequential_look(pooled, *plan.sequential, plan.minimum_effect_pct);
        if (look.stop) {
            return true;
        }
    }
    return false;
}

// Measures rounds until the plan says stop, a correctness failure, a crash or contamination.
Rounds measure_rounds(const Target& target, run::Invocation& inv, Session& session,
                      const ComparisonPlan& plan, const CompareOptions& o) {
    const TargetSpec& spec = target.spec();
    const std::string kind(comparison_kind_name(o.kind));
    const auto started = std::chrono::steady_clock::now();
    std::mt19937_64 order_rng(plan.seed);
    Rounds r;
    // This host's monitor sees the driver's GPUs and CPUs unless the driver runs on a Slurm node.
    r.observation.on_this_host = !spec.uses_slurm();
    r.observation.gpus_expected = r.observation.on_this_host && !target.gpu_uuids().empty();
    for (std::size_t round = 0; round < plan.max_rounds; ++round) {
        RoundRatios ratios;
        for (std::size_t c = 0; c < spec.case_ids.size(); ++c) {
            const std::string& case_id = spec.case_ids[c];
            stop_if_cancelled_or_late(inv, kind, round);
            if (o.progress) {
                o.progress(pair_progress(kind, plan, r, Step{round, c, spec.case_ids}, started));
            }
            const bool candidate_first = (order_rng() & 1U) != 0;
            const Measurement m = session.measure_pair(
                case_id, candidate_first, plan.seed + round * spec.case_ids.size() + c);
            for (const auto& summary : m.monitors) {
                r.observation.add(summary);
            }
            Json pair = m.to_json();
            pair["round"] = round + 1;
            pair["case"] = case_id;
            pair["order"] = candidate_first ? "BA" : "AB";
            if (m.error) {
                attribute_crash(session, case_id, m, r, pair);
                r.pairs.push_back(pair);
                return r;
            }
            r.pairs.push_back(pair);
            r.unchecked_roles.insert(m.unchecked_roles.begin(), m.unchecked_roles.end());
            if (pair_voids_comparison(spec, case_id, m, r)) {
                return r;
            }
            add_pair_ratios(spec, m, ratios);
        }
        if (close_round(inv, plan, r, std::move(ratios), started)) {
            break;
        }
    }
    return r;
}

std::string deciding_text(const Judgement& j) {
    if (j.look == 0) {
        return fmt::format("{:.0f} % interval", 100 * j.deciding_level);
    }
    return fmt::format("look {} of {}, {:.2f} % repeated interval", j.look, j.looks_planned,
                       100 * j.deciding_level);
}

// What the judge is given: the measured rounds, the Target's rules and the plan's.
JudgeInput judge_input(const TargetSpec& spec, const ComparisonPlan& plan, const Rounds& r) {
    JudgeInput in;
    in.case_ids = spec.case_ids;
    in.d = r.d;
    in.constraint_d = r.constraint_d;
    for (const auto& c : spec.constraints) {
        in.constraints.push_back({c.name, c.max_regression_pct, c.accept_per_case});
    }
    in.minimum_effect_pct = plan.minimum_effect_pct;
    in.case_regression_tolerance_pct = spec.max_case_regression_pct;
    in.min_pairs = plan.min_rounds;
    in.confidence = spec.confidence;
    in.plan = plan.sequential;
    in.instrument_bias = plan.instrument_bias;
    in.control = plan.experiment && plan.experiment->is_control();
    in.observation_problems = env::observation_problems(r.observation, spec.observation);
    return in;
}

// Writes the judgement into the outputs: the observation, the estimates, the per-case and
// constraint results, the thresholds, any instrument check and the effect in words.
void record_judgement(const TargetSpec& spec, const Judgement& j, const Rounds& r, Json& outputs) {
    const Json jj = j.to_json();
    outputs["observation"] = r.observation.to_json(spec.observation);
    outputs["observation"]["decides"] = j.observation_decides;
    outputs["observation"]["verdict_without_observation"] =
        jj["observation_verdict"]["verdict_without_observation"];
    outputs["estimate"] = jj["deciding"]["estimate"];
    outputs["deciding"] =
        Json{{"look", j.look}, {"looks_planned", j.looks_planned}, {"level", j.deciding_level}};
    outputs["nominal_estimate"] = jj["nominal"];
    outputs["pooled_verdict"] = jj["pooled_verdict"];
    outputs["per_case"] = jj["cases"];
    outputs["regressed_cases"] = jj["regressed_cases"];
    outputs["constraints"] = jj["constraints"];
    outputs["constraint_regressions"] = jj["constraint_regressions"];
    outputs["thresholds"] = jj["thresholds"];
    for (const char* key : {"instrument_bias", "instrument_check"}) {
        if (jj.contains(key)) {
            outputs[key] = jj[key];
        }
    }
    const stats::Direction dir = spec.primary.direction;
    outputs["effect_text"] = describe_effect(j.deciding.hl, dir, spec.primary.name);
}

// The experiment's secondary metrics whose pooled estimate clears their threshold (unless the
// verdict is regressed): local results only, never a reason to select.
Json local_results(const TargetSpec& spec, const ComparisonPlan& plan, const Rounds& r,
                   const Judgement& j) {
    Json local = Json::array();
    for (const auto& s : plan.experiment->secondary_metrics) {
        const auto found = r.constraint_d.find(s.name);
        const auto est = stats::estimate_paired(
            found == r.constraint_d.end() ? std::vector<double>{} : pooled_rounds(found->second),
            spec.confidence);
        if (est.n >= plan.min_rounds && stats::log_to_pct(est.ci_low) >= s.threshold_pct &&
            j.verdict != stats::Verdict::regressed) {
            local.push_back(
                Json{{"metric", s.name},
                     {"estimate", est.to_json()},
                     {"note",
                      "local result: selecting on it needs a Target with this metric as primary"}});
        }
    }
    return local;
}

// The verdict's reason: the effect and its deciding interval against the minimum, then every
// regressed case, constraint, instrument and observation note that qualifies it.
std::string judgement_reason(const TargetSpec& spec, const ComparisonPlan& plan, std::size_t pairs,
                             const Judgement& j, const std::string& effect_text) {
    std::string reason = fmt::format(
        "{} after {} pairs ({} case{} each) against {}: {}, effect {:+.2f}% [{:+.2f}%, {:+.2f}%] "
        "({}) vs minimum {}%",
        stats::verdict_name(j.verdict), pairs, spec.case_ids.size(),
        spec.case_ids.size() == 1 ? "" : "s", plan.reference_label, effect_text,
        stats::log_to_pct(j.deciding.hl), stats::log_to_pct(j.deciding.ci_low),
        stats::log_to_pct(j.deciding.ci_high), deciding_text(j), plan.minimum_effect_pct);
    if (!j.regressed_cases.empty()) {
        reason += fmt::format("; regressed case{}: {}", j.regressed_cases.size() == 1 ? "" : "s",
                              fmt::join(j.regressed_cases, ", "));
    }
    if (!j.constraint_reason.empty()) {
        reason += "; " + j.constraint_reason;
    }
    if (!j.instrument_note.empty()) {
        reason += "; " + j.instrument_note;
    }
    if (j.instrument_check && j.instrument_check->biased) {
        reason += "; " + j.instrument_check->statement;
    }
    if (!j.observation_note.empty()) {
        reason += "; " + j.observation_note;
    }
    return reason;
}

// Judges the measured rounds and fills the outputs; returns the verdict.
stats::Verdict judge_and_record(const Target& target, const ComparisonPlan& plan, const Rounds& r,
                                Json& outputs, std::string& reason) {
    const TargetSpec& spec = target.spec();
    const Judgement j = judge_comparison(judge_input(spec, plan, r));
    record_judgement(spec, j, r, outputs);
    Json local = Json::array();
    if (plan.experiment) {
        local = local_results(spec, plan, r, j);
        const auto& bound = plan.experiment->gain_bound;
        if (bound && stats::log_to_pct(j.deciding.hl) > bound->pct) {
            outputs["prediction_error"] = Json{{"measured_pct", stats::log_to_pct(j.deciding.hl)},
                                               {"bound_pct", bound->pct},
                                               {"source", bound->source},
                                               {"note",
                                                "the measured effect exceeds the pre-registered "
                                                "upper bound: check the bound or the measurement"}};
        }
    }
    outputs["local_results"] = local;
    reason = judgement_reason(spec, plan, r.d.size(), j, outputs["effect_text"].get<std::string>());
    return j.verdict;
}

// A screen or confirm of an experiment recorded as falsified is refused unless
// o.override_falsified is given, then recorded as the request's override_falsified.
void gate_falsified_experiment(const CompareOptions& o, ComparisonPlan& plan,
                               const InvocationLedger& ledger) {
    if (o.kind == ComparisonKind::audit) {
        return;  // an audit re-checks the champion against the original: no experiment's claim
    }
    const Json overridden = require_not_falsified(ledger, comparison_kind_name(o.kind),
                                                  o.experiment_id, o.override_falsified);
    if (!overridden.is_null()) {
        plan.request["override_falsified"] = overridden;
    }
}

// One comparison in its open invocation: measure (or reject without measuring), then settle the
// record either way.
struct ComparisonRun {
    const Target& target;
    const CompareOptions& o;
    const ComparisonPlan& plan;
    std::chrono::steady_clock::time_point started;
    stats::Verdict verdict = stats::Verdict::inconclusive;
    Rounds rounds;

    void measure(run::Invocation& inv, OperationEnd& end);
    void settle(const run::Invocation& inv, OperationEnd& end);
};

void ComparisonRun::measure(run::Invocation& inv, OperationEnd& end) {
    started = std::chrono::steady_clock::now();
    Json& outputs = end.outputs;
    outputs = Json{{"experiment_id", o.experiment_id},
                   {"reference", plan.reference_json},
                   {"candidate", plan.candidate_json},
                   {"seed", plan.seed},
                   {"minimum_effect_pct", plan.minimum_effect_pct},
                   {"notes", plan.notes}};
    // A conservative-bound screen whose bound, computed from a stored map's item, is below the
    // minimum effect cannot pass: it is rejected without a single driver call. A typed bound
    // (records of earlier versions citing map:<id>) is no such evidence: it is measured.
    const std::optional<store::ExperimentRecord::GainBound> bound =
        plan.experiment ? plan.experiment->gain_bound : std::nullopt;
    const bool bound_rejects =
        o.kind == ComparisonKind::screen && bound &&
        plan.experiment->screen_design == store::ScreenDesign::conservative_bound &&
        bound->source.rfind("map:", 0) == 0 && bound->computed &&
        bound->pct < plan.minimum_effect_pct;
    const auto problems = target.environment_problems();
    if (bound_rejects) {
        verdict = stats::Verdict::below_minimum;
        end.reason = fmt::format(
            "the gain bound {}% cited from {} is below the minimum effect {}%: rejected "
            "without measuring",
            bound->pct, bound->source, plan.minimum_effect_pct);
        outputs["bound_rejection"] = Json{{"bound_pct", bound->pct},
                                          {"source", bound->source},
                                          {"minimum_effect_pct", plan.minimum_effect_pct}};
        return;
    }
    if (!problems.empty()) {
        rounds.infrastructure_failure = true;
        verdict = stats::Verdict::invalid;
        end.reason = fmt::format("environment mismatch: {}", fmt::join(problems, "; "));
        return;
    }
    Session session(target, inv, plan.reference, plan.reference_label, plan.candidate,
                    plan.candidate_label);
    if (plan.experiment) {
        std::vector<CorrectnessGate> gates;
        for (const auto& g : plan.experiment->extra_correctness_gates) {
            gates.push_back(parse_correctness_gate(g, "extra_correctness_gates"));
        }
        session.add_correctness_gates(std::move(gates));
    }
    rounds = measure_rounds(target, inv, session, plan, o);
    if (rounds.verdict) {
        verdict = *rounds.verdict;
        end.reason = rounds.reason;
    } else {
        verdict = judge_and_record(target, plan, rounds, outputs, end.reason);
    }
}

void ComparisonRun::settle(const run::Invocation& inv, OperationEnd& end) {
    Json& outputs = end.outputs;
    if (end.error) {
        rounds.infrastructure_failure = true;
    }
    for (const auto& note : host_load_notes(plan.load_at_start)) {
        outputs["notes"].push_back(note);
    }
    if (!rounds.unchecked_roles.empty()) {  // believed, as protocol v1 promises, and said so
        outputs["notes"].push_back(driver::roles_unchecked_note(
            {rounds.unchecked_roles.begin(), rounds.unchecked_roles.end()}));
    }
    if (!outputs.contains("observation")) {  // not judged: what was observed, for the record
        outputs["observation"] = rounds.observation.to_json(target.spec().observation);
    }
    outputs["pairs"] = rounds.pairs;
    outputs["d"] = pooled_rounds(rounds.d);
    // What the verdict cost: the rounds it took, the GPU seconds its driver calls held (and where
    // that held time went: the driver's work, its SDK, cko) and the wall time since the operation
    // began (materializing subjects and waiting for GPU locks included).
    outputs["to_verdict"] =
        Json{{"pairs", rounds.d.size()},
             {"gpu_s", inv.gpu_seconds()},
             {"held", inv.held_time().to_json()},
             {"wall_s",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()}};
    outputs["infrastructure_failure"] = rounds.infrastructure_failure;
    if (end.state == run::InvocationState::succeeded) {
        outputs["verdict"] = stats::verdict_name(verdict);
        bool positive = verdict == stats::Verdict::improved;
        if (o.kind == ComparisonKind::screen) {
            const bool proxy = plan.experiment && plan.experiment->screen_design ==
                                                      store::ScreenDesign::diagnostic_proxy;
            const ScreenDecision decision =
                screen_decision(verdict, rounds.infrastructure_failure, proxy);
            outputs["decision"] = screen_decision_name(decision);
            positive = decision == ScreenDecision::pass_to_confirm;
        }
        end.verdict = std::string(stats::verdict_name(verdict));
        end.exit_code = positive ? 0 : 1;
    } else {
        end.exit_code = end.error ? end.error->exit_code() : 3;
    }
    outputs["reason"] = end.reason;
}

}  // namespace

OperationOutcome run_comparison(const Target& target, const CompareOptions& o,
                                const Announce& announce) {
    const std::string kind(comparison_kind_name(o.kind));
    // Nothing past the stage this session may reach runs (decision.hpp).
    const Json stage_limit =
        require_stage_allowed(target.spec(), *stage_from_name(kind), o.stage_limit);
    // The one-confirm rule is decided and its invocation created under one per-experiment lock, so
    // two confirms started together cannot both pass the check.
    std::optional<store::StoreLock> decision;
    if (o.kind == ComparisonKind::confirm) {
        require_safe_name(o.experiment_id, "experiment id");
        decision.emplace(target.store().lock_named("confirm-" + o.experiment_id));
    }
    // The invocations are read once, after the lock: every rule below asks this one reading.
    const InvocationLedger ledger = InvocationLedger::read(target.store());
    ComparisonPlan plan = plan_comparison(target, o, ledger);
    gate_failed_candidate(o, plan, ledger);  // failure_gate.hpp
    gate_falsified_experiment(o, plan, ledger);
    if (!stage_limit.is_null()) {
        plan.request["stage_limit"] = stage_limit;
    }
    ComparisonRun comparison{target, o, plan, {}, stats::Verdict::inconclusive, {}};
    return run_in_invocation(
        target.store(), InvocationSpec{kind, plan.request, limits_for(target.spec()), o.cancel},
        [&](const std::string& id) {
            decision.reset();  // the confirm now exists: a later confirm sees it
            announce(id);
        },
        [&](run::Invocation& inv, OperationEnd& end) { comparison.measure(inv, end); },
        [&](run::Invocation& inv, OperationEnd& end) { comparison.settle(inv, end); });
}

}  // namespace cko::eval
