// The observation rule: a window with gaps in the GPU readings, no host reading, or host load or
// steal past the Target's limits cannot carry a performance conclusion.
#include "cko/env/observation.hpp"

#include <gtest/gtest.h>

namespace cko::env {
namespace {

MonitorSummary call(std::size_t samples, double runnable_per_sample, unsigned cpus = 2) {
    MonitorSummary s;
    s.samples = samples;
    s.source = "none";
    s.host.logical_cpus = cpus;
    s.host.samples = samples;
    s.host.run_queue_samples = samples;
    s.host.runnable_sum = runnable_per_sample * static_cast<double>(samples);
    s.host.ticks = 1000;
    s.host.idle_ticks = 500;
    return s;
}

MonitorSummary gpu_call(std::size_t samples, std::size_t missing) {
    MonitorSummary s = call(samples, 0.5);
    s.source = "nvml";
    s.gpu_targets = 1;
    s.gpu_readings_missing = missing;
    return s;
}

std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (const auto& s : v) {
        out += s + "\n";
    }
    return out;
}

TEST(Observation, AQuietCpuWindowHasNoProblems) {
    WindowObservation w;
    w.add(call(4, 1.0));  // the driver itself: 0.5 per CPU on two CPUs
    w.add(call(2, 0.0));
    EXPECT_TRUE(observation_problems(w, {}).empty()) << joined(observation_problems(w, {}));
    const Json j = w.to_json({});
    EXPECT_EQ(j["applied"], true);
    EXPECT_EQ(j["samples"], 6);
    EXPECT_TRUE(j["gpu"].is_null());
    EXPECT_EQ(j["limits"]["max_host_load_per_cpu"], 1.0);
}

TEST(Observation, HostLoadPastTheLimitIsNamedWithTheLimit) {
    WindowObservation w;
    w.add(call(4, 6.0));  // 3 runnable tasks per CPU
    const auto problems = observation_problems(w, {});
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("host load 3.00 runnable tasks per CPU"), std::string::npos);
    EXPECT_NE(problems[0].find("observation.max_host_load_per_cpu = 1"), std::string::npos);
    ObservationRule lenient;
    lenient.max_host_load_per_cpu = 4;  // a Target may state its own limit
    EXPECT_TRUE(observation_problems(w, lenient).empty());
}

TEST(Observation, StealPastTheLimitIsAProblem) {
    WindowObservation w;
    MonitorSummary c = call(3, 0.0);
    c.host.steal_ticks = 80;  // 8 %
    w.add(c);
    const auto problems = observation_problems(w, {});
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("CPU steal 8.0%"), std::string::npos);
}

TEST(Observation, AnUnreadHostIsAProblem) {
    WindowObservation w;
    MonitorSummary c = call(3, 0.0);
    c.host.run_queue_samples = 0;
    w.add(c);
    EXPECT_NE(joined(observation_problems(w, {})).find("host CPU was not observed"),
              std::string::npos);
}

TEST(Observation, GapsInTheGpuReadingsAndAMissingReaderAreProblems) {
    WindowObservation w;
    w.gpus_expected = true;
    w.add(gpu_call(5, 0));
    EXPECT_TRUE(observation_problems(w, {}).empty());
    w.add(gpu_call(5, 2));
    EXPECT_NE(
        joined(observation_problems(w, {})).find("a target GPU was missing from 2 of 10 readings"),
        std::string::npos);
    MonitorSummary blind = gpu_call(2, 2);
    blind.source = "none";
    w.add(blind);
    EXPECT_NE(joined(observation_problems(w, {})).find("not observed in 1 of 3 calls"),
              std::string::npos);
    EXPECT_EQ(w.to_json({})["gpu"]["readings_missing"], 4);
}

TEST(Observation, ADriverOnAnotherHostIsNotJudgedByThisHostsReadings) {
    WindowObservation w;
    w.on_this_host = false;
    w.add(call(4, 6.0));
    EXPECT_TRUE(observation_problems(w, {}).empty());
    EXPECT_EQ(w.to_json({})["applied"], false);
}

}  // namespace
}  // namespace cko::env
