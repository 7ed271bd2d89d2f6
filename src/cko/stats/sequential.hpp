// Sequential paired comparison: blocks of pairs, pre-registered looks, Lan–DeMets
// O'Brien–Fleming alpha spending, stop as soon as the verdict is decided.
#pragma once

#include "cko/stats/paired_estimate.hpp"
#include "cko/stats/verdict.hpp"
#include "cko/util/json.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace cko::stats {

// Looks happen after every block whose running total is at least min_pairs, and always at
// max_pairs (the final look; a shorter last block if max_pairs is not a multiple of block).
// Defaults: looks at 8, 12, …, 40 pairs (9 looks).
//
// Each look k uses a repeated confidence interval at level look_confidence()[k] = 2Φ(c_k) − 1,
// where c_k are the two-sided group-sequential boundaries for the Lan–DeMets O'Brien–Fleming
// spending function α(t) = 2 − 2Φ(z_{1−α/2}/√t) at information fraction t_k = n_k / max_pairs,
// α = 1 − confidence. Under the normal approximation of the signed-rank statistic the intervals
// of all looks cover the true effect simultaneously with probability ≥ confidence, so any verdict
// taken at any look keeps the fixed-sample error rate.
struct SequentialPlan {
    std::size_t block = 4;
    std::size_t min_pairs = 6;
    std::size_t max_pairs = 40;
    double confidence = 0.95;

    // Pair counts at which looks happen, ascending; the last is max_pairs.
    [[nodiscard]] std::vector<std::size_t> look_sizes() const;
    // The interval confidence to use at each look (same order as look_sizes()).
    [[nodiscard]] std::vector<double> look_confidence() const;
    // Throws invalid_argument for block 0, min_pairs 0, max_pairs < min_pairs, more than
    // kMaxLooks looks, or a confidence outside (0.5, 1).
    void validate() const;
    // The pre-registration record: parameters, spending function and every look's level.
    [[nodiscard]] Json to_json() const;

    static constexpr std::size_t kMaxLooks = 200;
};

struct LookDecision {
    bool stop = false;
    Verdict verdict = Verdict::inconclusive;
    PairedEstimate estimate;  // at the look's confidence (the plan's confidence off-schedule)
    std::size_t look = 0;     // 1-based look index; 0 when d_so_far is not at a scheduled look
    [[nodiscard]] Json to_json() const;
};

// Call after each block with every d so far. At a scheduled look: classify at the look's
// confidence (min_pairs of the plan); stop on improved, regressed, equivalent or below_minimum,
// and always at max_pairs (then the verdict may be inconclusive). Between looks (for instance the
// first block when it is below min_pairs): no decision, stop = false, look = 0. Throws
// invalid_argument when d_so_far holds more than max_pairs values.
[[nodiscard]] LookDecision sequential_look(std::span<const double> d_so_far,
                                           const SequentialPlan& plan, double min_effect_pct);

}  // namespace cko::stats
