// The one frame of a long operation: its invocation created and announced, its body run, a thrown
// Error mapped to the invocation's terminal state and exit class, the invocation finished.
#pragma once

#include "cko/eval/ledger.hpp"
#include "cko/run/invocation.hpp"
#include "cko/util/error.hpp"

#include <atomic>
#include <functional>
#include <optional>
#include <string>

namespace cko::eval {

// What the invocation is created with.
struct InvocationSpec {
    std::string kind;  // baseline, screen, confirm, audit, profile, driver-call
    Json request;
    run::Limits limits;
    const std::atomic<bool>* cancel = nullptr;
    // outputs.exit_code holds the exit class (a standalone driver call's outputs do not).
    bool records_exit_code = true;
};

// How the operation ended, as its body (and then the frame) tells it; finish() records it.
struct OperationEnd {
    run::InvocationState state = run::InvocationState::succeeded;
    std::string reason;  // the body's reason on success; a thrown Error's message otherwise
    Json outputs = Json::object();
    std::string verdict;  // comparisons: the verdict; baseline: the A/A verdict
    int exit_code = 0;
    std::optional<Error> error;  // the Error the invocation records when it did not succeed
};

struct OperationOutcome {
    std::string invocation_id;
    std::string state;    // invocation state
    std::string verdict;  // comparisons: the verdict; baseline: the A/A verdict
    Json outputs;
    int exit_code = 0;
    // The error the invocation recorded when it did not succeed (failed, cancelled, timed out).
    std::optional<Error> error = std::nullopt;
    // The finished invocation as run::invocation_status reads it back (built from the bytes
    // finish() wrote, not read again), and its two records for rules asked afterwards.
    run::InvocationStatus status;
    InvocationEntry entry;
};

using Announce = std::function<void(const std::string&)>;
// Runs in the open invocation; may set any part of `end` and throw an Error.
using OperationBody = std::function<void(run::Invocation&, OperationEnd&)>;

// Creates the invocation, calls `announce` with its id (for --detach), runs `body`. A thrown Error
// (nothing else is caught: another exception leaves the invocation to be declared lost) ends it
// with run::state_for_error (interrupted: cancelled, timed_out: timed_out, else failed), the
// Error's message as reason and its exit class. Then `settle` (may be empty) completes the outputs
// either way, outputs.exit_code is set (spec.records_exit_code) and the invocation finishes.
[[nodiscard]] OperationOutcome run_in_invocation(const store::Store& store,
                                                 const InvocationSpec& spec,
                                                 const Announce& announce,
                                                 const OperationBody& body,
                                                 const OperationBody& settle = {});

}  // namespace cko::eval
