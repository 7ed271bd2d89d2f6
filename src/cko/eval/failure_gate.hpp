// Failure stops what follows: once a candidate failed (a correctness failure or crash of its own in
// a screen, confirm or audit, or a `rejected` screen), no further performance comparison or
// profile of it runs unless the caller gives an explicit reason, recorded in the invocation.
#pragma once

#include "cko/eval/compare_context.hpp"
#include "cko/eval/ledger.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace cko::eval {

// One earlier invocation that failed a candidate.
struct CandidateFailure {
    std::string invocation_id;
    std::string kind;      // screen | confirm | audit
    std::string verdict;   // invalid, or a screen's negative verdict
    std::string decision;  // a screen's decision ("" for confirm and audit)
    std::string reason;
    [[nodiscard]] Json to_json() const;
};

// The invocations (oldest first) whose candidate was `experiment_id` or the snapshot
// `candidate_digest` and that failed it: verdict `invalid` not caused by the infrastructure, or a
// screen decision `rejected` (not for an A/A control, whose screen is meant to find no effect).
// Asks the operation's `ledger`; reads nothing more.
[[nodiscard]] std::vector<CandidateFailure> candidate_failures(const InvocationLedger& ledger,
                                                               std::string_view experiment_id,
                                                               std::string_view candidate_digest,
                                                               bool control = false);

// The gate at the start of confirm, audit and profile collect of a candidate. No failure: null
// (and an override reason is refused as invalid_argument: there is nothing to override). A failure
// without `override_reason`: candidate_failed naming the invocation that failed and how to
// override. A failure with a reason: {reason, failed_invocations: [...]}, which the caller records
// in its invocation's request as `override_failure`.
[[nodiscard]] Json require_candidate_not_failed(
    const InvocationLedger& ledger, std::string_view operation, std::string_view experiment_id,
    std::string_view candidate_digest, const std::string& override_reason, bool control = false);

// The gate of a comparison: a confirm or audit (never a screen) of a candidate that failed before
// is refused unless o.override_failure is given, then recorded as the request's override_failure.
void gate_failed_candidate(const CompareOptions& o, ComparisonPlan& plan,
                           const InvocationLedger& ledger);

}  // namespace cko::eval
