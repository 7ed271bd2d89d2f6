// A launch's roofline inputs come from its own facts, and say where the bytes came from.
#include "cko/profile/ncu/ncu_roofline.hpp"

#include "cko/profile/ncu/ncu_csv.hpp"

#include <gtest/gtest.h>

#include <sstream>

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

// The document writes each launch's roofline as it goes; it must print what the DOM prints, and a
// launch without a duration gets no member.
TEST(NcuRoofline, StreamedRooflineIsTheDomOfEachLaunch) {
    for (const char* file :
         {"tests/fixtures/ncu/ncu_flops_raw.csv", "tests/fixtures/ncu/ncu_details.csv",
          "tests/fixtures/ncu/ncu_raw.csv"}) {
        const NcuReport r = read_ncu_report(file);
        for (const auto precision : {std::optional<Precision>(), std::optional(Precision::fp64)}) {
            ReportJsonExtras extras;
            extras.roofline_device = find_device_peaks("h100-sxm");
            extras.roofline_precision = precision;
            std::ostringstream out;
            write_report_json(r, out, extras);
            const nlohmann::json doc = nlohmann::json::parse(out.str());
            ASSERT_EQ(doc["launches"].size(), r.launches.size());
            for (std::size_t i = 0; i < r.launches.size(); ++i) {
                SCOPED_TRACE(testing::Message() << file << " launch " << i);
                const nlohmann::json want =
                    launch_roofline_to_json(r.launches[i], *extras.roofline_device, precision);
                const nlohmann::json& launch = doc["launches"][i];
                if (want.is_null()) {
                    EXPECT_FALSE(launch.contains("roofline"));
                } else {
                    EXPECT_EQ(launch["roofline"], want);
                    // Byte for byte, members in the DOM's order.
                    EXPECT_NE(out.str().find("\"roofline\":" + want.dump()), std::string::npos);
                }
            }
        }
    }
}

}  // namespace
}  // namespace cko::profile::ncu
