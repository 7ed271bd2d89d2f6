// The contamination rule over hand-made windows: foreign processes, held-low clocks, idle GPUs.
#include "cko/env/contamination.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

namespace cko::env {
namespace {

MonitorGpuSample busy_at(unsigned sm_clock) {
    MonitorGpuSample gpu;
    gpu.uuid = "GPU-a";
    gpu.sm_clock_mhz = sm_clock;
    gpu.sm_clock_max_mhz = 1980;
    gpu.utilization_pct = 100;
    gpu.clock_event_reasons = 0;
    return gpu;
}

std::vector<MonitorSample> window(const std::vector<MonitorGpuSample>& gpus) {
    std::vector<MonitorSample> samples;
    std::int64_t t = 1'700'000'000'000'000'000;
    for (const auto& gpu : gpus) {
        MonitorSample s;
        s.unix_ns = t += 200'000'000;
        s.gpus.push_back(gpu);
        samples.push_back(s);
    }
    return samples;
}

TEST(Contamination, CleanWindow) {
    const auto summary =
        summarize_samples(window({busy_at(1980), busy_at(1965), busy_at(1980)}), {});
    EXPECT_EQ(summary.samples, 3u);
    EXPECT_FALSE(summary.contaminated);
    EXPECT_TRUE(summary.gpu_verified);
    EXPECT_DOUBLE_EQ(summary.low_clock_share, 0.0);
}

TEST(Contamination, ForeignProcessIsNamedWithItsCount) {
    auto gpus = std::vector<MonitorGpuSample>(5, busy_at(1980));
    gpus[0].processes.push_back({100, 1 << 20, true});
    gpus[3].processes.push_back({777, std::nullopt, false});
    gpus[4].processes.push_back({777, std::nullopt, false});
    const auto summary = summarize_samples(window(gpus), {});
    EXPECT_TRUE(summary.contaminated);
    EXPECT_EQ(summary.foreign_pids, std::vector<pid_t>{777});
    ASSERT_EQ(summary.reasons.size(), 1u);
    EXPECT_EQ(summary.reasons[0], "another compute process on GPU GPU-a: pid 777 in 2/5 samples");
}

TEST(Contamination, LowClockShareAtTheLimitContaminates) {
    // 1 of 5 busy samples below 75 % of 1980 MHz = 20 % = the default limit.
    const auto at_limit = summarize_samples(
        window({busy_at(1400), busy_at(1980), busy_at(1980), busy_at(1980), busy_at(1980)}), {});
    EXPECT_TRUE(at_limit.contaminated);
    EXPECT_DOUBLE_EQ(at_limit.low_clock_share, 0.2);
    EXPECT_NE(at_limit.reasons[0].find("below 75% of its max in 1/5 busy samples"),
              std::string::npos)
        << at_limit.reasons[0];
    // 1 of 6 is under the limit; 1485 MHz is exactly 75 %, which is not below it.
    const auto under = summarize_samples(window({busy_at(1400), busy_at(1485), busy_at(1980),
                                                 busy_at(1980), busy_at(1980), busy_at(1980)}),
                                         {});
    EXPECT_FALSE(under.contaminated);
}

TEST(Contamination, IdleSamplesDoNotCountAgainstClocks) {
    MonitorGpuSample idle = busy_at(345);
    idle.utilization_pct = 0;
    MonitorGpuSample idle_reason = busy_at(345);
    idle_reason.clock_event_reasons = 0x1;  // NVML: clocks low because the GPU is idle
    const auto summary = summarize_samples(window({idle, idle_reason, busy_at(1980)}), {});
    EXPECT_FALSE(summary.contaminated);
    EXPECT_DOUBLE_EQ(summary.low_clock_share, 0.0);
    const auto all_idle = summarize_samples(window({idle, idle}), {});
    EXPECT_FALSE(all_idle.contaminated);
    ASSERT_EQ(all_idle.notes.size(), 1u);
    EXPECT_NE(all_idle.notes[0].find("never busy"), std::string::npos);
}

TEST(Contamination, StricterRuleAndUnseenGpu) {
    MonitorRule rule;
    rule.low_clock_ratio = 0.95;
    rule.foreign_processes_contaminate = false;
    auto gpus = std::vector<MonitorGpuSample>{busy_at(1800), busy_at(1980)};
    gpus[1].processes.push_back({777, std::nullopt, false});
    MonitorGpuSample lost;
    lost.uuid = "GPU-a";
    lost.seen = false;
    gpus.push_back(lost);
    const auto summary = summarize_samples(window(gpus), rule);
    EXPECT_TRUE(summary.contaminated);  // 1800 < 0.95 * 1980 in 1 of 2 busy samples
    EXPECT_EQ(summary.reasons.size(), 1u);
    EXPECT_EQ(summary.foreign_pids, std::vector<pid_t>{777});  // reported, not contaminating
    EXPECT_FALSE(summary.gpu_verified);
}

TEST(Contamination, ProcessGroupMatcher) {
    EXPECT_EQ(process_group_of(::getpid()), ::getpgrp());
    const auto ours = process_group_matcher({::getpgrp()});
    EXPECT_TRUE(ours(::getpid()));
    EXPECT_FALSE(ours(0x3ffffff0));  // no such process: fail closed
    const auto only_self = process_group_matcher({});
    EXPECT_TRUE(only_self(::getpid()));
}

}  // namespace
}  // namespace cko::env
