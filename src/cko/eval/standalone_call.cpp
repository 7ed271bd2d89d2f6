// A standalone driver call: the smallest complete use of store + runtime + protocol.
#include "cko/eval/standalone_call.hpp"

#include "cko/driver/workspace.hpp"
#include "cko/run/gpu_lock.hpp"
#include "cko/store/snapshot.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

namespace cko::eval {
namespace {

// The call in its open invocation: the frozen subjects and case materialized, the GPU locked.
void call_in_invocation(const store::Store& store, const StandaloneCall& call,
                        const std::vector<store::Snapshot>& snaps, const store::Snapshot& case_snap,
                        run::Invocation& inv, OperationEnd& end, StandaloneOutcome& out) {
    driver::CallWorkspace workspace(store, inv.id());  // gone before the invocation finishes
    driver::Request request = call.request;
    for (std::size_t i = 0; i < snaps.size(); ++i) {
        request.subjects[i].path = workspace.add_subject(request.subjects[i].role, snaps[i]);
        request.subjects[i].digest = snaps[i].digest;
    }
    request.case_path = workspace.add_case(call.request.case_id, case_snap);

    std::optional<run::GpuLock> lock;
    if (!call.gpu_uuid.empty()) {
        inv.event("resource_wait", Json{{"gpu_uuid", call.gpu_uuid}});
        lock.emplace(call.gpu_uuid, inv.id(), call.limits.resource_wait);
        inv.event("resource_acquired",
                  Json{{"gpu_uuid", call.gpu_uuid}, {"waited_ms", lock->waited().count()}});
    }
    driver::CallReport report = driver::call_driver(inv, call.driver, request);
    end.outputs = Json{{"call", report.to_json()}};
    out.launch = report.outcome.launch;
    if (report.result) {
        end.outputs["result"] = report.result->to_json();
        out.result = std::move(report.result);
    } else {
        end.error = report.error;
        end.reason = report.error->what();
        end.state = run::state_for_error(*report.error);
        end.exit_code = report.error->exit_code();
    }
}

}  // namespace

StandaloneOutcome run_standalone_call(const store::Store& store, const StandaloneCall& call,
                                      const std::atomic<bool>* cancel, const Announce& announce) {
    // Freeze what the driver will see before anything runs.
    Json subjects = Json::array();
    std::vector<store::Snapshot> snaps;
    for (const auto& s : call.request.subjects) {
        snaps.push_back(store::take_snapshot(store, s.path));
        subjects.push_back(
            Json{{"role", s.role}, {"label", s.label}, {"snapshot", snaps.back().reference()}});
    }
    const store::Snapshot case_snap = store::take_snapshot(store, call.request.case_path);
    const Json frozen{{"driver",
                       {{"argv", call.driver.argv},
                        {"capabilities", call.driver.capabilities},
                        {"env_allow", call.driver.env_allow}}},
                      {"mode", driver::mode_name(call.request.mode)},
                      {"case", {{"id", call.request.case_id}, {"snapshot", case_snap.reference()}}},
                      {"subjects", subjects},
                      {"samples", driver::samples_for(call.request.mode, call.request.samples)},
                      {"gpu_uuid", call.gpu_uuid}};
    InvocationSpec spec{"driver-call", frozen, call.limits, cancel};
    spec.records_exit_code = false;
    StandaloneOutcome out;
    static_cast<OperationOutcome&>(out) =
        run_in_invocation(store, spec, announce, [&](run::Invocation& inv, OperationEnd& end) {
            end.reason = "driver call produced a valid result";
            call_in_invocation(store, call, snaps, case_snap, inv, end, out);
        });
    return out;
}

}  // namespace cko::eval
