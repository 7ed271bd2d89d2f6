// Rank machinery for one sample of paired differences: the signed-rank null distribution, Walsh
// averages, the Hodges–Lehmann estimate and the Wilcoxon and sign-test confidence intervals.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace cko::stats {

// Largest sample size that takes the exact signed-rank distribution; from 50 pairs on, or when
// two differences are equal, the interval uses the normal approximation (R's wilcox.test rule).
inline constexpr std::size_t kExactSignedRankLimit = 49;

// P(T⁺ = t) for t = 0 .. n(n+1)/2 under the null hypothesis (n untied, nonzero differences, each
// sign equally likely): the coefficients of ∏(1 + x^k)/2, built by dynamic programming.
[[nodiscard]] std::vector<double> signed_rank_null_pmf(std::size_t n);

// The k-th smallest (1-based) of the n(n+1)/2 Walsh averages (d_i + d_j)/2, i ≤ j, of an ascending
// sample, found without materialising them: a bisection over the ordered doubles whose count of
// Walsh averages ≤ x is taken in O(n) by two pointers (64 steps at most).
[[nodiscard]] double walsh_average_order_statistic(std::span<const double> sorted, std::size_t k);

// Median of the Walsh averages (the Hodges–Lehmann estimate of the pseudo-median).
[[nodiscard]] double hodges_lehmann(std::span<const double> sorted);

// A distribution-free interval [low, high] with the confidence it really has (discrete
// distributions rarely hit the requested level; it is at least the requested one unless n is
// too small, in which case the widest interval the data allow is returned).
struct RankInterval {
    double low = 0.0;
    double high = 0.0;
    double achieved_confidence = 0.0;
    bool exact = true;      // exact null distribution (false: normal approximation)
    std::size_t depth = 0;  // the interval is the depth-th order statistic from each end
};

// Wilcoxon signed-rank interval by test inversion: [W_(k), W_(M+1−k)] over the M sorted Walsh
// averages. Exact (k = qsignrank(α/2, n), as R's wilcox.test) for n ≤ kExactSignedRankLimit with
// no tied differences; otherwise k = ⌊M/2 − z·σ + ½⌋ with the tie-corrected
// σ² = n(n+1)(2n+1)/24 − Σ(t³ − t)/48 over groups of t equal differences. Zeros need no special
// care: the interval never tests at 0. Input must be sorted ascending and non-empty.
[[nodiscard]] RankInterval wilcoxon_signed_rank_interval(std::span<const double> sorted,
                                                         double confidence);

// Sign-test (binomial order statistic) interval for the median: [d_(k), d_(n+1−k)] with k the
// smallest count whose Binomial(n, ½) CDF reaches α/2. Exact for every n.
[[nodiscard]] RankInterval sign_test_interval(std::span<const double> sorted, double confidence);

}  // namespace cko::stats
