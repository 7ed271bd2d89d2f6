// `cko driver run`'s options to a driver call: mode, subjects and their order, samples, metrics,
// limits.
#include "cko/driver/call_builder.hpp"

#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cko::driver {
namespace {

MetricSpec metric_spec(const std::string& text, const std::string& flag) {
    const auto colon = text.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("{} \"{}\": write NAME:UNIT, e.g. latency_us:us", flag, text),
                    Json{{"field", flag}, {"value", text}});
    }
    return MetricSpec{text.substr(0, colon), text.substr(colon + 1)};
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
void add_subjects(Request& r, const std::string& reference, const std::string& candidate,
                  const std::vector<std::string>& capabilities, std::uint64_t seed) {
    if (reference.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    "--reference is required: the original's file or directory",
                    Json{{"field", "reference"}});
    }
    r.subjects.push_back({"reference", "original", reference});
    r.order = {"reference"};
    if (r.mode == Mode::paired) {
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

}  // namespace

BuiltCall build_call(const CallOptions& o) {
    BuiltCall call;
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
    const auto mode = mode_from_name(o.mode);
    if (!mode) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("--mode \"{}\": use smoke, single or paired", o.mode),
                    Json{{"field", "mode"}});
    }
    Request& r = call.request;
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
    r.samples = static_cast<int>(o.samples);
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
    return call;
}

}  // namespace cko::driver
