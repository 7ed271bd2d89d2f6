// The stages of the evidence loop a session may reach, in order: a Target's `[limits]
// farthest_stage` and a verb's `--stage-limit` name the farthest one an agent may run.
#pragma once

#include "cko/util/closed_enum.hpp"

namespace cko::eval {

// Ordered: screen < confirm < audit (the enumerator name is the verb and the spec's word).
#define CKO_STAGES(X) X(screen) X(confirm) X(audit)
CKO_CLOSED_ENUM(Stage, CKO_STAGES, stage_name, stage_from_name)

}  // namespace cko::eval
