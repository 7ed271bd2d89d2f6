// Judging a comparison: the pure rule from measured rounds to per-case and overall verdicts.
#pragma once

#include "cko/stats/stats.hpp"
#include "cko/util/json.hpp"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cko::eval {

// What a comparison measured and the rule it was pre-registered with. A *pair* is one round: for
// every case, one reference and one candidate measurement. d[r][c] is the signed log ratio of
// round r and case c (positive = candidate better), so every case has the same number of pairs
// by construction.
struct ConstraintRule {
    std::string name;
    double max_regression_pct = 0;
    bool accept_per_case = false;  // the spec's key: a per-case regression may be accepted by name
};

// What an earlier A/A check of this Target (the baseline's, or an A/A control's) found: identical
// code in two separately materialized copies whose interval excluded zero. The sign of such an
// instance effect (placement, build) does not carry over to other copies, so its size does: every
// later interval is read as if it could be off by ±bound.
// A constraint's metric gets its own bound from its own A/A intervals (a copy placed differently
// may use more memory without running slower): one bias is never read into another metric.
struct InstrumentBias {
    double bound_log = 0;  // the primary's: the far end of its biased A/A interval (0: unbiased)
    std::string source;    // "baseline inv-…" or "confirm inv-… of control exp-…"
    std::map<std::string, double> constraint_bound_log{};  // name -> the same, of that constraint
    [[nodiscard]] Json to_json() const;
    [[nodiscard]] double constraint_bound(const std::string& name) const;
};

struct JudgeInput {
    std::vector<std::string> case_ids;
    std::vector<std::vector<double>> d;                                    // [round][case]
    std::map<std::string, std::vector<std::vector<double>>> constraint_d;  // name -> [round][case]
    std::vector<ConstraintRule> constraints;
    double minimum_effect_pct = 0;
    // A case counts as regressed only beyond the larger of this and the minimum effect.
    double case_regression_tolerance_pct = 0;
    std::size_t min_pairs = 6;
    double confidence = 0.95;
    std::optional<stats::SequentialPlan> plan;      // set: the verdict is taken at the plan's look
    std::optional<InstrumentBias> instrument_bias;  // from the Target's latest A/A check
    bool control = false;  // an A/A control: its own intervals check the instrument
    // Why the measurement window was not observed or was disturbed (env::observation_problems):
    // with any, no performance conclusion is drawn and a firm verdict becomes `inconclusive`.
    std::vector<std::string> observation_problems;
};

struct CaseJudgement {
    std::string case_id;
    stats::PairedEstimate estimate;  // at the deciding level
    stats::Verdict verdict = stats::Verdict::inconclusive;
    bool regressed = false;  // beyond the case threshold (and the instrument bias)
};

// One constraint on one case, at the deciding level.
struct CaseConstraint {
    std::string case_id;
    stats::PairedEstimate estimate;  // as measured; the status reads it widened by any bias
    stats::ConstraintStatus status = stats::ConstraintStatus::inconclusive;
};

// A constraint holds on every case, not only on the pooled estimate: a p99 latency 3.8× worse
// under light load is not made good by being 5× better under heavy load.
struct ConstraintJudgement {
    std::string name;
    double max_regression_pct = 0;
    bool accept_per_case = false;
    stats::PairedEstimate pooled;  // at the deciding level, equal case weights
    stats::ConstraintStatus pooled_status = stats::ConstraintStatus::inconclusive;
    // regressed if pooled or any case regressed; ok if pooled and every case ok; else inconclusive
    stats::ConstraintStatus status = stats::ConstraintStatus::inconclusive;
    std::vector<CaseConstraint> cases;
    std::vector<std::string> regressed_cases;
    // The carried instrument bias of this constraint's metric (0: none): every status above is
    // read from intervals widened by it; status_without_bias is what the bare intervals said.
    double bias_bound_log = 0;
    stats::ConstraintStatus status_without_bias = stats::ConstraintStatus::inconclusive;
    [[nodiscard]] bool bias_decides() const {
        return bias_bound_log > 0 && status != status_without_bias;
    }
    // Regressed on some cases while the pooled estimate is not, and the Target allows accepting
    // that per case: an improvement is then `mixed`, not `regressed`.
    [[nodiscard]] bool acceptable() const {
        return accept_per_case && status == stats::ConstraintStatus::regressed &&
               pooled_status != stats::ConstraintStatus::regressed && !regressed_cases.empty();
    }
    [[nodiscard]] Json to_json() const;
};

// One metric's A/A intervals of identical code, pooled and per case (the case ids).
struct AaEstimates {
    stats::PairedEstimate pooled;
    std::vector<std::pair<std::string, stats::PairedEstimate>> cases;  // empty for one case
};

// One metric's check: an interval that excludes zero shows that two materialized copies of the
// same code differ on it.
struct IntervalCheck {
    bool biased = false;
    double bound_log = 0;                    // largest |end| of an interval that excludes zero
    std::vector<std::string> biased_scopes;  // "pooled" and/or case ids
    Json intervals = Json::array();
    [[nodiscard]] Json to_json() const;
};

// An A/A check: the primary metric's intervals and each constraint's. Any that excludes zero makes
// the instrument biased, for that metric.
struct InstrumentCheck {
    bool biased = false;   // the primary or any constraint
    double bound_log = 0;  // the primary's bound (0 when only a constraint is biased)
    std::vector<std::string> biased_scopes;  // the primary's
    std::string statement;
    Json intervals = Json::array();                    // the primary's
    std::map<std::string, IntervalCheck> constraints;  // name -> its own check
    [[nodiscard]] Json to_json() const;
};
[[nodiscard]] InstrumentCheck check_instrument(
    const stats::PairedEstimate& pooled,
    const std::vector<std::pair<std::string, stats::PairedEstimate>>& cases,
    const std::map<std::string, AaEstimates>& constraints = {});
// The bias a recorded check (InstrumentCheck::to_json) carries; none when it found none.
[[nodiscard]] std::optional<InstrumentBias> carried_bias(const Json& check, std::string source);

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
    double regression_threshold_pct = 0;  // overall: the minimum effect
    double case_threshold_pct = 0;        // per case: max(minimum effect, case tolerance)
    std::vector<ConstraintJudgement> constraint_judgements;
    Json constraints = Json::object();  // name -> ConstraintJudgement::to_json()
    std::string constraint_reason;      // non-empty when a constraint regressed
    // The carried instrument bias: what it is, and whether it decided (then `inconclusive`).
    std::optional<InstrumentBias> instrument_bias;
    bool bias_decides = false;
    stats::Verdict verdict_without_bias = stats::Verdict::inconclusive;
    std::string instrument_note;
    std::optional<InstrumentCheck> instrument_check;  // controls only
    // The observation rule: the window's problems and whether they turned a firm verdict into
    // `inconclusive` (verdict_without_observation keeps what the numbers alone said).
    std::vector<std::string> observation_problems;
    bool observation_decides = false;
    stats::Verdict verdict_without_observation = stats::Verdict::inconclusive;
    std::string observation_note;
    [[nodiscard]] Json to_json() const;
};

// Per round, the mean of d over the cases (every case weighs the same; the round, not the
// round-case unit, is the independent unit because cases of one round share the machine state).
[[nodiscard]] std::vector<double> pooled_rounds(const std::vector<std::vector<double>>& d);

// The cases a `mixed` result (its outputs, or a history entry) must have accepted by name to be
// selected: the primary metric's regressed cases, then each case of an acceptable constraint
// regression (`constraint_regressions[].acceptable`), each once.
[[nodiscard]] std::vector<std::string> cases_to_accept(const Json& outputs);

// True when the rounds so far sit at one of the plan's looks (the comparison may stop there).
[[nodiscard]] bool at_look(const stats::SequentialPlan& plan, std::size_t rounds);

// The rule: pooled verdict at the deciding level (the sequential look's, or the nominal one),
// per-case verdicts at the same level, constraints per case and pooled (a constraint regressed on
// any case makes the verdict `regressed`, except that an improvement whose only constraint
// regressions are acceptable ones, ConstraintJudgement::acceptable, is `mixed`), and never a plain
// `improved` while a case regressed beyond max(minimum effect, case tolerance) (`mixed`, naming
// them). A carried instrument bias widens every interval by its bound; where that changes the
// pooled verdict, `inconclusive`. A window that was not observed, or was disturbed
// (input.observation_problems), gives no firm verdict: `inconclusive`, naming why. Throws
// invalid_argument for ragged input.
[[nodiscard]] Judgement judge_comparison(const JudgeInput& input);

// A screen may reject, never select. Infrastructure failures decide nothing about the candidate;
// a diagnostic-proxy screen never rejects on performance alone. An `inconclusive` screen (not a
// proxy) passes nothing on: the decision maker judges whether a confirm is worth its cost.
enum class ScreenDecision { rejected, pass_to_confirm, needs_judgement, no_decision };
[[nodiscard]] std::string_view screen_decision_name(ScreenDecision d) noexcept;
[[nodiscard]] ScreenDecision screen_decision(stats::Verdict verdict, bool infrastructure_failure,
                                             bool diagnostic_proxy) noexcept;

// "2.58× faster (−61.3 % latency_us)" for a log ratio d of a metric with this direction.
[[nodiscard]] std::string describe_effect(double d, stats::Direction direction,
                                          const std::string& metric);

}  // namespace cko::eval
