// The monitor thread against the fake NVML: a foreign process or a clock drop mid-window is
// flagged; every sample is one canonical JSON line; without a GPU it says what it could not see.
#include "cko/env/monitor.hpp"

#include "cko/env/observation.hpp"

#include "cko/env/testing/fake_nvml_state.hpp"
#include "cko/util/error.hpp"
#include "cko/util/json.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <fstream>
#include <thread>

namespace cko::env {
namespace {
namespace fs = std::filesystem;
using testing_support::FakeNvml;
using testing_support::h200_state;
using testing_support::kFakeUuid;

MonitorOptions nvml_only() {
    MonitorOptions options;
    options.reader.nvidia_smi = false;
    return options;
}

fs::path fresh_jsonl(const std::string& name) {
    static const test::TempDir dir("cko-monitor");  // this process's own, removed at exit
    fs::path path = dir / (name + ".monitor.jsonl");
    fs::remove(path);
    return path;
}

// Waits (bounded) until the monitor holds at least n samples; no timing is asserted.
void wait_for_samples(const Monitor& monitor, std::size_t n) {
    for (int i = 0; i < 1000 && monitor.samples().size() < n; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GE(monitor.samples().size(), n);
}

std::vector<Json> read_lines(const fs::path& path) {
    std::vector<Json> lines;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        const Json value = parse_json_strict(line);
        EXPECT_EQ(canonical_json(value), line);
        lines.push_back(value);
    }
    return lines;
}

std::string ours_busy() {
    return h200_state() + "gpu0.procs=" + std::to_string(::getpid()) + ":1048576\n";
}

TEST(Monitor, ForeignProcessAppearingMidWindowIsFlagged) {
    FakeNvml fake;
    fake.write(ours_busy());
    const fs::path jsonl = fresh_jsonl("foreign");
    Monitor monitor({kFakeUuid}, jsonl, std::chrono::milliseconds(20), {}, {}, nvml_only());
    monitor.start();
    wait_for_samples(monitor, 3);
    fake.write(ours_busy() + "gpu0.procs=" + std::to_string(::getpid()) + ":1048576,999999:na\n");
    wait_for_samples(monitor, monitor.samples().size() + 3);
    const MonitorSummary summary = monitor.stop();
    EXPECT_TRUE(summary.contaminated);
    EXPECT_EQ(summary.source, "nvml");
    EXPECT_TRUE(summary.gpu_verified);
    EXPECT_EQ(summary.foreign_pids, std::vector<pid_t>{999999});
    ASSERT_EQ(summary.reasons.size(), 1u);
    EXPECT_NE(summary.reasons[0].find("another compute process on GPU " + std::string(kFakeUuid)),
              std::string::npos);

    const auto lines = read_lines(jsonl);
    ASSERT_EQ(lines.size(), summary.samples);
    EXPECT_EQ(lines.front()["gpus"][0]["processes"][0]["ours"], true);
    EXPECT_EQ(lines.back()["gpus"][0]["processes"].size(), 2u);
    EXPECT_EQ(lines.back()["gpus"][0]["processes"][1]["ours"], false);
    EXPECT_EQ(lines.back()["gpus"][0]["sm_clock_max_mhz"], 1980);
    for (std::size_t i = 1; i < lines.size(); ++i) {
        EXPECT_GT(lines[i]["unix_ns"].get<std::int64_t>(),
                  lines[i - 1]["unix_ns"].get<std::int64_t>());
    }
}

TEST(Monitor, ClockDropWhileBusyIsFlaggedACleanWindowIsNot) {
    FakeNvml fake;
    fake.write(ours_busy());
    {
        Monitor clean({kFakeUuid}, fresh_jsonl("clean"), std::chrono::milliseconds(20), {}, {},
                      nvml_only());
        clean.start();
        wait_for_samples(clean, 3);
        const MonitorSummary summary = clean.stop();
        EXPECT_FALSE(summary.contaminated) << summary.reasons.front();
        EXPECT_TRUE(summary.notes.empty()) << summary.notes.front();
    }
    Monitor monitor({kFakeUuid}, fresh_jsonl("clock"), std::chrono::milliseconds(20), {}, {},
                    nvml_only());
    monitor.start();
    wait_for_samples(monitor, 2);
    // Throttled: 900 of 1980 MHz at 100 % utilization, for at least as long as it was fine.
    fake.write(ours_busy() + "gpu0.sm_clock=900\ngpu0.util=100\ngpu0.reasons=0x20\n");
    wait_for_samples(monitor, 2 * monitor.samples().size() + 2);
    const MonitorSummary summary = monitor.stop();
    EXPECT_TRUE(summary.contaminated);
    EXPECT_GE(summary.low_clock_share, 0.5);
    EXPECT_TRUE(summary.foreign_pids.empty());
    ASSERT_EQ(summary.reasons.size(), 1u);
    EXPECT_NE(summary.reasons[0].find("below 75% of its max"), std::string::npos);
}

// Issue [18], observation: the GPU vanishing from the readings mid-window is a gap the rule names,
// and every sample carries the host's run queue, busy and steal shares and CPU frequency (null
// where cpufreq is absent). Before, a gap only set gpu_verified = false and no host CPU was read.
TEST(Monitor, AGpuMissingMidWindowIsAGapAndTheHostIsSampledBesideIt) {
    FakeNvml fake;
    fake.write(ours_busy());
    const fs::path jsonl = fresh_jsonl("gap");
    Monitor monitor({kFakeUuid}, jsonl, std::chrono::milliseconds(20), {}, {}, nvml_only());
    monitor.start();
    wait_for_samples(monitor, 3);
    std::string gone = ours_busy();
    gone.replace(gone.find("count=1"), 7, "count=0");
    fake.write(gone);
    wait_for_samples(monitor, monitor.samples().size() + 3);
    const MonitorSummary summary = monitor.stop();
    EXPECT_FALSE(summary.gpu_verified);
    EXPECT_EQ(summary.gpu_targets, 1u);
    EXPECT_GE(summary.gpu_readings_missing, 3u);
    EXPECT_EQ(summary.host.samples, summary.samples);
    EXPECT_TRUE(summary.host.load_per_cpu());

    WindowObservation window;
    window.gpus_expected = true;
    window.add(summary);
    ObservationRule rule;
    rule.max_host_load_per_cpu = 1e6;  // the host's own load is not under test here
    rule.max_host_steal_pct = 100;     // nor its CPU steal (a shared VM)
    const auto problems = observation_problems(window, rule);
    ASSERT_EQ(problems.size(), 1u);
    EXPECT_NE(problems[0].find("gaps in the GPU readings"), std::string::npos);

    const auto lines = read_lines(jsonl);
    ASSERT_GE(lines.size(), 2u);
    EXPECT_TRUE(lines[0]["host"]["procs_running"].is_number());
    EXPECT_TRUE(lines[0]["host"]["busy_pct"].is_null());  // no interval before the first
    EXPECT_TRUE(lines[1]["host"]["busy_pct"].is_number() || lines[1]["host"]["busy_pct"].is_null());
    EXPECT_TRUE(lines[1]["host"].contains("cpu_freq_mhz"));
    EXPECT_TRUE(lines[1]["host"].contains("steal_pct"));
}

TEST(Monitor, WithoutTargetGpusRecordsHostOnlySamples) {
    const fs::path jsonl = fresh_jsonl("host_only");
    Monitor monitor({}, jsonl, std::chrono::milliseconds(20), {});
    monitor.start();
    const MonitorSummary summary = monitor.stop();
    EXPECT_GE(summary.samples, 2u);  // one at start, one at stop
    EXPECT_FALSE(summary.contaminated);
    EXPECT_FALSE(summary.gpu_verified);
    EXPECT_EQ(summary.source, "none");
    ASSERT_FALSE(summary.notes.empty());
    EXPECT_NE(summary.notes[0].find("host-only samples"), std::string::npos);
    const auto lines = read_lines(jsonl);
    ASSERT_EQ(lines.size(), summary.samples);
    EXPECT_TRUE(lines[0]["gpus"].empty());
    EXPECT_EQ(monitor.stop().samples, summary.samples);  // stop twice: same answer
}

TEST(Monitor, TargetGpuWithoutAnyReaderIsNotVerified) {
    FakeNvml fake("/nonexistent/libnvidia-ml.so.1");
    Monitor monitor({kFakeUuid}, fresh_jsonl("no_reader"), std::chrono::milliseconds(20), {}, {},
                    nvml_only());
    monitor.start();
    const MonitorSummary summary = monitor.stop();
    EXPECT_FALSE(summary.contaminated);
    EXPECT_FALSE(summary.gpu_verified);
    EXPECT_EQ(summary.source, "none");
    EXPECT_NE(summary.to_json().dump().find("cannot load /nonexistent"), std::string::npos);
}

TEST(Monitor, RejectsAnIntervalOutOfRangeAndAnUnwritableFile) {
    Monitor fast({}, fresh_jsonl("fast"), std::chrono::milliseconds(1), {});
    EXPECT_THROW(fast.start(), Error);
    Monitor nowhere({}, "/nonexistent/dir/monitor.jsonl", std::chrono::milliseconds(100), {});
    EXPECT_THROW(nowhere.start(), Error);
}

}  // namespace
}  // namespace cko::env
