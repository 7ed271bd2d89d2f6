// Judging a comparison: the pure rule from measured rounds to per-case and overall verdicts.
#pragma once

#include "cko/stats/stats.hpp"
#include "cko/util/json.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cko::eval {

// What a comparison measured and the rule it was pre-registered with. A *pair* is one round: for
// every case, one reference and one candidate measurement. d[r][c] is the signed log ratio of
// round r and case c (positive = candidate better), so every case has the same number of pairs
// by construction.
struct ConstraintRule {
    std::string name;
    double max_regression_pct = 0;
};

struct JudgeInput {
    std::vector<std::string> case_ids;
    std::vector<std::vector<double>> d;                                    // [round][case]
    std::map<std::string, std::vector<std::vector<double>>> constraint_d;  // name -> [round][case]
    std::vector<ConstraintRule> constraints;
    double minimum_effect_pct = 0;
    double case_regression_tolerance_pct = 0;  // a case counts as regressed only beyond this
    std::size_t min_pairs = 6;
    double confidence = 0.95;
    std::optional<stats::SequentialPlan> plan;  // set: the verdict is taken at the plan's look
};

struct CaseJudgement {
    std::string case_id;
    stats::PairedEstimate estimate;  // at the deciding level
    stats::Verdict verdict = stats::Verdict::inconclusive;
    bool regressed = false;  // beyond the case tolerance
};

struct Judgement {
    stats::Verdict verdict = stats::Verdict::inconclusive;  // overall; `mixed` if a case regressed
    stats::Verdict pooled_verdict = stats::Verdict::inconclusive;  // the pooled rule alone
    stats::PairedEstimate deciding;  // the interval that decided (the look's repeated interval)
    double deciding_level = 0.95;
    std::size_t look = 0;  // 1-based sequential look; 0 for a fixed-size comparison
    std::size_t looks_planned = 0;
    stats::PairedEstimate nominal;  // at the Target's confidence, for reference only
    std::vector<double> pooled_d;   // per round, equal case weights
    std::vector<CaseJudgement> cases;
    std::vector<std::string> regressed_cases;
    Json constraints = Json::object();
    std::string constraint_reason;  // non-empty when a constraint regressed
    [[nodiscard]] Json to_json() const;
};

// Per round, the mean of d over the cases (every case weighs the same; the round, not the
// round-case unit, is the independent unit because cases of one round share the machine state).
[[nodiscard]] std::vector<double> pooled_rounds(const std::vector<std::vector<double>>& d);

// True when the rounds so far sit at one of the plan's looks (the comparison may stop there).
[[nodiscard]] bool at_look(const stats::SequentialPlan& plan, std::size_t rounds);

// The rule: pooled verdict at the deciding level (the sequential look's, or the nominal one),
// per-case verdicts at the same level, constraints (a regressed constraint makes the verdict
// `regressed`), and never a plain `improved` while a case regressed (`mixed`, naming them).
// Throws invalid_argument for ragged input.
[[nodiscard]] Judgement judge_comparison(const JudgeInput& input);

// A screen may reject, never select. Infrastructure failures decide nothing about the candidate;
// a diagnostic-proxy screen never rejects on performance alone.
enum class ScreenDecision { rejected, pass_to_confirm, no_decision };
[[nodiscard]] std::string_view screen_decision_name(ScreenDecision d) noexcept;
[[nodiscard]] ScreenDecision screen_decision(stats::Verdict verdict, bool infrastructure_failure,
                                             bool diagnostic_proxy) noexcept;

// "2.58× faster (−61.3 % latency_us)" for a log ratio d of a metric with this direction.
[[nodiscard]] std::string describe_effect(double d, stats::Direction direction,
                                          const std::string& metric);

}  // namespace cko::eval
