// The few NVML types and entry points cko uses, declared here so that nvml.h is not needed.
// Layouts and values follow NVIDIA's nvml.h (CUDA 11.x-13.x); see docs/environment.md.
#pragma once

namespace cko::env::nvml {

using Return = int;  // nvmlReturn_t (a C enum: int-sized)
struct DeviceOpaque;
using Device = DeviceOpaque*;  // nvmlDevice_t

inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorInsufficientSize = 7;

inline constexpr int kClockSm = 1;          // NVML_CLOCK_SM
inline constexpr int kClockMem = 2;         // NVML_CLOCK_MEM
inline constexpr int kTemperatureGpu = 0;   // NVML_TEMPERATURE_GPU
inline constexpr int kFeatureEnabled = 1;   // NVML_FEATURE_ENABLED (nvmlEnableState_t)
inline constexpr unsigned kMigEnabled = 1;  // NVML_DEVICE_MIG_ENABLE
inline constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE
inline constexpr int kP2pCapsIndexNvlink = 2;                    // NVML_P2P_CAPS_INDEX_NVLINK
inline constexpr int kP2pStatusOk = 0;                           // NVML_P2P_STATUS_OK
inline constexpr unsigned kStringBufferSize = 96;  // >= NVML_DEVICE_{UUID,NAME}_V2_BUFFER_SIZE

struct Memory {  // nvmlMemory_t (v1)
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

struct Utilization {  // nvmlUtilization_t
    unsigned int gpu;
    unsigned int memory;
};

struct ProcessInfo {  // nvmlProcessInfo_t as taken by ..._v2 and ..._v3
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};
static_assert(sizeof(ProcessInfo) == 24, "nvmlProcessInfo_t is 24 bytes on LP64");

// One pointer per entry point; a null one is missing from the loaded library.
struct Api {
    Return (*init)() = nullptr;      // nvmlInit_v2
    Return (*shutdown)() = nullptr;  // nvmlShutdown
    const char* (*error_string)(Return) = nullptr;
    Return (*system_driver_version)(char*, unsigned) = nullptr;
    Return (*system_cuda_driver_version)(int*) = nullptr;    // ..._v2
    Return (*device_count)(unsigned*) = nullptr;             // ..._v2
    Return (*handle_by_index)(unsigned, Device*) = nullptr;  // ..._v2
    Return (*uuid)(Device, char*, unsigned) = nullptr;
    Return (*name)(Device, char*, unsigned) = nullptr;
    Return (*compute_capability)(Device, int*, int*) = nullptr;
    Return (*memory_info)(Device, Memory*) = nullptr;
    Return (*clock_info)(Device, int, unsigned*) = nullptr;
    Return (*max_clock_info)(Device, int, unsigned*) = nullptr;
    Return (*power_usage)(Device, unsigned*) = nullptr;           // mW
    Return (*enforced_power_limit)(Device, unsigned*) = nullptr;  // mW
    Return (*temperature)(Device, int, unsigned*) = nullptr;
    Return (*utilization)(Device, Utilization*) = nullptr;
    Return (*compute_processes)(Device, unsigned*, ProcessInfo*) = nullptr;  // _v3, else _v2
    Return (*mig_mode)(Device, unsigned*, unsigned*) = nullptr;
    Return (*ecc_mode)(Device, int*, int*) = nullptr;
    Return (*persistence_mode)(Device, int*) = nullptr;
    Return (*clock_event_reasons)(Device, unsigned long long*) = nullptr;
    Return (*topology_common_ancestor)(Device, Device, int*) = nullptr;  // nvmlGpuTopologyLevel_t
    Return (*p2p_status)(Device, Device, int, int*) = nullptr;  // caps index, nvmlGpuP2PStatus_t
};

}  // namespace cko::env::nvml
