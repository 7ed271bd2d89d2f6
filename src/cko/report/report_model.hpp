// The report model: one document (cko/report-v1) drawn from the store, which every printer reads.
#pragma once

#include "cko/store/store.hpp"
#include "cko/util/json.hpp"

#include <cstdint>

namespace cko::report {

// Builds the model from the Target record, the history (eval::target_history: the one reading of
// experiments, comparisons and selections), the champion pointer and the stop record. Reads only.
//   target       name, claim layer, original, cases, metric and direction, minimum effect,
//                correctness rule, constraints, statistics, budget, environment identity
//   baseline     the latest baseline entry (A/A interval, resolution, case medians) or null
//   experiments  in time order, each with its comparisons' ids and `status`/`conclusion` words
//   comparisons  every screen/confirm/audit entry of the history (per-pair d, deciding interval,
//                per-case intervals, constraints, notes), each with `effect_words`, its
//                `subject` (the experiment measured: an audit's is the champion's) and that
//                experiment's `mechanism` and `hypothesis`; `name` is what the printers call
//                it: the mechanism, else the hypothesis, else the experiment's id
//   champion     {current, digest, lineage[]}, audits[], cost {gpu_s, wall_s, driver_calls,
//                budget}, profiles[] (none stored yet), stop (or null)
//   hypotheses   the competing hypotheses' board (eval::hypothesis_board: each with its state,
//                and grouped by bottleneck)
//   findings     {goal, rejected[], gaps[]}: what the handoff cites (rejections with what each
//                closed; evidence gaps and open risks, each with its evidence ids); once the
//                conclusion was lowered (cko conclusion lower), goal also has `lowered` (the
//                latest lowering's history entry and its `text`); goal.identity is what the
//                environment identity supports (eval::identity_claim: {supports, lowers, gaps,
//                text when it lowers}), each gap also one of `gaps`; when either lowers the
//                Target's layer, goal has `stated_claim` (the lower of the two) and is not reached
// `now_unix_s` stamps the document (tests pass a fixed one).
[[nodiscard]] Json build_report_model(const store::Store& store, std::int64_t now_unix_s);

}  // namespace cko::report
