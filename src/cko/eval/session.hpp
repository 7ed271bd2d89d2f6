// A measurement session: materialized subjects, GPU locks and the monitor around every driver call.
#pragma once

#include "cko/driver/session_process.hpp"
#include "cko/driver/workspace.hpp"
#include "cko/env/contamination.hpp"
#include "cko/eval/ledger.hpp"
#include "cko/eval/target.hpp"
#include "cko/run/gpu_set_lock.hpp"
#include "cko/run/invocation.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cko::eval {

struct SubjectMeasurement {
    std::vector<double> primary;
    std::map<std::string, std::vector<double>> constraints;
    driver::CorrectnessStatus status = driver::CorrectnessStatus::error;
    double correctness_value = 0;
    bool correct = false;  // the driver said passed AND the Target's rule (and any gates) hold
    std::vector<std::string> failed_gates;
    [[nodiscard]] double primary_median() const;
    [[nodiscard]] Json to_json() const;
};

struct Measurement {
    std::map<std::string, SubjectMeasurement> subjects;  // by role
    std::vector<int> calls;                              // driver call numbers in the invocation
    std::optional<Error> error;                          // the driver misbehaved
    std::vector<std::string> contamination;              // monitor findings during the calls
    std::string
        failed_role;  // with error: the subject whose single call failed ("" for a paired call)
    std::vector<std::string>
        driver_notes;         // the driver's environment.notes when a subject did not pass
    std::string stderr_tail;  // the last lines of its stderr then
    Json environment;         // the driver result's `environment` (null without a valid result)
    std::vector<env::MonitorSummary> monitors;  // one per driver call: what it observed
    // The roles whose samples no loaded digest tied to their subject (driver::Result::
    // unchecked_roles of its calls): the comparison notes them.
    std::vector<std::string> unchecked_roles;
    [[nodiscard]] Json to_json() const;
};

// How one call is profiled (`cko profile collect`): the driver's argv goes behind a profiler's
// (ncu, nsys), and/or the request carries a `profile` object (torch). Always a one-process call
// with one sample, never a request to a persistent driver session.
struct ProfiledCall {
    std::vector<std::string> argv_prefix;      // e.g. {"/usr/bin/ncu", "--export", ...}; {}: none
    std::vector<std::string> env_allow_extra;  // what the profiler needs beyond the driver's
    // The request's `profile` object, given the call's output_dir; unset: none.
    std::function<Json(const std::filesystem::path& output_dir)> request_profile;
};

class Session {
public:
    // What the calls of this session are: measurements (a session driver is started before the
    // GPU locks are taken) or profiled calls (always one process each, so no session is started).
    enum class Calls { measured, profiled };
    // Materializes `reference` (and `candidate`, if any) read-only under the invocation's
    // workspace, starts the driver's session when it serves sessions (and waits until it is ready:
    // its start is not GPU time), takes the Target's GPU locks, and keeps them until destroyed.
    Session(const Target& target, run::Invocation& invocation, const store::Snapshot& reference,
            std::string reference_label, const std::optional<store::Snapshot>& candidate,
            std::string candidate_label, Calls calls = Calls::measured);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // One call measuring one subject (mode single).
    [[nodiscard]] Measurement measure_single(const std::string& case_id, const std::string& role);
    // One call of one subject (mode single, one sample) under a profiler; its samples are no
    // measurement.
    [[nodiscard]] Measurement measure_profiled(const std::string& case_id, const std::string& role,
                                               const ProfiledCall& how);
    // One pair: a paired_in_process call when the driver declared it, else two single calls in
    // the given order.
    [[nodiscard]] Measurement measure_pair(const std::string& case_id, bool candidate_first,
                                           std::uint64_t seed);

    // An experiment's extra correctness gates: their metrics are requested from the driver on every
    // call and both subjects must pass them, like the Target's own rule.
    void add_correctness_gates(std::vector<CorrectnessGate> gates) { gates_ = std::move(gates); }

private:
    Measurement call(const std::string& case_id, driver::Mode mode,
                     const std::vector<std::string>& order, std::uint64_t seed,
                     const ProfiledCall* profiled = nullptr);
    // One driver call's report and what the monitor saw during it.
    struct MonitoredCall {
        driver::CallReport report;
        env::MonitorSummary summary;
    };
    driver::Request request_for(const std::string& case_id, driver::Mode mode,
                                const std::vector<std::string>& order, std::uint64_t seed,
                                const ProfiledCall* profiled);
    MonitoredCall monitored_call(const driver::Request& request, const ProfiledCall* profiled);
    Measurement measurement_of(const MonitoredCall& monitored) const;
    SubjectMeasurement judge(const driver::SubjectResult& s) const;

    const Target& target_;
    run::Invocation& invocation_;
    driver::CallWorkspace workspace_;  // removed after the driver session (members in reverse)
    std::map<std::string, driver::Subject> subjects_;  // role -> (role, label, path, digest)
    std::map<std::string, std::string> case_paths_;
    std::unique_ptr<run::GpuSetLock> locks_;
    std::vector<CorrectnessGate> gates_;
    // Set when the Target's driver serves sessions: one per operation, never shared.
    std::unique_ptr<driver::DriverSessions> driver_sessions_;
    std::shared_ptr<std::atomic<pid_t>> session_pid_ = std::make_shared<std::atomic<pid_t>>(0);
};

// How much of a call's stderr (driver/stderr_tail.hpp) a measurement or a profiler's failure
// quotes.
inline constexpr std::size_t kQuotedTailBytes = 1500;

// With a Slurm launcher: why a call's measurement must not count because the compute node's
// identity (from `cko doctor --json` in the job, in the call's cko/slurm-call-v1 record) differs
// from the Target's frozen one, or could not be taken; nullopt when it matches.
[[nodiscard]] std::optional<std::string> node_identity_problem(const Json& frozen_identity,
                                                               const Json& launch);

// Problems with the Target's authorization before an operation starts (budget spent, deadline
// passed): throws budget_exhausted / deadline_passed saying what is left. The budget spent is what
// the operation's `ledger` sums; without one, the invocations are read for this check alone.
void require_budget(const Target& target, double planned_wall_s, const InvocationLedger& ledger);
void require_budget(const Target& target, double planned_wall_s);

}  // namespace cko::eval
