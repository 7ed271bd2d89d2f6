// Host probing: the pure parsers, and the live probe on whatever machine runs the test.
#include "cko/env/host.hpp"

#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>

namespace cko::env {
namespace {

GetEnv env_of(std::map<std::string, std::string> vars) {
    auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
    return [shared](const char* name) -> const char* {
        const auto it = shared->find(name);
        return it == shared->end() ? nullptr : it->second.c_str();
    };
}

TEST(Host, CpuModelFromX86AndArmCpuinfo) {
    EXPECT_EQ(cpu_model_from_cpuinfo("processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core\n"),
              "AMD EPYC 9654 96-Core");
    EXPECT_EQ(cpu_model_from_cpuinfo("processor : 0\nCPU implementer : 0x41\nCPU part : 0xd4f\n"),
              "implementer 0x41 part 0xd4f");
    EXPECT_EQ(cpu_model_from_cpuinfo(""), "");
}

TEST(Host, ContainerHintsFromMarkersCgroupAndEnvironment) {
    const test::TempDir scratch;
    const auto root = scratch / "host_test_root";
    std::filesystem::create_directories(root);
    std::ofstream(root / ".dockerenv").put('\n');
    const auto hints = container_hints("0::/kubepods/burstable/pod1/abc\n", root,
                                       env_of({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}}));
    ASSERT_EQ(hints.size(), 3u);
    EXPECT_EQ(hints[0], "/.dockerenv exists");
    EXPECT_EQ(hints[1], "cgroup of pid 1 mentions kubepods");
    EXPECT_EQ(hints[2], "KUBERNETES_SERVICE_HOST is set");
    std::filesystem::remove_all(root);
    EXPECT_TRUE(container_hints("0::/\n", root, env_of({})).empty());
}

TEST(Host, SchedulerFromEnvironment) {
    const auto slurm = scheduler_from_env(env_of({{"SLURM_JOB_ID", "4242"}}));
    ASSERT_TRUE(slurm);
    EXPECT_EQ(slurm->name, "slurm");
    EXPECT_EQ(slurm->job_id, "4242");
    // JOB_ID alone is too common to mean Grid Engine.
    EXPECT_FALSE(scheduler_from_env(env_of({{"JOB_ID", "7"}})));
    EXPECT_EQ(scheduler_from_env(env_of({{"JOB_ID", "7"}, {"SGE_ROOT", "/opt/sge"}}))->name, "sge");
}

TEST(Host, MeminfoInBytes) {
    const std::string meminfo = "MemTotal:       16310268 kB\nMemAvailable:    8000000 kB\n";
    EXPECT_EQ(meminfo_bytes(meminfo, "MemTotal"), 16310268ull * 1024);
    EXPECT_EQ(meminfo_bytes(meminfo, "MemAvailable"), 8000000ull * 1024);
    EXPECT_FALSE(meminfo_bytes(meminfo, "SwapTotal"));
}

TEST(Host, LiveProbeHasStableKeys) {
    const Host host = probe_host();
    EXPECT_FALSE(host.hostname.empty());
    EXPECT_FALSE(host.kernel_release.empty());
    EXPECT_GT(host.logical_cpus, 0u);
    const Json json = host.to_json();
    for (const char* key : {"machine_id", "boot_id", "hostname", "kernel_release", "cpu_model",
                            "logical_cpus", "in_container", "container_hints", "scheduler"}) {
        EXPECT_TRUE(json.contains(key)) << key;
    }
}

}  // namespace
}  // namespace cko::env
