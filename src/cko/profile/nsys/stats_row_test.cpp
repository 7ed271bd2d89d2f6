// Rows are computed exactly: even medians, sample deviations, half-away rounding in tenths.
#include "cko/profile/nsys/stats_row.hpp"
#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko::profile::nsys {
namespace {

TEST(StatsRow, ReproducesTheFixtureKernelRow) {
    // scale_naive in vec.sqlite: nsys printed 227177.7, 226687.0, 1227.9.
    std::vector<std::int64_t> d = {228575, 226687, 226271};
    const StatsRow r = summarize_durations("scale_naive", d);
    EXPECT_EQ(r.total_ns, 681533);
    EXPECT_EQ(r.count, 3);
    EXPECT_EQ(format_tenths(r.avg_tenths), "227177.7");
    EXPECT_EQ(format_tenths(r.med_tenths), "226687.0");
    EXPECT_EQ(format_tenths(r.stddev_tenths), "1227.9");
    EXPECT_EQ(r.min_ns, 226271);
    EXPECT_EQ(r.max_ns, 228575);
}

TEST(StatsRow, EvenCountMedianIsTheMeanOfTheMiddlePair) {
    std::vector<std::int64_t> d = {333015608, 2971823};  // nsys osrt_sum: 167,993,715.5
    EXPECT_EQ(format_tenths(summarize_durations("x", d).med_tenths), "167993715.5");
}

TEST(StatsRow, OneValueHasZeroDeviation) {
    std::vector<std::int64_t> d = {1327922};
    const StatsRow r = summarize_durations("cudaMemcpy", d);
    EXPECT_EQ(format_tenths(r.stddev_tenths), "0.0");
    EXPECT_EQ(format_tenths(r.avg_tenths), "1327922.0");
}

TEST(StatsRow, SampleDeviationIsExactOnPerfectSquares) {
    std::vector<std::int64_t> d = {2, 4, 4, 4, 5, 5, 7, 9};  // sample variance 32/7
    EXPECT_EQ(format_tenths(summarize_durations("x", d).stddev_tenths), "2.1");
    std::vector<std::int64_t> e = {1, 3};  // sample sd = sqrt(2) = 1.414..
    EXPECT_EQ(format_tenths(summarize_durations("x", e).stddev_tenths), "1.4");
    std::vector<std::int64_t> f = {10, 20, 30};  // sd = 10 exactly
    EXPECT_EQ(format_tenths(summarize_durations("x", f).stddev_tenths), "10.0");
}

TEST(StatsRow, RoundsHalfAwayFromZero) {
    EXPECT_EQ(rounded_quotient(5, 10), 1);   // 0.5 → 1
    EXPECT_EQ(rounded_quotient(15, 10), 2);  // 1.5 → 2 (not banker's 2... and 2.5 → 3)
    EXPECT_EQ(rounded_quotient(25, 10), 3);
    EXPECT_EQ(rounded_quotient(-25, 10), -3);
    EXPECT_EQ(rounded_quotient(24, 10), 2);
    EXPECT_EQ(format_tenths(-5), "-0.5");
}

TEST(StatsRow, TimePercentIsOfTheReportTotal) {
    std::vector<StatsRow> rows(3);
    rows[0].total_ns = 681533;
    rows[1].total_ns = 419870;
    rows[2].total_ns = 399422;
    fill_time_percent(rows);
    EXPECT_EQ(*rows[0].time_percent_tenths, 454);
    EXPECT_EQ(*rows[1].time_percent_tenths, 280);
    EXPECT_EQ(*rows[2].time_percent_tenths, 266);
    std::vector<StatsRow> zero(1);
    fill_time_percent(zero);
    EXPECT_FALSE(zero[0].time_percent_tenths.has_value());
}

TEST(StatsRow, RefusesDurationsNoIntervalHas) {
    // Found by fuzz_nsys: two end − start values near 2^62 overflowed the median's tenths.
    std::vector<std::int64_t> huge = {std::int64_t{1} << 62, std::int64_t{1} << 62};
    EXPECT_CKO_ERROR((void)summarize_durations("k", huge), ErrorCode::malformed_input,
                     "'k': a duration of 4611686018427387904 ns");
    std::vector<std::int64_t> negative = {-(std::int64_t{1} << 60), 5};
    EXPECT_THROW((void)summarize_durations("k", negative), Error);
    // 2^56 itself is kept, with the exact median and deviation of two equal values.
    std::vector<std::int64_t> edge = {std::int64_t{1} << 56, std::int64_t{1} << 56};
    const StatsRow r = summarize_durations("k", edge);
    EXPECT_EQ(r.med_tenths, (std::int64_t{1} << 56) * 10);
    EXPECT_EQ(r.stddev_tenths, 0);
}

TEST(StatsRow, LongIntervalsKeepTheirDeviation) {
    // 100 values of 2^55 + i: n·Σx² passes 2^116, so the deviation is taken in long double.
    std::vector<std::int64_t> d;
    for (std::int64_t i = 0; i < 100; ++i) {
        d.push_back((std::int64_t{1} << 55) + i);
    }
    const StatsRow r = summarize_durations("k", d);
    EXPECT_EQ(format_tenths(r.stddev_tenths), "29.0");  // of 0..99: 29.01
    EXPECT_EQ(r.med_tenths, (std::int64_t{1} << 55) * 10 + 495);
}

TEST(StatsRow, RefusesATotalPastInt64) {
    std::vector<std::int64_t> many(200, std::int64_t{1} << 56);
    EXPECT_THROW((void)summarize_durations("k", many), Error);
}

}  // namespace
}  // namespace cko::profile::nsys
