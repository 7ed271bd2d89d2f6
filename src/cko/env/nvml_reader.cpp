// NVML through dlopen: every return code checked; NOT_SUPPORTED leaves a field absent silently,
// any other failure leaves it absent with a note naming the call and NVML's message.
#include "cko/env/nvml_reader.hpp"

#include "cko/env/nvml_api.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

// Defined by the linker in every binary with a dynamic section; absent (null) in a fully static
// one.
extern "C" char _DYNAMIC[] __attribute__((weak));  // NOLINT(bugprone-reserved-identifier)

namespace cko::env {
namespace {

// dlopen() from a fully static binary loads a second libc beside the built-in one, which breaks
// when the host's glibc differs from the build's; such a binary reads GPUs through nvidia-smi.
// Decided at run time, so that `make static` and `make portable` link the same compiled libraries.
bool fully_static_binary() {
    return _DYNAMIC == nullptr;
}

// dlsym gives a data pointer; copying its bytes into the function pointer avoids the
// object-to-function cast that ISO C++ leaves conditionally supported.
template <typename Fn>
void bind(void* handle, const char* symbol, Fn& target) {
    void* address = ::dlsym(handle, symbol);
    static_assert(sizeof(Fn) == sizeof(void*));
    std::memcpy(&target, &address, sizeof target);
}

// Loads `path` once and keeps it for the life of the process: NVML starts driver threads, and
// unloading it while another reader (a monitor) still uses it would be unsafe.
const nvml::Api* load_api(const std::string& path, std::string& why_not) {
    static std::mutex mutex;
    static std::map<std::string, nvml::Api> loaded;
    const std::lock_guard lock(mutex);
    if (const auto it = loaded.find(path); it != loaded.end()) {
        return &it->second;
    }
    if (fully_static_binary()) {
        why_not = fmt::format(
            "this static cko binary does not dlopen {} (a second libc would be "
            "loaded); GPUs are read through nvidia-smi instead",
            path);
        return nullptr;
    }
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        const char* error = ::dlerror();  // NOLINT(concurrency-mt-unsafe): under `mutex`
        why_not = fmt::format("cannot load {}: {}", path, error != nullptr ? error : "unknown");
        return nullptr;
    }
    nvml::Api api;
    bind(handle, "nvmlInit_v2", api.init);
    bind(handle, "nvmlShutdown", api.shutdown);
    bind(handle, "nvmlErrorString", api.error_string);
    bind(handle, "nvmlSystemGetDriverVersion", api.system_driver_version);
    bind(handle, "nvmlSystemGetCudaDriverVersion_v2", api.system_cuda_driver_version);
    bind(handle, "nvmlDeviceGetCount_v2", api.device_count);
    bind(handle, "nvmlDeviceGetHandleByIndex_v2", api.handle_by_index);
    bind(handle, "nvmlDeviceGetUUID", api.uuid);
    bind(handle, "nvmlDeviceGetName", api.name);
    bind(handle, "nvmlDeviceGetCudaComputeCapability", api.compute_capability);
    bind(handle, "nvmlDeviceGetMemoryInfo", api.memory_info);
    bind(handle, "nvmlDeviceGetClockInfo", api.clock_info);
    bind(handle, "nvmlDeviceGetMaxClockInfo", api.max_clock_info);
    bind(handle, "nvmlDeviceGetPowerUsage", api.power_usage);
    bind(handle, "nvmlDeviceGetEnforcedPowerLimit", api.enforced_power_limit);
    bind(handle, "nvmlDeviceGetTemperature", api.temperature);
    bind(handle, "nvmlDeviceGetUtilizationRates", api.utilization);
    bind(handle, "nvmlDeviceGetComputeRunningProcesses_v3", api.compute_processes);
    if (api.compute_processes == nullptr) {  // drivers before 510 (same 4-field struct)
        bind(handle, "nvmlDeviceGetComputeRunningProcesses_v2", api.compute_processes);
    }
    bind(handle, "nvmlDeviceGetMigMode", api.mig_mode);
    bind(handle, "nvmlDeviceGetEccMode", api.ecc_mode);
    bind(handle, "nvmlDeviceGetPersistenceMode", api.persistence_mode);
    bind(handle, "nvmlDeviceGetCurrentClocksEventReasons", api.clock_event_reasons);
    if (api.clock_event_reasons == nullptr) {  // the older name of the same call
        bind(handle, "nvmlDeviceGetCurrentClocksThrottleReasons", api.clock_event_reasons);
    }
    bind(handle, "nvmlDeviceGetTopologyCommonAncestor", api.topology_common_ancestor);
    bind(handle, "nvmlDeviceGetP2PStatus", api.p2p_status);
    if (api.init == nullptr || api.shutdown == nullptr || api.device_count == nullptr ||
        api.handle_by_index == nullptr || api.uuid == nullptr) {
        why_not = fmt::format(
            "{} lacks nvmlInit_v2, nvmlShutdown, nvmlDeviceGetCount_v2, "
            "nvmlDeviceGetHandleByIndex_v2 or nvmlDeviceGetUUID (driver too old?)",
            path);
        return nullptr;  // the handle stays open; it is tiny and this path is not retried
    }
    return &loaded.emplace(path, api).first->second;
}

class NvmlReader final : public GpuReader {
public:
    explicit NvmlReader(const nvml::Api& api) : api_(api) {}
    ~NvmlReader() override { api_.shutdown(); }
    NvmlReader(const NvmlReader&) = delete;
    NvmlReader& operator=(const NvmlReader&) = delete;

    std::string_view source() const override { return "nvml"; }

    GpuReading read(GpuDetail detail) override {
        GpuReading reading;
        notes_ = &reading.notes;
        std::string driver;
        std::string cuda;
        if (detail == GpuDetail::full) {
            char buffer[nvml::kStringBufferSize] = {};
            if (api_.system_driver_version != nullptr &&
                ok(api_.system_driver_version(buffer, sizeof buffer),
                   "nvmlSystemGetDriverVersion")) {
                driver = buffer;
            }
            int version = 0;
            if (api_.system_cuda_driver_version != nullptr &&
                ok(api_.system_cuda_driver_version(&version),
                   "nvmlSystemGetCudaDriverVersion_v2")) {
                cuda = cuda_version_text(version);
            }
        }
        unsigned count = 0;
        if (!ok(api_.device_count(&count), "nvmlDeviceGetCount_v2")) {
            return reading;
        }
        std::vector<nvml::Device> devices;
        for (unsigned i = 0; i < count; ++i) {
            nvml::Device device = nullptr;
            if (!ok(api_.handle_by_index(i, &device), "nvmlDeviceGetHandleByIndex_v2", i)) {
                continue;
            }
            GpuInfo gpu;
            gpu.index = i;
            char buffer[nvml::kStringBufferSize] = {};
            if (!ok(api_.uuid(device, buffer, sizeof buffer), "nvmlDeviceGetUUID", i)) {
                continue;  // a GPU without its UUID cannot be bound to evidence
            }
            gpu.uuid = buffer;
            gpu.driver_version = driver;
            gpu.cuda_driver_version = cuda;
            read_dynamic(device, gpu);
            if (detail == GpuDetail::full) {
                read_static(device, gpu);
            }
            reading.gpus.push_back(std::move(gpu));
            devices.push_back(device);
        }
        if (detail == GpuDetail::full) {
            read_links(devices, reading);
        }
        notes_ = nullptr;
        return reading;
    }

private:
    // True on success; NOT_SUPPORTED is false without a note, anything else adds one.
    bool ok(nvml::Return rc, const char* call, std::optional<unsigned> gpu = std::nullopt) {
        if (rc == nvml::kSuccess) {
            return true;
        }
        if (rc != nvml::kErrorNotSupported && notes_ != nullptr) {
            const char* text = api_.error_string != nullptr ? api_.error_string(rc) : nullptr;
            notes_->push_back(fmt::format("{}{}: {} (NVML error {})", call,
                                          gpu ? fmt::format("(GPU {})", *gpu) : std::string(),
                                          text != nullptr ? text : "error", rc));
        }
        return false;
    }

    // Every pair of GPUs: their closest common ancestor in the PCIe tree and whether NVLink joins
    // them.
    void read_links(const std::vector<nvml::Device>& devices, GpuReading& reading) {
        for (std::size_t i = 0; i < devices.size(); ++i) {
            for (std::size_t j = i + 1; j < devices.size(); ++j) {
                GpuLink link;
                link.a_uuid = reading.gpus[i].uuid;
                link.b_uuid = reading.gpus[j].uuid;
                const unsigned gi = reading.gpus[i].index;
                int level = 0;
                if (api_.topology_common_ancestor != nullptr &&
                    ok(api_.topology_common_ancestor(devices[i], devices[j], &level),
                       "nvmlDeviceGetTopologyCommonAncestor", gi)) {
                    link.common_ancestor = topology_level_name(level);
                }
                int status = 0;
                if (api_.p2p_status != nullptr &&
                    ok(api_.p2p_status(devices[i], devices[j], nvml::kP2pCapsIndexNvlink, &status),
                       "nvmlDeviceGetP2PStatus(NVLINK)", gi)) {
                    link.nvlink = status == nvml::kP2pStatusOk;
                }
                reading.links.push_back(std::move(link));
            }
        }
    }

    void read_static(nvml::Device device, GpuInfo& gpu) {
        const unsigned i = gpu.index;
        char buffer[nvml::kStringBufferSize] = {};
        if (api_.name != nullptr &&
            ok(api_.name(device, buffer, sizeof buffer), "nvmlDeviceGetName", i)) {
            gpu.name = buffer;
        }
        int major = 0;
        int minor = 0;
        if (api_.compute_capability != nullptr &&
            ok(api_.compute_capability(device, &major, &minor),
               "nvmlDeviceGetCudaComputeCapability", i)) {
            gpu.compute_capability = fmt::format("{}.{}", major, minor);
        }
        nvml::Memory memory{};
        if (api_.memory_info != nullptr &&
            ok(api_.memory_info(device, &memory), "nvmlDeviceGetMemoryInfo", i)) {
            gpu.memory_total_bytes = memory.total;
            gpu.memory_free_bytes = memory.free;
        }
        unsigned value = 0;
        if (api_.clock_info != nullptr && ok(api_.clock_info(device, nvml::kClockMem, &value),
                                             "nvmlDeviceGetClockInfo(MEM)", i)) {
            gpu.mem_clock_mhz = value;
        }
        if (api_.max_clock_info != nullptr &&
            ok(api_.max_clock_info(device, nvml::kClockMem, &value),
               "nvmlDeviceGetMaxClockInfo(MEM)", i)) {
            gpu.mem_clock_max_mhz = value;
        }
        if (api_.enforced_power_limit != nullptr &&
            ok(api_.enforced_power_limit(device, &value), "nvmlDeviceGetEnforcedPowerLimit", i)) {
            gpu.power_limit_w = value / 1000.0;
        }
        unsigned current = 0;
        unsigned pending = 0;
        if (api_.mig_mode != nullptr &&
            ok(api_.mig_mode(device, &current, &pending), "nvmlDeviceGetMigMode", i)) {
            gpu.mig_enabled = current == nvml::kMigEnabled;
        }
        int state = 0;
        int pending_state = 0;
        if (api_.ecc_mode != nullptr &&
            ok(api_.ecc_mode(device, &state, &pending_state), "nvmlDeviceGetEccMode", i)) {
            gpu.ecc_enabled = state == nvml::kFeatureEnabled;
        }
        if (api_.persistence_mode != nullptr &&
            ok(api_.persistence_mode(device, &state), "nvmlDeviceGetPersistenceMode", i)) {
            gpu.persistence_enabled = state == nvml::kFeatureEnabled;
        }
    }

    void read_dynamic(nvml::Device device, GpuInfo& gpu) {
        const unsigned i = gpu.index;
        unsigned value = 0;
        if (api_.clock_info != nullptr &&
            ok(api_.clock_info(device, nvml::kClockSm, &value), "nvmlDeviceGetClockInfo(SM)", i)) {
            gpu.sm_clock_mhz = value;
        }
        if (api_.max_clock_info != nullptr &&
            ok(api_.max_clock_info(device, nvml::kClockSm, &value), "nvmlDeviceGetMaxClockInfo(SM)",
               i)) {
            gpu.sm_clock_max_mhz = value;
        }
        if (api_.power_usage != nullptr &&
            ok(api_.power_usage(device, &value), "nvmlDeviceGetPowerUsage", i)) {
            gpu.power_w = value / 1000.0;
        }
        if (api_.temperature != nullptr &&
            ok(api_.temperature(device, nvml::kTemperatureGpu, &value), "nvmlDeviceGetTemperature",
               i)) {
            gpu.temperature_c = value;
        }
        nvml::Utilization utilization{};
        if (api_.utilization != nullptr &&
            ok(api_.utilization(device, &utilization), "nvmlDeviceGetUtilizationRates", i)) {
            gpu.utilization_pct = utilization.gpu;
        }
        unsigned long long reasons = 0;
        if (api_.clock_event_reasons != nullptr &&
            ok(api_.clock_event_reasons(device, &reasons), "nvmlDeviceGetCurrentClocksEventReasons",
               i)) {
            gpu.clock_event_reasons = reasons;
        }
        read_processes(device, gpu);
    }

    void read_processes(nvml::Device device, GpuInfo& gpu) {
        if (api_.compute_processes == nullptr) {
            if (notes_ != nullptr) {
                notes_->push_back(
                    "nvmlDeviceGetComputeRunningProcesses_v3/_v2 missing: "
                    "other processes on the GPU cannot be seen");
            }
            return;
        }
        // The list can grow between the sizing call and the read: retry a few times.
        std::vector<nvml::ProcessInfo> infos(32);
        for (int attempt = 0; attempt < 4; ++attempt) {
            unsigned count = static_cast<unsigned>(infos.size());
            const nvml::Return rc = api_.compute_processes(device, &count, infos.data());
            if (rc == nvml::kErrorInsufficientSize) {
                infos.resize(static_cast<std::size_t>(count) + 16);
                continue;
            }
            if (!ok(rc, "nvmlDeviceGetComputeRunningProcesses", gpu.index)) {
                return;
            }
            for (unsigned k = 0; k < count && k < infos.size(); ++k) {
                GpuProcess process;
                process.pid = static_cast<pid_t>(infos[k].pid);
                if (infos[k].usedGpuMemory != nvml::kValueNotAvailable) {
                    process.used_memory_bytes = infos[k].usedGpuMemory;
                }
                gpu.processes.push_back(process);
            }
            return;
        }
        if (notes_ != nullptr) {
            notes_->push_back(
                fmt::format("GPU {}: the compute process list kept growing", gpu.index));
        }
    }

    const nvml::Api& api_;
    std::vector<std::string>* notes_ = nullptr;
};

}  // namespace

std::string nvml_library_name() {
    const char* env = std::getenv("CKO_NVML_LIBRARY");  // NOLINT(concurrency-mt-unsafe)
    return env != nullptr && *env != '\0' ? std::string(env) : std::string("libnvidia-ml.so.1");
}

std::unique_ptr<GpuReader> open_nvml_reader(std::string& why_not) {
    const std::string path = nvml_library_name();
    const nvml::Api* api = load_api(path, why_not);
    if (api == nullptr) {
        return nullptr;
    }
    const nvml::Return rc = api->init();
    if (rc != nvml::kSuccess) {
        const char* text = api->error_string != nullptr ? api->error_string(rc) : nullptr;
        why_not = fmt::format("nvmlInit_v2 failed: {} (NVML error {})",
                              text != nullptr ? text : "error", rc);
        return nullptr;
    }
    return std::make_unique<NvmlReader>(*api);
}

}  // namespace cko::env
