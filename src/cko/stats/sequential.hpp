// Sequential paired comparison: blocks of pairs, pre-registered looks, Lan–DeMets alpha spending
// (Pocock-type from the first look an exact test can decide at, or O'Brien–Fleming-type), stop as
// soon as the verdict is decided.
#pragma once

#include "cko/stats/paired_estimate.hpp"
#include "cko/stats/verdict.hpp"
#include "cko/util/json.hpp"

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace cko::stats {

// The alpha-spending function of a plan (one closed enum; JSON spelling in spending_name()).
enum class Spending {
    // Lan–DeMets O'Brien–Fleming-type: α(t) = 2 − 2Φ(z_{1−α/2}/√t). Spends almost nothing early:
    // with exact signed-rank intervals nothing can stop before ~14 pairs of 40.
    obrien_fleming,
    // Lan–DeMets Pocock-type: α(t) = α·ln(1 + (e − 1)·t). Spends early, so a large effect stops at
    // the first look; the last look's level is stricter (≈ 98.8 % instead of ≈ 97.0 % at 40 pairs).
    pocock,
};
[[nodiscard]] std::string_view spending_name(Spending s) noexcept;
// Cumulative two-sided alpha spent by information fraction t (0 at t ≤ 0, alpha at t ≥ 1).
[[nodiscard]] double spent_alpha(Spending s, double information_fraction, double alpha);
// The smallest two-sided p-value an exact signed-rank (or sign) test reaches with n pairs: 2/2^n.
[[nodiscard]] double smallest_exact_p(std::size_t n);

// Looks happen after every block whose running total is at least min_pairs, and always at
// max_pairs (the final look; a shorter last block if max_pairs is not a multiple of block). With
// `exact_first_look`, block sizes at which the spending function has not yet spent the smallest
// exact p-value (so that even n pairs of one sign could not decide) are not looks: the first look
// is the first size at which an exact decision is attainable. Defaults (the legacy plan): block 4,
// O'Brien–Fleming, looks at 8, 12, …, 40 pairs (9 looks). What comparisons run: early_decision().
//
// Each look k uses a repeated confidence interval at level look_confidence()[k] = 2Φ(c_k) − 1,
// where c_k are the two-sided group-sequential boundaries for the spending function at
// information fraction t_k = n_k / max_pairs, α = 1 − confidence. Under the normal approximation
// of the signed-rank statistic the intervals of all looks cover the true effect simultaneously
// with probability ≥ confidence, so any verdict taken at any look keeps the fixed-sample error
// rate.
struct SequentialPlan {
    std::size_t block = 4;
    std::size_t min_pairs = 6;
    std::size_t max_pairs = 40;
    double confidence = 0.95;
    Spending spending = Spending::obrien_fleming;
    bool exact_first_look = false;

    // The plan screen/confirm/audit run: block 2, Pocock-type spending, first look where an exact
    // decision is attainable (8 pairs for 6..40 at 95 %). docs/statistics.md §5 says why.
    [[nodiscard]] static SequentialPlan early_decision(std::size_t min_pairs, std::size_t max_pairs,
                                                       double confidence);

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
