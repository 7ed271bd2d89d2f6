// `cko baseline`: samples of the original per case, and the machine's resolution from an A/A run.
#pragma once

#include "cko/util/progress.hpp"

#include "cko/eval/operation.hpp"
#include "cko/eval/target.hpp"

#include <atomic>
#include <functional>
#include <optional>
#include <string>

namespace cko::eval {

struct BaselineOptions {
    int calls_per_case =
        3;             // single calls of the original per case (samples_per_call samples each)
    int aa_pairs = 0;  // A/A pairs; 0 = the Target's max_pairs... capped at 2*min_pairs
    std::uint64_t seed = 0;  // AB/BA order of the A/A pairs; 0 = derived from the Target id
    const std::atomic<bool>* cancel = nullptr;
    ProgressFn progress;  // one line per call, for a terminal
};

[[nodiscard]] OperationOutcome run_baseline(const Target& target, const BaselineOptions& options,
                                            const Announce& announce);

// Deterministic seed from text (so that a recorded seed can always be reproduced).
[[nodiscard]] std::uint64_t seed_from(const std::string& text);

}  // namespace cko::eval
