// `cko driver run`: one driver call as a recorded Invocation (for writing and debugging drivers).
#include "cko/eval/standalone_call.hpp"
#include "cko/stats/descriptive.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/verbs/verb.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace cko::verbs {
namespace {

driver::MetricSpec metric_spec(const std::string& text, const std::string& flag) {
    const auto colon = text.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("{} \"{}\": write NAME:UNIT, e.g. latency_us:us", flag, text),
                    Json{{"field", flag}, {"value", text}});
    }
    return driver::MetricSpec{text.substr(0, colon), text.substr(colon + 1)};
}

std::chrono::milliseconds ms(double seconds, const char* flag) {
    if (!(seconds > 0)) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("{} must be a positive number of seconds", flag),
                    Json{{"field", flag}});
    }
    return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}

// The subjects of a standalone call and their order: the reference, and for --mode paired the
// candidate too (a driver that declared paired_in_process; the seed's parity picks who goes first).
void add_subjects(driver::Request& r, const std::string& reference, const std::string& candidate,
                  const std::vector<std::string>& capabilities, std::uint64_t seed) {
    if (reference.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    "--reference is required: the original's file or directory",
                    Json{{"field", "reference"}});
    }
    r.subjects.push_back({"reference", "original", reference});
    r.order = {"reference"};
    if (r.mode == driver::Mode::paired) {
        if (candidate.empty()) {
            throw Error(ErrorCode::invalid_argument, "--mode paired needs --candidate",
                        Json{{"field", "candidate"}});
        }
        if (std::find(capabilities.begin(), capabilities.end(), "paired_in_process") ==
            capabilities.end()) {
            throw Error(ErrorCode::invalid_argument,
                        "--mode paired needs a driver declared with --capability paired_in_process",
                        Json{{"field", "capability"}});
        }
        r.subjects.push_back({"candidate", "candidate", candidate});
        r.order = (seed % 2 == 0) ? std::vector<std::string>{"reference", "candidate"}
                                  : std::vector<std::string>{"candidate", "reference"};
    } else if (!candidate.empty()) {
        throw Error(ErrorCode::invalid_argument, "--candidate is only for --mode paired",
                    Json{{"field", "candidate"}});
    }
}

eval::StandaloneCall build_call(const Request& req) {
    struct {
        std::string mode, case_id, case_file, reference, candidate, primary, gpu;
        std::int64_t samples;
        std::uint64_t seed;
        std::vector<std::string> constraints, correctness_metrics, capabilities, env_allow, argv;
        double command_timeout_s, operation_timeout_s, resource_wait_s, cleanup_timeout_s;
    } o{req.text("mode"),
        req.text("case"),
        req.text("case_file"),
        req.text("reference"),
        req.text("candidate"),
        req.text("primary"),
        req.text("gpu"),
        req.integer("samples"),
        req.unsigned_integer("seed"),
        req.list("constraint"),
        req.list("correctness_metric"),
        req.list("capability"),
        req.list("env_allow"),
        req.list("argv"),
        req.number("command_timeout"),
        req.number("operation_timeout"),
        req.number("resource_wait"),
        req.number("cleanup_timeout")};
    eval::StandaloneCall call;
    if (o.argv.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    "give the driver argv after --, e.g. -- python3 driver.py",
                    Json{{"field", "argv"}});
    }
    call.driver.argv = o.argv;
    call.driver.capabilities = o.capabilities;
    // Added to the default allow-list (PATH, HOME, LANG, TMPDIR, LD_LIBRARY_PATH,
    // CUDA_VISIBLE_DEVICES, ...).
    call.driver.env_allow.insert(call.driver.env_allow.end(), o.env_allow.begin(),
                                 o.env_allow.end());
    const auto mode = driver::mode_from_name(o.mode);
    if (!mode) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("--mode \"{}\": use smoke, single or paired", o.mode),
                    Json{{"field", "mode"}});
    }
    driver::Request& r = call.request;
    r.mode = *mode;
    require_safe_name(o.case_id, "--case");
    r.case_id = o.case_id;
    if (o.case_file.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    "--case-file is required: the case's input description (JSON)",
                    Json{{"field", "case_file"}});
    }
    r.case_path = o.case_file;
    add_subjects(r, o.reference, o.candidate, o.capabilities, o.seed);
    if (o.samples < 1 || o.samples > 100000) {
        throw Error(ErrorCode::invalid_argument, "--samples must be between 1 and 100000",
                    Json{{"field", "samples"}});
    }
    r.samples = o.samples;
    r.seed = o.seed;
    r.primary = metric_spec(o.primary, "--primary");
    for (const auto& c : o.constraints) {
        r.constraints.push_back(metric_spec(c, "--constraint"));
    }
    r.correctness_metrics = o.correctness_metrics;
    call.limits.command = ms(o.command_timeout_s, "--command-timeout");
    call.limits.operation = ms(o.operation_timeout_s, "--operation-timeout");
    call.limits.resource_wait = ms(o.resource_wait_s, "--resource-wait");
    call.limits.cleanup = ms(o.cleanup_timeout_s, "--cleanup-timeout");
    call.gpu_uuid = o.gpu;
    return call;
}

std::string summary(const eval::StandaloneOutcome& out) {
    std::string text = fmt::format("invocation {}: {}\n", out.invocation_id, out.state);
    if (out.result) {
        for (const auto& s : out.result->subjects) {
            const double median = s.primary.empty() ? std::nan("") : stats::median(s.primary);
            text +=
                fmt::format("  {:<10} correctness {:<7} {} samples, median {:.6g}\n", s.role,
                            driver::correctness_status_name(s.status), s.primary.size(), median);
        }
    }
    return text;  // an error is the outcome's failure, which the adapter prints
}

Outcome driver_run(const Request& r, Context& context) {
    const eval::StandaloneCall call = build_call(r);
    const store::Store store = store::Store::open_or_create(r.text("root"));
    context.report_progress("running the driver…");
    const eval::StandaloneOutcome out = eval::run_standalone_call(
        store, call, context.cancel,
        [&context](const std::string& id) { context.announce_invocation(id); });
    context.report_progress("");
    Outcome outcome{summary(out), out.status.to_json(), out.exit_code, {}};
    outcome.failure = out.error;
    return outcome;
}

}  // namespace

void add_driver_verbs(std::vector<Verb>& table, std::vector<Group>& groups) {
    groups.push_back({{"driver"}, "Drive a workload driver directly (write and debug drivers)"});
    Param seed =
        integer_param("seed", "Seed handed to the driver; its parity picks the paired order", 0);
    seed.minimum = 0;
    Param capability =
        list_param("capability", "Driver capability (single_subject, paired_in_process)");
    capability.default_value = Json::array({"single_subject"});
    Verb v{
        {"driver", "run"},
        "One driver call, recorded as an Invocation",
        RequestDef{{
            root_param(),
            string_param("mode", "smoke (2 samples), single, or paired", "smoke"),
            string_param("case", "Case id ([A-Za-z0-9._-])", "main"),
            string_param("case_file",
                         "The case's input description (frozen, handed to the driver)"),
            string_param("reference", "The original's file or directory (snapshotted)"),
            string_param("candidate", "The candidate's file or directory (paired mode)"),
            integer_param("samples", "Samples per subject (smoke: always 2)", 5),
            seed,
            string_param("primary", "Primary metric NAME:UNIT", "latency_us:us"),
            list_param("constraint", "Constraint metric NAME:UNIT (repeatable)"),
            list_param("correctness_metric", "Correctness metric the driver reports (repeatable)"),
            capability,
            list_param(
                "env_allow",
                "Extra environment variable passed to the driver (repeatable; PATH, HOME, "
                "LANG, TMPDIR, LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES, PYTHONPATH always are)"),
            string_param("gpu",
                         "GPU UUID to lock for the call (serializes measurements on that GPU)"),
            number_param("command_timeout", "Seconds one driver call may run", 300.0),
            number_param("operation_timeout", "Seconds the invocation may run", 3600.0),
            number_param("resource_wait", "Seconds to wait for the GPU lock", 120.0),
            number_param("cleanup_timeout", "Seconds between SIGTERM and SIGKILL", 10.0),
            detach_param(),
            positional(list_param("argv", "The driver command (after --)")),
        }},
        &driver_run};
    v.cancellable = true;
    v.detachable = true;
    table.push_back(std::move(v));
}

}  // namespace cko::verbs
