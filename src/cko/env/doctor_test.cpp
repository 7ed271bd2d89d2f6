// Doctor items and exit codes for identities with and without a GPU, and a report the lead
// extends with its own items.
#include "cko/env/doctor.hpp"

#include "cko/env/testing/fake_nvml_state.hpp"

#include <gtest/gtest.h>

namespace cko::env {
namespace {

const DoctorItem* item(const DoctorReport& report, const std::string& name) {
    for (const auto& i : report.items) {
        if (i.name == name) {
            return &i;
        }
    }
    return nullptr;
}

Identity gpu_less() {
    Identity id;
    id.host.hostname = "laptop";
    id.host.machine_id = "m";
    id.host.logical_cpus = 2;
    id.notes.push_back("NVML not used: cannot load libnvidia-ml.so.1");
    Tool nvcc;
    nvcc.name = "nvcc";
    id.tools.push_back(nvcc);
    return id;
}

TEST(Doctor, NoGpuIsAWarningCpuWorkloadsStillWork) {
    const DoctorReport report = doctor_report(gpu_less(), {});
    const DoctorItem* gpu = item(report, "gpu");
    ASSERT_NE(gpu, nullptr);
    EXPECT_EQ(gpu->status, DoctorStatus::warn);
    EXPECT_NE(gpu->detail.find("no NVIDIA GPU"), std::string::npos);
    EXPECT_NE(gpu->detail.find("CPU workloads can still be measured"), std::string::npos);
    EXPECT_EQ(item(report, "tool.nvcc")->status, DoctorStatus::ok);  // not needed without a GPU
    EXPECT_EQ(report.exit_code(), 0);
    EXPECT_EQ(report.next_step.rfind("ready", 0), 0u) << report.next_step;
    const Json json = report.to_json();
    EXPECT_EQ(json["format_version"], "cko/doctor-v1");
    EXPECT_EQ(json["ready"], true);
    EXPECT_EQ(json["counts"]["blocker"], 0);
    EXPECT_TRUE(json["identity"].is_object());
    EXPECT_NE(report.to_text().find("warn     gpu"), std::string::npos) << report.to_text();
}

TEST(Doctor, RequiredGpuAndToolBecomeBlockers) {
    DoctorOptions options;
    options.require_gpu = true;
    options.require_tools = {"nvcc"};
    const DoctorReport report = doctor_report(gpu_less(), options);
    EXPECT_EQ(item(report, "gpu")->status, DoctorStatus::blocker);
    EXPECT_EQ(item(report, "tool.nvcc")->status, DoctorStatus::blocker);
    EXPECT_EQ(report.exit_code(), 3);
    EXPECT_EQ(report.next_step.rfind("gpu: ", 0), 0u) << report.next_step;
    EXPECT_EQ(report.to_json()["ready"], false);
}

TEST(Doctor, BusyGpuWarnsAndNamesTheProcesses) {
    Identity id = gpu_less();
    id.gpu_source = "nvml";
    GpuInfo gpu;
    gpu.uuid = "GPU-a";
    gpu.name = "NVIDIA H200";
    gpu.compute_capability = "9.0";
    gpu.memory_total_bytes = 100;
    gpu.memory_free_bytes = 5;
    gpu.persistence_enabled = false;
    gpu.processes.push_back({4242, std::nullopt});
    id.gpus.push_back(gpu);
    id.ncu_counters_permitted = false;
    const DoctorReport report = doctor_report(id, {});
    EXPECT_EQ(item(report, "gpu")->status, DoctorStatus::ok);
    EXPECT_EQ(item(report, "gpu.0.processes")->status, DoctorStatus::warn);
    EXPECT_NE(item(report, "gpu.0.processes")->detail.find("pid 4242"), std::string::npos);
    EXPECT_EQ(item(report, "gpu.0.memory")->status, DoctorStatus::warn);
    EXPECT_NE(item(report, "gpu.0.persistence")->fix.find("advice only"), std::string::npos);
    EXPECT_EQ(item(report, "tool.nvcc")->status, DoctorStatus::warn);
    EXPECT_EQ(item(report, "ncu_counters")->status, DoctorStatus::warn);
    EXPECT_EQ(report.exit_code(), 0);
}

TEST(Doctor, TheLeadAppendsItemsAndRefreshesTheNextStep) {
    DoctorReport report = doctor_report(gpu_less(), {});
    report.add({"spec.driver", DoctorStatus::blocker, "driver ./run.sh not found",
                "fix driver.argv[0] in cko.toml"});
    report.refresh_next_step();
    EXPECT_EQ(report.next_step, "spec.driver: fix driver.argv[0] in cko.toml");
    EXPECT_EQ(report.exit_code(), 3);
}

TEST(Doctor, RunDoctorWithTheFakeGpu) {
    testing_support::FakeNvml fake;
    fake.write(testing_support::h200_state());
    DoctorOptions options;
    options.probe.tools = false;
    options.probe.nvidia_smi = false;
    const DoctorReport report = run_doctor(options);
    EXPECT_EQ(report.exit_code(), 0);
    EXPECT_EQ(item(report, "gpu")->status, DoctorStatus::ok);
    EXPECT_NE(item(report, "gpu.0")->detail.find(testing_support::kFakeUuid), std::string::npos);
    EXPECT_NE(item(report, "gpu.0")->detail.find("(cc 9.0)"), std::string::npos);
    EXPECT_EQ(report.identity["gpus"][0]["compute_capability"], "9.0");
}

}  // namespace
}  // namespace cko::env
