// `cko profile collect ncu`: runs ncu around one command and parses its raw-page export.
#pragma once

#include "cko/profile/ncu/ncu_report.hpp"
#include "cko/util/process.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace cko::profile::ncu {

struct NcuCollectOptions {
    std::vector<std::string> command;   // the program to profile, argv form
    std::string ncu = "ncu";            // a path, or a name looked up in PATH
    std::vector<std::string> ncu_args;  // e.g. {"--set", "full"}, placed before the command
    std::chrono::milliseconds timeout{std::chrono::minutes(10)};
    std::filesystem::path work_dir;  // where the export and ncu's stderr are kept; must exist
    const std::atomic<bool>* cancel = nullptr;  // set: ncu's process group is killed
};

struct NcuCollectResult {
    NcuReport report;
    std::vector<std::string> argv;  // the ncu command line that ran
    ProcessResult process;
    std::filesystem::path export_path;
    std::filesystem::path stderr_path;
};

// Asks `ncu --version` for the version, runs
//   ncu --csv --page raw --print-units base <ncu_args> <command...>
// with stdout captured to <work_dir>/ncu-raw.csv, and parses that file. When ncu reports
// ERR_NVGPUCTRPERM (on either stream, whatever its exit status) the result is a report holding the
// counters-not-permitted fact and advice, not an error.
// Throws cko::Error: invalid_argument (no command / work_dir), spawn_failed (no ncu), timed_out,
// interrupted, tool_failed (ncu exited non-zero), file_too_large, and the parser's errors.
[[nodiscard]] NcuCollectResult collect_ncu(const NcuCollectOptions& options);

// Reading back a report ncu wrote with `--export` (cko profile collect ncu --root): the same raw
// page collect_ncu parses.
struct NcuImportOptions {
    std::string ncu;                    // the ncu that wrote the report
    std::filesystem::path report;       // <dir>/report.ncu-rep
    std::filesystem::path csv_path;     // where the raw page is kept
    std::filesystem::path stderr_path;  // ncu's stderr of the import
    std::string tool_version;           // from `ncu --version`
    std::chrono::milliseconds timeout{std::chrono::minutes(10)};
    const std::atomic<bool>* cancel = nullptr;
};

// Runs `ncu --import REPORT --csv --page raw --print-units base` with stdout kept at csv_path and
// parses it. Throws tool_failed (ncu failed: its exit and output), timed_out, interrupted,
// file_too_large and the parser's errors (empty_input for a report without kernels, ...).
[[nodiscard]] NcuReport import_ncu_report(const NcuImportOptions& options);

// True when NCU's output says it was refused the performance counters (ERR_NVGPUCTRPERM).
[[nodiscard]] bool says_counters_not_permitted(std::string_view text);

}  // namespace cko::profile::ncu
