// Doctor items from an identity: what is available, what blocks, and the cheapest next step.
#include "cko/env/doctor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

namespace cko::env {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string gib(std::uint64_t bytes) {
    return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / kGiB);
}

template <typename T>
std::string or_unknown(const std::optional<T>& value, std::string_view unit) {
    if (!value) {
        return "?";
    }
    if constexpr (std::is_floating_point_v<T>) {
        return fmt::format("{:.0f}{}", *value, unit);
    } else {
        return fmt::format("{}{}", *value, unit);
    }
}

std::string on_off(const std::optional<bool>& value) {
    return value ? (*value ? "on" : "off") : "?";
}

const char* kNoChange = " (advice only: cko never changes the host)";

void host_items(const Identity& id, DoctorReport& report) {
    const Host& h = id.host;
    DoctorItem host{
        "host", DoctorStatus::ok,
        fmt::format("{} ({} {}, {}, {} CPUs)", h.hostname, h.arch, h.kernel_release,
                    h.cpu_model.empty() ? "CPU model unknown" : h.cpu_model, h.logical_cpus),
        ""};
    if (h.machine_id.empty()) {
        host.status = DoctorStatus::warn;
        host.detail += "; no /etc/machine-id: evidence is bound to the GPU UUIDs and hostname only";
        host.fix =
            "provide /etc/machine-id (systemd-machine-id-setup, or bind-mount the host's "
            "into the container)";
    }
    report.add(host);
    if (h.in_container) {
        report.add({"container", DoctorStatus::ok,
                    fmt::format("inside a container ({}); where the driver cannot map GPU "
                                "process ids into this pid namespace, the monitor counts them as "
                                "foreign (fails closed)",
                                fmt::join(h.container_hints, "; ")),
                    ""});
    }
    report.add({"scheduler", DoctorStatus::ok,
                h.scheduler ? fmt::format("{} job {}", h.scheduler->name, h.scheduler->job_id)
                            : std::string("none (not inside a batch job)"),
                ""});
    if (h.memory_available_bytes && h.memory_total_bytes) {
        const bool low = *h.memory_available_bytes < std::uint64_t{2} << 30;
        report.add({"host_memory", low ? DoctorStatus::warn : DoctorStatus::ok,
                    fmt::format("{} available of {}", gib(*h.memory_available_bytes),
                                gib(*h.memory_total_bytes)),
                    low ? "free host memory before measuring (swapping distorts timings)" : ""});
    }
    if (h.load_1m && h.logical_cpus > 0) {
        const bool busy = *h.load_1m > 0.5 * h.logical_cpus;
        report.add({"host_load", busy ? DoctorStatus::warn : DoctorStatus::ok,
                    fmt::format("load average {:.2f} on {} CPUs{}", *h.load_1m, h.logical_cpus,
                                busy ? ": other work is running; CPU timings will be noisy" : ""),
                    busy ? "wait for the other work to finish, or measure on an idle host" : ""});
    }
}

// How the GPUs reach each other, as the identity records it: what a multi-GPU Target's speed
// depends on.
void topology_item(const Identity& id, DoctorReport& report) {
    if (id.gpus.size() < 2) {
        return;
    }
    if (id.gpu_topology.empty()) {
        report.add({"gpu_topology", DoctorStatus::ok,
                    fmt::format("{} GPUs; how they are linked is not known through {}",
                                id.gpus.size(), id.gpu_source),
                    ""});
        return;
    }
    std::vector<std::string> pairs;
    for (const auto& link : id.gpu_topology) {
        unsigned a = 0;
        unsigned b = 0;
        for (const auto& g : id.gpus) {
            a = g.uuid == link.a_uuid ? g.index : a;
            b = g.uuid == link.b_uuid ? g.index : b;
        }
        const std::string via = link.nvlink.value_or(false) ? std::string("NVLink")
                                : link.nvlink.has_value()   ? std::string("no NVLink")
                                                            : std::string("NVLink unknown");
        pairs.push_back(
            fmt::format("{}-{}: {}, common ancestor {}", a, b, via,
                        link.common_ancestor.empty() ? "unknown" : link.common_ancestor));
    }
    report.add({"gpu_topology", DoctorStatus::ok, fmt::format("{}", fmt::join(pairs, "; ")), ""});
}

// One GPU: its state, then a warning for each thing that would spoil a measurement on it
// (other compute processes, little free memory, persistence off, MIG, heat).
void one_gpu_items(const GpuInfo& g, DoctorReport& report) {
    const std::string name = fmt::format("gpu.{}", g.index);
    report.add(
        {name, DoctorStatus::ok,
         fmt::format("{} {} (cc {}), {} total, {} free, SM {}/{} MHz, {}, {} / {}, "
                     "MIG {}, ECC {}, persistence {}",
                     g.uuid, g.name, g.compute_capability.empty() ? "?" : g.compute_capability,
                     gib(g.memory_total_bytes), gib(g.memory_free_bytes),
                     or_unknown(g.sm_clock_mhz, ""), or_unknown(g.sm_clock_max_mhz, ""),
                     or_unknown(g.temperature_c, " C"), or_unknown(g.power_w, " W"),
                     or_unknown(g.power_limit_w, " W"), on_off(g.mig_enabled),
                     on_off(g.ecc_enabled), on_off(g.persistence_enabled)),
         ""});
    if (g.processes.empty()) {
        report.add({name + ".processes", DoctorStatus::ok, "no other compute process", ""});
    } else {
        std::vector<std::string> procs;
        for (const auto& p : g.processes) {
            procs.push_back(p.used_memory_bytes
                                ? fmt::format("pid {} ({})", p.pid, gib(*p.used_memory_bytes))
                                : fmt::format("pid {}", p.pid));
        }
        report.add({name + ".processes", DoctorStatus::warn,
                    fmt::format("{} compute process(es): {}; a formal measurement now would "
                                "be marked contaminated",
                                g.processes.size(), fmt::join(procs, ", ")),
                    "wait for them to end, or choose another GPU (CUDA_VISIBLE_DEVICES)"});
    }
    if (g.memory_total_bytes > 0 && g.memory_free_bytes * 10 < g.memory_total_bytes) {
        report.add(
            {name + ".memory", DoctorStatus::warn,
             fmt::format("only {} of {} free", gib(g.memory_free_bytes), gib(g.memory_total_bytes)),
             "free GPU memory (other processes hold it)"});
    }
    if (g.persistence_enabled == false) {
        report.add({name + ".persistence", DoctorStatus::warn,
                    "persistence mode off: the driver may unload between runs, so first "
                    "calls are slow and clocks start cold",
                    std::string("sudo nvidia-smi -pm 1, or run nvidia-persistenced") + kNoChange});
    }
    if (g.mig_enabled == true) {
        report.add({name + ".mig", DoctorStatus::warn,
                    "MIG enabled: work runs on a slice; processes of other slices may be "
                    "invisible to this user",
                    "use a MIG device UUID (MIG-...) in CUDA_VISIBLE_DEVICES and expect "
                    "slice-sized results"});
    }
    if (g.temperature_c && *g.temperature_c >= 85) {
        report.add({name + ".temperature", DoctorStatus::warn,
                    fmt::format("{} C at rest: thermal slowdown is likely", *g.temperature_c),
                    "check cooling; let the GPU cool before formal measurements"});
    }
}

void gpu_items(const Identity& id, const DoctorOptions& options, DoctorReport& report) {
    if (id.gpus.empty()) {
        std::string why = id.notes.empty() ? std::string("nothing answered")
                                           : fmt::format("{}", fmt::join(id.notes, "; "));
        report.add({"gpu", options.require_gpu ? DoctorStatus::blocker : DoctorStatus::warn,
                    fmt::format("no NVIDIA GPU ({}); CPU workloads can still be measured", why),
                    options.require_gpu
                        ? "run on a host with an NVIDIA GPU and driver (libnvidia-ml.so.1 or "
                          "nvidia-smi), or drop --require-gpu for a CPU workload"
                        : ""});
        return;
    }
    report.add({"gpu", DoctorStatus::ok,
                fmt::format("{} GPU(s) via {}; driver {}, CUDA {}", id.gpus.size(), id.gpu_source,
                            id.driver_version.empty() ? "?" : id.driver_version,
                            id.cuda_driver_version.empty() ? "?" : id.cuda_driver_version),
                ""});
    if (id.gpu_source == "nvidia-smi") {
        report.add({"nvml", DoctorStatus::warn,
                    "NVML not loaded; GPU state comes from nvidia-smi (one process per monitor "
                    "sample, fewer fields)",
                    "use a cko that links glibc dynamically (`make portable`, or a normal build); "
                    "a fully static one cannot load NVML. Or point CKO_NVML_LIBRARY at "
                    "libnvidia-ml.so.1"});
    }
    topology_item(id, report);
    for (const auto& g : id.gpus) {
        one_gpu_items(g, report);
    }
}

void tool_items(const Identity& id, const DoctorOptions& options, DoctorReport& report) {
    for (const auto& tool : id.tools) {
        const bool required = std::find(options.require_tools.begin(), options.require_tools.end(),
                                        tool.name) != options.require_tools.end();
        DoctorItem item{"tool." + tool.name, DoctorStatus::ok, "", ""};
        if (!tool.found()) {
            item.detail = "not found in PATH, $CUDA_HOME/bin or /usr/local/cuda/bin";
            if (required) {
                item.status = DoctorStatus::blocker;
            } else if (!id.gpus.empty()) {
                item.status = DoctorStatus::warn;
            } else {
                item.detail += " (needed only for GPU work)";
            }
            if (item.status != DoctorStatus::ok) {
                item.fix = fmt::format(
                    "install the CUDA toolkit / Nsight tools, or add the "
                    "directory of {} to PATH",
                    tool.name);
            }
        } else if (!tool.error.empty()) {
            item.status = required ? DoctorStatus::blocker : DoctorStatus::warn;
            item.detail = fmt::format("{}: {}", tool.path, tool.error);
            item.fix = fmt::format("run '{} --version' by hand to see what is wrong", tool.path);
        } else {
            item.detail = fmt::format("{} at {}", tool.version, tool.path);
        }
        report.add(item);
    }
    for (const auto& name : options.require_tools) {
        if (id.tool(name) == nullptr) {
            report.add({"tool." + name, DoctorStatus::blocker, "not probed",
                        "report this: required tools are probed by run_doctor"});
        }
    }
}

void counter_item(const Identity& id, DoctorReport& report) {
    DoctorItem item{"ncu_counters", DoctorStatus::ok, id.ncu_counters_detail, ""};
    if (id.ncu_counters_permitted == false) {
        item.status = DoctorStatus::warn;
        item.fix = std::string(
                       "run ncu as root, or have an admin set "
                       "'options nvidia NVreg_RestrictProfilingToAdminUsers=0' and reload "
                       "the driver (https://developer.nvidia.com/ERR_NVGPUCTRPERM)") +
                   kNoChange;
    } else if (!id.ncu_counters_permitted && !id.gpus.empty()) {
        item.status = DoctorStatus::warn;
        item.fix = "a first 'cko profile collect' will tell (ERR_NVGPUCTRPERM becomes a fact)";
    } else if (!id.ncu_counters_permitted) {
        item.detail += " (not applicable without a GPU)";
    }
    report.add(item);
}

}  // namespace

std::string_view doctor_status_name(DoctorStatus status) noexcept {
    switch (status) {
    case DoctorStatus::ok:
        return "ok";
    case DoctorStatus::warn:
        return "warn";
    case DoctorStatus::blocker:
        return "blocker";
    }
    return "blocker";
}

bool DoctorReport::has_blockers() const {
    return std::any_of(items.begin(), items.end(),
                       [](const DoctorItem& i) { return i.status == DoctorStatus::blocker; });
}

int DoctorReport::exit_code() const {
    return has_blockers() ? 3 : 0;
}

std::string DoctorReport::cheapest_next_step() const {
    for (const auto& item : items) {
        if (item.status == DoctorStatus::blocker) {
            return fmt::format("{}: {}", item.name, item.fix);
        }
    }
    const auto warns = std::count_if(items.begin(), items.end(), [](const DoctorItem& i) {
        return i.status == DoctorStatus::warn;
    });
    return fmt::format("ready: write a Target spec with 'cko init'{}",
                       warns > 0 ? fmt::format(" ({} warning(s) above are advice)", warns) : "");
}

Json DoctorReport::to_json() const {
    Json list = Json::array();
    std::size_t counts[3] = {0, 0, 0};
    for (const auto& item : items) {
        ++counts[static_cast<int>(item.status)];
        list.push_back(Json{{"name", item.name},
                            {"status", doctor_status_name(item.status)},
                            {"detail", item.detail},
                            {"fix", item.fix.empty() ? Json(nullptr) : Json(item.fix)}});
    }
    return Json{{"format_version", kDoctorFormat},
                {"ready", !has_blockers()},
                {"counts", Json{{"ok", counts[0]}, {"warn", counts[1]}, {"blocker", counts[2]}}},
                {"items", list},
                {"next_step", next_step},
                {"identity", identity}};
}

std::string DoctorReport::to_text() const {
    std::string out = "cko doctor\n";
    out += fmt::format("  {:<8} {:<24} {}\n", "STATUS", "ITEM", "DETAIL");
    for (const auto& item : items) {
        out += fmt::format("  {:<8} {:<24} {}\n", doctor_status_name(item.status), item.name,
                           item.detail);
        if (!item.fix.empty()) {
            out += fmt::format("  {:<8} {:<24} fix: {}\n", "", "", item.fix);
        }
    }
    out += fmt::format("{}\nnext step: {}\n", has_blockers() ? "BLOCKED (exit 3)" : "no blockers",
                       next_step);
    return out;
}

DoctorReport doctor_report(const Identity& identity, const DoctorOptions& options) {
    DoctorReport report;
    host_items(identity, report);
    gpu_items(identity, options, report);
    tool_items(identity, options, report);
    counter_item(identity, report);
    report.identity = identity.to_json();
    report.refresh_next_step();
    return report;
}

DoctorReport run_doctor(const DoctorOptions& options) {
    Identity identity = probe_identity(options.probe);
    std::vector<std::string> extra;
    for (const auto& name : options.require_tools) {
        if (identity.tool(name) == nullptr) {
            extra.push_back(name);
        }
    }
    if (!extra.empty()) {
        auto more = probe_tools(extra, tool_search_dirs(), options.probe.tool_timeout);
        identity.tools.insert(identity.tools.end(), more.begin(), more.end());
    }
    return doctor_report(identity, options);
}

}  // namespace cko::env
