// The signed-rank machinery against published tables, R's documented example, hand calculations
// and brute force over every sign pattern.
#include "cko/stats/signed_rank.hpp"

#include "cko/stats/normal.hpp"
#include "cko/util/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace cko::stats {
namespace {

// Null distribution of T⁺ by enumerating all 2^n sign patterns of the ranks 1..n.
std::vector<double> brute_force_null_pmf(std::size_t n) {
    std::vector<double> counts(n * (n + 1) / 2 + 1, 0.0);
    for (std::uint32_t pattern = 0; pattern < (1u << n); ++pattern) {
        std::size_t t_plus = 0;
        for (std::size_t rank = 1; rank <= n; ++rank) {
            if ((pattern >> (rank - 1)) & 1u) {
                t_plus += rank;
            }
        }
        counts[t_plus] += 1.0;
    }
    for (double& c : counts) {
        c /= static_cast<double>(1u << n);
    }
    return counts;
}

std::vector<double> all_walsh_averages_sorted(const std::vector<double>& d) {
    std::vector<double> walsh;
    for (std::size_t i = 0; i < d.size(); ++i) {
        for (std::size_t j = i; j < d.size(); ++j) {
            walsh.push_back((d[i] + d[j]) / 2.0);
        }
    }
    std::sort(walsh.begin(), walsh.end());
    return walsh;
}

std::vector<double> depression_differences() {
    // Hollander & Wolfe (1973) p. 29f, the example of R's ?wilcox.test: x − y.
    const std::vector<double> x{1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30};
    const std::vector<double> y{0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29};
    std::vector<double> d;
    for (std::size_t i = 0; i < x.size(); ++i) {
        d.push_back(x[i] - y[i]);
    }
    std::sort(d.begin(), d.end());
    return d;
}

TEST(SignedRankNull, EqualsBruteForceEnumerationUpToTwelvePairs) {
    for (std::size_t n = 1; n <= 12; ++n) {
        const std::vector<double> expected = brute_force_null_pmf(n);
        const std::vector<double> actual = signed_rank_null_pmf(n);
        ASSERT_EQ(actual.size(), expected.size()) << n;
        for (std::size_t t = 0; t < expected.size(); ++t) {
            EXPECT_NEAR(actual[t], expected[t], 1e-15) << "n=" << n << " t=" << t;
        }
    }
}

TEST(SignedRankNull, GivesThePublishedTwoSidedFivePercentCriticalValues) {
    // Source: University of York table "Critical values for T in the Wilcoxon signed-rank test"
    // (P = 0.05, two-tailed) and OEIS A226330, the largest t with P(T⁺ ≤ t) ≤ 0.025.
    const std::vector<std::pair<std::size_t, int>> table{
        {6, 0},   {7, 2},   {8, 3},   {9, 5},   {10, 8},  {11, 10}, {12, 13}, {13, 17}, {14, 21},
        {15, 25}, {16, 29}, {17, 34}, {18, 40}, {19, 46}, {20, 52}, {25, 89}, {30, 137}};
    for (const auto& [n, critical] : table) {
        const std::vector<double> pmf = signed_rank_null_pmf(n);
        double cdf = 0.0;
        int largest = -1;
        for (std::size_t t = 0; t < pmf.size() && cdf + pmf[t] <= 0.025; ++t) {
            cdf += pmf[t];
            largest = static_cast<int>(t);
        }
        EXPECT_EQ(largest, critical) << "n=" << n;
        // The interval is one order statistic inside the critical value.
        std::vector<double> d;
        for (std::size_t i = 1; i <= n; ++i) {
            d.push_back(static_cast<double>(i) * 0.37 - 1.0);
        }
        EXPECT_EQ(wilcoxon_signed_rank_interval(d, 0.95).depth,
                  static_cast<std::size_t>(critical + 1));
    }
}

TEST(SignedRankNull, ReproducesRsDocumentedOneSidedPValue) {
    // R's ?wilcox.test example output: "V = 40, p-value = 0.01953" for the depression data,
    // alternative "greater"; P(T⁺ ≥ 40) = P(T⁺ ≤ 5) by symmetry (M = 45).
    const std::vector<double> pmf = signed_rank_null_pmf(9);
    double upper = 0.0;
    for (std::size_t t = 40; t < pmf.size(); ++t) {
        upper += pmf[t];
    }
    EXPECT_NEAR(upper, 0.01953, 5e-6);
}

TEST(WalshAverages, OrderStatisticsEqualSortingThemAll) {
    // Negative, zero, tied and widely spread values; every rank k is checked.
    std::vector<double> d{-0.25, 0.0, 0.0, 0.013, 0.013, 0.5, 1e-9, -1e-9, 3.75, -2.5, 0.1, 0.3};
    std::sort(d.begin(), d.end());
    const std::vector<double> expected = all_walsh_averages_sorted(d);
    for (std::size_t k = 1; k <= expected.size(); ++k) {
        EXPECT_EQ(walsh_average_order_statistic(d, k), expected[k - 1]) << k;
    }
    EXPECT_THROW((void)walsh_average_order_statistic(d, 0), Error);
    EXPECT_THROW((void)walsh_average_order_statistic(d, expected.size() + 1), Error);
}

TEST(HodgesLehmann, IsTheMedianOfTheWalshAveragesByHand) {
    // d = {1, 2, 4}: Walsh averages 1, 1.5, 2, 2.5, 3, 4; median (2 + 2.5) / 2.
    EXPECT_DOUBLE_EQ(hodges_lehmann(std::vector<double>{1, 2, 4}), 2.25);
    // Odd count of Walsh averages (n = 2 gives 3): {0, 1} → 0, 0.5, 1.
    EXPECT_DOUBLE_EQ(hodges_lehmann(std::vector<double>{0, 1}), 0.5);
}

TEST(WilcoxonInterval, MatchesRsAlgorithmOnTheDepressionData) {
    // wilcox.test(x, y, paired = TRUE, conf.int = TRUE): R takes qu = qsignrank(0.025, 9) = 6
    // (P(T⁺ ≤ 5) = 10/512 < 0.025 ≤ P(T⁺ ≤ 6) = 14/512) and reports the 6th and 40th of the 45
    // sorted Walsh averages, 0.0100 and 0.7860, with (pseudo)median 0.46 — checked by hand
    // from the 45 averages; achieved level 1 − 2·10/512.
    const std::vector<double> d = depression_differences();
    const RankInterval interval = wilcoxon_signed_rank_interval(d, 0.95);
    EXPECT_TRUE(interval.exact);
    EXPECT_EQ(interval.depth, 6u);
    EXPECT_NEAR(interval.low, 0.0100, 1e-12);
    EXPECT_NEAR(interval.high, 0.7860, 1e-12);
    EXPECT_NEAR(interval.achieved_confidence, 1.0 - 20.0 / 512.0, 1e-15);
    EXPECT_NEAR(hodges_lehmann(d), 0.46, 1e-12);
}

TEST(WilcoxonInterval, AchievedLevelEqualsBruteForceCoverageForSmallSamples) {
    for (std::size_t n = 6; n <= 12; ++n) {
        std::vector<double> d;
        for (std::size_t i = 0; i < n; ++i) {
            d.push_back(std::sin(static_cast<double>(i) * 1.7));  // distinct, unsorted
        }
        std::sort(d.begin(), d.end());
        for (const double confidence : {0.9, 0.95, 0.99}) {
            const RankInterval interval = wilcoxon_signed_rank_interval(d, confidence);
            const std::vector<double> pmf = brute_force_null_pmf(n);
            double tail = 0.0;
            for (std::size_t t = 0; t < interval.depth; ++t) {
                tail += pmf[t];
            }
            EXPECT_NEAR(interval.achieved_confidence, 1.0 - 2.0 * tail, 1e-14);
            if (n >= 8 || confidence < 0.99) {
                EXPECT_GE(interval.achieved_confidence, confidence) << n;
            }
            // Test inversion: exactly depth − 1 Walsh averages lie below the lower end.
            const std::vector<double> walsh = all_walsh_averages_sorted(d);
            const auto below = std::count_if(walsh.begin(), walsh.end(),
                                             [&](double w) { return w < interval.low; });
            EXPECT_EQ(static_cast<std::size_t>(below), interval.depth - 1);
        }
    }
}

TEST(WilcoxonInterval, TooFewPairsGiveTheWidestIntervalAndSayItFallsShort) {
    // n = 5: even the full range [min, max] has only 1 − 2/32 = 93.75 % confidence.
    const std::vector<double> d{-1, 0.5, 1, 2, 3};
    const RankInterval interval = wilcoxon_signed_rank_interval(d, 0.95);
    EXPECT_EQ(interval.depth, 1u);
    EXPECT_DOUBLE_EQ(interval.low, -1.0);
    EXPECT_DOUBLE_EQ(interval.high, 3.0);
    EXPECT_DOUBLE_EQ(interval.achieved_confidence, 0.9375);
}

TEST(WilcoxonInterval, UsesTheNormalApproximationFromFiftyPairs) {
    // By hand for n = 60 without ties: M = 1830, σ² = 60·61·121/24 = 18452.5,
    // depth = ⌊915 − 1.959964·135.8400 + 0.5⌋ = ⌊649.26⌋ = 649.
    std::vector<double> d;
    for (std::size_t i = 0; i < 60; ++i) {
        d.push_back(std::cos(static_cast<double>(i) * 0.9) + 0.001 * static_cast<double>(i));
    }
    std::sort(d.begin(), d.end());
    const RankInterval normal = wilcoxon_signed_rank_interval(d, 0.95);
    EXPECT_FALSE(normal.exact);
    EXPECT_EQ(normal.depth, 649u);
    // The exact distribution, summed directly, puts the critical value within one rank of it.
    const std::vector<double> pmf = signed_rank_null_pmf(60);
    double cdf = 0.0;
    std::size_t exact_depth = 0;
    while (cdf + pmf[exact_depth] < 0.025) {
        cdf += pmf[exact_depth++];
    }
    EXPECT_LE(std::max(exact_depth, normal.depth) - std::min(exact_depth, normal.depth), 1u);
    // 49 pairs still take the exact distribution.
    d.resize(49);
    EXPECT_TRUE(wilcoxon_signed_rank_interval(d, 0.95).exact);
}

TEST(WilcoxonInterval, TiesSwitchToTheTieCorrectedNormalApproximation) {
    // d = {1, 1, 1, 2, 3, 4, 5, 6, 7, 8}: one group of 3 ties. By hand: M = 55,
    // σ² = 10·11·21/24 − (27 − 3)/48 = 96.25 − 0.5 = 95.75, σ = 9.78519,
    // depth = ⌊27.5 − 1.959964·9.78519 + 0.5⌋ = ⌊8.822⌋ = 8.
    const std::vector<double> d{1, 1, 1, 2, 3, 4, 5, 6, 7, 8};
    const RankInterval interval = wilcoxon_signed_rank_interval(d, 0.95);
    EXPECT_FALSE(interval.exact);
    EXPECT_EQ(interval.depth, 8u);
    const double sd = std::sqrt(95.75);
    EXPECT_NEAR(interval.achieved_confidence, 1.0 - 2.0 * normal_cdf((7.5 - 27.5) / sd), 1e-14);
    EXPECT_GE(interval.achieved_confidence, 0.95);
}

TEST(SignTestInterval, MatchesPublishedCriticalValuesAndTheBinomialByHand) {
    // Sign-test critical values, two-tailed 5 % (e.g. Siegel's / standard sign-test tables):
    // n = 9 → 1, n = 20 → 5, n = 30 → 9; the interval is one order statistic further in.
    for (const auto& [n, critical] :
         std::vector<std::pair<std::size_t, std::size_t>>{{9, 1}, {20, 5}, {30, 9}}) {
        std::vector<double> d;
        for (std::size_t i = 0; i < n; ++i) {
            d.push_back(static_cast<double>(i));
        }
        const RankInterval interval = sign_test_interval(d, 0.95);
        EXPECT_EQ(interval.depth, critical + 1) << n;
        EXPECT_DOUBLE_EQ(interval.low, d[critical]);
        EXPECT_DOUBLE_EQ(interval.high, d[n - 1 - critical]);
    }
    // Depression data: P(B ≤ 1) = 10/512 for B ~ Bin(9, ½), so [d_(2), d_(8)] at 1 − 20/512.
    const std::vector<double> d = depression_differences();
    const RankInterval interval = sign_test_interval(d, 0.95);
    EXPECT_NEAR(interval.low, -0.08, 1e-12);
    EXPECT_NEAR(interval.high, 0.952, 1e-12);
    EXPECT_NEAR(interval.achieved_confidence, 1.0 - 20.0 / 512.0, 1e-15);
}

TEST(SignTestInterval, StaysFiniteForThousandsOfPairs) {
    std::vector<double> d(5000);
    for (std::size_t i = 0; i < d.size(); ++i) {
        d[i] = static_cast<double>(i);
    }
    const RankInterval interval = sign_test_interval(d, 0.95);
    // Normal approximation of the binomial: 2500 − 1.96·√1250 ≈ 2430.7.
    EXPECT_NEAR(static_cast<double>(interval.depth), 2431.0, 2.0);
    EXPECT_GE(interval.achieved_confidence, 0.95);
}

}  // namespace
}  // namespace cko::stats
