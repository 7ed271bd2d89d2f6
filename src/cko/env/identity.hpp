// The environment identity a measurement is bound to: host, GPUs, tools, counter permission.
#pragma once

#include "cko/env/gpu_info.hpp"
#include "cko/env/host.hpp"
#include "cko/env/tools.hpp"
#include "cko/util/json.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace cko::env {

inline constexpr const char* kIdentityFormat = "cko/identity-v1";

struct Identity {
    Host host;
    std::vector<GpuInfo> gpus;
    std::vector<GpuLink> gpu_topology;  // one per pair of gpus (NVML only; empty otherwise)
    std::string gpu_source = "none";    // "nvml" | "nvidia-smi" | "none"
    std::string driver_version;         // of the first GPU; empty without one
    std::string cuda_driver_version;
    std::vector<Tool> tools;
    std::optional<bool> ncu_counters_permitted;  // empty = unknown
    std::string ncu_counters_detail;
    std::vector<std::string> notes;  // what could not be probed, and why

    // Stable keys (format_version cko/identity-v1): absent values are null, never missing.
    [[nodiscard]] Json to_json() const;
    [[nodiscard]] const Tool* tool(std::string_view name) const;
};

struct ProbeOptions {
    bool tools = true;  // run `<tool> --version` for default_tool_names()
    std::chrono::milliseconds tool_timeout{3000};
    bool nvml = true;  // tests switch the GPU sources off to stay hermetic
    bool nvidia_smi = true;
    std::chrono::milliseconds nvidia_smi_timeout{5000};
};

// Reads the whole identity; changes nothing on the host. Never throws for a missing GPU, driver
// or tool: those become an empty list, gpu_source "none", and notes.
[[nodiscard]] Identity probe_identity(const ProbeOptions& options = {});

// How two identities differ, field by field. `invalidates` marks the fields that make a
// measurement taken under `now` incomparable with one taken under `frozen` (see
// docs/environment.md, "Mismatch rule"); the others are noted only.
struct IdentityDifference {
    std::string field;  // "machine_id", "gpus[GPU-...].driver_version", ...
    std::string frozen;
    std::string now;
    bool invalidates = false;
};
[[nodiscard]] std::vector<IdentityDifference> identity_differences(const Json& frozen_identity,
                                                                   const Json& now_identity);

// A clear reason when `now` must not be compared with measurements bound to `frozen_identity`
// (the JSON of an earlier Identity); nullopt when they are comparable. Throws
// cko::Error(invalid_record) when frozen_identity is not a cko/identity-v1 object.
[[nodiscard]] std::optional<std::string> identity_mismatch(const Json& frozen_identity,
                                                           const Identity& now);
// The same for an identity read back as JSON (e.g. `cko doctor --json` run on a Slurm compute
// node).
[[nodiscard]] std::optional<std::string> identity_mismatch(const Json& frozen_identity,
                                                           const Json& now_identity);

}  // namespace cko::env
