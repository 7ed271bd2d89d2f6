// Comparison planning: one-confirm rule, reference from the experiment's base, rounds, plan, noise
// notes.
#include "cko/eval/compare_context.hpp"

#include "cko/driver/running_subject.hpp"
#include "cko/eval/champion.hpp"
#include "cko/eval/experiment.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

#include <fstream>
#include <thread>

namespace cko::eval {
namespace {

// Earlier confirms of an experiment; a new one is allowed only as a retry of an infrastructure
// failure.
void require_first_confirm(const Target& target, const CompareOptions& o,
                           const InvocationLedger& ledger) {
    const std::vector<const InvocationEntry*> confirms = ledger.confirms_of(o.experiment_id);
    std::vector<std::string> earlier;
    for (const InvocationEntry* e : confirms) {
        earlier.push_back(e->id());
    }
    if (earlier.empty()) {
        if (!o.retry_of.empty()) {
            throw Error(ErrorCode::invalid_argument,
                        fmt::format("--retry-of {}: there is no earlier confirm of {}", o.retry_of,
                                    o.experiment_id));
        }
        return;
    }
    if (o.retry_of.empty()) {
        throw Error(ErrorCode::already_confirmed,
                    fmt::format("{} was already confirmed by {}; only one formal confirm counts. "
                                "Re-run only after an "
                                "infrastructure failure, with --retry-of ID --reason TEXT",
                                o.experiment_id, fmt::join(earlier, ", ")),
                    Json{{"earlier", earlier}});
    }
    if (std::find(earlier.begin(), earlier.end(), o.retry_of) == earlier.end()) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("--retry-of {} is not a confirm of {} (those are: {})", o.retry_of,
                                o.experiment_id, fmt::join(earlier, ", ")));
    }
    if (o.retry_reason.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    "--retry-of needs --reason naming the infrastructure failure",
                    Json{{"field", "reason"}});
    }
    // The one step that may write: the confirm retried, if its owner died, is declared lost.
    const auto st = run::detect_lost_invocation(target.store(), o.retry_of);
    const bool infrastructure = st.state != run::InvocationState::succeeded ||
                                st.result.at("outputs").value("infrastructure_failure", false);
    if (!infrastructure) {
        throw Error(ErrorCode::not_eligible,
                    fmt::format("confirm {} completed with verdict `{}`; a completed confirm "
                                "cannot be re-run until it "
                                "passes",
                                o.retry_of, st.result.at("outputs").value("verdict", "?")));
    }
    // Only the latest attempt may be retried (no fan-out of retries).
    if (earlier.back() != o.retry_of && earlier.size() > 1) {
        for (const InvocationEntry* e : confirms) {
            if (e->request.request.value("retry_of", "") == o.retry_of) {
                throw Error(ErrorCode::not_eligible,
                            fmt::format("{} was already retried by {}", o.retry_of, e->id()));
            }
        }
    }
}

void resolve_subjects(const Target& target, const CompareOptions& o, ComparisonPlan& p) {
    if (o.kind == ComparisonKind::audit) {
        const Champion champion = read_champion(target.store());
        if (!champion.experiment_id) {
            throw Error(ErrorCode::not_eligible,
                        "there is no champion to audit (the original is current)");
        }
        p.reference = target.original();
        p.reference_label = "original";
        p.reference_kind = store::BaseKind::original;
        p.candidate = store::load_snapshot(target.store(), champion.digest);
        p.candidate_label = *champion.experiment_id;
        return;
    }
    p.experiment = load_experiment(target.store(), o.experiment_id);
    // The reference is what the experiment was frozen against: the original, or the champion of
    // that moment (its digest is in the experiment), never whatever is champion now.
    const store::ExperimentRecord::Base& base = p.experiment->base;
    p.reference_kind = base.kind;
    p.reference = store::load_snapshot(target.store(), base.digest);
    p.reference_label = p.reference_kind == store::BaseKind::champion && base.experiment_id
                            ? *base.experiment_id
                            : std::string("original");
    p.candidate = store::load_snapshot(target.store(), p.experiment->candidate.digest);
    p.candidate_label = o.experiment_id;
}

// What the latest baseline said about noise, or that there is none.
Json noise_notes(const InvocationLedger& ledger, double minimum_effect_pct) {
    Json notes = Json::array();
    const InvocationEntry* baseline = ledger.latest_baseline();
    const Json resolution =
        baseline ? baseline->result->outputs.value("resolution", Json()) : Json();
    if (baseline == nullptr) {
        notes.push_back(
            "no baseline: the noise of this Target is unknown (run cko baseline to know which "
            "effects "
            "are detectable)");
    } else if (resolution.is_object() && !resolution.value("resolvable", true)) {
        notes.push_back(fmt::format(
            "the baseline's A/A check found the minimum effect {}% below the resolution (MDE "
            "{:.2f}% at {} pairs): only effects well above the MDE can be decided",
            minimum_effect_pct, resolution.value("mde_pct_at_max_pairs", 0.0),
            resolution.value("max_pairs", 0)));
    }
    return notes;
}

// The latest A/A check of the Target: a baseline's, or a control experiment's comparison. Its
// bias (if it found one) applies to every later verdict until a newer check finds none.
std::optional<InstrumentBias> latest_instrument_bias(const InvocationLedger& ledger) {
    const InvocationEntry* check = ledger.latest_instrument_check();
    if (check == nullptr) {
        return std::nullopt;
    }
    const Json& outputs = check->result->outputs;
    const std::string& kind = check->result->kind;
    return carried_bias(outputs.at("instrument_check"),
                        kind == "baseline" ? fmt::format("baseline {}", check->id())
                                           : fmt::format("{} {} of control {}", kind, check->id(),
                                                         outputs.value("experiment_id", "?")));
}

}  // namespace

Json comparison_progress(const store::Store& store, const std::string& invocation_id) {
    require_safe_name(invocation_id, "invocation id");
    std::ifstream in(store.path_of(store::layout::invocation_events(invocation_id)));
    std::string line;
    Json last;
    while (std::getline(in, line)) {
        if (line.find("\"type\":\"progress\"") == std::string::npos) {
            continue;
        }
        try {
            last = parse_json_strict(line).at("data");
        } catch (const Error&) {
            // a torn last line of a running invocation: keep the previous one
        }
    }
    return last;
}

double load_average_now() {
    std::ifstream in("/proc/loadavg");
    double load = 0;
    in >> load;
    return in ? load : 0.0;
}

std::vector<std::string> host_load_notes(double load_at_start) {
    const double cores = std::max(1U, std::thread::hardware_concurrency());
    const double load = std::max(load_at_start, load_average_now());
    if (load <= cores) {
        return {};
    }
    return {fmt::format(
        "the host's load average ({:.1f}) exceeded its {} cores during the comparison: other work "
        "competed with the measurements",
        load, static_cast<int>(cores))};
}

std::string subject_running_at_failure(const Error& error) {
    return driver::running_subject(error.details().value("call_dir", ""),
                                   error.details().value("stderr_tail", ""));
}

std::string driver_notes_of(const Measurement& m) {
    std::string text;
    if (!m.driver_notes.empty()) {
        text += fmt::format("; driver notes: {}", fmt::join(m.driver_notes, " | "));
    }
    if (!m.stderr_tail.empty()) {
        text += fmt::format("; driver stderr ends with: {}", m.stderr_tail);
    }
    return text;
}

ComparisonPlan plan_comparison(const Target& target, const CompareOptions& o,
                               const InvocationLedger& ledger) {
    const TargetSpec& spec = target.spec();
    if (spec.diagnostic) {
        throw Error(ErrorCode::not_eligible, "a diagnostic Target has no workload to compare");
    }
    const std::string kind(comparison_kind_name(o.kind));
    if (o.kind == ComparisonKind::confirm) {
        require_first_confirm(target, o, ledger);
    } else if (!o.retry_of.empty()) {
        throw Error(ErrorCode::invalid_argument, "--retry-of is only for confirm");
    }
    // Edited driver files are an error of the Target, not a fact about the candidate: nothing is
    // measured and nothing is decided.
    const auto changes = target.driver_changes();
    if (!changes.empty()) {
        throw driver_changed_error(changes, "nothing was measured");
    }
    ComparisonPlan p;
    resolve_subjects(target, o, p);
    p.minimum_effect_pct =
        p.experiment ? p.experiment->minimum_effect_pct : spec.minimum_effect_pct;
    p.min_rounds = static_cast<std::size_t>(spec.min_pairs);
    // A screen is a cheap look: at most half the formal budget of pairs (never below min_pairs).
    p.max_rounds = o.kind == ComparisonKind::screen
                       ? std::max(p.min_rounds, static_cast<std::size_t>(spec.max_pairs) / 2)
                       : static_cast<std::size_t>(spec.max_pairs);
    p.seed = o.seed != 0
                 ? o.seed
                 : seed_from(target.id() + "/" + kind + "/" + p.candidate_label + "/" + o.retry_of);
    if (spec.sequential) {
        p.sequential =
            stats::SequentialPlan::early_decision(p.min_rounds, p.max_rounds, spec.confidence);
    }
    require_budget(target, p.experiment ? p.experiment->estimated_cost_s : 0.0, ledger);
    p.reference_json = Json{{"label", p.reference_label},
                            {"digest", p.reference.digest},
                            {"kind", store::base_kind_name(p.reference_kind)}};
    p.candidate_json = Json{{"label", p.candidate_label}, {"digest", p.candidate.digest}};
    p.notes = noise_notes(ledger, p.minimum_effect_pct);
    p.instrument_bias = latest_instrument_bias(ledger);
    if (p.instrument_bias && p.instrument_bias->bound_log > 0) {
        p.notes.push_back(fmt::format(
            "biased instrument: the latest A/A check ({}) found identical code differ by up to "
            "±{:.3f} %; the verdict must hold with its interval widened by that much",
            p.instrument_bias->source, stats::log_to_pct(p.instrument_bias->bound_log)));
    }
    for (const auto& [name, bound] : p.instrument_bias ? p.instrument_bias->constraint_bound_log
                                                       : std::map<std::string, double>{}) {
        p.notes.push_back(fmt::format(
            "biased instrument for constraint {}: the latest A/A check ({}) found identical code "
            "differ on it by up to ±{:.3f} %; its statuses must hold with intervals widened by "
            "that much",
            name, p.instrument_bias->source, stats::log_to_pct(bound)));
    }
    p.load_at_start = load_average_now();
    p.request =
        Json{{"target", target.id()},
             {"experiment_id", o.experiment_id},
             {"reference", p.reference_json},
             {"candidate", p.candidate_json},
             {"seed", p.seed},
             {"min_pairs", p.min_rounds},
             {"max_pairs", p.max_rounds},
             {"cases", spec.case_ids},
             {"pair", "a round: every case once, one reference and one candidate measurement each"},
             {"minimum_effect_pct", p.minimum_effect_pct},
             {"sequential", spec.sequential},
             {"driver_mode", spec.serves_sessions() ? "session" : "process"},
             {"plan", p.sequential ? p.sequential->to_json() : Json(nullptr)},
             {"instrument_bias", p.instrument_bias ? p.instrument_bias->to_json() : Json(nullptr)}};
    if (!o.retry_of.empty()) {
        p.request["retry_of"] = o.retry_of;
        p.request["retry_reason"] = o.retry_reason;
    }
    return p;
}

}  // namespace cko::eval
