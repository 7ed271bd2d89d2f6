// Picks the GPU reader: NVML when it loads and initialises, else nvidia-smi, else none.
#include "cko/env/gpu_reader.hpp"

#include "cko/env/nvml_reader.hpp"
#include "cko/env/smi_reader.hpp"

namespace cko::env {

std::unique_ptr<GpuReader> open_gpu_reader(const GpuReaderOptions& options,
                                           std::vector<std::string>& notes) {
    std::string why;
    if (options.nvml) {
        if (auto reader = open_nvml_reader(why)) {
            return reader;
        }
        notes.push_back("NVML not used: " + why);
    }
    if (options.nvidia_smi) {
        why.clear();
        if (auto reader = open_smi_reader(options.nvidia_smi_timeout, why)) {
            return reader;
        }
        notes.push_back("nvidia-smi not used: " + why);
    }
    return nullptr;
}

}  // namespace cko::env
