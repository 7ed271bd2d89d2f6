// CUDA tool discovery (nvcc, ncu, nsys, ...), their versions, and whether NCU may read counters.
#pragma once

#include "cko/util/json.hpp"
#include "cko/util/process.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cko::env {

struct Tool {
    std::string name;          // "ncu"
    std::string path;          // resolved absolute path; empty when not found
    std::string version;       // "2024.1.1.0"; empty when it could not be parsed
    std::string version_line;  // the line the version came from
    std::string error;         // why the version is missing (timeout, exit status ...)

    [[nodiscard]] bool found() const noexcept { return !path.empty(); }
    [[nodiscard]] Json to_json() const;
};

// nvcc, ncu, nsys, cuobjdump, nvdisasm, compute-sanitizer.
[[nodiscard]] const std::vector<std::string>& default_tool_names();

// PATH's absolute entries, then $CUDA_HOME/bin, $CUDA_PATH/bin, /usr/local/cuda/bin and the
// standalone Nsight installs under /opt/nvidia (newest first).
[[nodiscard]] std::vector<std::filesystem::path> tool_search_dirs();
// The first executable regular file `name` in `dirs`; empty when none.
[[nodiscard]] std::filesystem::path find_program(std::string_view name,
                                                 const std::vector<std::filesystem::path>& dirs);

struct CapturedRun {
    ProcessResult result;
    std::string output;  // stdout then stderr, capped at 64 KiB each
    std::string error;   // set when the program could not be started at all
};
// Runs argv through run_process with the timeout and a small environment (PATH, HOME,
// LD_LIBRARY_PATH, ...), capturing the output in a temp directory that is removed after.
[[nodiscard]] CapturedRun run_captured(const std::vector<std::string>& argv,
                                       std::chrono::milliseconds timeout);

// The version in a tool's `--version` output: "V12.4.131" of "Cuda compilation tools, release
// 12.4, V12.4.131" (nvcc, cuobjdump, nvdisasm), else the number after "version" (ncu, nsys,
// compute-sanitizer). Empty when none; `line` gets the line it came from.
[[nodiscard]] std::string parse_tool_version(std::string_view output, std::string* line = nullptr);

// Each tool's path and version; the --version runs go in parallel, each with `timeout`.
[[nodiscard]] std::vector<Tool> probe_tools(const std::vector<std::string>& names,
                                            const std::vector<std::filesystem::path>& dirs,
                                            std::chrono::milliseconds timeout);

// Whether Nsight Compute may read GPU performance counters as this user, read without running
// anything: the driver's RmProfilingAdminOnly parameter (/proc/driver/nvidia/params) and our
// privileges (root or CAP_SYS_ADMIN). permitted is empty when the driver's parameters cannot be
// read (no driver, a container that hides /proc/driver).
struct CounterPermission {
    std::optional<bool> permitted;
    std::string detail;
};
[[nodiscard]] CounterPermission probe_ncu_counter_permission();
// Pure pieces, for tests: the parameter from the params text; the decision from it and privileges.
[[nodiscard]] std::optional<bool> profiling_admin_only(std::string_view params_text);
[[nodiscard]] CounterPermission counter_permission(std::optional<bool> admin_only, bool privileged);

}  // namespace cko::env
