// One way to read the GPUs of this host (NVML, else nvidia-smi), chosen once and kept open.
#pragma once

#include "cko/env/gpu_info.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cko::env {

// full: everything GpuInfo holds. sample: what a monitor needs every few hundred ms (uuid,
// clocks, utilization, power, temperature, clock event reasons, processes) and nothing static.
enum class GpuDetail { full, sample };

struct GpuReading {
    std::vector<GpuInfo> gpus;
    std::vector<GpuLink> links;      // GpuDetail::full through NVML only: one per pair of gpus
    std::vector<std::string> notes;  // what could not be read, and why
};

class GpuReader {
public:
    virtual ~GpuReader() = default;
    [[nodiscard]] virtual std::string_view source() const = 0;  // "nvml" | "nvidia-smi"
    // Never throws: a failed read gives fewer fields and a note.
    [[nodiscard]] virtual GpuReading read(GpuDetail detail) = 0;
};

struct GpuReaderOptions {
    bool nvml = true;
    bool nvidia_smi = true;
    std::chrono::milliseconds nvidia_smi_timeout{5000};
};

// NVML first ($CKO_NVML_LIBRARY, else libnvidia-ml.so.1), then nvidia-smi ($CKO_NVIDIA_SMI, else
// found in PATH). nullptr when neither works; `notes` then says why each was not used.
[[nodiscard]] std::unique_ptr<GpuReader> open_gpu_reader(const GpuReaderOptions& options,
                                                         std::vector<std::string>& notes);

}  // namespace cko::env
