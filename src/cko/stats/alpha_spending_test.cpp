// Group-sequential boundaries against published tables and an independent bivariate integral.
#include "cko/stats/alpha_spending.hpp"

#include "cko/stats/normal.hpp"
#include "cko/util/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

namespace cko::stats {
namespace {

std::vector<double> spend_per_side(const std::vector<double>& t, double one_sided_alpha) {
    // A one-sided design spending f(t) on its upper side is the symmetric two-sided design
    // spending 2·f(t) (the lower boundary changes the upper crossings by < 1e-9 here).
    std::vector<double> cumulative;
    for (const double ti : t) {
        cumulative.push_back(2.0 * obrien_fleming_spending(ti, one_sided_alpha));
    }
    return cumulative;
}

TEST(ObrienFlemingSpending, SpendsAlmostNothingEarlyAndEverythingAtTheEnd) {
    EXPECT_NEAR(obrien_fleming_spending(1.0, 0.05), 0.05, 1e-15);
    // By hand: 2 − 2Φ(1.959964/√0.2 = 4.38261) = 1.1726e-5.
    EXPECT_NEAR(obrien_fleming_spending(0.2, 0.05), 1.1726e-5, 1e-8);
    EXPECT_EQ(obrien_fleming_spending(0.0, 0.05), 0.0);
}

TEST(GroupSequentialBoundaries, MatchTheGsDesignLanDeMetsObrienFlemingTable) {
    // Source: Lan–DeMets O'Brien–Fleming bounds, 5 equally spaced looks, one-sided α = 0.025
    // (gsDesign sfLDOF; Jennison & Turnbull): 4.877, 3.357, 2.680, 2.290, 2.031.
    const std::vector<double> t{0.2, 0.4, 0.6, 0.8, 1.0};
    const std::vector<double> c = group_sequential_boundaries(t, spend_per_side(t, 0.025));
    const std::vector<double> published{4.877, 3.357, 2.680, 2.290, 2.031};
    for (std::size_t k = 0; k < t.size(); ++k) {
        EXPECT_NEAR(c[k], published[k], 5e-4) << "look " << k + 1;
    }
}

TEST(GroupSequentialBoundaries, MatchTheSeqBoundsJuliaExample) {
    // Source: PharmCat/SeqBounds.jl README, bounds([0.25, 0.5, 0.75, 1.0], 0.05): Z column
    // 3.74955, 2.53993, 2.01604, 1.72014 (their grid step 0.05 limits them to ~1e-4).
    const std::vector<double> t{0.25, 0.5, 0.75, 1.0};
    const std::vector<double> c = group_sequential_boundaries(t, spend_per_side(t, 0.05));
    const std::vector<double> published{3.74955, 2.53993, 2.01604, 1.72014};
    for (std::size_t k = 0; k < t.size(); ++k) {
        EXPECT_NEAR(c[k], published[k], 1e-4) << "look " << k + 1;
    }
}

TEST(GroupSequentialBoundaries, OneLookIsTheFixedSampleQuantile) {
    const std::vector<double> c =
        group_sequential_boundaries(std::vector<double>{1.0}, std::vector<double>{0.05});
    ASSERT_EQ(c.size(), 1u);
    EXPECT_NEAR(c[0], normal_quantile(0.975), 1e-8);
}

TEST(GroupSequentialBoundaries, TwoLooksSpendExactlyAlphaByAnIndependentIntegral) {
    // Z1 ~ N(0,1); Z2 | Z1 = z ~ N(ρz, 1 − ρ²), ρ = √(t1/t2). Total crossing probability
    // P(|Z1| ≥ c1) + ∫_{|z|<c1} φ(z) P(|Z2| ≥ c2 | z) dz, by a fine midpoint rule.
    const std::vector<double> t{0.4, 1.0};
    const std::vector<double> cumulative{obrien_fleming_spending(0.4, 0.05), 0.05};
    const std::vector<double> c = group_sequential_boundaries(t, cumulative);
    const double rho = std::sqrt(t[0] / t[1]);
    const double conditional_sd = std::sqrt(1.0 - rho * rho);
    const int steps = 200000;
    const double h = 2.0 * c[0] / steps;
    double second = 0.0;
    for (int i = 0; i < steps; ++i) {
        const double z = -c[0] + (i + 0.5) * h;
        const double density = std::exp(-0.5 * z * z) / std::sqrt(2.0 * std::numbers::pi);
        const double leave = normal_upper_tail((c[1] - rho * z) / conditional_sd) +
                             normal_cdf((-c[1] - rho * z) / conditional_sd);
        second += density * leave * h;
    }
    EXPECT_NEAR(2.0 * normal_upper_tail(c[0]), cumulative[0], 1e-12);
    EXPECT_NEAR(2.0 * normal_upper_tail(c[0]) + second, 0.05, 1e-7);
}

TEST(GroupSequentialBoundaries, ALookThatSpendsNothingNeverStops) {
    const std::vector<double> c =
        group_sequential_boundaries(std::vector<double>{0.5, 1.0}, std::vector<double>{0.0, 0.05});
    EXPECT_TRUE(std::isinf(c[0]));
    EXPECT_NEAR(c[1], normal_quantile(0.975), 1e-6);
}

TEST(GroupSequentialBoundaries, RefuseMalformedPlans) {
    EXPECT_THROW((void)group_sequential_boundaries(std::vector<double>{0.5, 0.4},
                                                   std::vector<double>{0.01, 0.05}),
                 Error);
    EXPECT_THROW((void)group_sequential_boundaries(std::vector<double>{0.5, 1.0},
                                                   std::vector<double>{0.05, 0.01}),
                 Error);
    EXPECT_THROW((void)group_sequential_boundaries(std::vector<double>{1.0}, std::vector<double>{}),
                 Error);
}

}  // namespace
}  // namespace cko::stats
