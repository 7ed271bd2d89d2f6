// A standalone driver call: the smallest complete use of store + runtime + protocol.
#include "cko/driver/standalone.hpp"

#include "cko/driver/workspace.hpp"
#include "cko/run/gpu_lock.hpp"
#include "cko/store/snapshot.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

namespace cko::driver {
namespace fs = std::filesystem;

StandaloneOutcome run_standalone_call(const store::Store& store, const StandaloneCall& call,
                                      const std::atomic<bool>* cancel,
                                      const std::function<void(const std::string&)>& announce) {
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
                      {"mode", mode_name(call.request.mode)},
                      {"case", {{"id", call.request.case_id}, {"snapshot", case_snap.reference()}}},
                      {"subjects", subjects},
                      {"samples", samples_for(call.request.mode, call.request.samples)},
                      {"gpu_uuid", call.gpu_uuid}};
    run::Invocation inv =
        run::Invocation::create(store, "driver-call", frozen, call.limits, cancel);
    announce(inv.id());

    StandaloneOutcome out;
    out.invocation_id = inv.id();
    out.outputs = Json::object();
    try {
        CallWorkspace workspace(store, inv.id());  // gone before the invocation finishes
        Request request = call.request;
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
        CallReport report = call_driver(inv, call.driver, request);
        out.outputs = Json{{"call", report.to_json()}};
        out.launch = report.outcome.launch;
        if (report.result) {
            out.outputs["result"] = report.result->to_json();
            out.result = std::move(report.result);
            out.state = run::InvocationState::succeeded;
        } else {
            out.error = report.error;
            out.state = run::state_for_error(*report.error);
        }
    } catch (const Error& e) {
        out.error = e;
        out.state = run::state_for_error(e);
    }
    inv.finish(out.state, out.error ? out.error->what() : "driver call produced a valid result",
               out.outputs, out.error);
    return out;
}

}  // namespace cko::driver
