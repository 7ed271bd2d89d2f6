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
// ids, rejected directions and what each closed, cost against the budget, evidence gaps and open
// risks, then the marked sections (conclusion, next steps). The tool never reads it back.
[[nodiscard]] std::string render_handoff(const Json& model);

}  // namespace cko::report
