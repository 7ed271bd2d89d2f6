// Resolution from A/A runs: the MDE formula by hand, pairs needed, and the plain sentence.
#include "cko/stats/resolution.hpp"

#include "cko/stats/descriptive.hpp"
#include "cko/stats/paired_estimate.hpp"
#include "cko/util/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

namespace cko::stats {
namespace {

// A/A differences with a known spread: a symmetric, evenly spaced grid times `scale`.
std::vector<double> aa_grid(std::size_t n, double scale) {
    std::vector<double> d;
    for (std::size_t i = 0; i < n; ++i) {
        d.push_back(scale * (static_cast<double>(i) - static_cast<double>(n - 1) / 2.0));
    }
    return d;
}

TEST(MinimumDetectableEffect, FollowsTheFormulaByHand) {
    // (1.959964 + 0.841621) · 0.005 · √(π/3) / √20 = 2.801585 · 0.005 · 1.023327 / 4.472136
    //  = 0.0032053 (log units).
    EXPECT_NEAR(minimum_detectable_effect(0.005, 20, 0.95), 0.0032053, 1e-7);
    // Quadrupling the pairs halves it.
    EXPECT_NEAR(minimum_detectable_effect(0.005, 80, 0.95),
                minimum_detectable_effect(0.005, 20, 0.95) / 2.0, 1e-15);
}

TEST(SmallestResolvingPairs, IsWhereTheExactIntervalCanFirstReachTheLevel) {
    EXPECT_EQ(smallest_resolving_pairs(0.95), 6u);  // 2/64 ≤ 0.05 < 2/32
    EXPECT_EQ(smallest_resolving_pairs(0.99), 8u);  // 2/256 ≤ 0.01 < 2/128
}

TEST(ResolutionFromAa, ReportsNoiseMdeAndPairsNeededForTheMinimumEffect) {
    const std::vector<double> d = aa_grid(21, 0.0005);  // −0.5 % … +0.5 %
    const Resolution r = resolution_from_aa(d, 0.95, 0.5, 40);
    EXPECT_EQ(r.n, 21u);
    EXPECT_NEAR(r.noise_sd, sample_sd(d), 1e-15);
    // By hand: median 0, |d| sorted → the 11th is 0.0025, so robust SD = 1.4826 · 0.0025.
    EXPECT_NEAR(r.noise_robust_sd, 1.4826 * 0.0025, 1e-15);
    const double sigma = 1.4826 * 0.0025;
    EXPECT_NEAR(r.mde_pct, log_to_pct(minimum_detectable_effect(sigma, 21, 0.95)), 1e-12);
    // pairs = ⌈(2.801585 · 0.0037065 · 1.023327 / ln 1.005)²⌉ = ⌈(2.13065)²⌉ = ⌈4.5397⌉ = 5,
    // raised to 6, the fewest pairs that can reach 95 % at all.
    EXPECT_EQ(r.pairs_needed, 6u);
    EXPECT_TRUE(r.resolvable);
    EXPECT_NE(r.statement.find("within max_pairs 40"), std::string::npos) << r.statement;
    EXPECT_EQ(r.to_json()["pairs_needed"], 6);
}

TEST(ResolutionFromAa, FlagsAMinimumEffectBelowWhatMaxPairsCanResolve) {
    // 2 % noise and a 0.5 % minimum effect: (2.801585 · 0.02 · 1.0233 / 0.0049875)² ≈ 132 pairs
    // at least (the robust SD of this grid is larger still), far above 40.
    const Resolution r = resolution_from_aa(aa_grid(20, 0.002), 0.95, 0.5, 40);
    EXPECT_FALSE(r.resolvable);
    EXPECT_GT(r.pairs_needed, 40u);
    EXPECT_GT(r.mde_pct_at_max_pairs, 0.5);
    EXPECT_NE(r.statement.find("below what max_pairs 40 can resolve"), std::string::npos)
        << r.statement;
}

TEST(ResolutionFromAa, FallsBackToThePlainSdWhenTheMadIsZero) {
    // Most pairs identical (timer granularity), two that differ: MAD 0, SD not.
    std::vector<double> d(10, 0.0);
    d[3] = 0.004;
    d[7] = -0.004;
    const Resolution r = resolution_from_aa(d, 0.95, 0.5, 40);
    EXPECT_EQ(r.noise_robust_sd, 0.0);
    EXPECT_NEAR(r.mde_pct, log_to_pct(minimum_detectable_effect(r.noise_sd, 10, 0.95)), 1e-12);
    EXPECT_NE(r.statement.find("the MAD is 0"), std::string::npos) << r.statement;
}

TEST(ResolutionFromAa, RefusesInputsItCannotJudge) {
    EXPECT_THROW((void)resolution_from_aa(std::vector<double>{0.001}, 0.95, 0.5, 40), Error);
    EXPECT_THROW((void)resolution_from_aa(aa_grid(10, 0.001), 0.95, 0.0, 40), Error);
    EXPECT_THROW((void)resolution_from_aa(aa_grid(10, 0.001), 1.5, 0.5, 40), Error);
    EXPECT_THROW((void)resolution_from_aa(aa_grid(10, 0.001), 0.95, 0.5, 0), Error);
}

}  // namespace
}  // namespace cko::stats
