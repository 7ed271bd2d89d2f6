// A host with two GPUs on the fake NVML: the identity lists both and how they are linked, doctor
// says so, and the monitor of a two-GPU set flags a foreign process on the second GPU or a GPU that
// vanished.
#include "cko/env/doctor.hpp"
#include "cko/env/identity.hpp"
#include "cko/env/monitor.hpp"
#include "cko/env/testing/fake_nvml_state.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

namespace cko::env {
namespace {
namespace fs = std::filesystem;
using testing_support::FakeNvml;

constexpr const char* kUuid0 = "GPU-00000000-1111-2222-3333-444444444444";
constexpr const char* kUuid1 = "GPU-11111111-1111-2222-3333-444444444444";

// Two busy H200s at full clock; `extra` lines override.
std::string two_gpus(const std::string& extra = "") {
    std::string state = "driver=580.159.04\ncuda=13000\ncount=2\n";
    for (int i = 0; i < 2; ++i) {
        const std::string p = "gpu" + std::to_string(i) + ".";
        state += p + "uuid=" + (i == 0 ? kUuid0 : kUuid1) + "\n" + p + "name=NVIDIA H200\n" + p +
                 "cc=9.0\n" + p + "sm_clock=1980\n" + p + "sm_clock_max=1980\n" + p + "util=90\n" +
                 p + "reasons=0\n";
    }
    return state + extra;
}

ProbeOptions hermetic() {
    ProbeOptions options;
    options.tools = false;
    options.nvidia_smi = false;
    return options;
}

const DoctorItem* topology_item(const DoctorReport& report, const std::string& name) {
    const auto it = std::find_if(report.items.begin(), report.items.end(),
                                 [&](const DoctorItem& i) { return i.name == name; });
    return it == report.items.end() ? nullptr : &*it;
}

TEST(GpuSet, IdentityHasEveryGpuAndTheirLink) {
    FakeNvml fake;
    fake.write(two_gpus("topo.0.1=10\nnvlink.0.1=1\n"));
    const Identity id = probe_identity(hermetic());
    ASSERT_EQ(id.gpus.size(), 2u);
    EXPECT_EQ(id.gpus[1].uuid, kUuid1);
    ASSERT_EQ(id.gpu_topology.size(), 1u);
    const GpuLink& link = id.gpu_topology[0];
    EXPECT_EQ(link.a_uuid, kUuid0);
    EXPECT_EQ(link.b_uuid, kUuid1);
    EXPECT_EQ(link.common_ancestor, "single_switch");
    EXPECT_EQ(link.nvlink, true);
    const Json json = id.to_json();
    EXPECT_EQ(json["gpu_topology"][0]["common_ancestor"], "single_switch");
    EXPECT_EQ(json["gpu_topology"][0]["nvlink"], true);
    EXPECT_TRUE(id.notes.empty()) << id.notes.front();

    DoctorOptions options;
    const DoctorReport report = doctor_report(id, options);
    const DoctorItem* topo = topology_item(report, "gpu_topology");
    ASSERT_NE(topo, nullptr);
    EXPECT_EQ(topo->detail, "0-1: NVLink, common ancestor single_switch");
}

TEST(GpuSet, PcieOnlyPairAndUnknownLinkAreSaidAsSuch) {
    FakeNvml fake;
    fake.write(two_gpus("topo.0.1=50\nnvlink.0.1=0\n"));
    Identity id = probe_identity(hermetic());
    ASSERT_EQ(id.gpu_topology.size(), 1u);
    EXPECT_EQ(id.gpu_topology[0].common_ancestor, "system");
    EXPECT_EQ(id.gpu_topology[0].nvlink, false);
    EXPECT_EQ(topology_item(doctor_report(id, {}), "gpu_topology")->detail,
              "0-1: no NVLink, common ancestor system");

    fake.write(two_gpus());  // the driver answers NOT_SUPPORTED for both calls
    id = probe_identity(hermetic());
    ASSERT_EQ(id.gpu_topology.size(), 1u);
    EXPECT_TRUE(id.gpu_topology[0].common_ancestor.empty());
    EXPECT_FALSE(id.gpu_topology[0].nvlink.has_value());
    EXPECT_TRUE(id.to_json()["gpu_topology"][0]["nvlink"].is_null());
    EXPECT_EQ(topology_item(doctor_report(id, {}), "gpu_topology")->detail,
              "0-1: NVLink unknown, common ancestor unknown");
}

TEST(GpuSet, OneGpuHasNoTopology) {
    FakeNvml fake;
    fake.write(testing_support::h200_state());
    const Identity id = probe_identity(hermetic());
    EXPECT_TRUE(id.gpu_topology.empty());
    EXPECT_TRUE(id.to_json()["gpu_topology"].is_array());
    EXPECT_EQ(topology_item(doctor_report(id, {}), "gpu_topology"), nullptr);
}

MonitorSummary monitor_window(FakeNvml& fake, const std::string& during, const std::string& name) {
    MonitorOptions options;
    options.reader.nvidia_smi = false;
    static const test::TempDir dir("cko-gpu-set");  // this process's own, removed at exit
    const fs::path jsonl = dir / (name + ".gpu_set.jsonl");
    fs::remove(jsonl);
    Monitor monitor({kUuid0, kUuid1}, jsonl, std::chrono::milliseconds(20), {}, {}, options);
    monitor.start();
    fake.write(during);
    const std::size_t seen = monitor.samples().size();
    for (int i = 0; i < 1000 && monitor.samples().size() < seen + 3; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return monitor.stop();
}

TEST(GpuSet, AForeignProcessOnTheSecondGpuContaminatesTheWindow) {
    FakeNvml fake;
    fake.write(two_gpus());
    const MonitorSummary clean = monitor_window(fake, two_gpus(), "clean");
    EXPECT_FALSE(clean.contaminated);
    EXPECT_TRUE(clean.gpu_verified);

    const MonitorSummary dirty = monitor_window(fake, two_gpus("gpu1.procs=424242:na\n"), "second");
    EXPECT_TRUE(dirty.contaminated);
    EXPECT_EQ(dirty.foreign_pids, std::vector<pid_t>{424242});
    ASSERT_FALSE(dirty.reasons.empty());
    EXPECT_NE(dirty.reasons[0].find(kUuid1), std::string::npos) << dirty.reasons[0];
}

TEST(GpuSet, ASecondGpuThatVanishesIsNotVerified) {
    FakeNvml fake;
    fake.write(two_gpus());
    const MonitorSummary summary = monitor_window(fake, two_gpus("count=1\n"), "vanished");
    EXPECT_FALSE(summary.gpu_verified);
}

TEST(GpuSet, ALinkThatChangedFromNvlinkMakesTheIdentityIncomparable) {
    Identity frozen;
    frozen.gpu_source = "nvml";
    for (const char* uuid : {kUuid0, kUuid1}) {
        GpuInfo g;
        g.uuid = uuid;
        g.name = "NVIDIA H200";
        frozen.gpus.push_back(g);
    }
    frozen.gpu_topology.push_back({kUuid0, kUuid1, "single_switch", true});
    Identity now = frozen;
    EXPECT_FALSE(identity_mismatch(frozen.to_json(), now));
    now.gpu_topology[0].nvlink = false;
    now.gpu_topology[0].common_ancestor = "system";
    const auto why = identity_mismatch(frozen.to_json(), now);
    ASSERT_TRUE(why);
    EXPECT_NE(why->find("nvlink was 'true', now 'false'"), std::string::npos) << *why;
    EXPECT_NE(why->find("common_ancestor was 'single_switch', now 'system'"), std::string::npos)
        << *why;
    now.gpu_topology[0].nvlink.reset();  // unknown now: noted, not a mismatch on its own
    now.gpu_topology[0].common_ancestor = "single_switch";
    EXPECT_FALSE(identity_mismatch(frozen.to_json(), now));
}

}  // namespace
}  // namespace cko::env
