// The operation frame shared by baseline, screen/confirm/audit, profile collect and a driver call.
#include "cko/eval/operation.hpp"

namespace cko::eval {

OperationOutcome run_in_invocation(const store::Store& store, const InvocationSpec& spec,
                                   const Announce& announce, const OperationBody& body,
                                   const OperationBody& settle) {
    run::Invocation inv =
        run::Invocation::create(store, spec.kind, spec.request, spec.limits, spec.cancel);
    announce(inv.id());

    OperationEnd end;
    try {
        body(inv, end);
    } catch (const Error& e) {
        end.error = e;
        end.reason = e.what();
        end.state = run::state_for_error(e);
        end.exit_code = e.exit_code();
    }
    if (settle) {
        settle(inv, end);
    }
    if (spec.records_exit_code) {
        end.outputs["exit_code"] = end.exit_code;
    }
    inv.finish(end.state, end.reason, end.outputs, end.error);

    OperationOutcome out;
    out.invocation_id = inv.id();
    out.state = std::string(run::state_name(end.state));
    out.verdict = std::move(end.verdict);
    out.outputs = std::move(end.outputs);
    out.exit_code = end.exit_code;
    out.error = std::move(end.error);
    out.status = inv.finished_status();
    out.entry = InvocationEntry{inv.request_record(), inv.result_record()};
    return out;
}

}  // namespace cko::eval
