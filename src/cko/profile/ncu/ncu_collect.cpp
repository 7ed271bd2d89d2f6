// Running ncu: version probe, the collection itself, and the mapping of how it ended.
#include "cko/profile/ncu/ncu_collect.hpp"

#include "cko/profile/ncu/ncu_csv.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

namespace cko::profile::ncu {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kExportCap = std::uint64_t{4} << 30;
constexpr std::uint64_t kStderrCap = std::uint64_t{1} << 20;

// What the profiled program and ncu need from our environment; the rest is dropped.
const std::vector<std::string>& allowed_environment() {
    static const std::vector<std::string> names = {"PATH",
                                                   "HOME",
                                                   "USER",
                                                   "LOGNAME",
                                                   "LANG",
                                                   "LC_ALL",
                                                   "TMPDIR",
                                                   "TERM",
                                                   "LD_LIBRARY_PATH",
                                                   "CUDA_VISIBLE_DEVICES",
                                                   "CUDA_HOME",
                                                   "CUDA_PATH",
                                                   "CUDA_MODULE_LOADING",
                                                   "NVIDIA_VISIBLE_DEVICES",
                                                   "PYTHONPATH",
                                                   "PYTHONHOME",
                                                   "VIRTUAL_ENV",
                                                   "CONDA_PREFIX"};
    return names;
}

std::string tail(const std::string& text, std::size_t n) {
    return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

std::string read_capture(const fs::path& path, std::uint64_t cap) {
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        return {};
    }
    return read_file_capped(path, cap);
}

void throw_if_stopped(const ProcessResult& r, const std::vector<std::string>& argv,
                      std::chrono::milliseconds timeout) {
    if (r.timed_out) {
        throw Error(ErrorCode::timed_out,
                    fmt::format("'{}' did not finish within {} s and was killed", argv.front(),
                                timeout.count() / 1000.0),
                    {{"argv", argv}, {"process", r.to_json()}});
    }
    if (r.cancelled) {
        throw Error(ErrorCode::interrupted, fmt::format("'{}' was cancelled", argv.front()),
                    {{"argv", argv}, {"process", r.to_json()}});
    }
}

std::string probe_version(const NcuCollectOptions& options, const fs::path& dir) {
    ProcessSpec spec;
    spec.argv = {options.ncu, "--version"};
    spec.env_allow = allowed_environment();
    spec.stdout_path = dir / "ncu-version.txt";
    spec.output_cap_bytes = 64 << 10;
    spec.timeout = std::chrono::seconds(60);
    const ProcessResult r = run_process(spec);
    throw_if_stopped(r, spec.argv, spec.timeout);
    const std::string text = read_capture(spec.stdout_path, 1 << 20);
    if (!r.exited || r.exit_code != 0) {
        throw Error(ErrorCode::tool_failed,
                    fmt::format("'{} --version' failed: {}", options.ncu, tail(text, 512)),
                    {{"process", r.to_json()}});
    }
    // "NVIDIA (R) Nsight Compute Command Line Profiler ... Version 2025.3.1.0 (build ...)"
    const std::size_t v = text.find("Version ");
    if (v == std::string::npos) {
        return {};
    }
    const std::size_t start = v + 8;
    const std::size_t end = text.find_first_of(" \r\n", start);
    return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

}  // namespace

NcuCollectResult collect_ncu(const NcuCollectOptions& options) {
    if (options.command.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    "no command to profile; give it after '--', e.g. cko profile collect ncu -- "
                    "./app");
    }
    std::error_code ec;
    if (options.work_dir.empty() || !fs::is_directory(options.work_dir, ec)) {
        throw Error(
            ErrorCode::invalid_argument,
            fmt::format("the work directory '{}' does not exist", options.work_dir.string()));
    }
    const std::string version = probe_version(options, options.work_dir);

    NcuCollectResult result;
    result.argv = {options.ncu, "--csv", "--page", "raw", "--print-units", "base"};
    result.argv.insert(result.argv.end(), options.ncu_args.begin(), options.ncu_args.end());
    result.argv.insert(result.argv.end(), options.command.begin(), options.command.end());
    result.export_path = options.work_dir / "ncu-raw.csv";
    result.stderr_path = options.work_dir / "ncu-stderr.txt";

    ProcessSpec spec;
    spec.argv = result.argv;
    spec.env_allow = allowed_environment();
    spec.stdout_path = result.export_path;
    spec.stderr_path = result.stderr_path;
    spec.output_cap_bytes = kExportCap;
    spec.timeout = options.timeout;
    spec.cancel = options.cancel;
    result.process = run_process(spec);
    throw_if_stopped(result.process, spec.argv, spec.timeout);
    if (result.process.stdout_truncated) {
        throw Error(ErrorCode::file_too_large,
                    fmt::format("ncu wrote {} bytes, more than the {} kept",
                                result.process.stdout_bytes, kExportCap),
                    {{"process", result.process.to_json()}});
    }

    const std::string err = read_capture(result.stderr_path, kStderrCap);
    const std::string out = read_capture(result.export_path, kExportCap);
    NcuParseOptions parse;
    parse.tool_version = version;
    const bool refused = says_counters_not_permitted(err) || says_counters_not_permitted(out);
    if (refused) {
        try {
            result.report = read_ncu_report(result.export_path, parse, kExportCap);
        } catch (const Error&) {
            // Nothing usable was exported; the report is the refusal itself.
            result.report.source.tool = "ncu";
            result.report.source.tool_version = version;
            result.report.source.dialect = "ncu-output";
            result.report.source.parser_version = std::string(kNcuParserVersion);
        }
        mark_counters_not_permitted(result.report);
        return result;
    }
    if (!result.process.exited || result.process.exit_code != 0) {
        throw Error(ErrorCode::tool_failed,
                    fmt::format("ncu ended with {}: {}",
                                result.process.exited
                                    ? fmt::format("exit status {}", result.process.exit_code)
                                    : fmt::format("signal {}", result.process.signal),
                                tail(err.empty() ? out : err, 1024)),
                    {{"argv", result.argv}, {"process", result.process.to_json()}});
    }
    result.report = read_ncu_report(result.export_path, parse, kExportCap);
    return result;
}

bool says_counters_not_permitted(std::string_view text) {
    return text.find("ERR_NVGPUCTRPERM") != std::string_view::npos;
}

NcuReport import_ncu_report(const NcuImportOptions& options) {
    ProcessSpec spec;
    spec.argv = {options.ncu, "--import", options.report.string(), "--csv",
                 "--page",    "raw",      "--print-units",         "base"};
    spec.env_allow = allowed_environment();
    spec.stdout_path = options.csv_path;
    spec.stderr_path = options.stderr_path;
    spec.output_cap_bytes = kExportCap;
    spec.timeout = options.timeout;
    spec.cancel = options.cancel;
    const ProcessResult r = run_process(spec);
    throw_if_stopped(r, spec.argv, spec.timeout);
    if (r.stdout_truncated) {
        throw Error(ErrorCode::file_too_large,
                    fmt::format("ncu --import wrote {} bytes, more than the {} kept",
                                r.stdout_bytes, kExportCap),
                    {{"process", r.to_json()}});
    }
    if (!r.exited || r.exit_code != 0) {
        const std::string err = read_capture(options.stderr_path, kStderrCap);
        const std::string out = read_capture(options.csv_path, kStderrCap);
        throw Error(ErrorCode::tool_failed,
                    fmt::format("'ncu --import {}' ended with {}: {}", options.report.string(),
                                r.exited ? fmt::format("exit status {}", r.exit_code)
                                         : fmt::format("signal {}", r.signal),
                                tail(err.empty() ? out : err, 1024)),
                    {{"argv", spec.argv}, {"process", r.to_json()}});
    }
    NcuParseOptions parse;
    parse.tool_version = options.tool_version;
    return read_ncu_report(options.csv_path, parse, kExportCap);
}

}  // namespace cko::profile::ncu
