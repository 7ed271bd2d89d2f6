// A fake libnvidia-ml.so.1 for tests: answers come from the key=value file named by
// $FAKE_NVML_STATE, re-read on every call. A missing key answers NVML_ERROR_NOT_SUPPORTED.
//   init=9                      nvmlInit_v2's return code (default 0)
//   driver=550.54.15  cuda=12040  count=1
//   gpu0.uuid=GPU-...  gpu0.name=...  gpu0.cc=9.0  gpu0.mem_total=...  gpu0.mem_free=...
//   gpu0.sm_clock=1980  gpu0.sm_clock_max=1980  gpu0.mem_clock=...  gpu0.mem_clock_max=...
//   gpu0.power_mw=...  gpu0.power_limit_mw=...  gpu0.temp=...  gpu0.util=...  gpu0.reasons=...
//   gpu0.mig=0  gpu0.ecc=1  gpu0.persistence=1  gpu0.procs=1234:1048576,5678:na
//   gpu0.fail.<key>=<code>      that getter returns <code> instead
//   topo.0.1=10  nvlink.0.1=1   the pair's nvmlGpuTopologyLevel_t and NVLink P2P (1: OK, 0: not
//   supported)
// The declarations follow nvml.h's C ABI on their own (not cko's nvml_api.hpp), so a layout
// mistake on either side shows up in the tests.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

using State = std::map<std::string, std::string>;

State read_state() {
    State state;
    const char* path = std::getenv("FAKE_NVML_STATE");
    if (path == nullptr) {
        return state;
    }
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        const auto eq = line.find('=');
        if (eq != std::string::npos && !line.empty() && line[0] != '#') {
            state[line.substr(0, eq)] = line.substr(eq + 1);
        }
    }
    return state;
}

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kInsufficientSize = 7;

struct Device;

long index_of(Device* device) {
    return static_cast<long>(reinterpret_cast<std::uintptr_t>(device)) - 1;
}

// The value of gpu<i>.<key>, or the forced failure code / NOT_SUPPORTED.
int lookup(Device* device, const char* key, std::string& value) {
    const State state = read_state();
    const std::string prefix = "gpu" + std::to_string(index_of(device)) + ".";
    if (const auto fail = state.find(prefix + "fail." + key); fail != state.end()) {
        return std::atoi(fail->second.c_str());
    }
    const auto it = state.find(prefix + key);
    if (it == state.end()) {
        return kNotSupported;
    }
    value = it->second;
    return kSuccess;
}

int lookup_unsigned(Device* device, const char* key, unsigned* out) {
    std::string value;
    const int rc = lookup(device, key, value);
    if (rc == kSuccess) {
        *out = static_cast<unsigned>(std::strtoul(value.c_str(), nullptr, 10));
    }
    return rc;
}

int copy_string(const std::string& value, char* buffer, unsigned length) {
    if (value.size() + 1 > length) {
        return kInsufficientSize;
    }
    std::memcpy(buffer, value.c_str(), value.size() + 1);
    return kSuccess;
}

}  // namespace

extern "C" {

struct nvmlMemory_t {
    unsigned long long total, free, used;
};
struct nvmlUtilization_t {
    unsigned int gpu, memory;
};
struct nvmlProcessInfo_t {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};
using nvmlDevice_t = Device*;

__attribute__((visibility("default"))) int nvmlInit_v2() {
    const State state = read_state();
    const auto it = state.find("init");
    return it == state.end() ? kSuccess : std::atoi(it->second.c_str());
}
__attribute__((visibility("default"))) int nvmlShutdown() {
    return kSuccess;
}
__attribute__((visibility("default"))) const char* nvmlErrorString(int rc) {
    switch (rc) {
    case 3:
        return "Not Supported";
    case 4:
        return "Insufficient Permissions";
    case 9:
        return "Driver Not Loaded";
    default:
        return "Unknown Error";
    }
}
__attribute__((visibility("default"))) int nvmlSystemGetDriverVersion(char* buffer,
                                                                      unsigned length) {
    const State state = read_state();
    const auto it = state.find("driver");
    return it == state.end() ? kNotSupported : copy_string(it->second, buffer, length);
}
__attribute__((visibility("default"))) int nvmlSystemGetCudaDriverVersion_v2(int* version) {
    const State state = read_state();
    const auto it = state.find("cuda");
    if (it == state.end()) {
        return kNotSupported;
    }
    *version = std::atoi(it->second.c_str());
    return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetCount_v2(unsigned* count) {
    const State state = read_state();
    const auto it = state.find("count");
    *count = it == state.end() ? 0U : static_cast<unsigned>(std::atoi(it->second.c_str()));
    return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetHandleByIndex_v2(unsigned index,
                                                                         nvmlDevice_t* device) {
    unsigned count = 0;
    nvmlDeviceGetCount_v2(&count);
    if (index >= count) {
        return kInvalidArgument;
    }
    *device = reinterpret_cast<nvmlDevice_t>(static_cast<std::uintptr_t>(index) + 1);
    return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetUUID(nvmlDevice_t d, char* buffer,
                                                             unsigned length) {
    std::string value;
    const int rc = lookup(d, "uuid", value);
    return rc == kSuccess ? copy_string(value, buffer, length) : rc;
}
__attribute__((visibility("default"))) int nvmlDeviceGetName(nvmlDevice_t d, char* buffer,
                                                             unsigned length) {
    std::string value;
    const int rc = lookup(d, "name", value);
    return rc == kSuccess ? copy_string(value, buffer, length) : rc;
}
__attribute__((visibility("default"))) int nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d,
                                                                              int* major,
                                                                              int* minor) {
    std::string value;
    const int rc = lookup(d, "cc", value);
    if (rc == kSuccess) {
        *major = std::atoi(value.c_str());
        const auto dot = value.find('.');
        *minor = dot == std::string::npos ? 0 : std::atoi(value.c_str() + dot + 1);
    }
    return rc;
}
__attribute__((visibility("default"))) int nvmlDeviceGetMemoryInfo(nvmlDevice_t d,
                                                                   nvmlMemory_t* memory) {
    std::string total;
    std::string free;
    int rc = lookup(d, "mem_total", total);
    if (rc == kSuccess) {
        rc = lookup(d, "mem_free", free);
    }
    if (rc == kSuccess) {
        memory->total = std::strtoull(total.c_str(), nullptr, 10);
        memory->free = std::strtoull(free.c_str(), nullptr, 10);
        memory->used = memory->total - memory->free;
    }
    return rc;
}
__attribute__((visibility("default"))) int nvmlDeviceGetClockInfo(nvmlDevice_t d, int type,
                                                                  unsigned* mhz) {
    return lookup_unsigned(d,
                           type == 1   ? "sm_clock"
                           : type == 2 ? "mem_clock"
                                       : "other_clock",
                           mhz);
}
__attribute__((visibility("default"))) int nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type,
                                                                     unsigned* mhz) {
    return lookup_unsigned(d,
                           type == 1   ? "sm_clock_max"
                           : type == 2 ? "mem_clock_max"
                                       : "other",
                           mhz);
}
__attribute__((visibility("default"))) int nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* mw) {
    return lookup_unsigned(d, "power_mw", mw);
}
__attribute__((visibility("default"))) int nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d,
                                                                           unsigned* mw) {
    return lookup_unsigned(d, "power_limit_mw", mw);
}
__attribute__((visibility("default"))) int nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor,
                                                                    unsigned* c) {
    return sensor == 0 ? lookup_unsigned(d, "temp", c) : kInvalidArgument;
}
__attribute__((visibility("default"))) int nvmlDeviceGetUtilizationRates(nvmlDevice_t d,
                                                                         nvmlUtilization_t* u) {
    unsigned value = 0;
    const int rc = lookup_unsigned(d, "util", &value);
    if (rc == kSuccess) {
        u->gpu = value;
        u->memory = 0;
    }
    return rc;
}
__attribute__((visibility("default"))) int nvmlDeviceGetCurrentClocksEventReasons(
    nvmlDevice_t d, unsigned long long* r) {
    std::string value;
    const int rc = lookup(d, "reasons", value);
    if (rc == kSuccess) {
        *r = std::strtoull(value.c_str(), nullptr, 0);
    }
    return rc;
}
__attribute__((visibility("default"))) int nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned* current,
                                                                unsigned* pending) {
    const int rc = lookup_unsigned(d, "mig", current);
    if (rc == kSuccess) {
        *pending = *current;
    }
    return rc;
}
__attribute__((visibility("default"))) int nvmlDeviceGetEccMode(nvmlDevice_t d, int* current,
                                                                int* pending) {
    unsigned value = 0;
    const int rc = lookup_unsigned(d, "ecc", &value);
    if (rc == kSuccess) {
        *current = *pending = static_cast<int>(value);
    }
    return rc;
}
__attribute__((visibility("default"))) int nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int* mode) {
    unsigned value = 0;
    const int rc = lookup_unsigned(d, "persistence", &value);
    if (rc == kSuccess) {
        *mode = static_cast<int>(value);
    }
    return rc;
}
// Pair keys are written with the lower index first; either argument order finds them.
int lookup_pair(const char* key, Device* a, Device* b, std::string& value) {
    long i = index_of(a);
    long j = index_of(b);
    if (i > j) {
        std::swap(i, j);
    }
    const State state = read_state();
    const auto it =
        state.find(std::string(key) + "." + std::to_string(i) + "." + std::to_string(j));
    if (it == state.end()) {
        return kNotSupported;
    }
    value = it->second;
    return kSuccess;
}
__attribute__((visibility("default"))) int nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a,
                                                                               nvmlDevice_t b,
                                                                               int* level) {
    std::string value;
    const int rc = lookup_pair("topo", a, b, value);
    if (rc == kSuccess) {
        *level = std::atoi(value.c_str());
    }
    return rc;
}
__attribute__((visibility("default"))) int nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b,
                                                                  int caps_index, int* status) {
    std::string value;
    const int rc = caps_index == 2 ? lookup_pair("nvlink", a, b, value) : kNotSupported;
    if (rc == kSuccess) {
        *status = value == "1" ? 0 : 4;  // NVML_P2P_STATUS_OK, else ..._NOT_SUPPORTED
    }
    return rc;
}
// The real sizing protocol: too small a buffer gives INSUFFICIENT_SIZE and the needed count.
__attribute__((visibility("default"))) int nvmlDeviceGetComputeRunningProcesses_v3(
    nvmlDevice_t d, unsigned* count, nvmlProcessInfo_t* infos) {
    std::string value;
    int rc = lookup(d, "procs", value);
    if (rc == kNotSupported) {
        value.clear();  // no key: no processes
    } else if (rc != kSuccess) {
        return rc;
    }
    std::vector<nvmlProcessInfo_t> procs;
    std::size_t start = 0;
    while (start < value.size()) {
        const auto end = value.find(',', start);
        const std::string item = value.substr(start, end == std::string::npos ? end : end - start);
        const auto colon = item.find(':');
        nvmlProcessInfo_t p{};
        p.pid = static_cast<unsigned>(std::strtoul(item.c_str(), nullptr, 10));
        const std::string bytes = colon == std::string::npos ? "na" : item.substr(colon + 1);
        p.usedGpuMemory = bytes == "na" ? ~0ULL : std::strtoull(bytes.c_str(), nullptr, 10);
        p.gpuInstanceId = p.computeInstanceId = 0xFFFFFFFFU;
        procs.push_back(p);
        start = end == std::string::npos ? value.size() : end + 1;
    }
    if (*count < procs.size()) {
        *count = static_cast<unsigned>(procs.size());
        return kInsufficientSize;
    }
    *count = static_cast<unsigned>(procs.size());
    if (!procs.empty()) {
        std::memcpy(infos, procs.data(), procs.size() * sizeof(nvmlProcessInfo_t));
    }
    return kSuccess;
}

}  // extern "C"
