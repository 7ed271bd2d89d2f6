// Monitor samples and the contamination rule that later verdicts apply to a sampling window.
#pragma once

#include "cko/env/host_cpu.hpp"
#include "cko/util/json.hpp"

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace cko::env {

// One compute process seen on a target GPU, and whether the caller's callback owned it.
struct MonitorProcess {
    pid_t pid = 0;
    std::optional<std::uint64_t> used_memory_bytes;
    bool ours = false;
};

struct MonitorGpuSample {
    std::string uuid;
    bool seen = true;  // false: the GPU was not in this reading (lost, or never visible)
    std::optional<unsigned> sm_clock_mhz, sm_clock_max_mhz, utilization_pct, temperature_c;
    std::optional<double> power_w;
    std::optional<std::uint64_t> clock_event_reasons;
    std::vector<MonitorProcess> processes;
};

// One line of monitor.jsonl.
struct MonitorSample {
    std::int64_t unix_ns = 0;  // CLOCK_REALTIME when the reading started
    std::vector<MonitorGpuSample> gpus;
    std::optional<double> load_1m;  // the host's load average, for CPU workloads
    HostCpuReading host;            // the host's CPUs at this reading
    // Over the interval since the previous reading (nullopt for the first): the share of CPU time
    // some task used, and the share the hypervisor stole.
    std::optional<double> busy_pct, steal_pct;

    [[nodiscard]] Json to_json() const;
};

// What the samples of one or more windows saw of the host's CPUs: sums, so that the windows of a
// comparison's calls add up (HostObservation::add) to the comparison's window.
struct HostObservation {
    unsigned logical_cpus = 0;
    std::size_t samples = 0;            // readings taken
    std::size_t run_queue_samples = 0;  // of them, with a readable run queue
    double runnable_sum = 0;            // runnable tasks besides the reader, summed over those
    std::uint64_t ticks = 0, idle_ticks = 0, steal_ticks = 0;  // first to last reading
    std::size_t freq_samples = 0;  // readings with a known CPU frequency
    std::optional<double> freq_min_mhz, freq_max_mhz;
    std::optional<double> load_1m_max;

    void add(const HostObservation& other);
    // Mean runnable tasks (the measurement's own included, the reader not) per logical CPU.
    [[nodiscard]] std::optional<double> load_per_cpu() const;
    [[nodiscard]] std::optional<double> busy_pct() const;
    [[nodiscard]] std::optional<double> steal_pct() const;
    [[nodiscard]] Json to_json() const;
};

struct MonitorRule {
    // A busy sample whose SM clock is below this fraction of the GPU's max SM clock is "low".
    double low_clock_ratio = 0.75;
    // The window is contaminated when low samples are at least this share of its busy samples.
    double low_clock_share_limit = 0.20;
    // Another compute process on a target GPU contaminates the window.
    bool foreign_processes_contaminate = true;
};

struct MonitorSummary {
    std::size_t samples = 0;
    bool contaminated = false;
    std::vector<std::string> reasons;      // one per cause, with counts
    std::vector<pid_t> foreign_pids;       // sorted, unique
    double low_clock_share = 0.0;          // the worst GPU's share of low busy samples
    std::string source;                    // "nvml" | "nvidia-smi" | "none"
    bool gpu_verified = false;             // every target GPU was read in every sample
    std::size_t gpu_targets = 0;           // target GPUs the window was to observe
    std::size_t gpu_readings_missing = 0;  // (sample, target GPU) readings without that GPU
    HostObservation host;                  // the host's CPUs over the window
    std::vector<std::string> notes;        // what could not be verified, and why

    [[nodiscard]] Json to_json() const;
};

// The rule applied to a window of samples (pure; Monitor::stop() calls it). A sample is "busy"
// for a GPU when its utilization is above 0 and NVML does not give "GPU idle" as a clock event
// reason: an idle GPU lowers its clocks by design, which says nothing about the measurement.
[[nodiscard]] MonitorSummary summarize_samples(const std::vector<MonitorSample>& samples,
                                               const MonitorRule& rule);

// The host part of a window: run queue per sample (the reader not counted), busy and steal ticks
// from its first reading to its last, the CPU frequency's range, the highest load average.
[[nodiscard]] HostObservation observe_host(const std::vector<MonitorSample>& samples,
                                           unsigned logical_cpus);

// An is_ours callback for Monitor: our own pid and any live process whose process group is in
// `process_groups` (read from /proc/<pid>/stat). A pid that cannot be read (it ended, or the
// driver reported a pid of another pid namespace) is not ours, so the rule fails closed.
[[nodiscard]] std::function<bool(pid_t)> process_group_matcher(std::vector<pid_t> process_groups);
// The process group of `pid` from /proc/<pid>/stat; nullopt when it cannot be read.
[[nodiscard]] std::optional<pid_t> process_group_of(pid_t pid);

}  // namespace cko::env
