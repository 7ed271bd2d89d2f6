// What the driver saw (host, compiler, and under CUDA the visible GPUs and versions), as result
// JSON.
#pragma once

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "json.hpp"
#include "timer.hpp"

namespace cko_driver {

inline constexpr const char* kSdkName = "cko-driver-cpp/1";

#ifdef CKO_DRIVER_HAS_CUDA
inline std::string gpu_uuid_string(const cudaUUID_t& uuid) {
    // The nvidia-smi spelling: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx
    std::string out = "GPU-";
    char hex[3];
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out += '-';
        std::snprintf(hex, sizeof hex, "%02x",
                      static_cast<unsigned>(static_cast<unsigned char>(uuid.bytes[i])));
        out += hex;
    }
    return out;
}

inline std::string cuda_version_string(int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}
#endif

// Appends the environment object to `out`.
// Only stable facts: the same machine and build must give the same object on every call;
// `notes` (messages about failures) are the one exception.
inline void write_environment(std::string& out, const char* timer_name,
                              const std::vector<std::string>& notes) {
    auto key = [&out](const char* k) {
        json::write_string(out, k);
        out += ": ";
    };
    char host[256] = {0};
    gethostname(host, sizeof host - 1);
    struct utsname u {};
    uname(&u);
    out += "{";
    key("sdk");
    json::write_string(out, kSdkName);
    out += ", ";
    key("timer");
    json::write_string(out, timer_name);
    out += ", ";
    key("hostname");
    json::write_string(out, host);
    out += ", ";
    key("platform");
    json::write_string(out, std::string(u.sysname) + "-" + u.release + "-" + u.machine);
    out += ", ";
    key("software");
    out += "{";
    key("compiler");
    json::write_string(out, __VERSION__);
#ifdef CKO_DRIVER_HAS_CUDA
    int runtime = 0, driver = 0;
    if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) {
        out += ", ";
        key("cuda_runtime");
        json::write_string(out, cuda_version_string(runtime));
    }
    if (cudaDriverGetVersion(&driver) == cudaSuccess) {
        out += ", ";
        key("cuda_driver");
        json::write_string(out, cuda_version_string(driver));
    }
#endif
    out += "}";
#ifdef CKO_DRIVER_HAS_CUDA
    int count = 0;
    if (cudaGetDeviceCount(&count) == cudaSuccess) {
        std::string uuids = "[", models = "[";
        for (int i = 0; i < count; ++i) {
            cudaDeviceProp prop{};
            if (cudaGetDeviceProperties(&prop, i) != cudaSuccess)
                continue;
            if (i)
                uuids += ", ", models += ", ";
            json::write_string(uuids, gpu_uuid_string(prop.uuid));
            json::write_string(models, prop.name);
        }
        out += ", ";
        key("gpu_uuids");
        out += uuids + "]";
        out += ", ";
        key("gpu_models");
        out += models + "]";
    }
#endif
    out += ", ";
    key("notes");
    out += "[";
    for (size_t i = 0; i < notes.size(); ++i) {
        if (i)
            out += ", ";
        json::write_string(out, notes[i]);
    }
    out += "]}";
}

}  // namespace cko_driver
