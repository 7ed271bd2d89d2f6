// The semantic table and NCU's number spelling.
#include "cko/profile/ncu/ncu_metrics.hpp"

#include <gtest/gtest.h>

#include <random>

#include <cstdlib>
#include <set>
#include <string>

namespace cko::profile::ncu {
namespace {

TEST(NcuNumber, ReadsThousandsSeparatorsAndRefusesTheRest) {
    EXPECT_EQ(parse_ncu_number("1,980,000"), 1980000.0);
    EXPECT_EQ(parse_ncu_number("3,198,878,230.33"), 3198878230.33);
    EXPECT_EQ(parse_ncu_number("-1.5e3"), -1500.0);
    EXPECT_EQ(parse_ncu_number("0"), 0.0);
    EXPECT_FALSE(parse_ncu_number("n/a"));
    EXPECT_FALSE(parse_ncu_number("1,98"));
    EXPECT_FALSE(parse_ncu_number("1.5,000"));
    EXPECT_FALSE(parse_ncu_number(",100"));
    EXPECT_FALSE(parse_ncu_number("inf"));
    EXPECT_FALSE(parse_ncu_number("12abc"));
    EXPECT_FALSE(parse_ncu_number(""));
}

TEST(NcuNumber, TextIsRefusedBeforeTheGeneralPathAndSignsAndDotsStillRead) {
    // The early refusal of a cell that cannot start a number keeps what from_chars read.
    EXPECT_FALSE(parse_ncu_number("No-CC"));
    EXPECT_FALSE(parse_ncu_number("NVIDIA H200"));
    EXPECT_FALSE(parse_ncu_number("-nan"));
    EXPECT_FALSE(parse_ncu_number("+inf"));
    EXPECT_FALSE(parse_ncu_number("-"));
    EXPECT_FALSE(parse_ncu_number("+"));
    EXPECT_FALSE(parse_ncu_number(" 5"));
    EXPECT_EQ(parse_ncu_number(".5e1"), 5.0);
    EXPECT_EQ(parse_ncu_number("-.25e1"), -2.5);
    EXPECT_EQ(parse_ncu_number("+-2e0"), -2.0);
    EXPECT_EQ(parse_ncu_number("+1,000e0"), 1000.0);
}

TEST(NcuSemantics, OffersFortyEightNamedFacts) {
    std::set<std::string_view> ids;
    for (const SemanticSource& s : semantic_sources()) {
        ids.insert(s.fact_id);
    }
    // Exact: a fact added or lost changes this on purpose (docs/profile-ncu.md lists them).
    EXPECT_EQ(ids.size(), 48u);
}

TEST(NcuSemantics, ADetailsDisplayNameAndItsRawNameGiveOneFact) {
    EXPECT_EQ(classify_metric("", "gpu__time_duration.sum").fact_id, "duration");
    EXPECT_EQ(classify_metric("GPU Speed Of Light Throughput", "Duration").fact_id, "duration");
    EXPECT_EQ(classify_metric("Command line profiler metrics", "gpu__time_duration.sum").fact_id,
              "duration");
    // The same display name in another section is another quantity.
    EXPECT_EQ(classify_metric("Memory Workload Analysis", "Memory Throughput").fact_id,
              "dram.throughput");
    EXPECT_EQ(classify_metric("GPU Speed Of Light Throughput", "Memory Throughput").fact_id,
              "memory.throughput_pct");
    EXPECT_EQ(classify_metric("", "gpu__time_duration.avg").kind, MetricMeaning::Kind::none);
}

TEST(NcuSemantics, StallReasonsFollowTheMetricFamily) {
    const MetricMeaning m =
        classify_metric("", "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct");
    EXPECT_EQ(m.kind, MetricMeaning::Kind::stall);
    EXPECT_EQ(m.fact_id, "stall.long_scoreboard_pct");
}

TEST(NcuSemantics, FmaCountsTwoFlopsPerThreadInstruction) {
    const MetricMeaning ffma =
        classify_metric("", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum");
    EXPECT_EQ(ffma.fact_id, "flop.fp32");
    EXPECT_EQ(ffma.flop_weight, 2);
    const MetricMeaning hadd =
        classify_metric("", "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum");
    EXPECT_EQ(hadd.fact_id, "flop.fp16");
    EXPECT_EQ(hadd.flop_weight, 1);
    EXPECT_EQ(classify_metric("", "sm__sass_thread_inst_executed_op_dfma_pred_on.sum").fact_id,
              "flop.fp64");
    EXPECT_EQ(
        classify_metric("", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.per_second").kind,
        MetricMeaning::Kind::none);
}

}  // namespace
}  // namespace cko::profile::ncu

namespace cko::profile::ncu {
namespace {

// The fast path for plain decimals must give exactly the double strtod gives, and refuse what the
// general path refuses.
TEST(NcuNumber, FastPathMatchesStrtodExactly) {
    for (const char* text : {"0",
                             "-0",
                             "1",
                             "+7",
                             "128",
                             "0.1",
                             "0.3",
                             "1.05",
                             "203.39",
                             "-12.5",
                             "1,980,000",
                             "1,978,863,004.21",
                             "123456789012345",
                             "0.000000000000001",
                             "999999999999999",
                             "3.141592653589793",
                             "6,016",
                             "7,751.57",
                             "100",
                             "0.00"}) {
        std::string plain;
        for (const char* c = text; *c != '\0'; ++c) {
            if (*c != ',') {
                plain += *c;
            }
        }
        const auto got = parse_ncu_number(text);
        ASSERT_TRUE(got.has_value()) << text;
        EXPECT_EQ(*got, std::strtod(plain.c_str(), nullptr)) << text;
    }
    for (const char* bad :
         {"1,23", "12,3456", ",123", ".", "-", "1.2.3", "1,234.5,6", "abc", "1e", "0x10"}) {
        EXPECT_FALSE(parse_ncu_number(bad).has_value()) << bad;
    }
    EXPECT_EQ(parse_ncu_number("1e3"), 1000.0);  // exponent: general path
    EXPECT_EQ(parse_ncu_number("12345678901234567"), 12345678901234567.0);  // > 15 digits
}

// is_ncu_number and its word-wide form answer exactly what parse_ncu_number answers, on 200,000
// random strings of up to 10 characters, mostly those numbers are made of.
TEST(NcuNumber, ShapeChecksAgreeWithTheParser) {
    const std::string alphabet = "0123456789,.-+ea ";
    std::mt19937 rng(13);
    std::size_t numbers = 0;
    for (int i = 0; i < 200000; ++i) {
        const std::size_t n = 1 + rng() % 10;
        std::string text;
        for (std::size_t k = 0; k < n; ++k) {
            // Mostly digits and separators: the shapes worth checking.
            text += rng() % 3 != 0 ? alphabet[rng() % 12] : alphabet[rng() % alphabet.size()];
        }
        const bool want = parse_ncu_number(text).has_value();
        numbers += want ? 1 : 0;
        ASSERT_EQ(is_ncu_number(text), want) << '"' << text << '"';
        const std::string padded = text + "\",\"9\"\n";  // as it sits in a row
        ASSERT_EQ(is_ncu_number_padded(std::string_view(padded).substr(0, text.size())), want)
            << '"' << text << '"';
    }
    EXPECT_GT(numbers, 20000u);  // the sample holds numbers and non-numbers both
    EXPECT_FALSE(is_ncu_number(""));
    EXPECT_FALSE(is_ncu_number(std::string(65, '1')));  // longer than any number NCU prints
}

}  // namespace
}  // namespace cko::profile::ncu
