// `cko driver run`: one driver call as a recorded Invocation (for writing and debugging drivers).
#include "cko/cli/operation.hpp"
#include "cko/cli/verbs.hpp"
#include "cko/driver/standalone.hpp"
#include "cko/stats/descriptive.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace cko::cli {
namespace {

struct DriverRunOptions {
    std::string root;
    std::string mode = "smoke";
    std::string case_id = "main";
    std::string case_file;
    std::string reference;
    std::string candidate;
    int samples = 5;
    std::uint64_t seed = 0;
    std::string primary = "latency_us:us";
    std::vector<std::string> constraints;
    std::vector<std::string> correctness_metrics;
    std::vector<std::string> capabilities{"single_subject"};
    std::vector<std::string> env_allow;
    std::string gpu;
    double command_timeout_s = 300;
    double operation_timeout_s = 3600;
    double resource_wait_s = 120;
    double cleanup_timeout_s = 10;
    bool detach = false;
    std::vector<std::string> argv;
};

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
        throw Error(ErrorCode::invalid_argument, fmt::format("{} must be a positive number of seconds", flag),
                    Json{{"field", flag}});
    }
    return std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
}

driver::StandaloneCall build_call(const DriverRunOptions& o) {
    driver::StandaloneCall call;
    if (o.argv.empty()) {
        throw Error(ErrorCode::invalid_argument, "give the driver argv after --, e.g. -- python3 driver.py",
                    Json{{"field", "argv"}});
    }
    call.driver.argv = o.argv;
    call.driver.capabilities = o.capabilities;
    // Added to the default allow-list (PATH, HOME, LANG, TMPDIR, LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES, ...).
    call.driver.env_allow.insert(call.driver.env_allow.end(), o.env_allow.begin(), o.env_allow.end());
    const auto mode = driver::mode_from_name(o.mode);
    if (!mode) {
        throw Error(ErrorCode::invalid_argument, fmt::format("--mode \"{}\": use smoke, single or paired", o.mode),
                    Json{{"field", "mode"}});
    }
    driver::Request& r = call.request;
    r.mode = *mode;
    require_safe_name(o.case_id, "--case");
    r.case_id = o.case_id;
    if (o.case_file.empty()) {
        throw Error(ErrorCode::invalid_argument, "--case-file is required: the case's input description (JSON)",
                    Json{{"field", "case_file"}});
    }
    r.case_path = o.case_file;
    if (o.reference.empty()) {
        throw Error(ErrorCode::invalid_argument, "--reference is required: the original's file or directory",
                    Json{{"field", "reference"}});
    }
    r.subjects.push_back({"reference", "original", o.reference});
    r.order = {"reference"};
    if (r.mode == driver::Mode::paired) {
        if (o.candidate.empty()) {
            throw Error(ErrorCode::invalid_argument, "--mode paired needs --candidate", Json{{"field", "candidate"}});
        }
        if (std::find(o.capabilities.begin(), o.capabilities.end(), "paired_in_process") == o.capabilities.end()) {
            throw Error(ErrorCode::invalid_argument,
                        "--mode paired needs a driver declared with --capability paired_in_process",
                        Json{{"field", "capability"}});
        }
        r.subjects.push_back({"candidate", "candidate", o.candidate});
        r.order = (o.seed % 2 == 0) ? std::vector<std::string>{"reference", "candidate"}
                                    : std::vector<std::string>{"candidate", "reference"};
    } else if (!o.candidate.empty()) {
        throw Error(ErrorCode::invalid_argument, "--candidate is only for --mode paired", Json{{"field", "candidate"}});
    }
    if (o.samples < 1 || o.samples > 100000) {
        throw Error(ErrorCode::invalid_argument, "--samples must be between 1 and 100000", Json{{"field", "samples"}});
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

std::string summary(const driver::StandaloneOutcome& out) {
    std::string text = fmt::format("invocation {}: {}\n", out.invocation_id, run::state_name(out.state));
    if (out.result) {
        for (const auto& s : out.result->subjects) {
            const double median = s.primary.empty() ? std::nan("") : stats::median(s.primary);
            text += fmt::format("  {:<10} correctness {:<7} {} samples, median {:.6g}\n", s.role,
                                driver::correctness_status_name(s.status), s.primary.size(), median);
        }
    }
    if (out.error) {
        text += fmt::format("  error[{}]: {}\n", error_code_name(out.error->code()), out.error->what());
    }
    return text;
}

}  // namespace

void register_driver(CLI::App& app) {
    auto* group = app.add_subcommand("driver", "Drive a workload driver directly (write and debug drivers)");
    group->require_subcommand(1);
    auto o = std::make_shared<DriverRunOptions>();
    auto* verb = add_verb(*group, "run", "One driver call, recorded as an Invocation", [o] {
        const driver::StandaloneCall call = build_call(*o);
        const bool json = json_output();
        return run_maybe_detached(o->detach, [&](const Announce& announce) {
            install_cancel_handlers();
            const store::Store store = store::Store::open_or_create(o->root);
            progress(json, "running the driver…");
            const driver::StandaloneOutcome out = driver::run_standalone_call(store, call, cancel_flag(), announce);
            progress(json, "");
            Json j = run::invocation_status(store, out.invocation_id).to_json();
            int code = 0;
            if (out.error) {
                code = out.error->exit_code();
            }
            return CommandResult{summary(out), j, code};
        });
    });
    add_root_option(verb, o->root);
    verb->add_option("--mode", o->mode, "smoke (2 samples), single, or paired")->capture_default_str();
    verb->add_option("--case", o->case_id, "Case id ([A-Za-z0-9._-])")->capture_default_str();
    verb->add_option("--case-file", o->case_file, "The case's input description (frozen, handed to the driver)");
    verb->add_option("--reference", o->reference, "The original's file or directory (snapshotted)");
    verb->add_option("--candidate", o->candidate, "The candidate's file or directory (paired mode)");
    verb->add_option("--samples", o->samples, "Samples per subject (smoke: always 2)")->capture_default_str();
    verb->add_option("--seed", o->seed, "Seed handed to the driver; its parity picks the paired order")->capture_default_str();
    verb->add_option("--primary", o->primary, "Primary metric NAME:UNIT")->capture_default_str();
    verb->add_option("--constraint", o->constraints, "Constraint metric NAME:UNIT (repeatable)");
    verb->add_option("--correctness-metric", o->correctness_metrics, "Correctness metric the driver reports (repeatable)");
    verb->add_option("--capability", o->capabilities, "Driver capability (single_subject, paired_in_process)");
    verb->add_option("--env-allow", o->env_allow, "Extra environment variable passed to the driver (repeatable; PATH, HOME, LANG, TMPDIR, LD_LIBRARY_PATH, CUDA_VISIBLE_DEVICES, PYTHONPATH always are)");
    verb->add_option("--gpu", o->gpu, "GPU UUID to lock for the call (serializes measurements on that GPU)");
    verb->add_option("--command-timeout", o->command_timeout_s, "Seconds one driver call may run")->capture_default_str();
    verb->add_option("--operation-timeout", o->operation_timeout_s, "Seconds the invocation may run")->capture_default_str();
    verb->add_option("--resource-wait", o->resource_wait_s, "Seconds to wait for the GPU lock")->capture_default_str();
    verb->add_option("--cleanup-timeout", o->cleanup_timeout_s, "Seconds between SIGTERM and SIGKILL")->capture_default_str();
    verb->add_flag("--detach", o->detach, "Run in the background; print the invocation id");
    verb->add_option("argv", o->argv, "The driver command (after --)")->expected(-1);
}

}  // namespace cko::cli
