// The comparison engine shared by screen, confirm and audit.
#include "cko/eval/compare.hpp"

#include "cko/eval/champion.hpp"
#include "cko/eval/experiment.hpp"
#include "cko/eval/session.hpp"
#include "cko/stats/stats.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <random>

namespace cko::eval {
namespace {

struct Subjects {
    store::Snapshot reference;
    std::string reference_label;
    store::Snapshot candidate;
    std::string candidate_label;
    Json experiment;  // null for audits
};

// Earlier confirms of an experiment; a new one is allowed only as a retry of an infrastructure failure.
void require_first_confirm(const Target& target, const CompareOptions& o) {
    std::vector<std::string> earlier;
    for (const auto& id : run::list_invocations(target.store())) {
        const Json req = target.store().read_record("invocations/" + id + "/request.json");
        if (req.value("kind", "") == "confirm" && req.at("request").value("experiment_id", "") == o.experiment_id) {
            earlier.push_back(id);
        }
    }
    if (earlier.empty()) {
        if (!o.retry_of.empty()) {
            throw Error(ErrorCode::invalid_argument, fmt::format("--retry-of {}: there is no earlier confirm of {}",
                                                                 o.retry_of, o.experiment_id));
        }
        return;
    }
    if (o.retry_of.empty()) {
        throw Error(ErrorCode::already_confirmed,
                    fmt::format("{} was already confirmed by {}; only one formal confirm counts. Re-run only after an "
                                "infrastructure failure, with --retry-of ID --reason TEXT",
                                o.experiment_id, fmt::join(earlier, ", ")),
                    Json{{"earlier", earlier}});
    }
    if (std::find(earlier.begin(), earlier.end(), o.retry_of) == earlier.end()) {
        throw Error(ErrorCode::invalid_argument, fmt::format("--retry-of {} is not a confirm of {} (those are: {})",
                                                             o.retry_of, o.experiment_id, fmt::join(earlier, ", ")));
    }
    if (o.retry_reason.empty()) {
        throw Error(ErrorCode::invalid_argument, "--retry-of needs --reason naming the infrastructure failure",
                    Json{{"field", "reason"}});
    }
    const auto st = run::invocation_status(target.store(), o.retry_of);
    const bool infrastructure = st.state != run::InvocationState::succeeded ||
                                st.result.at("outputs").value("infrastructure_failure", false);
    if (!infrastructure) {
        throw Error(ErrorCode::not_eligible,
                    fmt::format("confirm {} completed with verdict `{}`; a completed confirm cannot be re-run until it "
                                "passes",
                                o.retry_of, st.result.at("outputs").value("verdict", "?")));
    }
    // Only the latest attempt may be retried (no fan-out of retries).
    if (earlier.back() != o.retry_of && earlier.size() > 1) {
        for (const auto& id : earlier) {
            const Json req = target.store().read_record("invocations/" + id + "/request.json");
            if (req.at("request").value("retry_of", "") == o.retry_of) {
                throw Error(ErrorCode::not_eligible, fmt::format("{} was already retried by {}", o.retry_of, id));
            }
        }
    }
}

Subjects resolve_subjects(const Target& target, const CompareOptions& o) {
    Subjects s;
    const Champion champion = read_champion(target.store());
    if (o.kind == ComparisonKind::audit) {
        if (!champion.experiment_id) {
            throw Error(ErrorCode::not_eligible, "there is no champion to audit (the original is current)");
        }
        s.reference = target.original();
        s.reference_label = "original";
        s.candidate = store::load_snapshot(target.store(), champion.digest);
        s.candidate_label = *champion.experiment_id;
        return s;
    }
    s.experiment = load_experiment(target.store(), o.experiment_id);
    // Screens and confirms compare against the champion as it is now (the original if none).
    s.reference = store::load_snapshot(target.store(), champion.digest);
    s.reference_label = champion.experiment_id.value_or("original");
    s.candidate = store::load_snapshot(target.store(), s.experiment.at("candidate").at("digest"));
    s.candidate_label = o.experiment_id;
    return s;
}

stats::Direction direction_of(const std::string& d) {
    return d == "lower" ? stats::Direction::lower : stats::Direction::higher;
}

}  // namespace

std::string_view comparison_kind_name(ComparisonKind kind) noexcept {
    switch (kind) {
    case ComparisonKind::screen: return "screen";
    case ComparisonKind::confirm: return "confirm";
    default: return "audit";
    }
}

OperationOutcome run_comparison(const Target& target, const CompareOptions& o,
                                const std::function<void(const std::string&)>& announce) {
    const TargetSpec& spec = target.spec();
    if (spec.diagnostic) {
        throw Error(ErrorCode::not_eligible, "a diagnostic Target has no workload to compare");
    }
    const std::string kind(comparison_kind_name(o.kind));
    // The one-confirm rule is decided and its invocation created under one per-experiment lock, so
    // two confirms started together cannot both pass the check.
    std::optional<store::StoreLock> decision;
    if (o.kind == ComparisonKind::confirm) {
        require_safe_name(o.experiment_id, "experiment id");
        decision.emplace(target.store().lock_named("confirm-" + o.experiment_id));
        require_first_confirm(target, o);
    } else if (!o.retry_of.empty()) {
        throw Error(ErrorCode::invalid_argument, "--retry-of is only for confirm");
    }
    const Subjects subjects = resolve_subjects(target, o);
    const double min_effect = subjects.experiment.is_null() ? spec.minimum_effect_pct
                                                            : subjects.experiment.at("minimum_effect_pct").get<double>();
    const std::size_t min_pairs = static_cast<std::size_t>(spec.min_pairs);
    // A screen is a cheap look: at most half the formal budget of pairs (never below min_pairs).
    const std::size_t max_pairs = o.kind == ComparisonKind::screen
                                      ? std::max(min_pairs, static_cast<std::size_t>(spec.max_pairs) / 2)
                                      : static_cast<std::size_t>(spec.max_pairs);
    const std::uint64_t seed = o.seed != 0 ? o.seed : seed_from(target.id() + "/" + kind + "/" + subjects.candidate_label + "/" + o.retry_of);
    require_budget(target, subjects.experiment.is_null() ? 0.0 : subjects.experiment.value("estimated_cost_s", 0.0));

    const run::Limits limits = limits_for(spec);
    const Json reference_json{{"label", subjects.reference_label}, {"digest", subjects.reference.digest}};
    const Json candidate_json{{"label", subjects.candidate_label}, {"digest", subjects.candidate.digest}};
    Json request{{"target", target.id()}, {"experiment_id", o.experiment_id}, {"reference", reference_json},
                 {"candidate", candidate_json}, {"seed", seed}, {"min_pairs", min_pairs}, {"max_pairs", max_pairs},
                 {"minimum_effect_pct", min_effect}, {"sequential", spec.sequential}};
    if (!o.retry_of.empty()) {
        request["retry_of"] = o.retry_of;
        request["retry_reason"] = o.retry_reason;
    }
    run::Invocation inv = run::Invocation::create(target.store(), kind, request, limits, o.cancel);
    decision.reset();  // the confirm now exists: a later confirm sees it
    announce(inv.id());

    Json outputs{{"experiment_id", o.experiment_id}, {"reference", reference_json}, {"candidate", candidate_json},
                 {"seed", seed}, {"minimum_effect_pct", min_effect}};
    OperationOutcome out;
    out.invocation_id = inv.id();
    std::optional<Error> failure;
    run::InvocationState state = run::InvocationState::succeeded;
    stats::Verdict verdict = stats::Verdict::inconclusive;
    std::string reason;
    bool infrastructure_failure = false;
    std::vector<stats::CaseSamples> per_case;
    for (const auto& id : spec.case_ids) {
        per_case.push_back({id, {}});
    }
    std::map<std::string, std::vector<double>> constraint_d;
    std::vector<double> d;
    Json pairs = Json::array();
    try {
        const auto problems = target.validity_problems();
        if (!problems.empty()) {
            infrastructure_failure = true;
            verdict = stats::Verdict::invalid;
            reason = fmt::format("environment mismatch: {}", fmt::join(problems, "; "));
        } else {
            Session session(target, inv, subjects.reference, subjects.reference_label, subjects.candidate,
                            subjects.candidate_label);
            if (!subjects.experiment.is_null()) {
                std::vector<CorrectnessGate> gates;
                for (const auto& g : subjects.experiment.at("extra_correctness_gates")) {
                    gates.push_back(parse_correctness_gate(g.get<std::string>(), "extra_correctness_gates"));
                }
                session.add_correctness_gates(std::move(gates));
            }
            std::mt19937_64 order_rng(seed);
            stats::SequentialPlan plan;
            plan.block = std::max<std::size_t>(2, spec.case_ids.size());
            plan.min_pairs = min_pairs;
            plan.max_pairs = max_pairs;
            plan.confidence = spec.confidence;
            bool decided = false;
            for (std::size_t i = 0; i < max_pairs && !decided; ++i) {
                if (inv.cancelled()) {
                    throw Error(ErrorCode::interrupted, fmt::format("{} cancelled after {} pairs", kind, i));
                }
                if (inv.past_deadline()) {
                    throw Error(ErrorCode::timed_out, fmt::format("{} reached its operation timeout after {} pairs", kind, i));
                }
                const std::size_t case_index = i % spec.case_ids.size();
                if (o.progress) {
                    o.progress(d.empty() ? fmt::format("{}: pair {}/{} (at most)", kind, i + 1, max_pairs)
                                         : fmt::format("{}: pair {}/{} (at most), effect so far {:+.2f}%", kind, i + 1,
                                                       max_pairs, stats::log_to_pct(stats::median(d))));
                }
                const bool candidate_first = (order_rng() & 1U) != 0;
                const Measurement m = session.measure_pair(spec.case_ids[case_index], candidate_first, seed + i);
                Json pair = m.to_json();
                pair["case"] = spec.case_ids[case_index];
                pair["order"] = candidate_first ? "BA" : "AB";
                pairs.push_back(pair);
                if (m.error) {
                    infrastructure_failure = true;
                    throw *m.error;
                }
                if (!m.contamination.empty()) {
                    infrastructure_failure = true;
                    verdict = stats::Verdict::invalid;
                    reason = fmt::format("the measurement window was contaminated: {}", fmt::join(m.contamination, "; "));
                    break;
                }
                const auto& ref = m.subjects.at("reference");
                const auto& cand = m.subjects.at("candidate");
                if (!ref.correct || !cand.correct) {
                    verdict = stats::Verdict::invalid;
                    reason = !cand.correct
                                 ? fmt::format("the candidate failed correctness on case {} ({} = {}, rule {} {}, driver "
                                               "status {}{}): no performance claim",
                                               spec.case_ids[case_index], spec.correctness_metric, cand.correctness_value,
                                               spec.correctness_operator, spec.correctness_threshold,
                                               driver::correctness_status_name(cand.status),
                                               cand.failed_gates.empty() ? ""
                                                   : fmt::format("; failed gates: {}", fmt::join(cand.failed_gates, ", ")))
                                 : fmt::format("the reference failed correctness on case {}: the comparison is void",
                                               spec.case_ids[case_index]);
                    break;
                }
                const double di = stats::paired_log_ratio(ref.primary_median(), cand.primary_median(),
                                                          direction_of(spec.primary.direction));
                d.push_back(di);
                per_case[case_index].d.push_back(di);
                for (const auto& c : spec.constraints) {
                    const auto median = [](std::vector<double> v) { return stats::median(v); };
                    constraint_d[c.name].push_back(stats::paired_log_ratio(
                        median(ref.constraints.at(c.name)), median(cand.constraints.at(c.name)), direction_of(c.direction)));
                }
                if (spec.sequential && d.size() >= min_pairs && (d.size() - min_pairs) % plan.block == 0) {
                    const stats::LookDecision look = stats::sequential_look(d, plan, min_effect);
                    if (look.stop) {
                        decided = true;
                        verdict = look.verdict;
                    }
                }
            }
            if (verdict != stats::Verdict::invalid) {
                const stats::PooledEstimate pooled = stats::estimate_pooled(per_case, spec.confidence);
                const stats::PairedEstimate all = stats::estimate_paired(d, spec.confidence);
                if (!decided) {
                    verdict = stats::classify(all, min_effect, min_pairs);
                }
                outputs["estimate"] = all.to_json();
                outputs["per_case"] = pooled.to_json();
                Json constraints = Json::object();
                for (const auto& c : spec.constraints) {
                    const auto est = stats::estimate_paired(constraint_d[c.name], spec.confidence);
                    const auto status = stats::classify_constraint(est, c.max_regression_pct, min_pairs);
                    constraints[c.name] = Json{{"estimate", est.to_json()}, {"status", stats::constraint_status_name(status)},
                                               {"max_regression_pct", c.max_regression_pct}};
                    if (status == stats::ConstraintStatus::regressed) {
                        verdict = stats::Verdict::regressed;
                        reason = fmt::format("constraint {} regressed beyond {}%", c.name, c.max_regression_pct);
                    }
                }
                outputs["constraints"] = constraints;
                // Secondary metrics: local results only, never a reason to select.
                Json local = Json::array();
                if (!subjects.experiment.is_null()) {
                    for (const auto& s : subjects.experiment.at("secondary_metrics")) {
                        const auto est = stats::estimate_paired(constraint_d[s.at("name")], spec.confidence);
                        if (est.n >= min_pairs && stats::log_to_pct(est.ci_low) >= s.at("threshold_pct").get<double>() &&
                            verdict != stats::Verdict::regressed) {
                            local.push_back(Json{{"metric", s.at("name")}, {"estimate", est.to_json()},
                                                 {"note", "local result: selecting on it needs a Target with this metric as primary"}});
                        }
                    }
                    const Json& bound = subjects.experiment.at("gain_bound");
                    if (!bound.is_null() && stats::log_to_pct(all.hl) > bound.at("pct").get<double>()) {
                        outputs["prediction_error"] = Json{
                            {"measured_pct", stats::log_to_pct(all.hl)}, {"bound_pct", bound.at("pct")},
                            {"source", bound.at("source")},
                            {"note", "the measured effect exceeds the pre-registered upper bound: check the bound or the measurement"}};
                    }
                }
                outputs["local_results"] = local;
                if (reason.empty()) {
                    reason = fmt::format("{} after {} pairs: effect {:+.2f}% [{:+.2f}%, {:+.2f}%] vs minimum {}%",
                                         stats::verdict_name(verdict), d.size(), stats::log_to_pct(all.hl),
                                         stats::log_to_pct(all.ci_low), stats::log_to_pct(all.ci_high), min_effect);
                }
            }
        }
    } catch (const Error& e) {
        failure = e;
        reason = e.what();
        state = run::state_for_error(e);
        infrastructure_failure = true;
    }
    outputs["pairs"] = pairs;
    outputs["d"] = d;
    outputs["infrastructure_failure"] = infrastructure_failure;
    if (state == run::InvocationState::succeeded) {
        outputs["verdict"] = stats::verdict_name(verdict);
        if (o.kind == ComparisonKind::screen) {
            // A screen may reject, never select. A diagnostic-proxy screen may not reject on performance alone.
            const bool proxy = subjects.experiment.value("screen_design", "") == "diagnostic_proxy";
            const bool reject = verdict == stats::Verdict::invalid ||
                                (!proxy && (verdict == stats::Verdict::regressed || verdict == stats::Verdict::below_minimum ||
                                            verdict == stats::Verdict::equivalent));
            outputs["decision"] = reject ? "rejected" : "pass_to_confirm";
        }
        out.verdict = std::string(stats::verdict_name(verdict));
        const bool positive = o.kind == ComparisonKind::screen ? outputs["decision"] == "pass_to_confirm"
                                                               : verdict == stats::Verdict::improved;
        out.exit_code = positive ? 0 : 1;
    } else {
        out.exit_code = failure ? failure->exit_code() : 3;
    }
    outputs["reason"] = reason;
    inv.finish(state, reason, outputs, failure);
    out.state = std::string(run::state_name(state));
    out.outputs = outputs;
    return out;
}

}  // namespace cko::eval
