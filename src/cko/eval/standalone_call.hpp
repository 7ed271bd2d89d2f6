// One driver call as a whole Invocation: snapshot the subjects and the case, materialize, lock,
// call, record (`cko driver run`, and the smoke calls of a freeze).
#pragma once

#include "cko/driver/call.hpp"
#include "cko/eval/operation.hpp"
#include "cko/store/store.hpp"

#include <atomic>
#include <optional>
#include <string>

namespace cko::eval {

struct StandaloneCall {
    driver::DriverSpec driver;
    // subjects[].path and case_path name the user's files; they are snapshotted into the store and
    // the driver sees read-only materialized copies, never the originals.
    driver::Request request;
    run::Limits limits;
    std::string gpu_uuid;  // empty: no GPU lock (CPU workloads)
};

// The operation's outcome (outputs: what result.json's "outputs" holds; no exit_code among them),
// with what the call gave.
struct StandaloneOutcome : OperationOutcome {
    std::optional<driver::Result> result;
    Json launch;  // the call's cko/slurm-call-v1 record with a Slurm launcher; else null
};

// `announce` is called with the invocation id as soon as the invocation exists (for --detach).
[[nodiscard]] StandaloneOutcome run_standalone_call(const store::Store& store,
                                                    const StandaloneCall& call,
                                                    const std::atomic<bool>* cancel,
                                                    const Announce& announce);

}  // namespace cko::eval
