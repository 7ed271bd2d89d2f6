// Measurement sessions: every driver call of baseline/screen/confirm/audit goes through here.
#include "cko/eval/session.hpp"

#include "cko/driver/stderr_tail.hpp"

#include "cko/env/identity.hpp"
#include "cko/env/monitor.hpp"
#include "cko/run/owner.hpp"
#include "cko/stats/descriptive.hpp"
#include "cko/util/clock.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>

namespace cko::eval {

std::optional<std::string> node_identity_problem(const Json& frozen_identity, const Json& launch) {
    const Json& node = launch.value("node_identity", Json());
    const std::string where =
        fmt::format("Slurm job {} on node {}", launch.value("job_id", Json()).dump(),
                    launch.value("node", Json()).dump());
    if (!node.is_object()) {
        // Only when the job ran: a call that never started has its own error.
        if (launch.value("node", Json()).is_null()) {
            return std::nullopt;
        }
        return fmt::format("the environment identity of {} could not be taken: {}", where,
                           launch.value("node_identity_problem", std::string("no doctor output")));
    }
    if (const auto mismatch = env::identity_mismatch(frozen_identity, node)) {
        return fmt::format("{}: {}", where, *mismatch);
    }
    return std::nullopt;
}

double SubjectMeasurement::primary_median() const {
    return primary.empty() ? std::nan("") : stats::median(primary);
}

Json SubjectMeasurement::to_json() const {
    Json constraints_json = Json::object();
    for (const auto& [name, samples] : constraints) {
        constraints_json[name] = samples;
    }
    return Json{{"status", driver::correctness_status_name(status)},
                {"correct", correct},
                {"failed_gates", failed_gates},
                {"correctness_value",
                 std::isfinite(correctness_value) ? Json(correctness_value) : Json(nullptr)},
                {"primary", primary},
                {"constraints", constraints_json}};
}

Json Measurement::to_json() const {
    Json subjects_json = Json::object();
    for (const auto& [role, s] : subjects) {
        subjects_json[role] = s.to_json();
    }
    Json j{{"subjects", subjects_json}, {"calls", calls}, {"contamination", contamination}};
    if (error) {
        j["error"] = error->to_json()["error"];
    }
    if (!driver_notes.empty()) {
        j["driver_notes"] = driver_notes;
    }
    if (!stderr_tail.empty()) {
        j["stderr_tail"] = stderr_tail;
    }
    return j;
}

Session::Session(const Target& target, run::Invocation& invocation,
                 const store::Snapshot& reference, std::string reference_label,
                 const std::optional<store::Snapshot>& candidate, std::string candidate_label,
                 Calls calls)
    : target_(target), invocation_(invocation), workspace_(target.store(), invocation.id()) {
    subjects_["reference"] = {"reference", std::move(reference_label),
                              workspace_.add_subject("reference", reference), reference.digest};
    if (candidate) {
        subjects_["candidate"] = {"candidate", std::move(candidate_label),
                                  workspace_.add_subject("candidate", *candidate),
                                  candidate->digest};
    }
    for (const auto& id : target.spec().case_ids) {
        case_paths_[id] = workspace_.add_case(id, target.case_snapshot(id));
    }
    // The session driver starts before the GPU locks: its imports need no GPU, so another
    // operation may use the GPUs meanwhile, and no GPU second is counted for them. A start that
    // fails is tried again by the first call (a session is started at most twice per operation).
    if (target.spec().serves_sessions() && calls == Calls::measured) {
        driver_sessions_ = std::make_unique<driver::DriverSessions>(
            invocation_, target.driver(), [pid = session_pid_](pid_t p) { pid->store(p); });
        if (const auto error = driver_sessions_->start()) {
            invocation_.event("driver_session_start_failed",
                              Json{{"error", error->to_json()["error"]}});
        }
    }
    // With Slurm the GPUs are on a compute node and the job's allocation is their lock.
    auto gpus = target.spec().uses_slurm() ? std::vector<std::string>{} : target.gpu_uuids();
    if (!gpus.empty()) {
        // The whole GPU set, all or none (run/gpu_set_lock.hpp): no deadlock, no partial set held.
        std::sort(gpus.begin(), gpus.end());
        for (const auto& uuid : gpus) {
            invocation_.event("resource_wait", Json{{"gpu_uuid", uuid}});
        }
        locks_ = std::make_unique<run::GpuSetLock>(gpus, invocation_.id(),
                                                   invocation_.limits().resource_wait);
        for (const auto& uuid : locks_->gpu_uuids()) {
            invocation_.event("resource_acquired",
                              Json{{"gpu_uuid", uuid}, {"waited_ms", locks_->waited().count()}});
        }
    }
}

// The driver session ends first (while its subjects still exist), then the workspace goes.
Session::~Session() {
    driver_sessions_.reset();
}

SubjectMeasurement Session::judge(const driver::SubjectResult& s) const {
    const TargetSpec& spec = target_.spec();
    SubjectMeasurement m;
    m.primary = s.primary;
    m.constraints = s.constraints;
    m.status = s.status;
    const auto it = s.correctness_metrics.find(spec.correctness_metric);
    m.correctness_value = it == s.correctness_metrics.end() ? std::nan("") : it->second;
    m.correct = s.status == driver::CorrectnessStatus::passed &&
                correctness_passes(spec.correctness_operator, m.correctness_value,
                                   spec.correctness_threshold);
    for (const auto& g : gates_) {
        const auto v = s.correctness_metrics.find(g.metric);
        if (v == s.correctness_metrics.end() || !correctness_passes(g.op, v->second, g.threshold)) {
            m.correct = false;
            m.failed_gates.push_back(fmt::format("{} {} {} (got {})", g.metric, g.op, g.threshold,
                                                 v == s.correctness_metrics.end()
                                                     ? std::string("nothing")
                                                     : fmt::format("{}", v->second)));
        }
    }
    return m;
}

// The request of one call: the case, the subjects in `order`, the Target's metrics and gates,
// and (when profiled) one sample and the profile object.
driver::Request Session::request_for(const std::string& case_id, driver::Mode mode,
                                     const std::vector<std::string>& order, std::uint64_t seed,
                                     const ProfiledCall* profiled) {
    const TargetSpec& spec = target_.spec();
    driver::Request request;
    request.mode = mode;
    request.case_id = case_id;
    request.case_path = case_paths_.at(case_id);
    for (const auto& role : order) {
        request.subjects.push_back(subjects_.at(role));
    }
    // Subjects are listed reference first; `order` says who runs first.
    std::sort(request.subjects.begin(), request.subjects.end(),
              [](const driver::Subject& a, const driver::Subject& b) { return a.role > b.role; });
    request.order = order;
    request.samples = profiled != nullptr ? 1 : spec.samples_per_call;
    request.seed = seed;
    request.primary = {spec.primary.name, spec.primary.unit};
    for (const auto& c : spec.constraints) {
        request.constraints.push_back({c.name, c.unit});
    }
    request.correctness_metrics = {spec.correctness_metric};
    for (const auto& g : gates_) {
        if (std::find(request.correctness_metrics.begin(), request.correctness_metrics.end(),
                      g.metric) == request.correctness_metrics.end()) {
            request.correctness_metrics.push_back(g.metric);
        }
    }
    if (profiled != nullptr && profiled->request_profile) {
        request.profile = profiled->request_profile(invocation_.next_output_dir());
    }
    return request;
}

namespace {

// The Target's driver behind the profiler's argv prefix, with the profiler's extra environment
// names allowed.
driver::DriverSpec profiled_driver(driver::DriverSpec driver, const ProfiledCall& profiled) {
    driver.argv.insert(driver.argv.begin(), profiled.argv_prefix.begin(),
                       profiled.argv_prefix.end());
    for (const auto& name : profiled.env_allow_extra) {
        if (std::find(driver.env_allow.begin(), driver.env_allow.end(), name) ==
            driver.env_allow.end()) {
            driver.env_allow.push_back(name);
        }
    }
    return driver;
}

}  // namespace

// Runs one driver call under the contamination monitor and counts its GPU and held seconds.
Session::MonitoredCall Session::monitored_call(const driver::Request& request,
                                               const ProfiledCall* profiled) {
    const driver::DriverSpec driver =
        profiled != nullptr ? profiled_driver(target_.driver(), *profiled) : target_.driver();
    const auto gpus = target_.gpu_uuids();
    // Our own driver and its children are ours; anything else on the GPU contaminates the window.
    // The driver's pid is remembered from its spawn: a sample taken just before it exits would
    // otherwise name a pid whose parent chain can no longer be read.
    const pid_t self = ::getpid();
    auto driver_pid = std::make_shared<std::atomic<pid_t>>(0);
    // The monitor reads this host's GPUs: with Slurm the driver runs elsewhere, so it records
    // host-only samples and says so (the node's identity is checked below instead).
    env::Monitor monitor(
        target_.spec().uses_slurm() ? std::vector<std::string>{} : gpus,
        invocation_.store().root() / store::layout::invocation_monitor(invocation_.id()),
        std::chrono::milliseconds(200), [self, driver_pid, session_pid = session_pid_](pid_t pid) {
            return pid == driver_pid->load() || pid == session_pid->load() ||
                   run::is_descendant_of(pid, self);
        });
    monitor.start();
    const auto started = std::chrono::steady_clock::now();
    // A profiled call is its own process (the profiler wraps it), even for a session driver.
    driver::CallReport report =
        driver_sessions_ && profiled == nullptr
            ? driver_sessions_->call(request)
            : driver::call_driver(invocation_, driver, request,
                                  [driver_pid](pid_t pid) { driver_pid->store(pid); });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const env::MonitorSummary summary = monitor.stop();
    invocation_.add_gpu_seconds(seconds * static_cast<double>(gpus.size()));
    invocation_.add_held_time(seconds,
                              std::chrono::duration<double>(report.outcome.process.wall).count(),
                              report.result ? report.result->workload_s : std::nullopt);
    return {std::move(report), summary};
}

// The measurement of one monitored call: its contamination (and, with Slurm, the node's identity),
// its error, or each subject judged, with the driver's notes and stderr when one failed.
Measurement Session::measurement_of(const MonitoredCall& monitored) const {
    const driver::CallReport& report = monitored.report;
    Measurement m;
    m.calls.push_back(report.outcome.number);
    m.monitors.push_back(monitored.summary);
    if (monitored.summary.contaminated) {
        m.contamination = monitored.summary.reasons;
    }
    if (target_.spec().uses_slurm() && report.outcome.launch.is_object()) {
        if (const auto problem =
                node_identity_problem(target_.record().environment, report.outcome.launch)) {
            m.contamination.push_back(*problem);
        }
    }
    if (report.error) {
        m.error = report.error;
        return m;
    }
    m.environment = report.result->environment;
    m.unchecked_roles = report.result->unchecked_roles;
    bool all_passed = true;
    for (const auto& s : report.result->subjects) {
        m.subjects[s.role] = judge(s);
        all_passed = all_passed && m.subjects[s.role].correct;
    }
    if (!all_passed) {
        // The cause of a failure is in what the driver said: its notes and the end of its stderr.
        for (const auto& note : report.result->environment.value("notes", Json::array())) {
            if (note.is_string()) {
                m.driver_notes.push_back(note.get<std::string>());
            }
        }
        m.stderr_tail = driver::stderr_tail(report.outcome.call_dir / store::layout::kStderrFile, 5,
                                            kQuotedTailBytes);
    }
    return m;
}

Measurement Session::call(const std::string& case_id, driver::Mode mode,
                          const std::vector<std::string>& order, std::uint64_t seed,
                          const ProfiledCall* profiled) {
    const driver::Request request = request_for(case_id, mode, order, seed, profiled);
    return measurement_of(monitored_call(request, profiled));
}

Measurement Session::measure_single(const std::string& case_id, const std::string& role) {
    return call(case_id, driver::Mode::single, {role}, 0);
}

Measurement Session::measure_profiled(const std::string& case_id, const std::string& role,
                                      const ProfiledCall& how) {
    return call(case_id, driver::Mode::single, {role}, 0, &how);
}

Measurement Session::measure_pair(const std::string& case_id, bool candidate_first,
                                  std::uint64_t seed) {
    const std::vector<std::string> order = candidate_first
                                               ? std::vector<std::string>{"candidate", "reference"}
                                               : std::vector<std::string>{"reference", "candidate"};
    if (target_.spec().can_pair_in_process()) {
        return call(case_id, driver::Mode::paired, order, seed);
    }
    Measurement pair;
    for (const auto& role : order) {
        Measurement one = call(case_id, driver::Mode::single, {role}, seed);
        pair.calls.insert(pair.calls.end(), one.calls.begin(), one.calls.end());
        pair.monitors.insert(pair.monitors.end(), one.monitors.begin(), one.monitors.end());
        pair.contamination.insert(pair.contamination.end(), one.contamination.begin(),
                                  one.contamination.end());
        if (one.error) {
            pair.error = one.error;
            pair.failed_role = role;
            return pair;
        }
        pair.subjects[role] = one.subjects.at(role);
        pair.unchecked_roles.insert(pair.unchecked_roles.end(), one.unchecked_roles.begin(),
                                    one.unchecked_roles.end());
    }
    return pair;
}

void require_budget(const Target& target, double planned_wall_s) {
    require_budget(target, planned_wall_s, InvocationLedger::read(target.store()));
}

void require_budget(const Target& target, double planned_wall_s, const InvocationLedger& ledger) {
    const TargetSpec& spec = target.spec();
    if (spec.deadline_unix_s && *spec.deadline_unix_s <= unix_seconds_now()) {
        throw Error(
            ErrorCode::deadline_passed,
            fmt::format("the Target's deadline {} has passed; nothing more may run under it",
                        spec.deadline_text));
    }
    const InvocationLedger::Spent spent = ledger.spent();
    const double wall = spent.wall_s;
    const double gpu = spent.gpu_s;
    if (spec.wall_seconds_budget > 0 && wall + planned_wall_s > spec.wall_seconds_budget) {
        throw Error(ErrorCode::budget_exhausted,
                    fmt::format("this operation may need {:.0f} s but only {:.0f} of the Target's "
                                "{:.0f} wall seconds "
                                "are left",
                                planned_wall_s, std::max(0.0, spec.wall_seconds_budget - wall),
                                spec.wall_seconds_budget),
                    Json{{"spent_wall_s", wall}, {"budget_wall_s", spec.wall_seconds_budget}});
    }
    // 0 (also what an unset gpu_seconds_budget reads as) grants no limit, like the wall budget.
    if (!target.gpu_uuids().empty() && spec.gpu_seconds_budget > 0 &&
        gpu >= spec.gpu_seconds_budget) {
        throw Error(
            ErrorCode::budget_exhausted,
            fmt::format("the Target's GPU budget is spent ({:.0f} of {:.0f} GPU seconds used)", gpu,
                        spec.gpu_seconds_budget),
            Json{{"spent_gpu_s", gpu}, {"budget_gpu_s", spec.gpu_seconds_budget}});
    }
}

}  // namespace cko::eval
