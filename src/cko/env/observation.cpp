// The observation rule: gaps in the GPU readings, the host CPU unobserved, load or steal too high.
#include "cko/env/observation.hpp"

#include <fmt/format.h>

namespace cko::env {

void WindowObservation::add(const MonitorSummary& call) {
    ++calls;
    samples += call.samples;
    if (call.gpu_targets > 0 && call.source == "none") {
        ++calls_without_gpu_reader;
    }
    gpu_readings += call.samples * call.gpu_targets;
    gpu_readings_missing += call.gpu_readings_missing;
    host.add(call.host);
}

Json WindowObservation::to_json(const ObservationRule& rule) const {
    Json gpu = nullptr;
    if (gpus_expected) {
        gpu = Json{{"readings", gpu_readings},
                   {"readings_missing", gpu_readings_missing},
                   {"calls_without_reader", calls_without_gpu_reader}};
    }
    return Json{{"applied", on_this_host},
                {"calls", calls},
                {"samples", samples},
                {"gpu", gpu},
                {"host", host.to_json()},
                {"limits",
                 {{"max_host_load_per_cpu", rule.max_host_load_per_cpu},
                  {"max_host_steal_pct", rule.max_host_steal_pct}}},
                {"problems", observation_problems(*this, rule)}};
}

std::vector<std::string> observation_problems(const WindowObservation& w,
                                              const ObservationRule& rule) {
    std::vector<std::string> out;
    if (!w.on_this_host || w.calls == 0) {
        return out;
    }
    if (w.gpus_expected && w.calls_without_gpu_reader > 0) {
        out.push_back(
            fmt::format("the target GPUs were not observed in {} of {} calls (no GPU reader)",
                        w.calls_without_gpu_reader, w.calls));
    } else if (w.gpus_expected && w.gpu_readings_missing > 0) {
        out.push_back(
            fmt::format("gaps in the GPU readings: a target GPU was missing from {} of "
                        "{} readings",
                        w.gpu_readings_missing, w.gpu_readings));
    }
    const auto load = w.host.load_per_cpu();
    if (!load) {
        out.push_back("the host CPU was not observed (/proc/stat could not be read)");
    } else if (*load > rule.max_host_load_per_cpu) {
        out.push_back(fmt::format(
            "host load {:.2f} runnable tasks per CPU ({} CPUs, mean of {} readings) exceeds "
            "observation.max_host_load_per_cpu = {}: other work competed for the CPUs",
            *load, w.host.logical_cpus, w.host.run_queue_samples, rule.max_host_load_per_cpu));
    }
    if (const auto steal = w.host.steal_pct(); steal && *steal > rule.max_host_steal_pct) {
        out.push_back(fmt::format(
            "CPU steal {:.1f}% over the window exceeds observation.max_host_steal_pct = {}: the "
            "hypervisor gave the CPUs to another guest",
            *steal, rule.max_host_steal_pct));
    }
    return out;
}

}  // namespace cko::env
