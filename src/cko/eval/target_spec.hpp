// The Target spec (cko.toml, PROTOCOL.md): parsed with toml++ and validated field by field.
#pragma once

#include "cko/env/observation.hpp"
#include "cko/eval/stage.hpp"
#include "cko/run/slurm_launcher.hpp"
#include "cko/stats/paired_estimate.hpp"
#include "cko/store/experiment_words.hpp"
#include "cko/store/records.hpp"
#include "cko/util/json.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace cko::eval {

struct PrimarySpec {
    std::string name;
    std::string unit;
    stats::Direction direction = stats::Direction::lower;
    std::string aggregation;  // "median"
};

struct ConstraintSpec {
    std::string name;
    std::string unit;
    stats::Direction direction = stats::Direction::lower;
    double max_regression_pct = 0;
    // A regression on some cases while the pooled estimate holds may be accepted by name
    // (`mixed`, `champion select --accept-regression CASE`); false: any regression is `regressed`.
    bool accept_per_case = false;
};

struct TargetSpec {
    std::filesystem::path spec_path;  // the cko.toml read
    std::filesystem::path base_dir;   // its directory: relative paths are relative to it
    bool diagnostic = false;          // [target] mode = "diagnostic": reports only, no workload

    std::string name;
    store::ClaimLayer claim_layer = store::ClaimLayer::kernel;
    std::string original;
    std::vector<std::string> change_scope;

    std::string cases_dir;
    std::vector<std::string> case_ids;

    std::vector<std::string> driver_argv;
    std::vector<std::string> capabilities;
    std::vector<std::string> identity_paths;
    std::vector<std::string> env_allow;
    std::string launcher = "local";  // driver.launcher: "local" | "slurm"
    run::SlurmOptions slurm;         // the [slurm] table, when launcher == "slurm"

    PrimarySpec primary;
    double minimum_effect_pct = 0;
    double max_case_regression_pct = 0;  // a case slower than this makes an improvement `mixed`
    std::vector<ConstraintSpec> constraints;

    std::string correctness_metric;
    std::string correctness_operator;  // <=, <, >=, >, ==
    double correctness_threshold = 0;

    double confidence = 0.95;
    int min_pairs = 6;
    int max_pairs = 40;
    int samples_per_call = 5;
    bool sequential = true;

    double command_timeout_s = 300;
    double operation_timeout_s = 3600;
    double resource_wait_timeout_s = 120;
    double cleanup_timeout_s = 30;
    double gpu_seconds_budget = 0;   // 0 (or unset) = unlimited, like wall_seconds_budget
    double wall_seconds_budget = 0;  // 0 = unlimited
    std::optional<std::int64_t> deadline_unix_s;
    std::string deadline_text;
    // [limits] farthest_stage: the farthest comparison this Target's sessions may run (a verb past
    // it is not_authorized); none = every stage.
    std::optional<Stage> farthest_stage;

    // [observation]: the limits past which a comparison's window is disturbed (inconclusive).
    env::ObservationRule observation;

    std::string gpus_mode;               // "auto" | "list" | "none"
    std::vector<std::string> gpu_uuids;  // when gpus_mode == "list"

    [[nodiscard]] bool can_pair_in_process() const;
    [[nodiscard]] bool uses_slurm() const { return launcher == "slurm"; }
    // The driver declared `session`: every operation of the Target (baseline, screen, confirm,
    // audit) runs its calls in persistent driver sessions; the frozen spec fixes the mode.
    [[nodiscard]] bool serves_sessions() const;
    // The objective's primary metric as the frozen form writes it: {name, unit, direction,
    // aggregation} ("" for a diagnostic Target's words), and its constraints.
    [[nodiscard]] Json primary_json() const;
    [[nodiscard]] Json constraints_json() const;
    // The frozen form written into target.json (paths as written in the spec).
    [[nodiscard]] Json to_json() const;
    // The inverse of to_json (the frozen spec in target.json). The deadline's Unix time is kept
    // beside it in the record, not here.
    [[nodiscard]] static TargetSpec from_json(const Json& frozen,
                                              const std::filesystem::path& base_dir);
};

// The spec a Target froze, typed (its readers — the Target, the history, the report — never read it
// by key): a member missing or of the wrong kind is invalid_record naming target.json and the
// member. The deadline's Unix time comes from the record.
[[nodiscard]] TargetSpec frozen_spec(const store::TargetRecord& record);

// Reads and validates a spec. Every problem is an Error(invalid_spec) whose message names the
// field ("objective.primary.direction") and says how to fix it; details carry {field, problem,
// fix}. Every table is read and every field's problem collected: several are reported at once
// ("N problems: …", details.problems listing each as {field, message, fix}).
[[nodiscard]] TargetSpec read_target_spec(const std::filesystem::path& path);
[[nodiscard]] TargetSpec parse_target_spec(std::string_view toml_text,
                                           const std::filesystem::path& spec_path);

// An extra correctness gate of an experiment: "METRIC OP THRESHOLD", e.g. "max_abs_err <= 1e-3".
struct CorrectnessGate {
    std::string metric;
    std::string op;
    double threshold = 0;
};
// Throws invalid_argument naming `field` when `text` is not a gate.
[[nodiscard]] CorrectnessGate parse_correctness_gate(const std::string& text,
                                                     const std::string& field);

// Whether a correctness metric value passes the rule.
[[nodiscard]] bool correctness_passes(const std::string& op, double value, double threshold);

// The one rule for a minimum effect, wherever it enters (the Target's spec, `experiment new`, a
// request): a percentage in (0, 1000]. Returns what is wrong with `pct`, or "" when it is fine.
inline constexpr double kMaxMinimumEffectPct = 1000;
[[nodiscard]] std::string minimum_effect_problem(double pct);

// The commented cko.toml that `cko init` writes.
[[nodiscard]] std::string target_spec_template(const std::string& name);

}  // namespace cko::eval
