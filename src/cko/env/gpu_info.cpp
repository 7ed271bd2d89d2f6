// JSON spelling of GpuInfo and GpuProcess: always the same keys, null for what was not reported.
#include "cko/env/gpu_info.hpp"

#include <fmt/format.h>

namespace cko::env {
namespace {

template <typename T>
Json optional_json(const std::optional<T>& value) {
    return value ? Json(*value) : Json(nullptr);
}

Json text_or_null(const std::string& text) {
    return text.empty() ? Json(nullptr) : Json(text);
}

}  // namespace

std::string cuda_version_text(int version) {
    if (version <= 0) {
        return {};
    }
    return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

Json GpuProcess::to_json() const {
    return Json{{"pid", pid}, {"used_memory_bytes", optional_json(used_memory_bytes)}};
}

std::string topology_level_name(int level) {
    switch (level) {
    case 0:
        return "internal";
    case 10:
        return "single_switch";
    case 20:
        return "multiple_switches";
    case 30:
        return "host_bridge";
    case 40:
        return "numa_node";
    case 50:
        return "system";
    default:
        return {};
    }
}

Json GpuLink::to_json() const {
    return Json{{"a", a_uuid},
                {"b", b_uuid},
                {"common_ancestor", text_or_null(common_ancestor)},
                {"nvlink", optional_json(nvlink)}};
}

Json GpuInfo::to_json() const {
    Json procs = Json::array();
    for (const auto& p : processes) {
        procs.push_back(p.to_json());
    }
    return Json{{"index", index},
                {"uuid", uuid},
                {"name", text_or_null(name)},
                {"compute_capability", text_or_null(compute_capability)},
                {"memory_total_bytes", memory_total_bytes},
                {"memory_free_bytes", memory_free_bytes},
                {"driver_version", text_or_null(driver_version)},
                {"cuda_driver_version", text_or_null(cuda_driver_version)},
                {"mig_enabled", optional_json(mig_enabled)},
                {"ecc_enabled", optional_json(ecc_enabled)},
                {"persistence_enabled", optional_json(persistence_enabled)},
                {"sm_clock_mhz", optional_json(sm_clock_mhz)},
                {"sm_clock_max_mhz", optional_json(sm_clock_max_mhz)},
                {"mem_clock_mhz", optional_json(mem_clock_mhz)},
                {"mem_clock_max_mhz", optional_json(mem_clock_max_mhz)},
                {"temperature_c", optional_json(temperature_c)},
                {"utilization_pct", optional_json(utilization_pct)},
                {"power_w", optional_json(power_w)},
                {"power_limit_w", optional_json(power_limit_w)},
                {"clock_event_reasons", optional_json(clock_event_reasons)},
                {"processes", procs}};
}

}  // namespace cko::env
