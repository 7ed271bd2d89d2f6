// probe_identity against the fake NVML: every field read, NOT_SUPPORTED left absent, errors noted.
#include "cko/env/identity.hpp"

#include "cko/env/testing/fake_nvml_state.hpp"

#include <gtest/gtest.h>

namespace cko::env {
namespace {

ProbeOptions hermetic() {
    ProbeOptions options;
    options.tools = false;
    options.nvidia_smi = false;  // a GPU host's nvidia-smi must not answer for the fake
    return options;
}

TEST(Identity, ReadsTheFakeGpu) {
    testing_support::FakeNvml fake;
    fake.write(testing_support::h200_state() + "gpu0.procs=4242:1073741824,4343:na\n");
    const Identity id = probe_identity(hermetic());
    EXPECT_EQ(id.gpu_source, "nvml");
    ASSERT_EQ(id.gpus.size(), 1u);
    const GpuInfo& g = id.gpus[0];
    EXPECT_EQ(g.uuid, testing_support::kFakeUuid);
    EXPECT_EQ(g.name, "NVIDIA H200");
    EXPECT_EQ(g.compute_capability, "9.0");
    EXPECT_EQ(g.memory_total_bytes, 150754820096ull);
    EXPECT_EQ(g.memory_free_bytes, 150000000000ull);
    EXPECT_EQ(id.driver_version, "570.86.15");
    EXPECT_EQ(id.cuda_driver_version, "12.8");
    EXPECT_EQ(g.mig_enabled, false);
    EXPECT_EQ(g.ecc_enabled, true);
    EXPECT_EQ(g.persistence_enabled, true);
    EXPECT_EQ(g.sm_clock_max_mhz, 1980u);
    EXPECT_DOUBLE_EQ(*g.power_w, 75.5);
    EXPECT_DOUBLE_EQ(*g.power_limit_w, 700.0);
    ASSERT_EQ(g.processes.size(), 2u);
    EXPECT_EQ(g.processes[0].pid, 4242);
    EXPECT_EQ(g.processes[0].used_memory_bytes, 1073741824ull);
    EXPECT_FALSE(g.processes[1].used_memory_bytes);  // NVML_VALUE_NOT_AVAILABLE
    // The fake does not know the memory clock: NOT_SUPPORTED → null, and no note for it.
    const Json json = id.to_json();
    EXPECT_EQ(json["format_version"], "cko/identity-v1");
    EXPECT_TRUE(json["gpus"][0]["mem_clock_mhz"].is_null());
    EXPECT_TRUE(id.notes.empty()) << id.notes.front();
}

TEST(Identity, AFailingCallIsNotedAndItsFieldAbsent) {
    testing_support::FakeNvml fake;
    fake.write(testing_support::h200_state() + "gpu0.fail.power_mw=4\n");
    const Identity id = probe_identity(hermetic());
    ASSERT_EQ(id.gpus.size(), 1u);
    EXPECT_FALSE(id.gpus[0].power_w);
    ASSERT_EQ(id.notes.size(), 1u);
    EXPECT_NE(id.notes[0].find("nvmlDeviceGetPowerUsage(GPU 0): Insufficient Permissions"),
              std::string::npos)
        << id.notes[0];
}

TEST(Identity, ManyProcessesNeedTheSizingRetry) {
    testing_support::FakeNvml fake;
    std::string procs = "gpu0.procs=";
    for (int pid = 1000; pid < 1040; ++pid) {
        procs += std::to_string(pid) + ":4096,";
    }
    procs.pop_back();
    fake.write(testing_support::h200_state() + procs + "\n");
    const Identity id = probe_identity(hermetic());
    ASSERT_EQ(id.gpus.size(), 1u);
    ASSERT_EQ(id.gpus[0].processes.size(), 40u);
    EXPECT_EQ(id.gpus[0].processes[39].pid, 1039);
}

TEST(Identity, InitFailureMeansNoGpuWithTheReason) {
    testing_support::FakeNvml fake;
    fake.write("init=9\n");
    const Identity id = probe_identity(hermetic());
    EXPECT_EQ(id.gpu_source, "none");
    EXPECT_TRUE(id.gpus.empty());
    ASSERT_FALSE(id.notes.empty());
    EXPECT_NE(id.notes[0].find("nvmlInit_v2 failed: Driver Not Loaded"), std::string::npos)
        << id.notes[0];
    EXPECT_TRUE(id.to_json()["driver_version"].is_null());
}

TEST(Identity, MissingLibraryMeansNoGpu) {
    testing_support::FakeNvml fake("/nonexistent/libnvidia-ml.so.1");
    const Identity id = probe_identity(hermetic());
    EXPECT_EQ(id.gpu_source, "none");
    ASSERT_FALSE(id.notes.empty());
    EXPECT_NE(id.notes[0].find("cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos)
        << id.notes[0];
}

}  // namespace
}  // namespace cko::env
