// One driver call as a whole Invocation: snapshot the subjects and the case, materialize, lock,
// call, record.
#pragma once

#include "cko/driver/call.hpp"
#include "cko/store/store.hpp"

#include <atomic>
#include <functional>
#include <optional>
#include <string>

namespace cko::driver {

struct StandaloneCall {
    DriverSpec driver;
    // subjects[].path and case_path name the user's files; they are snapshotted into the store and
    // the driver sees read-only materialized copies, never the originals.
    Request request;
    run::Limits limits;
    std::string gpu_uuid;  // empty: no GPU lock (CPU workloads)
};

struct StandaloneOutcome {
    std::string invocation_id;
    run::InvocationState state = run::InvocationState::failed;
    std::optional<Result> result;
    std::optional<Error> error;
    Json outputs;  // what result.json's "outputs" holds
    Json launch;   // the call's cko/slurm-call-v1 record with a Slurm launcher; else null
};

// `announce` is called with the invocation id as soon as the invocation exists (for --detach).
[[nodiscard]] StandaloneOutcome run_standalone_call(
    const store::Store& store, const StandaloneCall& call, const std::atomic<bool>* cancel,
    const std::function<void(const std::string&)>& announce);

}  // namespace cko::driver
