// The handoff skeleton: Markdown filled from the report model, with the sections a person must
// write marked.
#pragma once

#include "cko/util/json.hpp"

#include <string>

namespace cko::report {

// The marker that opens every section the decision maker must write (the tool fills none of them).
inline constexpr const char* kWriteHere = "✍ TO BE WRITTEN BY THE DECISION MAKER";

// Sections: termination reason (from stop.json), outcome (claim layer, primary goal, champion or
// original, effect range and where it applies), the conclusion per experiment with its evidence
// ids, rejected directions and what each closed, the open competing hypotheses by bottleneck with
// what would separate them, cost against the budget, evidence gaps and open risks, then the marked
// sections (conclusion, next steps). The tool never reads it back.
[[nodiscard]] std::string render_handoff(const Json& model);

// The competing hypotheses of a board (eval::hypothesis_board) as Markdown list items, grouped by
// bottleneck: each open one with what would separate it and the experiments testing it, each
// settled one with its outcome and evidence. `open_only`: only the bottlenecks with an open
// hypothesis, their settled rivals in one line. Shared by the handoff and the Markdown report.
[[nodiscard]] std::string hypotheses_md(const Json& board, bool open_only);

// "- **Claim lowered by the environment identity:** the claim stated is now kernel: …" for a goal
// whose `identity` lowers the claim (eval::identity_claim): the claim stated and each reason.
// Shared by the handoff and the Markdown report.
[[nodiscard]] std::string identity_lowering_md(const Json& goal);

}  // namespace cko::report
