// Verdicts of a paired comparison and constraint statuses, with the rule of DESIGN.md §6.
#pragma once

#include "cko/util/closed_enum.hpp"

#include "cko/stats/paired_estimate.hpp"

#include <cstddef>
#include <optional>
#include <string_view>

namespace cko::stats {

// The enumerator name is the JSON spelling: one table, one spelling.
#define CKO_VERDICTS(X) \
    X(improved) X(mixed) X(below_minimum) X(equivalent) X(inconclusive) X(regressed) X(invalid)

CKO_CLOSED_ENUM(Verdict, CKO_VERDICTS, verdict_name, verdict_from_name)

#define CKO_CONSTRAINT_STATUSES(X) X(ok) X(regressed) X(inconclusive)

CKO_CLOSED_ENUM(ConstraintStatus, CKO_CONSTRAINT_STATUSES, constraint_status_name,
                constraint_status_from_name)

// With m = ln(1 + min_effect_pct/100) and the Wilcoxon interval [low, high], first match wins:
//   fewer than min_pairs pairs, or the requested confidence not reached → inconclusive
//   low ≥ m (and low > 0, which matters only for m = 0)                 → improved
//   high < −m (a slowdown beyond the minimum effect)                    → regressed
//   low > 0 and high < m                                                → below_minimum
//   −m < low and high < m                                               → equivalent
//   otherwise                                                           → inconclusive
// `invalid` is never returned: correctness and environment failures are the caller's to assign.
// Throws invalid_argument for a negative or non-finite min_effect_pct.
[[nodiscard]] Verdict classify(const PairedEstimate& estimate, double min_effect_pct,
                               std::size_t min_pairs);

// A constraint metric's estimate (d signed positive = better) against its tolerance
// r = ln(1 + max_regression_pct/100):
//   fewer than min_pairs pairs, or confidence not reached → inconclusive
//   high < −r                                             → regressed (beyond the tolerance)
//   low ≥ −r                                              → ok
//   otherwise                                             → inconclusive
[[nodiscard]] ConstraintStatus classify_constraint(const PairedEstimate& estimate,
                                                   double max_regression_pct,
                                                   std::size_t min_pairs);

// True for the verdicts on which a sequential run may stop early.
[[nodiscard]] bool is_decisive(Verdict verdict) noexcept;

}  // namespace cko::stats
