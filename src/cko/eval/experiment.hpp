// Experiments: one candidate frozen with its hypothesis and comparison contract before it is
// measured.
#pragma once

#include "cko/eval/target.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cko::eval {

struct SecondaryMetric {
    std::string name;          // one of the Target's constraint metrics
    double threshold_pct = 0;  // the gain that would count as a local result
};

struct ExperimentSpec {
    std::filesystem::path candidate;  // file or directory laid out like the original
    std::string base = "original";    // "original" or "champion" (the current one)
    std::string hypothesis;
    std::string mechanism;                     // a short key, e.g. "vectorized-loads"
    std::string claim_layer;                   // defaults to the Target's
    std::optional<double> minimum_effect_pct;  // defaults to the Target's
    std::string falsifier;                     // the cheapest command that could prove it wrong
    std::string no_falsifier_reason;           // ... or why none is needed
    std::string failure_closes;                // implementation | integration | mechanism
    std::string screen_design = "conservative_bound";  // or diagnostic_proxy
    double estimated_cost_s = 0;
    std::optional<double> gain_bound_pct;  // pre-registered upper bound of the end-to-end gain
    std::string gain_bound_source;
    std::vector<std::string> extra_correctness_gates;
    std::vector<SecondaryMetric> secondary;
    std::vector<std::string> diagnostics_only;
    std::string relationship =
        "implementation_equivalence";  // artifact_fidelity, deployment_effect
    std::string lifecycle =
        "isolated_process";  // or same_process (only if the driver pairs in process)
    std::vector<std::string> premises;
    bool control = false;  // an A/A control: the candidate is the base itself (no --candidate)
    std::string tests_hypothesis;  // "" or the hyp-… (cko hypotheses add) this experiment tests
};

// Every problem with the contract at once (missing fields, bad choices), each naming the field and
// the fix; empty when the spec may be frozen.
[[nodiscard]] std::vector<Error> experiment_spec_problems(const TargetSpec& target,
                                                          const ExperimentSpec& spec);

// Snapshots the candidate, computes the files changed against the base (from the manifests) and
// refuses any outside the Target's change scope (scope_violation naming them), then writes
// experiments/<exp-id>.json create-once. Returns the record. A `tests_hypothesis` that is no
// hypothesis of the store is not_found naming it.
[[nodiscard]] Json create_experiment(const Target& target, const ExperimentSpec& spec);

// Experiment ids in the order they were frozen.
[[nodiscard]] std::vector<std::string> list_experiments(const store::Store& store);

[[nodiscard]] store::ExperimentRecord load_experiment(const store::Store& store,
                                                      const std::string& id);

// Files that differ between two snapshots ("+path" added, "-path" removed, "~path" changed).
[[nodiscard]] std::vector<std::string> changed_files(const store::Snapshot& base,
                                                     const store::Snapshot& candidate);

}  // namespace cko::eval
