// The mismatch rule: which identity fields make measurements incomparable and which are noted.
#include "cko/env/identity.hpp"

#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace cko::env {
namespace {

std::string show(const Json& value) {
    if (value.is_null()) {
        return "(absent)";
    }
    return value.is_string() ? value.get<std::string>() : value.dump();
}

const Json& member(const Json& object, const char* key) {
    static const Json null_value = nullptr;
    if (!object.is_object()) {
        return null_value;
    }
    const auto it = object.find(key);
    return it == object.end() ? null_value : *it;
}

// Adds a difference when both sides know the value and it differs. A side that does not know
// (null) cannot prove a change, so only a note is recorded for it.
void compare(std::vector<IdentityDifference>& out, const std::string& field, const Json& frozen,
             const Json& now, bool invalidates) {
    if (frozen == now) {
        return;
    }
    const bool both_known = !frozen.is_null() && !now.is_null();
    out.push_back({field, show(frozen), show(now), invalidates && both_known});
}

std::set<std::string> gpu_uuids(const Json& identity) {
    std::set<std::string> uuids;
    const Json& gpus = member(identity, "gpus");
    if (gpus.is_array()) {
        for (const auto& gpu : gpus) {
            if (member(gpu, "uuid").is_string()) {
                uuids.insert(member(gpu, "uuid").get<std::string>());
            }
        }
    }
    return uuids;
}

const Json& gpu_by_uuid(const Json& identity, const std::string& uuid) {
    static const Json null_value = nullptr;
    const Json& gpus = member(identity, "gpus");
    if (gpus.is_array()) {
        for (const auto& gpu : gpus) {
            if (member(gpu, "uuid") == uuid) {
                return gpu;
            }
        }
    }
    return null_value;
}

std::string join_set(const std::set<std::string>& items) {
    return items.empty() ? "(none)" : fmt::format("{}", fmt::join(items, ","));
}

}  // namespace

std::vector<IdentityDifference> identity_differences(const Json& frozen, const Json& now) {
    std::vector<IdentityDifference> out;
    const Json& fh = member(frozen, "host");
    const Json& nh = member(now, "host");
    // The machine and its CPU: a different one is a different experiment.
    for (const char* key : {"machine_id", "cpu_model", "arch"}) {
        compare(out, std::string("host.") + key, member(fh, key), member(nh, key), true);
    }
    for (const char* key :
         {"hostname", "kernel_release", "boot_id", "logical_cpus", "in_container"}) {
        compare(out, std::string("host.") + key, member(fh, key), member(nh, key), false);
    }
    // The set of GPUs, then each GPU present on both sides.
    const auto frozen_uuids = gpu_uuids(frozen);
    const auto now_uuids = gpu_uuids(now);
    if (frozen_uuids != now_uuids) {
        out.push_back({"gpus.uuids", join_set(frozen_uuids), join_set(now_uuids), true});
    }
    for (const auto& uuid : frozen_uuids) {
        const Json& fg = gpu_by_uuid(frozen, uuid);
        const Json& ng = gpu_by_uuid(now, uuid);
        if (ng.is_null()) {
            continue;
        }
        const std::string prefix = "gpus[" + uuid + "].";
        for (const char* key :
             {"name", "compute_capability", "memory_total_bytes", "mig_enabled"}) {
            compare(out, prefix + key, member(fg, key), member(ng, key), true);
        }
        for (const char* key : {"ecc_enabled", "persistence_enabled", "power_limit_w",
                                "sm_clock_max_mhz", "mem_clock_max_mhz"}) {
            compare(out, prefix + key, member(fg, key), member(ng, key), false);
        }
    }
    // How each pair of GPUs is linked: a multi-GPU workload's collectives run over it.
    const Json& frozen_links = member(frozen, "gpu_topology");
    const Json& now_links = member(now, "gpu_topology");
    if (frozen_links.is_array() && now_links.is_array()) {
        for (const auto& fl : frozen_links) {
            for (const auto& nl : now_links) {
                if (member(nl, "a") == member(fl, "a") && member(nl, "b") == member(fl, "b")) {
                    const std::string prefix = "gpu_topology[" + show(member(fl, "a")) + "," +
                                               show(member(fl, "b")) + "].";
                    compare(out, prefix + "nvlink", member(fl, "nvlink"), member(nl, "nvlink"),
                            true);
                    compare(out, prefix + "common_ancestor", member(fl, "common_ancestor"),
                            member(nl, "common_ancestor"), true);
                }
            }
        }
    }
    // The driver decides code generation (PTX JIT), scheduling and clock policy.
    compare(out, "driver_version", member(frozen, "driver_version"), member(now, "driver_version"),
            true);
    compare(out, "cuda_driver_version", member(frozen, "cuda_driver_version"),
            member(now, "cuda_driver_version"), true);
    compare(out, "gpu_source", member(frozen, "gpu_source"), member(now, "gpu_source"), false);
    // Tool versions matter to profiler facts (which carry their own tool version), not to timings.
    const Json& frozen_tools = member(frozen, "tools");
    if (frozen_tools.is_array()) {
        for (const auto& ft : frozen_tools) {
            const Json& now_tools = member(now, "tools");
            if (!now_tools.is_array()) {
                break;
            }
            for (const auto& nt : now_tools) {
                if (member(nt, "name") == member(ft, "name")) {
                    compare(out, "tools." + show(member(ft, "name")) + ".version",
                            member(ft, "version"), member(nt, "version"), false);
                }
            }
        }
    }
    return out;
}

std::optional<std::string> identity_mismatch(const Json& frozen, const Identity& now) {
    return identity_mismatch(frozen, now.to_json());
}

std::optional<std::string> identity_mismatch(const Json& frozen, const Json& now) {
    if (!frozen.is_object() || member(frozen, "format_version") != kIdentityFormat) {
        throw Error(
            ErrorCode::invalid_record,
            fmt::format("the frozen environment identity is not a {} object", kIdentityFormat),
            Json{{"format_version", member(frozen, "format_version")}});
    }
    std::vector<std::string> reasons;
    for (const auto& d : identity_differences(frozen, now)) {
        if (d.invalidates) {
            reasons.push_back(fmt::format("{} was '{}', now '{}'", d.field, d.frozen, d.now));
        }
    }
    if (reasons.empty()) {
        return std::nullopt;
    }
    return fmt::format("environment differs from the frozen identity: {}",
                       fmt::join(reasons, "; "));
}

}  // namespace cko::env
