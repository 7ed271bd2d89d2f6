// Median, MAD, SD and CV on samples small enough to check by hand.
#include "cko/stats/descriptive.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace cko::stats {
namespace {

TEST(Median, TakesTheMiddleOrTheMeanOfTheTwoMiddleValues) {
    EXPECT_DOUBLE_EQ(median(std::vector<double>{5, 1, 3}), 3.0);
    EXPECT_DOUBLE_EQ(median(std::vector<double>{4, 1, 3, 2}), 2.5);
    EXPECT_DOUBLE_EQ(median(std::vector<double>{7}), 7.0);
}

TEST(Mad, IgnoresOneWildOutlier) {
    // By hand: median 3, absolute deviations {2, 1, 0, 1, 97}, their median 1.
    const std::vector<double> values{1, 2, 3, 4, 100};
    EXPECT_DOUBLE_EQ(mad(values), 1.0);
    EXPECT_DOUBLE_EQ(robust_sd(values), 1.4826);
    EXPECT_GT(sample_sd(values), 40.0);  // the plain SD is dragged far away by the outlier
}

TEST(SampleSd, UsesTheBesselCorrection) {
    // By hand: mean 5, squared deviations sum to 32, 32 / 7 = 4.571428…
    const std::vector<double> values{2, 4, 4, 4, 5, 5, 7, 9};
    EXPECT_NEAR(sample_sd(values), std::sqrt(32.0 / 7.0), 1e-15);
    EXPECT_NEAR(cv(values), std::sqrt(32.0 / 7.0) / 5.0, 1e-15);
}

TEST(Descriptive, RefusesEmptyNonFiniteAndMeaninglessInputs) {
    const std::vector<double> empty;
    const std::vector<double> with_nan{1.0, std::numeric_limits<double>::quiet_NaN()};
    EXPECT_THROW((void)median(empty), Error);
    EXPECT_THROW((void)mad(with_nan), Error);
    EXPECT_THROW((void)sample_sd(std::vector<double>{1.0}), Error);
    EXPECT_THROW((void)cv(std::vector<double>{-1.0, 1.0}), Error);  // mean 0: no CV
    if (const auto e = EXPECT_CKO_ERROR((void)median(with_nan), ErrorCode::invalid_argument)) {
        EXPECT_EQ(e->details()["index"], 1);
    }
}

}  // namespace
}  // namespace cko::stats
