// Paired log ratios, the Hodges–Lehmann estimate with its intervals, and case-weighted pooling.
#include "cko/stats/paired_estimate.hpp"

#include "cko/util/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace cko::stats {
namespace {

TEST(PairedLogRatio, IsPositiveWhenTheCandidateIsBetterInEitherDirection) {
    // 100 µs → 80 µs is 25 % faster: ln(100/80) = ln 1.25.
    EXPECT_NEAR(paired_log_ratio(100.0, 80.0, Direction::lower), std::log(1.25), 1e-15);
    // 100 → 125 GB/s is 25 % more throughput: also ln 1.25.
    EXPECT_NEAR(paired_log_ratio(100.0, 125.0, Direction::higher), std::log(1.25), 1e-15);
    EXPECT_LT(paired_log_ratio(100.0, 125.0, Direction::lower), 0.0);
    // Log ratios are symmetric: swapping the subjects flips the sign exactly.
    EXPECT_EQ(paired_log_ratio(3.0, 7.0, Direction::lower),
              -paired_log_ratio(7.0, 3.0, Direction::lower));
    // Extreme ratios that overflow a quotient still give the right log.
    EXPECT_NEAR(paired_log_ratio(1e300, 1e-300, Direction::lower), 600.0 * std::log(10.0), 1e-9);
}

TEST(PairedLogRatio, RefusesZeroNegativeAndNonFiniteValues) {
    EXPECT_THROW((void)paired_log_ratio(0.0, 1.0, Direction::lower), Error);
    EXPECT_THROW((void)paired_log_ratio(1.0, -1.0, Direction::lower), Error);
    EXPECT_THROW(
        (void)paired_log_ratio(std::numeric_limits<double>::infinity(), 1.0, Direction::higher),
        Error);
}

TEST(Percentages, ConvertBothWays) {
    EXPECT_NEAR(pct_to_log(10.0), std::log(1.1), 1e-15);
    EXPECT_NEAR(log_to_pct(std::log(1.1)), 10.0, 1e-12);
    EXPECT_NEAR(log_to_pct(pct_to_log(-0.5)), -0.5, 1e-13);
    EXPECT_THROW((void)pct_to_log(-100.0), Error);
}

TEST(EstimatePaired, ReportsTheDepressionExampleWithPercentFields) {
    // Hollander & Wolfe depression data (see signed_rank_test.cpp for the sources of the numbers).
    const std::vector<double> d{0.952, -0.147, 1.022, 0.43, 0.62, 0.59, 0.49, -0.08, 0.01};
    const PairedEstimate e = estimate_paired(d, 0.95);
    EXPECT_EQ(e.n, 9u);
    EXPECT_TRUE(e.exact);
    EXPECT_NEAR(e.hl, 0.46, 1e-12);
    EXPECT_NEAR(e.ci_low, 0.01, 1e-12);
    EXPECT_NEAR(e.ci_high, 0.786, 1e-12);
    EXPECT_NEAR(e.mean, 3.887 / 9.0, 1e-12);  // by hand: the nine values sum to 3.887
    EXPECT_NEAR(e.sign_ci_low, -0.08, 1e-12);
    EXPECT_NEAR(e.sign_ci_high, 0.952, 1e-12);
    EXPECT_TRUE(e.confidence_reached());
    const Json j = e.to_json();
    EXPECT_NEAR(j["hl_pct"].get<double>(), 100.0 * std::expm1(0.46), 1e-9);
    EXPECT_NEAR(j["ci_low_pct"].get<double>(), 100.0 * std::expm1(0.01), 1e-9);
    EXPECT_EQ(j["interval"], "wilcoxon_signed_rank_exact");
    EXPECT_TRUE(j.contains("sign_ci_high_pct"));
}

TEST(EstimatePaired, NoPairsGiveNullsAndOnePairReachesNoConfidence) {
    const PairedEstimate none = estimate_paired(std::vector<double>{}, 0.95);
    EXPECT_EQ(none.n, 0u);
    EXPECT_FALSE(none.confidence_reached());
    EXPECT_TRUE(none.to_json()["hl"].is_null());
    EXPECT_TRUE(none.to_json()["ci_low_pct"].is_null());

    const PairedEstimate one = estimate_paired(std::vector<double>{0.02}, 0.95);
    EXPECT_DOUBLE_EQ(one.hl, 0.02);
    EXPECT_FALSE(one.confidence_reached());  // a single pair proves nothing
}

TEST(EstimatePaired, RefusesNonFiniteDifferencesAndImpossibleConfidence) {
    const std::vector<double> d{0.1, 0.2, 0.3};
    EXPECT_THROW((void)estimate_paired(d, 0.5), Error);
    EXPECT_THROW((void)estimate_paired(d, 1.0), Error);
    const std::vector<double> with_nan{0.1, std::numeric_limits<double>::quiet_NaN()};
    EXPECT_THROW((void)estimate_paired(with_nan, 0.95), Error);
}

TEST(EstimatePooled, WeighsCasesEquallyAndCountsEachPairOnce) {
    // Case "big" moves +2 % in every pair, case "small" +0 %, with shared pair-level noise: the
    // pooled effect is their equal-weight average, +1 %, over 8 pairs (not 16 pair-case units).
    const std::vector<double> noise{0.001, -0.002, 0.0005, 0.003, -0.001, 0.002, -0.0025, 0.0015};
    std::vector<CaseSamples> cases{{"big", {}}, {"small", {}}};
    for (const double e : noise) {
        cases[0].d.push_back(0.02 + e);
        cases[1].d.push_back(0.00 + e);
    }
    const PooledEstimate pooled = estimate_pooled(cases, 0.95);
    ASSERT_EQ(pooled.per_case.size(), 2u);
    EXPECT_EQ(pooled.per_case[0].first, "big");
    EXPECT_EQ(pooled.pooled.n, 8u);
    const double mean_of_means =
        (pooled.per_case[0].second.mean + pooled.per_case[1].second.mean) / 2;
    EXPECT_NEAR(pooled.pooled.mean, mean_of_means, 1e-12);
    // The per-pair means are 0.01 + noise, so the pooled HL is 0.01 + HL(noise).
    EXPECT_NEAR(pooled.pooled.hl, 0.01 + estimate_paired(noise, 0.95).hl, 1e-12);
    const Json j = pooled.to_json();
    EXPECT_EQ(j["per_case"][1]["case_id"], "small");
    EXPECT_EQ(j["weighting"], "equal_case_weights_per_pair");
}

TEST(EstimatePooled, RefusesCasesWithDifferentPairsOrRepeatedIds) {
    EXPECT_THROW((void)estimate_pooled({}, 0.95), Error);
    EXPECT_THROW((void)estimate_pooled({{"a", {0.1, 0.2}}, {"b", {0.1}}}, 0.95), Error);
    EXPECT_THROW((void)estimate_pooled({{"a", {0.1}}, {"a", {0.2}}}, 0.95), Error);
}

}  // namespace
}  // namespace cko::stats
