// Finds CUDA tools, runs `<tool> --version` with a short timeout, reads the counter permission.
#include "cko/env/tools.hpp"

#include "cko/env/host.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <future>
#include <sstream>

namespace cko::env {
namespace fs = std::filesystem;

Json Tool::to_json() const {
    const auto str = [](const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); };
    return Json{{"name", name},
                {"found", found()},
                {"path", str(path)},
                {"version", str(version)},
                {"version_line", str(version_line)},
                {"error", str(error)}};
}

const std::vector<std::string>& default_tool_names() {
    static const std::vector<std::string> names = {"nvcc",      "ncu",      "nsys",
                                                   "cuobjdump", "nvdisasm", "compute-sanitizer"};
    return names;
}

std::vector<fs::path> tool_search_dirs() {
    std::vector<fs::path> dirs;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read-only, no setenv in cko
    if (const char* path = std::getenv("PATH"); path != nullptr) {
        std::string entry;
        std::istringstream in(path);
        while (std::getline(in, entry, ':')) {
            if (!entry.empty() && entry.front() == '/') {
                dirs.emplace_back(entry);
            }
        }
    }
    for (const char* variable : {"CUDA_HOME", "CUDA_PATH"}) {
        // NOLINTNEXTLINE(concurrency-mt-unsafe): read-only, no setenv in cko
        if (const char* root = std::getenv(variable); root != nullptr && *root == '/') {
            dirs.push_back(fs::path(root) / "bin");
        }
    }
    dirs.emplace_back("/usr/local/cuda/bin");
    // Standalone Nsight installs: /opt/nvidia/nsight-compute/<version>/ncu and
    // /opt/nvidia/nsight-systems/<version>/bin/nsys, newest version first.
    for (const auto& [base, sub] : {std::pair{"/opt/nvidia/nsight-compute", ""},
                                    std::pair{"/opt/nvidia/nsight-systems", "bin"}}) {
        std::vector<fs::path> versions;
        std::error_code ec;
        for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
            versions.push_back(it->path() / sub);
        }
        std::sort(versions.rbegin(), versions.rend());
        dirs.insert(dirs.end(), versions.begin(), versions.end());
    }
    return dirs;
}

fs::path find_program(std::string_view name, const std::vector<fs::path>& dirs) {
    for (const auto& dir : dirs) {
        fs::path candidate = dir / name;
        std::error_code ec;
        if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
    }
    return {};
}

CapturedRun run_captured(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
    CapturedRun run;
    fs::path dir;
    try {
        // Named by this process (cko-env-<pid>-XXXXXX): if cko is killed while the tool runs, the
        // next target freeze knows it is stale and reclaims it (eval/freeze_leftovers.cpp).
        dir = make_temp_dir(fmt::format("cko-env-{}", ::getpid()));
    } catch (const Error& e) {
        run.error = e.what();
        return run;
    }
    ProcessSpec spec;
    spec.argv = argv;
    spec.env_allow = {"PATH",      "HOME",
                      "USER",      "LANG",
                      "LC_ALL",    "LD_LIBRARY_PATH",
                      "TMPDIR",    "CUDA_HOME",
                      "CUDA_PATH", "CUDA_VISIBLE_DEVICES"};
    spec.stdout_path = dir / "stdout";
    spec.stderr_path = dir / "stderr";
    spec.output_cap_bytes = std::uint64_t{64} * 1024;
    spec.timeout = timeout;
    spec.kill_grace = std::chrono::milliseconds(500);
    try {
        run.result = run_process(spec);
        run.output = read_small_file(spec.stdout_path).value_or("") +
                     read_small_file(spec.stderr_path).value_or("");
    } catch (const std::exception& e) {  // cko::Error (spawn_failed, io_error) and the rest
        run.error = e.what();
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    return run;
}

namespace {

bool starts_with_digit(std::string_view word) {
    return !word.empty() && std::isdigit(static_cast<unsigned char>(word.front())) != 0;
}

std::string lower(std::string_view text) {
    std::string out(text);
    for (char& c : out) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

}  // namespace

std::string parse_tool_version(std::string_view output, std::string* line_out) {
    std::istringstream in{std::string(output)};
    std::string line;
    std::string fallback;
    std::string fallback_line;
    while (std::getline(in, line)) {
        const std::string text = trim(line);
        // "Cuda compilation tools, release 12.4, V12.4.131": the V-token is the full version.
        if (const auto at = text.find("release "); at != std::string::npos) {
            std::istringstream words(text.substr(at));
            std::string word;
            while (words >> word) {
                if (word.size() > 1 && word.front() == 'V' && starts_with_digit(word.substr(1))) {
                    if (line_out != nullptr) {
                        *line_out = text;
                    }
                    return word.substr(1);
                }
            }
        }
        // "Version 2024.1.1.0 (build ...)", "NVIDIA Nsight Systems version 2024.2.1.106-...".
        if (fallback.empty()) {
            std::istringstream words(text);
            std::string word;
            bool after_version = false;
            while (words >> word) {
                if (after_version && starts_with_digit(word)) {
                    while (!word.empty() && (word.back() == ',' || word.back() == ')')) {
                        word.pop_back();
                    }
                    fallback = word;
                    fallback_line = text;
                    break;
                }
                after_version = lower(word) == "version";
            }
        }
    }
    if (line_out != nullptr) {
        *line_out = fallback_line;
    }
    return fallback;
}

std::vector<Tool> probe_tools(const std::vector<std::string>& names,
                              const std::vector<fs::path>& dirs,
                              std::chrono::milliseconds timeout) {
    std::vector<Tool> tools;
    std::vector<std::future<CapturedRun>> runs;
    for (const auto& name : names) {
        Tool tool;
        tool.name = name;
        tool.path = find_program(name, dirs).string();
        if (tool.found()) {
            runs.push_back(std::async(std::launch::async, run_captured,
                                      std::vector<std::string>{tool.path, "--version"}, timeout));
        } else {
            runs.emplace_back();
        }
        tools.push_back(std::move(tool));
    }
    for (std::size_t i = 0; i < tools.size(); ++i) {
        if (!runs[i].valid()) {
            continue;
        }
        const CapturedRun run = runs[i].get();
        Tool& tool = tools[i];
        if (!run.error.empty()) {
            tool.error = run.error;
            continue;
        }
        tool.version = parse_tool_version(run.output, &tool.version_line);
        if (run.result.timed_out) {
            tool.error = fmt::format("--version did not finish within {} ms", timeout.count());
        } else if (!run.result.exited || run.result.exit_code != 0) {
            tool.error = run.result.exited
                             ? fmt::format("--version exited {}", run.result.exit_code)
                             : fmt::format("--version killed by signal {}", run.result.signal);
        } else if (tool.version.empty()) {
            tool.error = "no version in the --version output";
        }
    }
    return tools;
}

std::optional<bool> profiling_admin_only(std::string_view params_text) {
    std::istringstream in{std::string(params_text)};
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon != std::string::npos && trim(line.substr(0, colon)) == "RmProfilingAdminOnly") {
            const std::string value = trim(line.substr(colon + 1));
            if (value == "0" || value == "1") {
                return value == "1";
            }
        }
    }
    return std::nullopt;
}

CounterPermission counter_permission(std::optional<bool> admin_only, bool privileged) {
    if (!admin_only) {
        return {std::nullopt,
                "RmProfilingAdminOnly not readable in /proc/driver/nvidia/params (no NVIDIA driver "
                "here, or hidden in this container): counter access unknown until ncu runs"};
    }
    if (!*admin_only) {
        return {true, "RmProfilingAdminOnly=0: any user may read GPU performance counters"};
    }
    if (privileged) {
        return {true, "RmProfilingAdminOnly=1, and this process is root or has CAP_SYS_ADMIN"};
    }
    return {false,
            "RmProfilingAdminOnly=1 and this user is neither root nor CAP_SYS_ADMIN: ncu will fail "
            "with ERR_NVGPUCTRPERM"};
}

CounterPermission probe_ncu_counter_permission() {
    const auto params = read_small_file("/proc/driver/nvidia/params");
    bool privileged = ::geteuid() == 0;
    if (!privileged) {
        // CAP_SYS_ADMIN is capability 21 in the effective set (CapEff, hexadecimal).
        const std::string status = read_small_file("/proc/self/status").value_or("");
        const auto at = status.find("CapEff:");
        if (at != std::string::npos) {
            try {
                const unsigned long long caps = std::stoull(status.substr(at + 7), nullptr, 16);
                privileged = ((caps >> 21) & 1ULL) != 0;
            } catch (const std::exception&) {
            }
        }
    }
    return counter_permission(params ? profiling_admin_only(*params) : std::nullopt, privileged);
}

}  // namespace cko::env
