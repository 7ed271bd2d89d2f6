// `cko doctor`: environment readiness (GPUs, driver, tools, counters, other processes), read-only.
#include "cko/env/doctor.hpp"
#include "cko/eval/target.hpp"
#include "cko/util/error.hpp"
#include "cko/verbs/verb.hpp"

#include <fmt/format.h>

#include <memory>

namespace cko::verbs {

namespace {

// With --spec: the workload pieces the Target spec names (spec valid, original, cases, driver,
// identity paths, change scope, deadline), each problem a blocker naming the field and the fix.
void add_spec_items(env::DoctorReport& report, const std::string& path) {
    eval::TargetSpec spec;
    try {
        spec = eval::read_target_spec(path);
    } catch (const Error& e) {
        report.add({"spec", env::DoctorStatus::blocker, e.what(),
                    e.details().value("fix", std::string("fix the spec field the message names"))});
        return;
    }
    report.add({"spec", env::DoctorStatus::ok,
                fmt::format("{} is a valid Target spec ({})", path, spec.name), ""});
    if (spec.diagnostic) {
        return;
    }
    const auto problems = eval::workload_problems(spec);
    for (const auto& p : problems) {
        report.add({fmt::format("spec.{}", p.field), env::DoctorStatus::blocker, p.problem, p.fix});
    }
    if (problems.empty()) {
        report.add({"spec.workload", env::DoctorStatus::ok,
                    fmt::format("original, {} case(s), driver {} and {} identity path(s) present",
                                spec.case_ids.size(), spec.driver_argv.front(),
                                spec.identity_paths.size()),
                    ""});
    }
}

Outcome doctor(const Request& r, Context& /*context*/) {
    env::DoctorOptions options;
    // Doctor answers within about 10 s: tool versions run in parallel with the GPU probe.
    options.probe.tool_timeout = std::chrono::milliseconds(r.integer("tool_timeout_ms"));
    options.probe.nvidia_smi_timeout = std::chrono::milliseconds(3000);
    options.require_gpu = r.flag("require_gpu");
    options.require_tools = r.list("require_tool");
    const std::string spec_path = r.text("spec");
    env::DoctorReport report = env::run_doctor(options);
    if (!spec_path.empty()) {
        add_spec_items(report, spec_path);
        report.refresh_next_step();
        if (!report.has_blockers()) {
            report.next_step =
                fmt::format("ready: cko target freeze --spec {} --root artifacts", spec_path);
        }
    }
    return Outcome{report.to_text(), report.to_json(), report.exit_code(), {}};
}

}  // namespace

void add_doctor_verbs(std::vector<Verb>& table) {
    Param timeout = integer_param("tool_timeout_ms", "Limit for each '<tool> --version' run", 3000);
    timeout.minimum = 100;
    timeout.maximum = 10000;
    table.push_back(Verb{
        {"doctor"},
        "Environment readiness: GPUs, driver, tools, counter permission, other processes; "
        "blockers and the cheapest next step (changes nothing; exit 3 when blocked)",
        RequestDef{{flag_param("require_gpu",
                               "Treat a missing NVIDIA GPU as a blocker (default: a "
                               "warning; CPU workloads need none)"),
                    list_param("require_tool",
                               "A tool that must be present (nvcc, ncu, nsys, ...); repeatable"),
                    string_param("spec",
                                 "Also check a Target spec's workload: cases present, "
                                 "original readable, driver executable, identity paths and "
                                 "change scope exist"),
                    timeout}},
        &doctor,
        true});
}

}  // namespace cko::verbs
