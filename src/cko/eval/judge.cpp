// The comparison rule: rounds → pooled estimate at the deciding level, per-case verdicts,
// constraints.
#include "cko/eval/judge.hpp"

#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace cko::eval {
namespace {

void require_rectangular(const std::vector<std::vector<double>>& d, std::size_t cases,
                         const std::string& what) {
    for (std::size_t r = 0; r < d.size(); ++r) {
        if (d[r].size() != cases) {
            throw Error(ErrorCode::invalid_argument,
                        fmt::format("{}: round {} has {} values for {} cases", what, r + 1,
                                    d[r].size(), cases));
        }
    }
}

std::vector<double> column(const std::vector<std::vector<double>>& d, std::size_t c) {
    std::vector<double> out;
    out.reserve(d.size());
    for (const auto& round : d) {
        out.push_back(round[c]);
    }
    return out;
}

}  // namespace

std::vector<double> pooled_rounds(const std::vector<std::vector<double>>& d) {
    std::vector<double> out;
    out.reserve(d.size());
    for (const auto& round : d) {
        double sum = 0;
        for (const double x : round) {
            sum += x;
        }
        out.push_back(round.empty() ? std::nan("") : sum / static_cast<double>(round.size()));
    }
    return out;
}

std::vector<std::string> cases_to_accept(const Json& outputs) {
    std::vector<std::string> cases;
    const auto add = [&](const std::string& c) {
        if (std::find(cases.begin(), cases.end(), c) == cases.end()) {
            cases.push_back(c);
        }
    };
    for (const auto& c : outputs.value("regressed_cases", Json::array())) {
        add(c.get<std::string>());
    }
    for (const auto& r : outputs.value("constraint_regressions", Json::array())) {
        if (r.value("acceptable", false)) {
            add(r.value("case_id", ""));
        }
    }
    return cases;
}

bool at_look(const stats::SequentialPlan& plan, std::size_t rounds) {
    const auto sizes = plan.look_sizes();
    return std::find(sizes.begin(), sizes.end(), rounds) != sizes.end();
}

Json InstrumentBias::to_json() const {
    Json out{{"bound_pct", stats::log_to_pct(bound_log)}, {"source", source}};
    if (!constraint_bound_log.empty()) {
        Json bounds = Json::object();
        for (const auto& [name, bound] : constraint_bound_log) {
            bounds[name] = stats::log_to_pct(bound);
        }
        out["constraint_bound_pct"] = std::move(bounds);
    }
    return out;
}

double InstrumentBias::constraint_bound(const std::string& name) const {
    const auto found = constraint_bound_log.find(name);
    return found == constraint_bound_log.end() ? 0.0 : found->second;
}

Json ConstraintJudgement::to_json() const {
    Json per_case = Json::array();
    for (const auto& c : cases) {
        per_case.push_back(Json{{"case_id", c.case_id},
                                {"status", stats::constraint_status_name(c.status)},
                                {"estimate", c.estimate.to_json()}});
    }
    Json out{{"estimate", pooled.to_json()},
             {"pooled_status", stats::constraint_status_name(pooled_status)},
             {"status", stats::constraint_status_name(status)},
             {"max_regression_pct", max_regression_pct},
             {"per_case", per_case},
             {"regressed_cases", regressed_cases}};
    if (accept_per_case) {
        out["accept_per_case"] = true;
    }
    if (bias_bound_log > 0) {
        out["instrument_bias"] =
            Json{{"bound_pct", stats::log_to_pct(bias_bound_log)},
                 {"decides", bias_decides()},
                 {"status_without_bias", stats::constraint_status_name(status_without_bias)}};
    }
    return out;
}

Json IntervalCheck::to_json() const {
    return Json{{"biased", biased},
                {"bias_bound_pct", stats::log_to_pct(bound_log)},
                {"biased_scopes", biased_scopes},
                {"intervals", intervals}};
}

Json InstrumentCheck::to_json() const {
    Json out{{"biased", biased},
             {"bias_bound_pct", stats::log_to_pct(bound_log)},
             {"biased_scopes", biased_scopes},
             {"intervals", intervals},
             {"statement", statement}};
    if (!constraints.empty()) {
        Json by_name = Json::object();
        for (const auto& [name, c] : constraints) {
            by_name[name] = c.to_json();
        }
        out["constraints"] = std::move(by_name);
    }
    return out;
}

namespace {

// One metric's A/A intervals: biased when one of them, pooled or of a case, excludes zero.
IntervalCheck check_intervals(const AaEstimates& aa) {
    IntervalCheck check;
    const auto look_at = [&](const std::string& scope, const stats::PairedEstimate& e) {
        const bool usable = e.n > 0 && e.confidence_reached();
        const bool excludes_zero = usable && (e.ci_low > 0 || e.ci_high < 0);
        const auto pct = [](double x) {
            return std::isfinite(x) ? Json(stats::log_to_pct(x)) : Json(nullptr);
        };
        check.intervals.push_back(Json{{"scope", scope},
                                       {"estimate_pct", pct(e.hl)},
                                       {"ci_low_pct", pct(e.ci_low)},
                                       {"ci_high_pct", pct(e.ci_high)},
                                       {"excludes_zero", excludes_zero}});
        if (excludes_zero) {
            check.biased = true;
            check.biased_scopes.push_back(scope);
            check.bound_log =
                std::max({check.bound_log, std::fabs(e.ci_low), std::fabs(e.ci_high)});
        }
    };
    look_at("pooled", aa.pooled);
    if (aa.cases.size() > 1) {
        for (const auto& [id, e] : aa.cases) {
            look_at(id, e);
        }
    }
    return check;
}

std::string scopes_text(const IntervalCheck& c) {
    return fmt::format("{} interval{} exclude{} zero", fmt::join(c.biased_scopes, ", "),
                       c.biased_scopes.size() == 1 ? "" : "s",
                       c.biased_scopes.size() == 1 ? "s" : "");
}

}  // namespace

InstrumentCheck check_instrument(
    const stats::PairedEstimate& pooled,
    const std::vector<std::pair<std::string, stats::PairedEstimate>>& cases,
    const std::map<std::string, AaEstimates>& constraints) {
    const IntervalCheck primary = check_intervals(AaEstimates{pooled, cases});
    InstrumentCheck check;
    check.biased = primary.biased;
    check.bound_log = primary.bound_log;
    check.biased_scopes = primary.biased_scopes;
    check.intervals = primary.intervals;
    std::vector<std::string> parts;
    if (primary.biased) {
        parts.push_back(fmt::format(
            "biased instrument: identical code in two materialized copies differs ({}), by up to "
            "±{:.3f} %; every later verdict of the Target is read with its intervals widened by "
            "that much",
            scopes_text(primary), stats::log_to_pct(primary.bound_log)));
    }
    for (const auto& [name, aa] : constraints) {
        IntervalCheck c = check_intervals(aa);
        if (c.biased) {
            check.biased = true;
            parts.push_back(fmt::format(
                "constraint {}: identical code differs ({}), by up to ±{:.3f} %; its later "
                "statuses are read with intervals widened by that much",
                name, scopes_text(c), stats::log_to_pct(c.bound_log)));
        }
        check.constraints[name] = std::move(c);
    }
    check.statement = parts.empty() ? "the A/A intervals include zero: no instance effect resolved"
                                    : fmt::format("{}", fmt::join(parts, "; "));
    return check;
}

std::optional<InstrumentBias> carried_bias(const Json& check, std::string source) {
    if (!check.is_object() || !check.value("biased", false)) {
        return std::nullopt;
    }
    InstrumentBias bias{stats::pct_to_log(check.value("bias_bound_pct", 0.0)), std::move(source)};
    const Json constraints = check.value("constraints", Json::object());
    for (const auto& [name, c] : constraints.items()) {
        if (c.value("biased", false)) {
            bias.constraint_bound_log[name] = stats::pct_to_log(c.value("bias_bound_pct", 0.0));
        }
    }
    return bias;
}

namespace {

stats::PairedEstimate widened(stats::PairedEstimate e, double by) {
    e.ci_low -= by;
    e.ci_high += by;
    return e;
}

// Reads a constraint's estimates, widened by `by` (a carried instrument bias; 0: none): the pooled
// and per-case statuses, the regressed cases and the overall status.
void classify_constraint_estimates(ConstraintJudgement& cj, std::size_t min_pairs, double by) {
    cj.pooled_status =
        stats::classify_constraint(widened(cj.pooled, by), cj.max_regression_pct, min_pairs);
    bool all_ok = cj.pooled_status == stats::ConstraintStatus::ok;
    cj.regressed_cases.clear();
    for (CaseConstraint& cc : cj.cases) {
        cc.status =
            stats::classify_constraint(widened(cc.estimate, by), cj.max_regression_pct, min_pairs);
        all_ok = all_ok && cc.status == stats::ConstraintStatus::ok;
        if (cc.status == stats::ConstraintStatus::regressed) {
            cj.regressed_cases.push_back(cc.case_id);
        }
    }
    const bool regressed =
        cj.pooled_status == stats::ConstraintStatus::regressed || !cj.regressed_cases.empty();
    cj.status = regressed ? stats::ConstraintStatus::regressed
                : all_ok  ? stats::ConstraintStatus::ok
                          : stats::ConstraintStatus::inconclusive;
}

ConstraintJudgement judge_constraint(const JudgeInput& in, const ConstraintRule& rule,
                                     double level) {
    const auto found = in.constraint_d.find(rule.name);
    const std::vector<std::vector<double>> empty;
    const auto& rounds = found == in.constraint_d.end() ? empty : found->second;
    require_rectangular(rounds, in.case_ids.size(), "constraint " + rule.name);
    ConstraintJudgement cj;
    cj.name = rule.name;
    cj.max_regression_pct = rule.max_regression_pct;
    cj.accept_per_case = rule.accept_per_case;
    cj.pooled = stats::estimate_paired(pooled_rounds(rounds), level);
    for (std::size_t c = 0; c < in.case_ids.size(); ++c) {
        cj.cases.push_back(
            CaseConstraint{in.case_ids[c], stats::estimate_paired(column(rounds, c), level), {}});
    }
    classify_constraint_estimates(cj, in.min_pairs, 0.0);
    cj.status_without_bias = cj.status;
    // A bias this constraint's own A/A check found: its statuses must hold with it (a copy that
    // merely sits elsewhere is not a constraint regression).
    cj.bias_bound_log = in.instrument_bias ? in.instrument_bias->constraint_bound(rule.name) : 0.0;
    if (cj.bias_bound_log > 0) {
        classify_constraint_estimates(cj, in.min_pairs, cj.bias_bound_log);
    }
    return cj;
}

// Without continuous, undisturbed observation of what the claim rests on, the numbers may measure
// the disturbance: any firm verdict (improved, mixed, regressed, equivalent, below_minimum) is
// `inconclusive`, and the problems say why.
void apply_observation(Judgement& j, const std::vector<std::string>& problems) {
    j.observation_problems = problems;
    j.verdict_without_observation = j.verdict;
    if (problems.empty()) {
        return;
    }
    j.observation_decides = j.verdict != stats::Verdict::inconclusive;
    j.observation_note = fmt::format(
        "the measurement window was not observed undisturbed ({}){}", fmt::join(problems, "; "),
        j.observation_decides
            ? fmt::format(": `{}` is not concluded, the verdict is `inconclusive`",
                          stats::verdict_name(j.verdict))
            : "");
    j.verdict = stats::Verdict::inconclusive;
}

// A carried instrument bias of the primary metric: the verdict must hold with the interval widened
// by its bound, or it is `inconclusive` (a constraint's own bias is read in judge_constraint).
// Returns the bound (0: none), which the per-case intervals are widened by too.
double apply_primary_bias(Judgement& j, const JudgeInput& in) {
    const double bias = in.instrument_bias ? in.instrument_bias->bound_log : 0.0;
    const bool primary_biased = bias > 0;
    if (primary_biased) {
        j.instrument_bias = in.instrument_bias;
    }
    if (primary_biased && j.pooled_verdict != stats::Verdict::inconclusive) {
        const stats::Verdict with_bias =
            stats::classify(widened(j.deciding, bias), in.minimum_effect_pct, in.min_pairs);
        j.bias_decides = with_bias != j.pooled_verdict;
    }
    if (primary_biased) {
        j.instrument_note =
            j.bias_decides ? fmt::format(
                                 "the instrument's bias (±{:.3f} %, {}) decides this verdict: "
                                 "`{}` does not hold with the interval widened by it, so the "
                                 "verdict is `inconclusive`",
                                 stats::log_to_pct(bias), in.instrument_bias->source,
                                 stats::verdict_name(j.pooled_verdict))
                           : fmt::format(
                                 "the instrument is biased (±{:.3f} %, {}); this verdict holds "
                                 "with the interval widened by that much",
                                 stats::log_to_pct(bias), in.instrument_bias->source);
    }
    if (j.bias_decides) {
        j.verdict = stats::Verdict::inconclusive;
    }
    return bias;
}

// "constraint p99_ms regressed beyond 10% on case light" (no case named: the pooled estimate).
std::string constraint_regression_text(const ConstraintJudgement& cj) {
    return cj.regressed_cases.empty()
               ? fmt::format("constraint {} regressed beyond {}%", cj.name, cj.max_regression_pct)
               : fmt::format("constraint {} regressed beyond {}% on case{} {}", cj.name,
                             cj.max_regression_pct, cj.regressed_cases.size() == 1 ? "" : "s",
                             fmt::join(cj.regressed_cases, ", "));
}

// Each constraint judged at the deciding level; one regressed makes the verdict `regressed`. Only
// where every regressed constraint allows per-case acceptance and held pooled (acceptable()), and
// the primary alone is an improvement (`improved`, or `mixed` by its own cases), the verdict is
// `mixed`: selecting it needs each such case accepted by name.
void judge_constraints(Judgement& j, const JudgeInput& in) {
    std::vector<std::string> acceptable;
    bool refused = false;
    for (const auto& rule : in.constraints) {
        ConstraintJudgement cj = judge_constraint(in, rule, j.deciding_level);
        j.constraints[rule.name] = cj.to_json();
        if (cj.status == stats::ConstraintStatus::regressed) {
            if (cj.acceptable()) {
                acceptable.push_back(constraint_regression_text(cj));
            } else if (!refused) {
                refused = true;
                j.verdict = stats::Verdict::regressed;
                j.constraint_reason = constraint_regression_text(cj);
            }
        }
        j.constraint_judgements.push_back(std::move(cj));
    }
    if (refused || acceptable.empty()) {
        return;
    }
    const bool improvement =
        j.verdict == stats::Verdict::improved || j.verdict == stats::Verdict::mixed;
    j.verdict = improvement ? stats::Verdict::mixed : stats::Verdict::regressed;
    j.constraint_reason = fmt::format("{}{}", fmt::join(acceptable, "; "),
                                      improvement ? " (accept_per_case: selecting it needs "
                                                    "--accept-regression for each such case)"
                                                  : "");
}

// An A/A control's own intervals, the primary's and each constraint's as measured, check the
// instrument.
InstrumentCheck control_check(
    const Judgement& j, const std::vector<std::pair<std::string, stats::PairedEstimate>>& cases) {
    std::map<std::string, AaEstimates> constraint_aa;
    for (const ConstraintJudgement& cj : j.constraint_judgements) {
        AaEstimates& aa = constraint_aa[cj.name];
        aa.pooled = cj.pooled;
        for (const CaseConstraint& cc : cj.cases) {
            aa.cases.emplace_back(cc.case_id, cc.estimate);
        }
    }
    return check_instrument(j.deciding, cases, constraint_aa);
}

}  // namespace

Judgement judge_comparison(const JudgeInput& in) {
    if (in.case_ids.empty()) {
        throw Error(ErrorCode::invalid_argument, "a comparison needs at least one case");
    }
    require_rectangular(in.d, in.case_ids.size(), "d");
    Judgement j;
    j.pooled_d = pooled_rounds(in.d);
    j.nominal = stats::estimate_paired(j.pooled_d, in.confidence);
    if (in.plan) {
        const stats::LookDecision look =
            stats::sequential_look(j.pooled_d, *in.plan, in.minimum_effect_pct);
        j.looks_planned = in.plan->look_sizes().size();
        j.look = look.look;
        j.deciding = look.estimate;
        j.deciding_level = look.look == 0 ? in.confidence : look.estimate.confidence;
        j.pooled_verdict = look.look == 0 ? stats::Verdict::inconclusive : look.verdict;
    } else {
        j.deciding = j.nominal;
        j.deciding_level = in.confidence;
        j.pooled_verdict = stats::classify(j.nominal, in.minimum_effect_pct, in.min_pairs);
    }
    j.verdict = j.pooled_verdict;
    j.verdict_without_bias = j.pooled_verdict;

    const double bias = apply_primary_bias(j, in);

    // Per case, at the same level as the pooled decision: a case is regressed when its whole
    // interval, widened by any instrument bias, lies below −max(minimum effect, case tolerance).
    // A smaller slowdown is what two materialized copies of identical code may show (issue [18]).
    j.regression_threshold_pct = in.minimum_effect_pct;
    j.case_threshold_pct = std::max(in.minimum_effect_pct, in.case_regression_tolerance_pct);
    const double threshold = stats::pct_to_log(j.case_threshold_pct);
    std::vector<std::pair<std::string, stats::PairedEstimate>> case_estimates;
    for (std::size_t c = 0; c < in.case_ids.size(); ++c) {
        CaseJudgement cj;
        cj.case_id = in.case_ids[c];
        cj.estimate = stats::estimate_paired(column(in.d, c), j.deciding_level);
        cj.verdict = stats::classify(cj.estimate, in.minimum_effect_pct, in.min_pairs);
        cj.regressed = cj.estimate.n >= in.min_pairs && cj.estimate.confidence_reached() &&
                       cj.estimate.ci_high + bias < -threshold;
        if (cj.regressed) {
            j.regressed_cases.push_back(cj.case_id);
        }
        case_estimates.emplace_back(cj.case_id, cj.estimate);
        j.cases.push_back(std::move(cj));
    }
    if (in.case_ids.size() > 1 && !j.regressed_cases.empty() &&
        j.verdict == stats::Verdict::improved) {
        j.verdict = stats::Verdict::mixed;
    }
    judge_constraints(j, in);
    if (in.control) {
        j.instrument_check = control_check(j, case_estimates);
    }
    apply_observation(j, in.observation_problems);
    return j;
}

Json Judgement::to_json() const {
    Json cases_json = Json::array();
    for (const auto& c : cases) {
        Json constraint_status = Json::object();
        for (const auto& cj : constraint_judgements) {
            for (const auto& cc : cj.cases) {
                if (cc.case_id == c.case_id) {
                    constraint_status[cj.name] = stats::constraint_status_name(cc.status);
                }
            }
        }
        cases_json.push_back(Json{{"case_id", c.case_id},
                                  {"verdict", stats::verdict_name(c.verdict)},
                                  {"regressed", c.regressed},
                                  {"estimate", c.estimate.to_json()},
                                  {"constraints", constraint_status}});
    }
    Json constraint_regressions = Json::array();
    for (const auto& cj : constraint_judgements) {
        for (const auto& id : cj.regressed_cases) {
            Json r{{"case_id", id}, {"constraint", cj.name}};
            if (cj.acceptable()) {
                r["acceptable"] = true;  // by --accept-regression CASE, on a `mixed` verdict
            }
            constraint_regressions.push_back(std::move(r));
        }
    }
    Json j{{"verdict", stats::verdict_name(verdict)},
           {"pooled_verdict", stats::verdict_name(pooled_verdict)},
           {"deciding",
            {{"look", look},
             {"looks_planned", looks_planned},
             {"level", deciding_level},
             {"estimate", deciding.to_json()}}},
           {"nominal", nominal.to_json()},
           {"cases", cases_json},
           {"regressed_cases", regressed_cases},
           {"thresholds",
            {{"regression_pct", regression_threshold_pct},
             {"case_regression_pct", case_threshold_pct}}},
           {"constraints", constraints},
           {"constraint_regressions", constraint_regressions}};
    if (instrument_bias) {
        j["instrument_bias"] =
            Json{{"bound_pct", stats::log_to_pct(instrument_bias->bound_log)},
                 {"source", instrument_bias->source},
                 {"decides", bias_decides},
                 {"verdict_without_bias", stats::verdict_name(verdict_without_bias)},
                 {"note", instrument_note}};
    }
    if (instrument_check) {
        j["instrument_check"] = instrument_check->to_json();
    }
    j["observation_verdict"] =
        Json{{"problems", observation_problems},
             {"decides", observation_decides},
             {"verdict_without_observation", stats::verdict_name(verdict_without_observation)},
             {"note", observation_note}};
    return j;
}

std::string_view screen_decision_name(ScreenDecision d) noexcept {
    switch (d) {
    case ScreenDecision::rejected:
        return "rejected";
    case ScreenDecision::pass_to_confirm:
        return "pass_to_confirm";
    case ScreenDecision::needs_judgement:
        return "needs_judgement";
    default:
        return "no_decision";
    }
}

ScreenDecision screen_decision(stats::Verdict verdict, bool infrastructure_failure,
                               bool diagnostic_proxy) noexcept {
    if (infrastructure_failure) {
        return ScreenDecision::no_decision;
    }
    if (verdict == stats::Verdict::invalid) {
        return ScreenDecision::rejected;
    }
    const bool negative = verdict == stats::Verdict::regressed ||
                          verdict == stats::Verdict::below_minimum ||
                          verdict == stats::Verdict::equivalent;
    if (diagnostic_proxy) {
        return ScreenDecision::pass_to_confirm;
    }
    if (negative) {
        return ScreenDecision::rejected;
    }
    return verdict == stats::Verdict::inconclusive ? ScreenDecision::needs_judgement
                                                   : ScreenDecision::pass_to_confirm;
}

std::string describe_effect(double d, stats::Direction direction, const std::string& metric) {
    if (!std::isfinite(d)) {
        return "no estimate";
    }
    // d = ln(reference/candidate) for lower-is-better, ln(candidate/reference) for higher.
    const double change_pct =
        100.0 * (std::exp(direction == stats::Direction::lower ? -d : d) - 1.0);
    const double factor = std::exp(std::fabs(d));
    if (direction == stats::Direction::lower) {
        return fmt::format("{:.2f}× {} ({:+.1f} % {})", factor, d >= 0 ? "faster" : "slower",
                           change_pct, metric);
    }
    return fmt::format("{:.2f}× {} {} ({:+.1f} %)", factor, d >= 0 ? "higher" : "lower", metric,
                       change_pct);
}

}  // namespace cko::eval
