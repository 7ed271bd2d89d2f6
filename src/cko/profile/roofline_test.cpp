// Roofline: the peak table, the ridge point, and where a launch sits.
#include "cko/profile/roofline.hpp"

#include <gtest/gtest.h>

namespace cko::profile {
namespace {

TEST(DevicePeakTable, CoversTheDevicesWeMeetAndCitesASourceForEach) {
    for (const char* key : {"h100-sxm", "h200-sxm", "a100-sxm4-80gb", "l40s", "rtx-4090", "b200"}) {
        const DevicePeaks* d = find_device_peaks(key);
        ASSERT_NE(d, nullptr) << key;
        EXPECT_GT(d->dram_bytes_per_second, 0);
        EXPECT_FALSE(d->source.empty());
    }
    EXPECT_EQ(find_device_peaks("NVIDIA H200"), find_device_peaks("h200-sxm"));  // NCU's name
    EXPECT_EQ(find_device_peaks("NVIDIA H200 NVL"), nullptr);  // another board, other peaks
}

TEST(Roofline, RidgePointIsPeakFlopsOverPeakBandwidth) {
    const DevicePeaks& h200 = *find_device_peaks("h200-sxm");
    const RooflinePlacement p = place_on_roofline(RooflineInput{}, h200);
    EXPECT_DOUBLE_EQ(*p.ridge_point, 67e12 / 4.8e12);  // fp32: ~14 flop/byte
}

TEST(Roofline, ALowIntensityKernelSitsUnderTheMemoryRoof) {
    const DevicePeaks& h200 = *find_device_peaks("h200-sxm");
    // 2.5 GFLOP over 100 MB in 1 ms: 25 flop/byte, 2.5 TFLOP/s, 100 GB/s.
    const RooflinePlacement p =
        place_on_roofline(RooflineInput{2.5e9, 1e8, 1e6, Precision::fp32}, h200);
    EXPECT_DOUBLE_EQ(*p.arithmetic_intensity, 25);
    EXPECT_DOUBLE_EQ(*p.achieved_flops_per_second, 2.5e12);
    EXPECT_DOUBLE_EQ(*p.achieved_bytes_per_second, 1e11);
    EXPECT_EQ(p.region, "compute");  // 25 > 13.96
    EXPECT_NEAR(*p.pct_of_roof, 2.5e12 / 67e12 * 100, 1e-9);
    const RooflinePlacement low =
        place_on_roofline(RooflineInput{1e6, 1e8, 1e6, Precision::fp32}, h200);
    EXPECT_EQ(low.region, "memory");
    EXPECT_NEAR(*low.pct_of_roof, 1e9 / (0.01 * 4.8e12) * 100, 1e-9);
}

TEST(Roofline, WithoutFlopCountsOnlyTheBandwidthSideIsKnown) {
    const DevicePeaks& h200 = *find_device_peaks("h200-sxm");
    // scale_vec4 on the H200: 3.88 TB/s as the details page states it.
    const RooflinePlacement p = place_on_roofline(
        RooflineInput{std::nullopt, 3.88e12 * 132.8e-6, 132800, Precision::fp32}, h200);
    EXPECT_NEAR(*p.bandwidth_pct_of_peak, 80.83, 0.01);
    EXPECT_FALSE(p.arithmetic_intensity.has_value());
    EXPECT_TRUE(p.region.empty());
    const std::vector<Fact> facts = roofline_facts(p, Scope{});
    EXPECT_EQ(facts.front().id, "roofline.achieved_bytes");
}

TEST(Roofline, AMissingPeakIsNeverGuessed) {
    const DevicePeaks& l40s = *find_device_peaks("l40s");
    const RooflinePlacement p =
        place_on_roofline(RooflineInput{1e9, 1e8, 1e6, Precision::fp64}, l40s);
    EXPECT_FALSE(p.ridge_point.has_value());
    EXPECT_FALSE(p.pct_of_roof.has_value());
    EXPECT_DOUBLE_EQ(*p.arithmetic_intensity, 10);
}

}  // namespace
}  // namespace cko::profile
