// The frozen JSON form of a Target spec, and the commented template `cko init` writes.
#include "cko/eval/target_spec.hpp"

#include "cko/store/catalogue.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>

namespace cko::eval {
namespace {

// A closed word of the frozen spec (target.json's spec): another word is a damaged record.
template <class Enum>
Enum frozen_word(const Json& object, const char* key) {
    const std::string word = object.at(key).get<std::string>();
    if (const auto found = closed_enum_from_name<Enum>(word)) {
        return *found;
    }
    throw Error(ErrorCode::invalid_record,
                fmt::format("{}: the spec's {} is \"{}\", not one of: {} (a damaged or "
                            "hand-edited record; run cko fsck)",
                            store::layout::kTarget, key, word, closed_enum_words<Enum>()),
                Json{{"file", store::layout::kTarget}, {"field", key}});
}

}  // namespace

Json TargetSpec::primary_json() const {
    // A diagnostic Target reads only its name: its closed words hold "" like its other defaults.
    return Json{
        {"name", primary.name},
        {"unit", primary.unit},
        {"direction", diagnostic ? "" : std::string(stats::direction_name(primary.direction))},
        {"aggregation", primary.aggregation}};
}

Json TargetSpec::constraints_json() const {
    Json out = Json::array();
    for (const auto& c : constraints) {
        Json constraint{{"name", c.name},
                        {"unit", c.unit},
                        {"direction", stats::direction_name(c.direction)},
                        {"max_regression_pct", c.max_regression_pct}};
        // Written only when set, so a Target frozen without it keeps its content id.
        if (c.accept_per_case) {
            constraint["accept_per_case"] = true;
        }
        out.push_back(std::move(constraint));
    }
    return out;
}

Json TargetSpec::to_json() const {
    Json limits{{"command_timeout_s", command_timeout_s},
                {"operation_timeout_s", operation_timeout_s},
                {"resource_wait_timeout_s", resource_wait_timeout_s},
                {"cleanup_timeout_s", cleanup_timeout_s},
                {"gpu_seconds_budget", gpu_seconds_budget},
                {"wall_seconds_budget", wall_seconds_budget},
                {"deadline", deadline_text.empty() ? Json(nullptr) : Json(deadline_text)},
                {"host_changes", "advice_only"}};
    if (farthest_stage) {  // absent when unset, so that existing Targets keep their ids
        limits["farthest_stage"] = stage_name(*farthest_stage);
    }
    Json driver_json{{"argv", driver_argv},
                     {"capabilities", capabilities},
                     {"identity_paths", identity_paths},
                     {"env_allow", env_allow}};
    if (uses_slurm()) {  // absent for local Targets: their frozen form (and id) is unchanged
        driver_json["launcher"] = launcher;
        driver_json["slurm"] = slurm.to_json();
    }
    return Json{
        {"mode", diagnostic ? "diagnostic" : "measure"},
        {"name", name},
        {"claim_layer", diagnostic ? "" : std::string(store::claim_layer_name(claim_layer))},
        {"original", original},
        {"change_scope", change_scope},
        {"cases", {{"dir", cases_dir}, {"ids", case_ids}}},
        {"driver", driver_json},
        {"objective",
         {{"primary", primary_json()},
          {"minimum_effect_pct", minimum_effect_pct},
          {"max_case_regression_pct", max_case_regression_pct},
          {"constraints", constraints_json()}}},
        {"correctness",
         {{"metric", correctness_metric},
          {"operator", correctness_operator},
          {"threshold", correctness_threshold}}},
        {"statistics",
         {{"confidence", confidence},
          {"min_pairs", min_pairs},
          {"max_pairs", max_pairs},
          {"samples_per_call", samples_per_call},
          {"sequential", sequential}}},
        {"limits", limits},
        {"observation",
         {{"max_host_load_per_cpu", observation.max_host_load_per_cpu},
          {"max_host_steal_pct", observation.max_host_steal_pct}}},
        {"resources", {{"gpus", gpus_mode == "list" ? Json(gpu_uuids) : Json(gpus_mode)}}}};
}

TargetSpec TargetSpec::from_json(const Json& s, const std::filesystem::path& base_dir) {
    TargetSpec spec;
    spec.base_dir = base_dir;
    spec.diagnostic = s.at("mode") == "diagnostic";
    spec.name = s.at("name");
    if (!spec.diagnostic) {
        spec.claim_layer = frozen_word<store::ClaimLayer>(s, "claim_layer");
    }
    spec.original = s.at("original");
    spec.change_scope = s.at("change_scope").get<std::vector<std::string>>();
    spec.cases_dir = s.at("cases").at("dir");
    spec.case_ids = s.at("cases").at("ids").get<std::vector<std::string>>();
    spec.driver_argv = s.at("driver").at("argv").get<std::vector<std::string>>();
    spec.capabilities = s.at("driver").at("capabilities").get<std::vector<std::string>>();
    spec.identity_paths = s.at("driver").at("identity_paths").get<std::vector<std::string>>();
    spec.env_allow = s.at("driver").at("env_allow").get<std::vector<std::string>>();
    spec.launcher = s.at("driver").value("launcher", std::string("local"));
    if (spec.uses_slurm()) {
        spec.slurm = run::SlurmOptions::from_json(s.at("driver").at("slurm"));
    }
    const Json& o = s.at("objective");
    spec.primary = {o.at("primary").at("name"), o.at("primary").at("unit"),
                    spec.diagnostic ? stats::Direction::lower
                                    : frozen_word<stats::Direction>(o.at("primary"), "direction"),
                    o.at("primary").at("aggregation")};
    spec.minimum_effect_pct = o.at("minimum_effect_pct");
    spec.max_case_regression_pct = o.value("max_case_regression_pct", 0.0);
    for (const auto& c : o.at("constraints")) {
        spec.constraints.push_back({c.at("name"), c.at("unit"),
                                    frozen_word<stats::Direction>(c, "direction"),
                                    c.at("max_regression_pct"), c.value("accept_per_case", false)});
    }
    spec.correctness_metric = s.at("correctness").at("metric");
    spec.correctness_operator = s.at("correctness").at("operator");
    spec.correctness_threshold = s.at("correctness").at("threshold");
    const Json& st = s.at("statistics");
    spec.confidence = st.at("confidence");
    spec.min_pairs = st.at("min_pairs");
    spec.max_pairs = st.at("max_pairs");
    spec.samples_per_call = st.at("samples_per_call");
    spec.sequential = st.at("sequential");
    // Targets frozen before [18]'s observation rule hold no limits: they get the defaults.
    const Json observation = s.value("observation", Json::object());
    spec.observation.max_host_load_per_cpu =
        observation.value("max_host_load_per_cpu", spec.observation.max_host_load_per_cpu);
    spec.observation.max_host_steal_pct =
        observation.value("max_host_steal_pct", spec.observation.max_host_steal_pct);
    const Json& l = s.at("limits");
    spec.command_timeout_s = l.at("command_timeout_s");
    spec.operation_timeout_s = l.at("operation_timeout_s");
    spec.resource_wait_timeout_s = l.at("resource_wait_timeout_s");
    spec.cleanup_timeout_s = l.at("cleanup_timeout_s");
    spec.gpu_seconds_budget = l.at("gpu_seconds_budget");
    spec.wall_seconds_budget = l.at("wall_seconds_budget");
    if (!l.at("deadline").is_null()) {
        spec.deadline_text = l.at("deadline");
    }
    if (l.contains("farthest_stage")) {
        const std::string word = l.at("farthest_stage");
        spec.farthest_stage = stage_from_name(word);
        if (!spec.farthest_stage) {
            throw Error(ErrorCode::invalid_record,
                        fmt::format("target.json: limits.farthest_stage \"{}\" is not a stage ({})",
                                    word, closed_enum_words<Stage>()),
                        Json{{"field", "$.spec.limits.farthest_stage"}});
        }
    }
    const Json& gpus = s.at("resources").at("gpus");
    if (gpus.is_array()) {
        spec.gpus_mode = "list";
        spec.gpu_uuids = gpus.get<std::vector<std::string>>();
    } else {
        spec.gpus_mode = gpus.get<std::string>();
    }
    return spec;
}

TargetSpec frozen_spec(const store::TargetRecord& record) {
    TargetSpec spec;
    try {
        spec = TargetSpec::from_json(record.spec, record.spec_dir);
    } catch (const Json::exception& e) {
        // nlohmann names the member: "key 'objective' not found", "type must be number, but is …".
        throw Error(ErrorCode::invalid_record,
                    fmt::format("{}: the frozen spec cannot be read ({}); a damaged or "
                                "hand-edited record (run cko fsck)",
                                store::layout::kTarget, e.what()),
                    Json{{"file", store::layout::kTarget}, {"field", "$.spec"}});
    }
    if (record.deadline_unix_s) {
        spec.deadline_unix_s = *record.deadline_unix_s;
    }
    return spec;
}

std::string target_spec_template(const std::string& name) {
    return fmt::format(
        R"(# cko Target spec: fill in, then `cko target freeze --spec cko.toml --root artifacts`.
# Paths are relative to this file's directory. Every field is checked; unknown keys are errors.

[target]
name = "{}"
claim_layer = "kernel"             # what a win may claim: kernel | workload | serving
original = "src"                   # file or directory with the original code (snapshotted)
change_scope = ["src/kernel.cu"]   # paths (globs) a candidate may differ in

[cases]
dir = "cases"                      # one input description per case: cases/<id>.json (frozen)
ids = ["main"]

[driver]
argv = ["python3", "driver.py"]    # an argv, never a shell string; called with --request FILE
capabilities = ["single_subject", "paired_in_process", "session"]
                                   # session: one driver process serves a whole operation
                                   # (both SDKs do; PROTOCOL.md v2); drop it for a v1 driver
identity_paths = ["driver.py"]     # hashed at freeze: editing them needs a new Target
env_allow = ["PATH", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "PYTHONPATH"]

[objective]
primary = {{ name = "latency_us", unit = "us", direction = "lower", aggregation = "median" }}
minimum_effect_pct = 2.0           # the smallest gain worth having
max_case_regression_pct = 0.0      # how much slower one case may get while the pooled effect counts
constraints = [
  # {{ name = "peak_mem_bytes", unit = "byte", direction = "lower", max_regression_pct = 2.0 }},
  # accept_per_case = true in one: a regression on some cases (pooled ok) is `mixed`, selectable
  # only with --accept-regression CASE; without it any regression of the constraint is `regressed`
]

[correctness]
metric = "max_rel_err"             # reported by the driver for each subject
operator = "<="                    # <=, <, >=, >, ==
threshold = 1e-5

[statistics]
confidence = 0.95
min_pairs = 6                      # below this: inconclusive
max_pairs = 40                     # a pair is one round: every case once, reference and candidate
samples_per_call = 5               # per subject per call; a pair uses their medians
sequential = true                  # stop as soon as the verdict is decided

[limits]
command_timeout_s = 300
operation_timeout_s = 3600
resource_wait_timeout_s = 120
cleanup_timeout_s = 30
gpu_seconds_budget = 1800
# wall_seconds_budget = 7200
# deadline = "2026-12-31T00:00:00Z"
# farthest_stage = "confirm"       # screen | confirm | audit: the farthest stage a session may run

[observation]                      # past these a comparison is `inconclusive`, naming why
max_host_load_per_cpu = 1.0        # runnable tasks per CPU, mean over the window (ours included)
max_host_steal_pct = 5.0           # CPU time the hypervisor stole, percent of the window

[resources]
gpus = "auto"                      # or ["GPU-<uuid>", ...]; [] for CPU-only work
)",
        name);
}

}  // namespace cko::eval
