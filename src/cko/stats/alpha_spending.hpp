// Group-sequential boundaries from an alpha-spending function (Lan–DeMets), for repeated
// confidence intervals at pre-registered looks.
#pragma once

#include <span>
#include <vector>

namespace cko::stats {

// Lan–DeMets O'Brien–Fleming-type spending, two-sided: α(t) = 2 − 2Φ(z_{1−α/2} / √t).
// Spends almost nothing early (t = 0.2 of α = 0.05: 1.2e-5) and nearly all α at the end.
[[nodiscard]] double obrien_fleming_spending(double information_fraction, double alpha);

// Two-sided symmetric boundaries c_1..c_K for standardized statistics Z_k observed at
// information fractions t_1 < … < t_K ≤ 1 with the canonical joint distribution
// (Brownian motion: Cov(Z_j, Z_k) = √(t_j/t_k)), such that under the null hypothesis
// P(first |Z_k| ≥ c_k happens at look k) = cumulative_alpha[k] − cumulative_alpha[k−1].
// Computed by the Armitage–McPherson–Rowe recursion: the density of the score on the continuation
// region is carried from look to look by Simpson integration on a grid, and each c_k is found by
// bisection. A look that spends nothing gets c_k = +∞.
[[nodiscard]] std::vector<double> group_sequential_boundaries(
    std::span<const double> information_fractions, std::span<const double> cumulative_alpha);

}  // namespace cko::stats
