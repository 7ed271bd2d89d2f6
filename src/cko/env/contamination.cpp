// Contamination: foreign compute processes on a target GPU, or busy SM clocks held low too long.
#include "cko/env/contamination.hpp"

#include "cko/env/gpu_info.hpp"
#include "cko/env/host.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace cko::env {
namespace {

template <typename T>
Json optional_json(const std::optional<T>& value) {
    return value ? Json(*value) : Json(nullptr);
}

bool busy(const MonitorGpuSample& gpu) {
    if (gpu.clock_event_reasons && (*gpu.clock_event_reasons & kClockEventGpuIdle) != 0) {
        return false;
    }
    return gpu.utilization_pct.value_or(0) > 0;
}

}  // namespace

Json MonitorSample::to_json() const {
    Json gpu_list = Json::array();
    for (const auto& gpu : gpus) {
        Json procs = Json::array();
        for (const auto& p : gpu.processes) {
            procs.push_back(Json{{"pid", p.pid},
                                 {"used_memory_bytes", optional_json(p.used_memory_bytes)},
                                 {"ours", p.ours}});
        }
        gpu_list.push_back(Json{{"uuid", gpu.uuid},
                                {"seen", gpu.seen},
                                {"sm_clock_mhz", optional_json(gpu.sm_clock_mhz)},
                                {"sm_clock_max_mhz", optional_json(gpu.sm_clock_max_mhz)},
                                {"utilization_pct", optional_json(gpu.utilization_pct)},
                                {"temperature_c", optional_json(gpu.temperature_c)},
                                {"power_w", optional_json(gpu.power_w)},
                                {"clock_event_reasons", optional_json(gpu.clock_event_reasons)},
                                {"processes", procs}});
    }
    // The run queue as read, the reader included; busy and steal over the interval before.
    const Json host_json{{"procs_running", optional_json(host.procs_running)},
                         {"busy_pct", optional_json(busy_pct)},
                         {"steal_pct", optional_json(steal_pct)},
                         {"cpu_freq_mhz", optional_json(host.freq_mhz)}};
    return Json{{"unix_ns", unix_ns},
                {"gpus", gpu_list},
                {"load_1m", optional_json(load_1m)},
                {"host", host_json}};
}

void HostObservation::add(const HostObservation& o) {
    logical_cpus = std::max(logical_cpus, o.logical_cpus);
    samples += o.samples;
    run_queue_samples += o.run_queue_samples;
    runnable_sum += o.runnable_sum;
    ticks += o.ticks;
    idle_ticks += o.idle_ticks;
    steal_ticks += o.steal_ticks;
    freq_samples += o.freq_samples;
    const auto lower = [](std::optional<double> a, std::optional<double> b) {
        return a && b ? std::min(*a, *b) : (a ? a : b);
    };
    const auto upper = [](std::optional<double> a, std::optional<double> b) {
        return a && b ? std::max(*a, *b) : (a ? a : b);
    };
    freq_min_mhz = lower(freq_min_mhz, o.freq_min_mhz);
    freq_max_mhz = upper(freq_max_mhz, o.freq_max_mhz);
    load_1m_max = upper(load_1m_max, o.load_1m_max);
}

std::optional<double> HostObservation::load_per_cpu() const {
    if (run_queue_samples == 0 || logical_cpus == 0) {
        return std::nullopt;
    }
    return runnable_sum / static_cast<double>(run_queue_samples) / logical_cpus;
}

std::optional<double> HostObservation::busy_pct() const {
    if (ticks == 0) {
        return std::nullopt;
    }
    return 100.0 * static_cast<double>(ticks - std::min(idle_ticks, ticks)) /
           static_cast<double>(ticks);
}

std::optional<double> HostObservation::steal_pct() const {
    if (ticks == 0) {
        return std::nullopt;
    }
    return 100.0 * static_cast<double>(steal_ticks) / static_cast<double>(ticks);
}

Json HostObservation::to_json() const {
    Json freq = nullptr;  // unknown: no CPU exposed cpufreq (a VM or a container), not a failure
    if (freq_min_mhz && freq_max_mhz) {
        freq = Json{{"min", *freq_min_mhz}, {"max", *freq_max_mhz}, {"samples", freq_samples}};
    }
    return Json{{"logical_cpus", logical_cpus},
                {"samples", samples},
                {"load_per_cpu", optional_json(load_per_cpu())},
                {"busy_pct", optional_json(busy_pct())},
                {"steal_pct", optional_json(steal_pct())},
                {"cpu_freq_mhz", freq},
                {"load_1m_max", optional_json(load_1m_max)}};
}

HostObservation observe_host(const std::vector<MonitorSample>& samples, unsigned logical_cpus) {
    HostObservation h;
    h.logical_cpus = logical_cpus;
    h.samples = samples.size();
    const CpuTimes* first = nullptr;
    const CpuTimes* last = nullptr;
    for (const auto& s : samples) {
        if (s.host.procs_running) {
            ++h.run_queue_samples;
            // The reading thread is itself running while it reads /proc/stat.
            h.runnable_sum += std::max(1U, *s.host.procs_running) - 1;
        }
        if (s.host.times) {
            first = first != nullptr ? first : &*s.host.times;
            last = &*s.host.times;
        }
        if (s.host.freq_mhz) {
            ++h.freq_samples;
            h.freq_min_mhz = std::min(h.freq_min_mhz.value_or(*s.host.freq_mhz), *s.host.freq_mhz);
            h.freq_max_mhz = std::max(h.freq_max_mhz.value_or(*s.host.freq_mhz), *s.host.freq_mhz);
        }
        if (s.load_1m) {
            h.load_1m_max = std::max(h.load_1m_max.value_or(*s.load_1m), *s.load_1m);
        }
    }
    if (first != nullptr && last->total >= first->total) {
        h.ticks = last->total - first->total;
        h.idle_ticks = last->idle >= first->idle ? last->idle - first->idle : 0;
        h.steal_ticks = last->steal >= first->steal ? last->steal - first->steal : 0;
    }
    return h;
}

Json MonitorSummary::to_json() const {
    return Json{{"samples", samples},
                {"contaminated", contaminated},
                {"reasons", reasons},
                {"foreign_pids", foreign_pids},
                {"low_clock_share", low_clock_share},
                {"source", source},
                {"gpu_verified", gpu_verified},
                {"gpu_readings_missing", gpu_readings_missing},
                {"host", host.to_json()},
                {"notes", notes}};
}

MonitorSummary summarize_samples(const std::vector<MonitorSample>& samples,
                                 const MonitorRule& rule) {
    MonitorSummary summary;
    summary.samples = samples.size();
    struct PerGpu {
        std::size_t busy = 0;
        std::size_t low = 0;
        std::size_t unseen = 0;
        std::map<pid_t, std::size_t> foreign;  // pid -> samples it was seen in
    };
    std::map<std::string, PerGpu> per_gpu;
    std::set<pid_t> foreign_pids;
    for (const auto& sample : samples) {
        for (const auto& gpu : sample.gpus) {
            PerGpu& stats = per_gpu[gpu.uuid];
            if (!gpu.seen) {
                ++stats.unseen;
                continue;
            }
            for (const auto& p : gpu.processes) {
                if (!p.ours) {
                    ++stats.foreign[p.pid];
                    foreign_pids.insert(p.pid);
                }
            }
            if (busy(gpu) && gpu.sm_clock_mhz && gpu.sm_clock_max_mhz &&
                *gpu.sm_clock_max_mhz > 0) {
                ++stats.busy;
                if (*gpu.sm_clock_mhz < rule.low_clock_ratio * *gpu.sm_clock_max_mhz) {
                    ++stats.low;
                }
            }
        }
    }
    summary.foreign_pids.assign(foreign_pids.begin(), foreign_pids.end());
    for (const auto& [uuid, stats] : per_gpu) {
        if (!stats.foreign.empty() && rule.foreign_processes_contaminate) {
            std::vector<std::string> seen;
            for (const auto& [pid, count] : stats.foreign) {
                seen.push_back(fmt::format("pid {} in {}/{} samples", pid, count, samples.size()));
            }
            summary.reasons.push_back(
                fmt::format("another compute process on GPU {}: {}", uuid, fmt::join(seen, ", ")));
        }
        if (stats.busy > 0) {
            const double share = static_cast<double>(stats.low) / static_cast<double>(stats.busy);
            summary.low_clock_share = std::max(summary.low_clock_share, share);
            if (share >= rule.low_clock_share_limit) {
                summary.reasons.push_back(fmt::format(
                    "SM clock of GPU {} below {:.0f}% of its max in {}/{} busy samples ({:.0f}% >= "
                    "{:.0f}%)",
                    uuid, rule.low_clock_ratio * 100, stats.low, stats.busy, share * 100,
                    rule.low_clock_share_limit * 100));
            }
        } else if (!samples.empty()) {
            summary.notes.push_back(fmt::format(
                "GPU {} was never busy with known clocks: the clock rule could not be applied",
                uuid));
        }
        summary.gpu_readings_missing += stats.unseen;
        if (stats.unseen > 0) {
            summary.notes.push_back(fmt::format("GPU {} missing from {}/{} readings", uuid,
                                                stats.unseen, samples.size()));
        }
    }
    summary.gpu_targets = per_gpu.size();
    summary.host = observe_host(samples, online_cpus());
    summary.gpu_verified = !samples.empty() && !per_gpu.empty();
    for (const auto& [uuid, stats] : per_gpu) {
        summary.gpu_verified = summary.gpu_verified && stats.unseen == 0;
    }
    summary.contaminated = !summary.reasons.empty();
    return summary;
}

std::optional<pid_t> process_group_of(pid_t pid) {
    const auto stat = read_small_file(fmt::format("/proc/{}/stat", pid));
    if (!stat) {
        return std::nullopt;
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so start after the
    // last ')'.
    const auto close = stat->rfind(')');
    if (close == std::string::npos) {
        return std::nullopt;
    }
    // After ")": " <state> <ppid> <pgrp> ...".
    std::istringstream fields(stat->substr(close + 1));
    std::string state;
    long ppid = 0;
    long pgrp = 0;
    if (!(fields >> state >> ppid >> pgrp) || pgrp <= 0) {
        return std::nullopt;
    }
    return static_cast<pid_t>(pgrp);
}

std::function<bool(pid_t)> process_group_matcher(std::vector<pid_t> process_groups) {
    return [groups = std::move(process_groups), self = ::getpid()](pid_t pid) {
        if (pid == self) {
            return true;
        }
        const auto group = process_group_of(pid);
        return group && std::find(groups.begin(), groups.end(), *group) != groups.end();
    };
}

}  // namespace cko::env
