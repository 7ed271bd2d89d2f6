// The driver protocol v1 (PROTOCOL.md): the request cko writes and the strict validation of the
// result.
#pragma once

#include "cko/util/closed_enum.hpp"
#include "cko/util/json.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cko::driver {

#define CKO_DRIVER_MODES(X) X(smoke) X(single) X(paired)
CKO_CLOSED_ENUM(Mode, CKO_DRIVER_MODES, mode_name, mode_from_name)

#define CKO_CORRECTNESS_STATUSES(X) X(passed) X(failed) X(error)
CKO_CLOSED_ENUM(CorrectnessStatus, CKO_CORRECTNESS_STATUSES, correctness_status_name,
                correctness_status_from_name)

struct MetricSpec {
    std::string name;
    std::string unit;
};

struct Subject {
    Subject() = default;
    // The digest may be left out: the standalone call and the session fill it in from the
    // snapshot they materialize.
    Subject(std::string role_in, std::string label_in, std::string path_in,
            std::string digest_in = {})
        : role(std::move(role_in)),
          label(std::move(label_in)),
          path(std::move(path_in)),
          digest(std::move(digest_in)) {}
    std::string role;   // "reference" or "candidate"
    std::string label;  // "original", "exp-…"
    std::string path;   // materialized read-only snapshot
    // The snapshot's digest (sha256 of its manifest): the request names it, and a result says per
    // subject which one it loaded (`loaded_digest`), so that swapped roles are refused.
    std::string digest;
};

struct Request {
    Mode mode = Mode::single;
    std::string case_id;
    std::string case_path;
    std::vector<Subject> subjects;
    std::vector<std::string> order;  // roles, in the order the driver runs them (paired)
    int samples = 1;
    std::uint64_t seed = 0;
    MetricSpec primary;
    std::vector<MetricSpec> constraints;
    std::vector<std::string> correctness_metrics;
    // The optional `profile` object (`cko profile collect torch`): {"kind": "torch",
    // "trace_path": "<output_dir>/torch-trace.json"} asks the driver for a profiler trace of this
    // call; null: absent (every other call).
    Json profile;
    // Without the per-call fields: call_request_json adds them.
    [[nodiscard]] Json to_json() const;
};

// The request document of one call: `request`, and what each call is given — the directory it
// writes into (`output_dir`), the file its result goes in there (`result_path`) and the wall-clock
// instant its time is up (`deadline_unix_s`).
[[nodiscard]] Json call_request_json(const Request& request,
                                     const std::filesystem::path& output_dir,
                                     std::int64_t deadline_unix_ns);

// The command of one call of a driver process: the driver's argv, then `--request <file>`, the
// request document written for the call.
[[nodiscard]] std::vector<std::string> call_argv(const std::vector<std::string>& driver_argv,
                                                 const std::filesystem::path& request_path);

struct SubjectResult {
    std::string role;
    std::string loaded_digest;  // empty: a v1 result that did not say
    CorrectnessStatus status = CorrectnessStatus::error;
    std::map<std::string, double> correctness_metrics;
    std::vector<double> primary;
    std::map<std::string, std::vector<double>> constraints;
};

struct Result {
    std::vector<SubjectResult> subjects;  // in the request's subject order
    Json environment = Json::object();
    std::vector<std::string> artifacts;
    // `cost.workload_s`: the seconds the driver's workload code itself ran for this request
    // (setup, prepare, warm-up, the timed samples, checks), as its SDK measured them; unset when
    // the driver did not say. What the driver took beyond it is its SDK's (eval/session.cpp).
    std::optional<double> workload_s;
    // The roles whose samples no digest ties to a subject: the request named the role's digest and
    // the result (cko/driver-result-v1) gave no loaded_digest for it. Believed, as v1 promises, and
    // noted (roles_unchecked_note) wherever the call and the comparison are recorded.
    std::vector<std::string> unchecked_roles;
    [[nodiscard]] const SubjectResult& subject(const std::string& role) const;
    [[nodiscard]] Json to_json() const;
};

// Validates a driver's result.json against the request it answered, strictly: closed objects,
// the same subjects, names, units and constraint set, exactly `samples` finite positive samples,
// correctness metrics for every requested name (a subject with status `error` may have none, and
// empty sample series: it measured nothing), and no file in the output directory beyond
// result.json and the declared artifacts. Each failure has its own error code and names the
// JSON path. Each subject's `loaded_digest` (required in cko/driver-result-v2, checked when present
// in v1) must be the digest the request gives that role: role_mismatch otherwise. A v1 entry
// without it, for a role the request names a digest of, is read and listed in unchecked_roles.
[[nodiscard]] Result validate_result(const Request& request, const Json& result,
                                     const std::vector<std::string>& output_files);

// The note a call and a comparison record when results left `roles` unchecked (Result::
// unchecked_roles): "roles unchecked: the driver reported no loaded digest ...", and the fix.
[[nodiscard]] std::string roles_unchecked_note(const std::vector<std::string>& roles);

// The number of samples a mode implies: smoke always 2.
[[nodiscard]] int samples_for(Mode mode, int requested) noexcept;

}  // namespace cko::driver
