// What one GPU looked like when it was read (NVML or nvidia-smi), with stable JSON keys.
#pragma once

#include "cko/util/json.hpp"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cko::env {

struct GpuProcess {
    pid_t pid = 0;  // as the driver reports it: a pid of the host's pid namespace
    std::optional<std::uint64_t> used_memory_bytes;  // absent when the driver does not say

    [[nodiscard]] Json to_json() const;
};

// Every optional field is absent (null in JSON) when the GPU or the driver does not report it
// (NVML_ERROR_NOT_SUPPORTED, "[N/A]"); the reason for anything worse goes to the reader's notes.
struct GpuInfo {
    unsigned index = 0;  // the driver's enumeration order (not CUDA_VISIBLE_DEVICES order)
    std::string uuid;    // "GPU-..." (MIG devices are not enumerated separately)
    std::string name;
    std::string compute_capability;  // "9.0"; empty when unknown
    std::uint64_t memory_total_bytes = 0;
    std::uint64_t memory_free_bytes = 0;
    std::string driver_version;       // "550.54.15"
    std::string cuda_driver_version;  // "12.4": the CUDA version the driver supports
    std::optional<bool> mig_enabled, ecc_enabled, persistence_enabled;
    std::optional<unsigned> sm_clock_mhz, sm_clock_max_mhz, mem_clock_mhz, mem_clock_max_mhz;
    std::optional<unsigned> temperature_c, utilization_pct;
    std::optional<double> power_w, power_limit_w;
    // NVML clocks event ("throttle") reasons bit mask; bit 0x1 = the GPU is idle.
    std::optional<std::uint64_t> clock_event_reasons;
    std::vector<GpuProcess> processes;  // compute processes on this GPU

    [[nodiscard]] Json to_json() const;
};

// How two GPUs of this host reach each other (NVML nvmlDeviceGetTopologyCommonAncestor and
// nvmlDeviceGetP2PStatus(NVLINK)); one per pair, a = the lower index.
struct GpuLink {
    std::string a_uuid, b_uuid;
    // "internal" | "single_switch" | "multiple_switches" | "host_bridge" | "numa_node" | "system";
    // empty: unknown
    std::string common_ancestor;
    std::optional<bool> nvlink;  // peer-to-peer over NVLink possible; absent: unknown

    [[nodiscard]] Json to_json() const;
};

// The common-ancestor word of an nvmlGpuTopologyLevel_t value (0, 10, ... 50); empty for others.
[[nodiscard]] std::string topology_level_name(int level);

inline constexpr std::uint64_t kClockEventGpuIdle = 0x1;

// "12040" style CUDA driver versions (1000 * major + 10 * minor) as "12.4".
[[nodiscard]] std::string cuda_version_text(int version);

}  // namespace cko::env
