// Host CPU readings for the monitor: /proc/stat time counters and run queue, /proc/loadavg, and the
// CPU frequency from cpufreq when the kernel exposes it.
#pragma once

#include "cko/util/json.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string_view>

namespace cko::env {

// The aggregate "cpu" line of /proc/stat, in clock ticks since boot (guest time is already part of
// user time, so it is not added again).
struct CpuTimes {
    std::uint64_t total = 0;  // user + nice + system + idle + iowait + irq + softirq + steal
    std::uint64_t idle = 0;   // idle + iowait: no task wanted the CPU
    std::uint64_t steal = 0;  // taken by the hypervisor for another guest
};

// One reading of the host's CPUs.
struct HostCpuReading {
    std::optional<CpuTimes> times;          // nullopt: /proc/stat could not be read
    std::optional<unsigned> procs_running;  // /proc/stat: runnable tasks now, the reader included
    std::optional<double> load_1m;          // /proc/loadavg
    std::optional<double> freq_mhz;         // mean scaling_cur_freq over the CPUs; nullopt unknown
};

// The "cpu" line and procs_running of /proc/stat's text; nullopt members when absent or malformed.
[[nodiscard]] std::optional<CpuTimes> cpu_times_from_stat(std::string_view stat);
[[nodiscard]] std::optional<unsigned> procs_running_from_stat(std::string_view stat);
// The mean of cpu*/cpufreq/scaling_cur_freq (kHz) under `cpu_dir` (normally
// /sys/devices/system/cpu), in MHz; nullopt when no CPU exposes it (a VM or container without
// cpufreq): unknown, not a failure.
[[nodiscard]] std::optional<double> mean_cpu_freq_mhz(const std::filesystem::path& cpu_dir);

// Reads /proc/stat, /proc/loadavg and cpufreq now; never throws.
[[nodiscard]] HostCpuReading read_host_cpu();

// The CPUs this host has online (at least 1).
[[nodiscard]] unsigned online_cpus();

}  // namespace cko::env
