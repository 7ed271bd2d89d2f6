// GPU reader over NVML, loaded at run time with dlopen (no build-time dependency on the driver).
#pragma once

#include "cko/env/gpu_reader.hpp"

#include <memory>
#include <string>

namespace cko::env {

// $CKO_NVML_LIBRARY when set (tests point it at a fake), else "libnvidia-ml.so.1".
[[nodiscard]] std::string nvml_library_name();

// Loads the library (once per path per process; it is never unloaded), checks the required entry
// points and calls nvmlInit_v2. The reader calls nvmlShutdown when destroyed. nullptr with
// `why_not` set when the library is missing, incomplete or fails to initialise.
[[nodiscard]] std::unique_ptr<GpuReader> open_nvml_reader(std::string& why_not);

}  // namespace cko::env
