// `cko screen` / `cko confirm` / `cko audit`: interleaved paired comparisons with a closed verdict.
#pragma once

#include "cko/util/progress.hpp"

#include "cko/eval/baseline.hpp"
#include "cko/util/closed_enum.hpp"

#include <string>

namespace cko::eval {

// The enumerator name is the verb and the invocation's kind.
#define CKO_COMPARISON_KINDS(X) X(screen) X(confirm) X(audit)
CKO_CLOSED_ENUM(ComparisonKind, CKO_COMPARISON_KINDS, comparison_kind_name,
                comparison_kind_from_name)

struct CompareOptions {
    ComparisonKind kind = ComparisonKind::screen;
    std::string experiment_id;  // screen and confirm
    std::string
        retry_of;  // confirm only: an earlier confirm that failed for infrastructure reasons
    std::string retry_reason;
    // confirm and audit: the caller's reason to measure a candidate that an earlier screen,
    // confirm or audit failed (else candidate_failed); recorded in the request.
    std::string override_failure;
    // screen and confirm: the caller's reason to measure an experiment recorded as falsified
    // (`cko experiment falsify`; else falsified); recorded in the request as override_falsified.
    std::string override_falsified;
    // The farthest stage this call may run (`--stage-limit`; "" = the Target's [limits]
    // farthest_stage only); a stage past it is not_authorized. Recorded as stage_limit.
    std::string stage_limit;
    std::uint64_t seed = 0;  // pair order; 0 = derived from the experiment and kind (recorded)
    const std::atomic<bool>* cancel = nullptr;
    ProgressFn progress;  // one line per pair, for a terminal
};

// Runs pairs of reference/candidate calls in randomized AB/BA order, judging correctness of both
// subjects on every call first. A correctness failure, an environment mismatch or contamination
// stops at once with `invalid` (evidence so far kept). Otherwise the paired log-ratios are judged
// against the minimum effect (sequentially when the Target says so). Screen can only reject or
// pass to confirm; confirm is formal and happens once per experiment; audit compares the original
// with the current champion.
[[nodiscard]] OperationOutcome run_comparison(const Target& target, const CompareOptions& options,
                                              const Announce& announce);

}  // namespace cko::eval
