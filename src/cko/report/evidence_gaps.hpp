// The evidence gaps and open risks of a report model (`findings.gaps`), each {kind, text,
// evidence}.
#pragma once

#include "cko/util/json.hpp"

namespace cko::report {

// The gaps of `model` (its baseline, experiments, champion, target, profiles and stop sections),
// of the history's `comparisons`, and of the environment `identity` (eval::IdentityClaim::to_json:
// every gap listed, whether or not it lowers the claim), in that order.
[[nodiscard]] Json evidence_gaps(const Json& model, const Json& comparisons, const Json& identity);

}  // namespace cko::report
