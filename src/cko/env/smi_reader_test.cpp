// nvidia-smi CSV parsing: N/A cells stay absent, units converted, odd rows become notes.
#include "cko/env/smi_reader.hpp"

#include <gtest/gtest.h>

namespace cko::env {
namespace {

TEST(SmiReader, FullRowWithNotAvailableCells) {
    const auto fields = smi_gpu_fields(GpuDetail::full, true);
    const std::string csv =
        "0, GPU-8f1c2d3e-0000-1111-2222-333344445555, NVIDIA H200, 9.0, 143771, 143000, "
        "570.86.15, Disabled, Enabled, Enabled, 345, 1980, 2619, 3201, 73.21, 700.00, 31, 0\n";
    std::vector<std::string> notes;
    const auto gpus = parse_smi_gpus(csv, fields, notes);
    ASSERT_EQ(gpus.size(), 1u) << (notes.empty() ? "" : notes.front());
    const GpuInfo& g = gpus[0];
    EXPECT_EQ(g.uuid, "GPU-8f1c2d3e-0000-1111-2222-333344445555");
    EXPECT_EQ(g.name, "NVIDIA H200");
    EXPECT_EQ(g.compute_capability, "9.0");
    EXPECT_EQ(g.memory_total_bytes, 143771ull * 1024 * 1024);
    EXPECT_EQ(g.mig_enabled, false);
    EXPECT_EQ(g.ecc_enabled, true);
    EXPECT_EQ(g.sm_clock_max_mhz, 1980u);
    EXPECT_DOUBLE_EQ(*g.power_w, 73.21);
    EXPECT_EQ(g.utilization_pct, 0u);

    const std::string na =
        "1, GPU-b, Tesla T4, [N/A], 15360, 15000, 535.1, [N/A], [Not Supported], Disabled, 300, "
        "1590, [N/A], 5001, [N/A], 70.00, 40, 3\n";
    const auto more = parse_smi_gpus(na, fields, notes);
    ASSERT_EQ(more.size(), 1u);
    EXPECT_EQ(more[0].compute_capability, "");
    EXPECT_FALSE(more[0].mig_enabled);
    EXPECT_FALSE(more[0].ecc_enabled);
    EXPECT_FALSE(more[0].mem_clock_mhz);
    EXPECT_FALSE(more[0].power_w);
    EXPECT_EQ(more[0].persistence_enabled, false);
    EXPECT_TRUE(more[0].to_json()["power_w"].is_null());
}

TEST(SmiReader, MalformedRowsBecomeNotes) {
    std::vector<std::string> notes;
    const auto gpus =
        parse_smi_gpus("0, GPU-a, 1980\n\n", smi_gpu_fields(GpuDetail::sample, true), notes);
    EXPECT_TRUE(gpus.empty());
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("expected 7"), std::string::npos);
}

TEST(SmiReader, ComputeAppsAttachByUuid) {
    std::vector<GpuInfo> gpus(2);
    gpus[0].uuid = "GPU-a";
    gpus[1].uuid = "GPU-b";
    std::vector<std::string> notes;
    attach_smi_processes("GPU-b, 4242, 1024\nGPU-a, 77, [N/A]\ngarbage\n", gpus, notes);
    ASSERT_EQ(gpus[1].processes.size(), 1u);
    EXPECT_EQ(gpus[1].processes[0].pid, 4242);
    EXPECT_EQ(gpus[1].processes[0].used_memory_bytes, 1024ull * 1024 * 1024);
    ASSERT_EQ(gpus[0].processes.size(), 1u);
    EXPECT_FALSE(gpus[0].processes[0].used_memory_bytes);
    EXPECT_EQ(notes.size(), 1u);
}

}  // namespace
}  // namespace cko::env
