// Measurement resolution from an A/A run (original vs original): noise of d, minimum detectable
// effect, pairs needed for the minimum effect.
#pragma once

#include "cko/util/json.hpp"

#include <cstddef>
#include <span>
#include <string>

namespace cko::stats {

// Power used for the minimum detectable effect (the conventional 80 %).
inline constexpr double kResolutionPower = 0.80;

// Noise σ: the robust SD of d (1.4826·MAD), or the plain SD when the MAD is 0 (heavily tied d).
// The robust SD matches the rank-based estimator, which an outlier moves as little as it moves
// the MAD. Minimum detectable effect for n pairs, in log units:
//     mde(n) = (z_{1−α/2} + z_{power}) · σ · √(π/3) / √n
// where √(π/3) is the standard-error inflation of Hodges–Lehmann over the mean under normal
// noise (asymptotic relative efficiency 3/π). pairs_needed is the smallest n with mde(n) ≤ m
// (m = ln(1 + min_effect_pct/100)), and never below the smallest n whose exact Wilcoxon interval
// can reach the confidence at all (6 pairs at 95 %).
struct Resolution {
    std::size_t n = 0;                  // A/A pairs
    double noise_sd = 0.0;              // plain SD of d (log units)
    double noise_robust_sd = 0.0;       // 1.4826·MAD of d (log units)
    double mde_pct = 0.0;               // minimum detectable effect at n pairs
    double mde_pct_at_max_pairs = 0.0;  // … and at max_pairs
    std::size_t pairs_needed = 0;       // to resolve min_effect_pct
    bool resolvable = false;            // pairs_needed ≤ max_pairs
    double confidence = 0.95;
    double min_effect_pct = 0.0;
    std::size_t max_pairs = 0;
    std::string statement;  // one plain sentence for people
    [[nodiscard]] Json to_json() const;
};

// Throws invalid_argument with fewer than 2 A/A pairs, a non-finite d, a confidence outside
// (0.5, 1), a min_effect_pct that is not > 0, or max_pairs 0.
[[nodiscard]] Resolution resolution_from_aa(std::span<const double> d_aa, double confidence,
                                            double min_effect_pct, std::size_t max_pairs);

// (z_{1−α/2} + z_{power}) · σ · √(π/3) / √n, the formula above, in log units.
[[nodiscard]] double minimum_detectable_effect(double noise_sd, std::size_t pairs,
                                               double confidence);

// Smallest n for which the exact signed-rank interval can have the confidence: 2·2⁻ⁿ ≤ 1 − c.
[[nodiscard]] std::size_t smallest_resolving_pairs(double confidence);

}  // namespace cko::stats
