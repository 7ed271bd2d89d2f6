// The observation rule of a comparison: whether the resources its claim rests on (the host's
// CPUs always, the target GPUs when it has them) were watched without gaps and left undisturbed.
#pragma once

#include "cko/env/contamination.hpp"

#include <string>
#include <vector>

namespace cko::env {

// The Target's [observation] limits (docs/statistics.md, "Observation").
struct ObservationRule {
    // Mean runnable tasks per logical CPU over the window (the measurement's own included, the
    // monitor's reading thread not): above it, work waited for a CPU while the claim was measured.
    double max_host_load_per_cpu = 1.0;
    // Share of CPU time the hypervisor stole over the window.
    double max_host_steal_pct = 5.0;
};

// What the monitors of a comparison's calls saw, added up call by call.
struct WindowObservation {
    bool gpus_expected = false;  // the Target has GPUs this host's monitor reads
    // false when the driver runs elsewhere (the Slurm launcher): this host's readings are not the
    // node's, so the rule is not applied and the record says so.
    bool on_this_host = true;
    std::size_t calls = 0;
    std::size_t samples = 0;
    std::size_t calls_without_gpu_reader = 0;
    std::size_t gpu_readings = 0;          // (sample, target GPU) readings expected
    std::size_t gpu_readings_missing = 0;  // of them, without that GPU
    HostObservation host;

    void add(const MonitorSummary& call);
    // {applied, calls, samples, gpu: {...} | null, host: {...}, limits, problems}
    [[nodiscard]] Json to_json(const ObservationRule& rule) const;
};

// Why the window cannot carry a performance conclusion: a GPU not observed or with gaps in its
// readings, the host CPU not observed, host load or steal above the rule's limits. Empty: observed
// and undisturbed (or not applicable: the driver ran elsewhere). Pure.
[[nodiscard]] std::vector<std::string> observation_problems(const WindowObservation& window,
                                                            const ObservationRule& rule);

}  // namespace cko::env
