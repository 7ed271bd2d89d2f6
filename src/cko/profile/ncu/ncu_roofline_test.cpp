// A launch's roofline inputs come from its own facts, and say where the bytes came from.
#include "cko/profile/ncu/ncu_roofline.hpp"

#include "cko/profile/ncu/ncu_csv.hpp"

#include <gtest/gtest.h>

namespace cko::profile::ncu {
namespace {

TEST(NcuRoofline, CountedFlopAndDramBytesPlaceTheLaunch) {
    const NcuReport r = read_ncu_report("tests/fixtures/ncu/ncu_flops_raw.csv");
    const NcuLaunch& gemm = r.launches[0];
    EXPECT_DOUBLE_EQ(gemm.find("flop.fp32")->value, 2.5e9);  // 2 × 1e9 FFMA + 5e8 FMUL
    EXPECT_EQ(gemm.find("flop.fp32")->metric,
              "sm__sass_thread_inst_executed_op_fadd_pred_on.sum+"
              "sm__sass_thread_inst_executed_op_ffma_pred_on.sum+"
              "sm__sass_thread_inst_executed_op_fmul_pred_on.sum");
    const auto in = roofline_input(gemm);
    ASSERT_TRUE(in.has_value());
    EXPECT_EQ(in->input.precision, Precision::fp32);
    EXPECT_EQ(in->bytes_from, "dram.bytes");
    const RooflinePlacement p = place_on_roofline(in->input, *find_device_peaks(r.device_name));
    EXPECT_DOUBLE_EQ(*p.arithmetic_intensity, 25);
    EXPECT_DOUBLE_EQ(*p.achieved_flops_per_second, 2.5e12);
}

TEST(NcuRoofline, DetailsPageBytesComeFromTheRateTimesTheDuration) {
    const NcuReport r = read_ncu_report("tests/fixtures/ncu/ncu_details.csv");
    const auto in = roofline_input(r.launches[1]);  // scale_vec4
    ASSERT_TRUE(in.has_value());
    EXPECT_EQ(in->bytes_from, "dram.throughput × duration");
    EXPECT_FALSE(in->input.flops.has_value());
    const RooflinePlacement p = place_on_roofline(in->input, *find_device_peaks("h200-sxm"));
    EXPECT_NEAR(*p.bandwidth_pct_of_peak, 3.88e12 / 4.8e12 * 100, 1e-6);
}

TEST(NcuRoofline, TopStallsAreTheThreeLargestAsTheReportStatesThem) {
    const NcuReport r = read_ncu_report("tests/fixtures/ncu/ncu_flops_raw.csv");
    const nlohmann::json j = launch_to_json(r, r.launches[0]);
    ASSERT_EQ(j["top_stalls"].size(), 3u);
    EXPECT_EQ(j["top_stalls"][0]["id"], "stall.long_scoreboard_pct");
    EXPECT_EQ(j["top_stalls"][1]["id"], "stall.math_pipe_throttle_pct");
    EXPECT_EQ(j["top_stalls"][2]["id"], "stall.barrier_pct");
}

}  // namespace
}  // namespace cko::profile::ncu
