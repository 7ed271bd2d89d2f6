// Diff: launches pair by kernel name and launch order; deltas are relative to A.
#include "cko/profile/ncu/ncu_diff.hpp"

#include "cko/profile/ncu/ncu_csv.hpp"

#include <gtest/gtest.h>

namespace cko::profile::ncu {
namespace {

const FactDelta* delta(const LaunchPair& pair, std::string_view id) {
    for (const FactDelta& d : pair.deltas) {
        if (d.id == id) {
            return &d;
        }
    }
    return nullptr;
}

TEST(NcuDiff, PairsTheNthLaunchOfEachKernelAndListsTheRest) {
    const NcuReport a = read_ncu_report("tests/fixtures/ncu/ncu_flops_raw.csv");
    const NcuReport b = read_ncu_report("tests/fixtures/ncu/ncu_flops_raw_b.csv");
    const NcuDiff diff = diff_ncu_reports(a, b);
    ASSERT_EQ(diff.pairs.size(), 2u);
    EXPECT_EQ(diff.pairs[0].a_index, 0u);
    EXPECT_EQ(diff.pairs[0].b_index, 0u);
    EXPECT_EQ(diff.pairs[1].a_index, 2u);  // A's second gemm is its third launch
    EXPECT_EQ(diff.pairs[1].b_index, 1u);
    EXPECT_EQ(diff.pairs[1].occurrence, 1u);
    ASSERT_EQ(diff.unmatched.size(), 2u);
    EXPECT_EQ(diff.unmatched[0].side, 'A');
    EXPECT_EQ(diff.unmatched[0].kernel, "axpy(float, const float *, float *, int)");
    EXPECT_EQ(diff.unmatched[1].side, 'B');
    EXPECT_EQ(diff.unmatched[1].occurrence, 2u);
}

TEST(NcuDiff, DeltasArePercentOfTheBaseline) {
    const NcuReport a = read_ncu_report("tests/fixtures/ncu/ncu_flops_raw.csv");
    const NcuReport b = read_ncu_report("tests/fixtures/ncu/ncu_flops_raw_b.csv");
    const NcuDiff diff = diff_ncu_reports(a, b);
    EXPECT_DOUBLE_EQ(*delta(diff.pairs[0], "duration")->delta_pct, -50.0);
    EXPECT_DOUBLE_EQ(*delta(diff.pairs[0], "stall.math_pipe_throttle_pct")->delta_pct, 150.0);
    EXPECT_DOUBLE_EQ(*delta(diff.pairs[0], "flop.fp32")->delta_pct, 0.0);
    EXPECT_DOUBLE_EQ(*delta(diff.pairs[0], "flop.fp64")->delta_pct, 0.0);  // 0 → 0
    const nlohmann::json j = diff_to_json(diff, a, b);
    EXPECT_EQ(j["pairs"][1]["a_launch_id"], 2);
    EXPECT_EQ(j["unmatched"][0]["side"], "A");
}

TEST(NcuDiff, AReportAgainstItselfHasNoChange) {
    const NcuReport a = read_ncu_report("tests/fixtures/ncu/ncu_details.csv");
    const NcuDiff diff = diff_ncu_reports(a, a);
    EXPECT_EQ(diff.pairs.size(), 7u);
    EXPECT_TRUE(diff.unmatched.empty());
    for (const LaunchPair& p : diff.pairs) {
        for (const FactDelta& d : p.deltas) {
            EXPECT_EQ(d.delta_pct, 0.0) << d.id;
        }
    }
}

}  // namespace
}  // namespace cko::profile::ncu
