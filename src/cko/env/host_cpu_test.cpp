// Host CPU readings: /proc/stat's counters and run queue, cpufreq present or absent, the window.
#include "cko/env/host_cpu.hpp"

#include "cko/env/contamination.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace cko::env {
namespace {
namespace fs = std::filesystem;

constexpr const char* kStat =
    "cpu  100 5 20 800 10 1 2 12 7 0\n"
    "cpu0 50 2 10 400 5 0 1 6 3 0\n"
    "intr 1 2 3\nctxt 99\nprocs_running 7\nprocs_blocked 0\n";

TEST(HostCpu, ReadsTheAggregateCountersAndTheRunQueue) {
    const auto t = cpu_times_from_stat(kStat);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->total, 100u + 5 + 20 + 800 + 10 + 1 + 2 + 12);  // guest is inside user
    EXPECT_EQ(t->idle, 810u);
    EXPECT_EQ(t->steal, 12u);
    EXPECT_EQ(procs_running_from_stat(kStat), 7u);
    EXPECT_FALSE(cpu_times_from_stat("intr 1 2\n"));
    EXPECT_FALSE(cpu_times_from_stat("cpu  1 2\n"));
    EXPECT_FALSE(procs_running_from_stat("cpu  1 2 3 4 5 6 7 8\n"));
}

TEST(HostCpu, FrequencyIsTheMeanOverCpusAndUnknownWithoutCpufreq) {
    const test::TempDir scratch;
    const fs::path dir = scratch / "cpufreq-test";
    fs::create_directories(dir / "cpu0" / "cpufreq");
    fs::create_directories(dir / "cpu1" / "cpufreq");
    fs::create_directories(dir / "cpufreq");  // not a CPU
    EXPECT_FALSE(mean_cpu_freq_mhz(dir));     // none exposes scaling_cur_freq: unknown
    std::ofstream(dir / "cpu0" / "cpufreq" / "scaling_cur_freq") << "2000000\n";
    std::ofstream(dir / "cpu1" / "cpufreq" / "scaling_cur_freq") << "3000000\n";
    ASSERT_TRUE(mean_cpu_freq_mhz(dir));
    EXPECT_DOUBLE_EQ(*mean_cpu_freq_mhz(dir), 2500.0);
    EXPECT_FALSE(mean_cpu_freq_mhz(dir / "missing"));
}

TEST(HostCpu, ReadingNowGivesCountersOnLinux) {
    const HostCpuReading r = read_host_cpu();
    EXPECT_TRUE(r.times);
    EXPECT_TRUE(r.procs_running);
    EXPECT_GE(online_cpus(), 1u);
}

MonitorSample host_sample(std::uint64_t total, std::uint64_t idle, std::uint64_t steal,
                          unsigned running, std::optional<double> freq) {
    MonitorSample s;
    s.host.times = CpuTimes{total, idle, steal};
    s.host.procs_running = running;
    s.host.freq_mhz = freq;
    s.load_1m = running;
    return s;
}

TEST(HostCpu, TheWindowCountsTheRunQueueWithoutTheReaderAndTicksFirstToLast) {
    const std::vector<MonitorSample> window{host_sample(1000, 900, 0, 1, std::nullopt),
                                            host_sample(1200, 950, 10, 5, 2400.0),
                                            host_sample(1400, 1000, 20, 3, 1800.0)};
    const HostObservation h = observe_host(window, 2);
    EXPECT_EQ(h.samples, 3u);
    EXPECT_DOUBLE_EQ(*h.load_per_cpu(), (0.0 + 4 + 2) / 3 / 2);
    EXPECT_DOUBLE_EQ(*h.busy_pct(), 100.0 * (400 - 100) / 400);
    EXPECT_DOUBLE_EQ(*h.steal_pct(), 100.0 * 20 / 400);
    EXPECT_EQ(h.freq_samples, 2u);
    EXPECT_DOUBLE_EQ(*h.freq_min_mhz, 1800.0);
    EXPECT_DOUBLE_EQ(*h.freq_max_mhz, 2400.0);
    EXPECT_DOUBLE_EQ(*h.load_1m_max, 5.0);

    HostObservation both = h;
    both.add(observe_host({host_sample(5000, 4000, 0, 9, std::nullopt)}, 2));
    EXPECT_EQ(both.samples, 4u);
    EXPECT_DOUBLE_EQ(*both.load_per_cpu(), (0.0 + 4 + 2 + 8) / 4 / 2);
    EXPECT_EQ(both.ticks, 400u);  // one reading spans no interval

    const Json j = observe_host({}, 2).to_json();
    EXPECT_TRUE(j["load_per_cpu"].is_null());
    EXPECT_TRUE(j["cpu_freq_mhz"].is_null());  // unknown is recorded, not a failure
}

}  // namespace
}  // namespace cko::env
