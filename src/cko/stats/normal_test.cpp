// The normal CDF and quantile against published table values and against each other.
#include "cko/stats/normal.hpp"

#include "cko/util/error.hpp"

#include <gtest/gtest.h>

namespace cko::stats {
namespace {

// Source: standard normal tables (e.g. Abramowitz & Stegun 26.2; R's qnorm/pnorm print the same).
TEST(NormalQuantile, MatchesTableValues) {
    EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-12);
    EXPECT_NEAR(normal_quantile(0.8), 0.8416212335729143, 1e-12);
    EXPECT_NEAR(normal_quantile(0.995), 2.5758293035489004, 1e-12);
    EXPECT_NEAR(normal_quantile(0.5), 0.0, 1e-15);
    EXPECT_NEAR(normal_quantile(1e-10), -6.361341, 1e-6);
}

TEST(NormalCdf, MatchesTableValuesAndKeepsFarTails) {
    EXPECT_NEAR(normal_cdf(1.96), 0.9750021048517795, 1e-14);
    EXPECT_NEAR(normal_cdf(-1.0), 0.15865525393145707, 1e-14);
    // 1 − Φ(6) = 9.8659e-10; computed as 1 − cdf it would keep only ~7 digits.
    EXPECT_NEAR(normal_upper_tail(6.0) / 9.865876e-10, 1.0, 1e-6);
}

TEST(NormalQuantile, InvertsTheCdfAcrossTheRange) {
    for (double p = 1e-12; p < 1.0; p *= 3.7) {
        EXPECT_NEAR(normal_cdf(normal_quantile(p)) / p, 1.0, 1e-11) << p;
    }
    for (double p = 0.01; p < 1.0; p += 0.01) {
        EXPECT_NEAR(normal_cdf(normal_quantile(p)), p, 1e-14) << p;
    }
}

TEST(NormalQuantile, RefusesProbabilitiesOutsideTheOpenInterval) {
    EXPECT_THROW((void)normal_quantile(0.0), Error);
    EXPECT_THROW((void)normal_quantile(1.0), Error);
}

}  // namespace
}  // namespace cko::stats
