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

bool at_look(const stats::SequentialPlan& plan, std::size_t rounds) {
    const auto sizes = plan.look_sizes();
    return std::find(sizes.begin(), sizes.end(), rounds) != sizes.end();
}

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

    // Per case, at the same level as the pooled decision: a case is regressed when its whole
    // interval lies below −tolerance.
    const double tolerance = stats::pct_to_log(in.case_regression_tolerance_pct);
    for (std::size_t c = 0; c < in.case_ids.size(); ++c) {
        CaseJudgement cj;
        cj.case_id = in.case_ids[c];
        cj.estimate = stats::estimate_paired(column(in.d, c), j.deciding_level);
        cj.verdict = stats::classify(cj.estimate, in.minimum_effect_pct, in.min_pairs);
        cj.regressed = cj.estimate.n >= in.min_pairs && cj.estimate.confidence_reached() &&
                       cj.estimate.ci_high < -tolerance;
        if (cj.regressed) {
            j.regressed_cases.push_back(cj.case_id);
        }
        j.cases.push_back(std::move(cj));
    }
    if (in.case_ids.size() > 1 && !j.regressed_cases.empty() &&
        j.verdict == stats::Verdict::improved) {
        j.verdict = stats::Verdict::mixed;
    }

    for (const auto& rule : in.constraints) {
        const auto found = in.constraint_d.find(rule.name);
        const std::vector<std::vector<double>> empty;
        const auto& rounds = found == in.constraint_d.end() ? empty : found->second;
        require_rectangular(rounds, in.case_ids.size(), "constraint " + rule.name);
        const auto est = stats::estimate_paired(pooled_rounds(rounds), in.confidence);
        const auto status = stats::classify_constraint(est, rule.max_regression_pct, in.min_pairs);
        j.constraints[rule.name] = Json{{"estimate", est.to_json()},
                                        {"status", stats::constraint_status_name(status)},
                                        {"max_regression_pct", rule.max_regression_pct}};
        if (status == stats::ConstraintStatus::regressed) {
            j.verdict = stats::Verdict::regressed;
            if (j.constraint_reason.empty()) {
                j.constraint_reason = fmt::format("constraint {} regressed beyond {}%", rule.name,
                                                  rule.max_regression_pct);
            }
        }
    }
    return j;
}

Json Judgement::to_json() const {
    Json cases_json = Json::array();
    for (const auto& c : cases) {
        cases_json.push_back(Json{{"case_id", c.case_id},
                                  {"verdict", stats::verdict_name(c.verdict)},
                                  {"regressed", c.regressed},
                                  {"estimate", c.estimate.to_json()}});
    }
    return Json{{"verdict", stats::verdict_name(verdict)},
                {"pooled_verdict", stats::verdict_name(pooled_verdict)},
                {"deciding",
                 {{"look", look},
                  {"looks_planned", looks_planned},
                  {"level", deciding_level},
                  {"estimate", deciding.to_json()}}},
                {"nominal", nominal.to_json()},
                {"cases", cases_json},
                {"regressed_cases", regressed_cases},
                {"constraints", constraints}};
}

std::string_view screen_decision_name(ScreenDecision d) noexcept {
    switch (d) {
    case ScreenDecision::rejected:
        return "rejected";
    case ScreenDecision::pass_to_confirm:
        return "pass_to_confirm";
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
    return negative && !diagnostic_proxy ? ScreenDecision::rejected
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
