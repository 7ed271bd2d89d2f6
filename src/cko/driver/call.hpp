// One driver call: run the driver through the invocation runtime, then judge its result strictly.
#pragma once

#include "cko/driver/protocol.hpp"
#include "cko/run/invocation.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cko::driver {

struct DriverSpec {
    std::vector<std::string> argv;
    std::vector<std::string> capabilities;  // "single_subject", "paired_in_process", "session"
    std::vector<std::string> env_allow = {
        "PATH",      "HOME", "LANG", "LC_ALL", "TMPDIR", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES",
        "PYTHONPATH"};
    std::filesystem::path working_dir;
    std::optional<run::SlurmOptions> slurm;  // set: every call is one Slurm job (docs/slurm.md)
    [[nodiscard]] bool can(std::string_view capability) const;
};

struct CallReport {
    run::CallOutcome outcome;
    std::optional<Result> result;  // set when the call produced a valid result
    std::optional<Error>
        error;  // set otherwise: timed_out, interrupted, driver_failed, missing_result, ...
    [[nodiscard]] Json to_json() const;
};

// Never throws for a misbehaving driver: the failure is returned (and recorded in the call's
// validation.json and the invocation's events) so the caller can finish the invocation with it.
// The judging half of call_driver, for a call whose outcome is already there (a process, or a
// request served by a session): the exit status (unless `report.error` is already set), then the
// result file, strictly; records call_validated.
void judge_call(run::Invocation& invocation, const Request& request, CallReport& report);

[[nodiscard]] CallReport call_driver(run::Invocation& invocation, const DriverSpec& driver,
                                     const Request& request,
                                     const std::function<void(pid_t)>& on_spawn = {});

}  // namespace cko::driver
