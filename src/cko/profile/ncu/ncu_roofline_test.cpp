// A launch's roofline inputs come from its own facts, and say where the bytes came from.
#include "cko/profile/ncu/ncu_roofline.hpp"

#include "cko/profile/ncu/ncu_csv.hpp"
#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <utility>

namespace cko::profile::ncu {
namespace {

TEST(NcuRoofline, CountedFlopAndDramBytesPlaceTheLaunch) {
    const NcuReport r = read_ncu_report("tests/fixtures/ncu/ncu_flops_raw.csv");
    const NcuLaunch& gemm = r.launches[0];
    EXPECT_DOUBLE_EQ(gemm.find("flop.fp32")->value, 2.5e9);  // 2 × 1e9 FFMA + 5e8 FMUL
    EXPECT_EQ(gemm.find("flop.fp32")->metric(),
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

// The device a report's roofline stands on: the one asked for, else the one the report names;
// one asked for that the peak table lacks is refused, one the report names is only noted.
TEST(NcuRoofline, TheDeviceAskedForWinsAndAnUnknownOneIsRefused) {
    NcuReport r;
    r.device_name = "NVIDIA H200";
    EXPECT_EQ(choose_roofline(r, {}).device, find_device_peaks("h200-sxm"));
    EXPECT_EQ(choose_roofline(r, {"h100-sxm", ""}).device, find_device_peaks("h100-sxm"));
    EXPECT_TRUE(choose_roofline(r, {}).note.empty());
    if (const auto e = EXPECT_CKO_ERROR((void)choose_roofline(r, {"tpu-v9", ""}),
                                        ErrorCode::invalid_argument)) {
        EXPECT_TRUE(
            std::string(e->what()).starts_with("--device 'tpu-v9' is not in the peak table"))
            << e->what();
        EXPECT_EQ(e->details()["known"].size(), device_peak_table().size());
    }
}

TEST(NcuRoofline, AReportWithoutAKnownDeviceGetsANoteInsteadOfARoofline) {
    NcuReport r;
    const RooflineChoice unnamed = choose_roofline(r, {});
    EXPECT_EQ(unnamed.device, nullptr);
    EXPECT_TRUE(unnamed.note.starts_with(
        "no roofline: the report does not name its device; pass --device (one of "))
        << unnamed.note;
    r.device_name = "Imaginary GPU";
    const RooflineChoice unknown = choose_roofline(r, {});
    EXPECT_EQ(unknown.device, nullptr);
    EXPECT_TRUE(unknown.note.starts_with(
        "no roofline: the device 'Imaginary GPU' is not in the peak table; pass --device"))
        << unknown.note;
}

TEST(NcuRoofline, ThePrecisionIsAClosedWordAndTheDeviceIsCheckedFirst) {
    NcuReport r;
    r.device_name = "h100-sxm";
    EXPECT_FALSE(choose_roofline(r, {}).precision.has_value());
    EXPECT_EQ(choose_roofline(r, {"", "bf16"}).precision, Precision::bf16);
    // Not a structured binding: EXPECT_CKO_ERROR's lambda captures `options`, which clang 14
    // refuses for a binding.
    for (const auto& row :
         {std::pair{RooflineOptions{"", "fp8"}, std::string("--precision 'fp8'")},
          std::pair{RooflineOptions{"tpu-v9", "fp8"}, std::string("--device 'tpu-v9'")}}) {
        const RooflineOptions& options = row.first;
        const std::string& refused = row.second;
        SCOPED_TRACE(options.device + " " + options.precision);
        if (const auto e =
                EXPECT_CKO_ERROR((void)choose_roofline(r, options), ErrorCode::invalid_argument)) {
            EXPECT_TRUE(std::string(e->what()).starts_with(refused)) << e->what();
        }
    }
}

// The document's top members say which device, or why none; only with one are launches placed.
TEST(NcuRoofline, TheDocumentNamesTheDeviceOrTheNote) {
    RooflineChoice with{find_device_peaks("h100-sxm"), "", Precision::fp64};
    ReportJsonExtras placed;
    add_roofline(placed, with);
    EXPECT_EQ(placed.top["device"], device_peaks_to_json(*with.device));
    EXPECT_FALSE(placed.top.contains("roofline_note"));
    EXPECT_EQ(placed.roofline_device, with.device);
    EXPECT_EQ(placed.roofline_precision, Precision::fp64);

    ReportJsonExtras noted;
    add_roofline(noted, RooflineChoice{nullptr, "no roofline: why", std::nullopt});
    EXPECT_TRUE(noted.top["device"].is_null());
    EXPECT_EQ(noted.top["roofline_note"], "no roofline: why");
    EXPECT_EQ(noted.roofline_device, nullptr);
}

}  // namespace
}  // namespace cko::profile::ncu
