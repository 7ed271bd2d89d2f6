// Typed store records: the Target, an experiment, an invocation's request and result and a champion
// selection, each with a strict from_json (a missing, wrong-typed or unknown member is an
// invalid_record error naming the member and the file) and a to_json that writes the members its
// schema in schemas/ names (target-v1, experiment-v1, invocation-request-v1, invocation-result-v1,
// selection-v1). Sub-documents whose own schema is elsewhere (a Target's spec and environment
// identity, the per-kind request and outputs of an invocation, a snapshot reference) are kept as
// JSON, checked for their type only; their readers own them.
#pragma once

#include "cko/store/experiment_words.hpp"
#include "cko/util/json.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cko::store {

// A snapshot reference as records cite it (snapshot-manifest-v1 #/$defs/reference).
struct SnapshotRefRecord {
    std::string digest;
    std::string kind;    // file | directory
    std::string source;  // the real path it was taken from
    std::int64_t file_count = 0;
    std::int64_t total_bytes = 0;
    [[nodiscard]] static SnapshotRefRecord from_json(const Json& j, std::string_view file,
                                                     std::string_view where);
    [[nodiscard]] Json to_json() const;
    bool operator==(const SnapshotRefRecord&) const = default;
};

// target.json (target-v1).
struct TargetRecord {
    struct Case {
        std::string id;
        SnapshotRefRecord snapshot;
        bool operator==(const Case&) const = default;
    };
    std::string id;
    Json spec;  // TargetSpec::to_json (eval::TargetSpec::from_json reads it)
    std::string spec_sha256;
    std::string spec_dir;
    Json environment;  // env identity (env::identity_mismatch reads it)
    std::int64_t created_unix_s = 0;
    std::string created_by;
    std::optional<std::int64_t> deadline_unix_s;
    // A measuring Target's (absent for a diagnostic one):
    std::optional<SnapshotRefRecord> original;
    std::optional<std::vector<Case>> cases;
    std::optional<Json> driver_identity;  // [{path, snapshot}]
    std::optional<std::vector<std::string>> gpus;
    std::optional<std::vector<std::string>> smoke;  // the freeze smoke's invocation ids
    // A Slurm Target's:
    std::optional<Json> submit_host_environment;
    std::optional<Json> slurm_node;  // a string or null
    std::optional<Json> store_filesystem;

    [[nodiscard]] static TargetRecord from_json(const Json& j, std::string_view file);
    [[nodiscard]] Json to_json() const;
    bool operator==(const TargetRecord&) const = default;
};

// experiments/<id>.json (experiment-v1).
struct ExperimentRecord {
    struct TargetRef {
        std::string id;
        std::string sha256;  // of target.json's bytes
        bool operator==(const TargetRef&) const = default;
    };
    struct Base {
        BaseKind kind = BaseKind::original;
        std::optional<std::string> experiment_id;
        std::string digest;
        bool operator==(const Base&) const = default;
    };
    struct GainBound {
        // Set when cko computed pct from a cited map's item (docs/map.md, "Citing a map as an
        // experiment's gain bound"): where in the map the bound was read.
        struct Computed {
            std::string item;
            std::string kind;    // kernel | category | annotation
            std::string part;    // the map part's source
            std::string window;  // the window's name
            std::int64_t occurrence = 0;
            std::int64_t exposed_ns = 0;
            std::int64_t window_ns = 0;
            bool operator==(const Computed&) const = default;
        };
        double pct = 0;
        std::string source;
        std::optional<Computed> computed;  // absent: typed by the user
        bool operator==(const GainBound&) const = default;
    };
    struct Secondary {
        std::string name;
        double threshold_pct = 0;
        bool operator==(const Secondary&) const = default;
    };
    std::string id;  // "" before content_id names it
    TargetRef target;
    SnapshotRefRecord candidate;
    Base base;
    std::vector<std::string> changed_files;
    std::string hypothesis;
    std::string mechanism;
    ClaimLayer claim_layer = ClaimLayer::kernel;
    double minimum_effect_pct = 0;
    std::optional<std::string> falsifier;
    std::optional<std::string> no_falsifier_reason;
    FailureCloses failure_closes = FailureCloses::implementation;
    ScreenDesign screen_design = ScreenDesign::conservative_bound;
    double estimated_cost_s = 0;
    std::optional<GainBound> gain_bound;
    std::vector<std::string> extra_correctness_gates;
    std::vector<Secondary> secondary_metrics;
    std::vector<std::string> diagnostics_only;
    Relationship relationship = Relationship::implementation_equivalence;
    Lifecycle lifecycle = Lifecycle::isolated_process;
    std::vector<std::string> premises;
    std::optional<bool> control;
    std::optional<std::int64_t> created_unix_s;
    // The hypothesis (hyp-…, hypotheses/) this experiment tests; absent when it names none.
    std::optional<std::string> tests_hypothesis;

    [[nodiscard]] bool is_control() const { return control.value_or(false); }
    [[nodiscard]] static ExperimentRecord from_json(const Json& j, std::string_view file);
    [[nodiscard]] Json to_json() const;  // without "id" while id is ""
    bool operator==(const ExperimentRecord&) const = default;
};

// invocations/<id>/request.json (invocation-request-v1): what an invocation froze when it began.
struct InvocationRecord {
    struct Owner {
        std::int64_t pid = 0;
        std::uint64_t start_ticks = 0;
        std::string boot_id;
        std::string hostname;
        bool operator==(const Owner&) const = default;
    };
    struct Limits {
        double operation_timeout_s = 0;
        double command_timeout_s = 0;
        double resource_wait_timeout_s = 0;
        double cleanup_timeout_s = 0;
        bool operator==(const Limits&) const = default;
    };
    std::string id;
    std::string kind;  // baseline | screen | confirm | audit | driver-call | profile
    std::int64_t created_unix_ns = 0;
    Owner owner;
    Limits limits;
    Json request;  // the kind's own request (an object)

    [[nodiscard]] static InvocationRecord from_json(const Json& j, std::string_view file);
    [[nodiscard]] Json to_json() const;
    bool operator==(const InvocationRecord&) const = default;
};

// invocations/<id>/result.json (invocation-result-v1): how an invocation ended. Written once, by
// its owner when it finishes or by the step that declares it `lost`.
struct InvocationResultRecord {
    struct Cost {
        // All three null in a `lost` result: nothing is known of what it spent.
        std::optional<double> wall_s;
        std::optional<double> gpu_s;
        std::optional<std::int64_t> driver_calls;
        bool operator==(const Cost&) const = default;
    };
    std::string id;
    std::string kind;   // as in its request
    std::string state;  // a terminal run::InvocationState: succeeded | failed | cancelled | ...
    std::string reason;
    std::int64_t started_unix_ns = 0;
    std::int64_t finished_unix_ns = 0;
    Cost cost;
    Json outputs = Json::object();  // the kind's own outputs (an object)
    std::optional<Json> error;      // the error document's `error` when it failed, was cancelled
                                    // or timed out

    [[nodiscard]] bool succeeded() const { return state == "succeeded"; }
    [[nodiscard]] static InvocationResultRecord from_json(const Json& j, std::string_view file);
    [[nodiscard]] Json to_json() const;
    bool operator==(const InvocationResultRecord&) const = default;
};

// champion/selections/<id>.json (selection-v1): one select (confirm set) or restore (restore set).
struct SelectionRecord {
    struct Confirm {
        std::string id;
        std::string sha256;  // of that invocation's result.json
        bool operator==(const Confirm&) const = default;
    };
    struct Previous {
        std::string champion;  // an experiment id or "original"
        std::string digest;
        std::string current_sha256;
        bool operator==(const Previous&) const = default;
    };
    std::string id;                            // "" before content_id names it
    std::optional<std::string> experiment_id;  // null: the original restored
    std::optional<Confirm> confirm;
    std::optional<Json> restore;  // {audit, verdict} or {reason}
    Previous previous;
    std::string digest;
    std::int64_t selected_unix_s = 0;
    std::optional<std::vector<std::string>> accepted_regressions;

    [[nodiscard]] static SelectionRecord from_json(const Json& j, std::string_view file);
    [[nodiscard]] Json to_json() const;  // without "id" while id is ""
    bool operator==(const SelectionRecord&) const = default;
};

class Store;

// Each record read from its place in the catalogue and parsed strictly (invalid_record names the
// file and the member); not_found when it is not there. Ids are checked (require_safe_name).
[[nodiscard]] TargetRecord read_target_record(const Store& store);
[[nodiscard]] ExperimentRecord read_experiment_record(const Store& store, std::string_view id);
[[nodiscard]] InvocationRecord read_invocation_record(const Store& store, std::string_view id);
[[nodiscard]] InvocationResultRecord read_invocation_result_record(const Store& store,
                                                                   std::string_view id);
[[nodiscard]] SelectionRecord read_selection_record(const Store& store, std::string_view id);
// The ids of champion/selections/*.json (sel-…), in name order; none when the directory is missing.
[[nodiscard]] std::vector<std::string> list_selections(const Store& store);

}  // namespace cko::store
