// Which profiler program runs, at which version, with which options (profiler_program.hpp).
#include "cko/eval/profiler_program.hpp"

#include "cko/env/tools.hpp"
#include "cko/profile/tested_versions.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <filesystem>
#include <string_view>
#include <vector>

namespace cko::eval {
namespace {

namespace fs = std::filesystem;

// ncu_arg -> ncu-arg (the CLI's spelling of a request key).
std::string cli_spelling(const std::string& key) {
    std::string out = key;
    std::replace(out.begin(), out.end(), '_', '-');
    return out;
}

struct AllowedOption {
    std::string_view name;
    bool takes_value;
};

// What a user may ask the profiler for. Output, export, import, report format and overwrite
// options are cko's: they decide where the evidence is and what it is.
const std::vector<AllowedOption>& allowed_options(const std::string& tool) {
    static const std::vector<AllowedOption> ncu = {
        {"--set", true},           {"--section", true},          {"--metrics", true},
        {"--kernel-name", true},   {"--kernel-name-base", true}, {"--kernel-id", true},
        {"--launch-skip", true},   {"--launch-count", true},     {"--replay-mode", true},
        {"--cache-control", true}, {"--clock-control", true},    {"--target-processes", true},
        {"--nvtx", false},         {"--nvtx-include", true},     {"--nvtx-exclude", true},
        {"--import-source", true}, {"--graph-profiling", true}};
    static const std::vector<AllowedOption> nsys = {{"--trace", true},
                                                    {"--sample", true},
                                                    {"--cpuctxsw", true},
                                                    {"--backtrace", true},
                                                    {"--cuda-memory-usage", true},
                                                    {"--cuda-graph-trace", true},
                                                    {"--capture-range", true},
                                                    {"--capture-range-end", true},
                                                    {"--nvtx-capture", true},
                                                    {"--delay", true},
                                                    {"--duration", true},
                                                    {"--gpu-metrics-devices", true}};
    static const std::vector<AllowedOption> none;
    return tool == "ncu" ? ncu : tool == "nsys" ? nsys : none;
}

const char* tool_product(const std::string& tool) {
    return tool == "ncu" ? "Nsight Compute" : tool == "nsys" ? "Nsight Systems" : "PyTorch";
}

// The profiler's absolute path: an explicit path, or the name where `cko doctor` looks.
std::string resolve_program(const std::string& tool, const std::string& program) {
    const std::string name = program.empty() ? tool : program;
    fs::path found;
    std::error_code ec;
    if (name.find('/') != std::string::npos) {
        if (fs::is_regular_file(name, ec) && ::access(name.c_str(), X_OK) == 0) {
            found = fs::absolute(name, ec);
        }
        if (found.empty()) {
            throw Error(ErrorCode::not_found,
                        fmt::format("--{} {} is not an executable file: give the path of {} ({}), "
                                    "or leave --{} out to use the {} on PATH",
                                    tool, name, tool, tool_product(tool), tool, tool),
                        Json{{"field", tool}, {"tool", tool}, {"program", name}});
        }
        return found.string();
    }
    found = env::find_program(name, env::tool_search_dirs());
    if (found.empty()) {
        throw Error(ErrorCode::not_found,
                    fmt::format("{} ({}) was not found on PATH, in $CUDA_HOME/bin, "
                                "/usr/local/cuda/bin or /opt/nvidia: install {}, or pass --{} "
                                "/path/to/{}",
                                name, tool_product(tool), tool_product(tool), tool, tool),
                    Json{{"field", tool}, {"tool", tool}, {"program", name}});
    }
    return found.string();
}

// The version as `cko doctor` reads it (`TOOL --version`).
std::string probe_version(const std::string& tool, const std::string& program) {
    const env::CapturedRun run =
        env::run_captured({program, "--version"}, std::chrono::seconds(60));
    if (!run.error.empty() || !run.result.exited || run.result.exit_code != 0) {
        std::string why = run.error;
        if (why.empty()) {
            why = run.result.exited ? fmt::format("exit status {}", run.result.exit_code)
                                    : fmt::format("signal {}", run.result.signal);
        }
        std::string output = run.output.substr(0, 512);
        throw Error(ErrorCode::tool_failed,
                    fmt::format("'{} --version' failed ({}){}: is this {}?", program, why,
                                output.empty() ? "" : ": " + output, tool_product(tool)),
                    Json{{"field", tool}, {"tool", tool}, {"program", program}});
    }
    return env::parse_tool_version(run.output);
}

// What the profiler would make could never be bound to the Target (eval/profile_identity): say so
// before a single profiled call spends the GPU on it.
void refuse_untested_profiler(const std::string& tool, const std::string& program,
                              const std::string& version) {
    const profile::VersionCheck v = profile::check_tested_version(tool, "tool_version", version);
    if (v.status == profile::VersionStatus::tested) {
        return;
    }
    throw Error(ErrorCode::tool_version_unknown,
                fmt::format("{} ({}); nothing was profiled, since its profile could not be bound "
                            "to the Target: give a {} of a tested version with --{} PATH",
                            v.problem, program, tool_product(tool), tool),
                Json{{"field", "tool_version"},
                     {"tool", tool},
                     {"program", program},
                     {"seen", version},
                     {"tested", v.ranges}});
}

}  // namespace

ProfilerProgram checked_profiler_program(const ProfileCollectOptions& o) {
    ProfilerProgram profiler;
    if (o.tool != ProfileTool::torch) {
        profiler.path = resolve_program(std::string(profile_tool_name(o.tool)), o.program);
        profiler.version = probe_version(std::string(profile_tool_name(o.tool)), profiler.path);
        refuse_untested_profiler(std::string(profile_tool_name(o.tool)), profiler.path,
                                 profiler.version);
    } else if (!o.program.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    "torch has no profiler program: the driver runs torch.profiler itself",
                    Json{{"field", "program"}});
    }
    return profiler;
}

std::vector<std::string> checked_profiler_args(const std::string& tool,
                                               const std::vector<std::string>& args) {
    const std::string field = tool + "_arg";
    const auto& allowed = allowed_options(tool);
    std::vector<std::string> names;
    for (const auto& a : allowed) {
        names.emplace_back(a.name);
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        const std::size_t eq = arg.find('=');
        const std::string name = arg.substr(0, eq);
        const auto it = std::find_if(allowed.begin(), allowed.end(),
                                     [&](const AllowedOption& a) { return a.name == name; });
        if (it == allowed.end()) {
            throw Error(
                ErrorCode::invalid_argument,
                allowed.empty()
                    ? fmt::format("{} takes no profiler options ('{}')", tool, arg)
                    : fmt::format("--{} '{}' is not an option cko passes to {} (it sets the output "
                                  "and export options itself); allowed: {}",
                                  cli_spelling(field), arg, tool, fmt::join(names, ", ")),
                Json{{"field", field}, {"allowed", names}});
        }
        if (!it->takes_value) {
            if (eq != std::string::npos) {
                throw Error(
                    ErrorCode::invalid_argument,
                    fmt::format("--{} '{}': {} takes no value", cli_spelling(field), arg, name),
                    Json{{"field", field}});
            }
            out.push_back(name);
            continue;
        }
        std::string value;
        if (eq != std::string::npos) {
            value = arg.substr(eq + 1);
        } else if (i + 1 < args.size() && !args[i + 1].starts_with("--")) {
            value = args[++i];  // never another option taken for this one's value
        }
        if (value.empty()) {
            throw Error(ErrorCode::invalid_argument,
                        fmt::format("--{} '{}' needs a value: --{}={}=VALUE, or the value as the "
                                    "next --{}",
                                    cli_spelling(field), name, cli_spelling(field), name,
                                    cli_spelling(field)),
                        Json{{"field", field}});
        }
        out.push_back(name);
        out.push_back(value);
    }
    return out;
}

}  // namespace cko::eval
