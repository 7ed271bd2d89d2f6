// `cko doctor`: environment readiness (GPUs, driver, tools, counters, other processes), read-only.
#include "cko/cli/command.hpp"
#include "cko/cli/verbs.hpp"
#include "cko/env/doctor.hpp"

#include <memory>

namespace cko::cli {

void register_doctor(CLI::App& app) {
    auto options = std::make_shared<env::DoctorOptions>();
    // Doctor answers within about 10 s: tool versions run in parallel with the GPU probe.
    options->probe.tool_timeout = std::chrono::milliseconds(3000);
    options->probe.nvidia_smi_timeout = std::chrono::milliseconds(3000);
    auto tool_timeout_ms = std::make_shared<int>(3000);
    CLI::App* verb =
        add_verb(app, "doctor",
                 "Environment readiness: GPUs, driver, tools, counter permission, other processes; "
                 "blockers and the cheapest next step (changes nothing; exit 3 when blocked)",
                 [options, tool_timeout_ms] {
                     options->probe.tool_timeout = std::chrono::milliseconds(*tool_timeout_ms);
                     const env::DoctorReport report = env::run_doctor(*options);
                     return CommandResult{report.to_text(), report.to_json(), report.exit_code()};
                 });
    verb->add_flag("--require-gpu", options->require_gpu,
                   "Treat a missing NVIDIA GPU as a blocker (default: a warning; CPU workloads "
                   "need none)");
    verb->add_option("--require-tool", options->require_tools,
                     "A tool that must be present (nvcc, ncu, nsys, ...); repeatable");
    verb->add_option("--tool-timeout-ms", *tool_timeout_ms, "Limit for each '<tool> --version' run")
        ->check(CLI::Range(100, 10000));
}

}  // namespace cko::cli
