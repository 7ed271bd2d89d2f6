// Driver calls: timeouts, exit status, missing or malformed results, each mapped to one error code.
#include "cko/driver/call.hpp"

#include "cko/driver/stderr_tail.hpp"

#include "cko/util/files.hpp"
#include "cko/util/utf8.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

namespace cko::driver {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kTailLines = 1000;  // the 2000 bytes bound it first

Error judge_process(const CallReport& report, std::chrono::milliseconds timeout) {
    const ProcessResult& p = report.outcome.process;
    const std::string tail =
        stderr_tail(report.outcome.call_dir / store::layout::kStderrFile, kTailLines, 2000);
    const Json details{{"call_dir", report.outcome.call_dir.string()},
                       {"process", p.to_json()},
                       {"stderr_tail", tail}};
    if (p.cancelled) {
        return Error(ErrorCode::interrupted,
                     "the driver call was cancelled; its process group was killed", details);
    }
    if (p.timed_out) {
        return Error(ErrorCode::timed_out,
                     fmt::format("the driver ran past its {} s limit; its process group was killed "
                                 "(raise limits.command_timeout_s or make the driver faster)",
                                 static_cast<double>(timeout.count()) / 1000.0),
                     details);
    }
    const std::string how = p.exited ? fmt::format("exited with status {}", p.exit_code)
                                     : fmt::format("was killed by signal {}", p.signal);
    return Error(
        ErrorCode::driver_failed,
        fmt::format("the driver {}{}", how, tail.empty() ? "" : "; stderr ends with: " + tail),
        details);
}

}  // namespace

bool DriverSpec::can(std::string_view capability) const {
    return std::find(capabilities.begin(), capabilities.end(), capability) != capabilities.end();
}

Json CallReport::to_json() const {
    Json j{{"call", outcome.number},
           {"call_dir", outcome.relative_dir},
           {"process", outcome.process.to_json()},
           {"ok", result.has_value()}};
    if (outcome.launch.is_object()) {
        Json slurm = outcome.launch;
        slurm.erase("node_identity");  // kept whole in the call's slurm.json
        j["slurm"] = slurm;
    }
    if (error) {
        j["error"] = error->to_json()["error"];
    } else if (result && !result->unchecked_roles.empty()) {
        j["notes"] = Json::array({roles_unchecked_note(result->unchecked_roles)});
    }
    return j;
}

CallReport call_driver(run::Invocation& invocation, const DriverSpec& driver,
                       const Request& request, const std::function<void(pid_t)>& on_spawn) {
    CallReport report;
    try {
        const run::CallSlot slot = invocation.open_call();
        run::CallSpec spec;
        spec.argv = call_argv(driver.argv, slot.request_path);
        spec.request = call_request_json(request, slot.output_dir, slot.deadline_unix_ns);
        spec.working_dir = driver.working_dir;
        spec.env_allow = driver.env_allow;
        spec.on_spawn = on_spawn;
        spec.slurm = driver.slurm;
        report.outcome = invocation.call(slot, spec);
    } catch (const Error& e) {
        report.error = e;  // spawn_failed: the driver could not be started at all
        return report;
    }
    judge_call(invocation, request, report);
    return report;
}

void judge_call(run::Invocation& invocation, const Request& request, CallReport& report) {
    const ProcessResult& p = report.outcome.process;
    const fs::path result_path = report.outcome.output_dir / store::layout::kResultFile;
    std::error_code ec;
    const auto result_status = fs::symlink_status(result_path, ec);
    const bool has_result = fs::exists(result_status);
    const Json& launch = report.outcome.launch;
    if (report.error) {
        // Already judged: a session that failed this request said how (session_process.cpp).
    } else if (launch.is_object() && launch.value("lost", Json()).is_string() && !p.cancelled &&
               !p.timed_out) {
        // The cluster ended the job (node failure, preemption): not the driver's failure.
        report.error = Error(ErrorCode::driver_failed, launch["lost"].get<std::string>(),
                             Json{{"call_dir", report.outcome.call_dir.string()},
                                  {"infrastructure", true},
                                  {"slurm_job_id", launch["job_id"]},
                                  {"slurm_job_state", launch["job_state"]}});
    } else if (launch.is_object() && launch.value("slurm_timeout", false) && !p.cancelled) {
        report.error = Error(
            ErrorCode::timed_out,
            fmt::format("Slurm ended job {} at its time limit (slurm.time_limit); raise it or make "
                        "the driver faster",
                        launch["job_id"].is_string() ? launch["job_id"].get<std::string>() : "?"),
            Json{{"call_dir", report.outcome.call_dir.string()},
                 {"slurm_job_id", launch["job_id"]}});
    } else if (p.cancelled || p.timed_out || !p.exited || p.exit_code != 0) {
        report.error = judge_process(report, invocation.limits().command);
    } else if (!has_result) {
        report.error = Error(
            ErrorCode::missing_result,
            fmt::format("the driver exited 0 but wrote no {} (it must write result_path from the "
                        "request, or exit nonzero when it cannot run)",
                        result_path.string()),
            Json{{"call_dir", report.outcome.call_dir.string()}});
    } else if (!fs::is_regular_file(result_status) || fs::hard_link_count(result_path, ec) != 1) {
        // Never read through a link: it could name any file outside the store.
        report.error =
            Error(ErrorCode::invalid_driver_result,
                  fmt::format(
                      "{} is a symbolic link, a hard link or not a regular file; write the result "
                      "itself there",
                      result_path.string()),
                  Json{{"call_dir", report.outcome.call_dir.string()}});
    } else {
        try {
            const Json parsed = read_json_file(result_path, JsonLimits{std::size_t{64} << 20, 32});
            report.result = validate_result(request, parsed, report.outcome.output_files);
        } catch (const Error& e) {
            if (e.code() == ErrorCode::json_non_finite) {
                report.error = Error(ErrorCode::non_finite_sample, e.what(), e.details());
            } else if (e.code() == ErrorCode::file_too_large || e.code() == ErrorCode::io_error ||
                       std::string_view(error_code_name(e.code())).starts_with("json_")) {
                report.error = Error(ErrorCode::invalid_driver_result, e.what(), e.details());
            } else {
                report.error = e;
            }
        }
    }
    Json validation{
        {"format_version", "cko/driver-validation-v1"},
        {"id", fmt::format("{}-call-{}-validation", invocation.id(), report.outcome.number)},
        {"ok", report.result.has_value()}};
    if (report.error) {
        validation["error"] = report.error->to_json()["error"];
    } else if (report.result && !report.result->unchecked_roles.empty()) {
        validation["notes"] = Json::array({roles_unchecked_note(report.result->unchecked_roles)});
    }
    // Kept as the call_validated event of the invocation (never in the driver's output_dir).
    try {
        invocation.event("call_validated", validation);
    } catch (const Error&) {
    }
}

}  // namespace cko::driver
