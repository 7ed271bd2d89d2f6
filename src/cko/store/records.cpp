// Typed store records: strict readers and their writers (see records.hpp).
#include "cko/store/records.hpp"

#include "cko/store/catalogue.hpp"
#include "cko/store/record_fields.hpp"
#include "cko/store/store.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>

namespace cko::store {
namespace {

using detail::Fields;
using detail::optional_text;

Json gain_bound_json(const std::optional<ExperimentRecord::GainBound>& bound) {
    if (!bound) {
        return nullptr;
    }
    Json j{{"pct", bound->pct}, {"source", bound->source}};
    if (bound->computed) {
        const auto& c = *bound->computed;
        j["computed"] = Json{{"item", c.item},
                             {"kind", c.kind},
                             {"part", c.part},
                             {"window", c.window},
                             {"occurrence", c.occurrence},
                             {"exposed_ns", c.exposed_ns},
                             {"window_ns", c.window_ns}};
    }
    return j;
}

std::optional<ExperimentRecord::GainBound> gain_bound_of(const Fields& f) {
    using GainBound = ExperimentRecord::GainBound;
    if (f.member("gain_bound").is_null()) {
        return std::nullopt;
    }
    std::optional<GainBound> out;
    const Fields g = f.child("gain_bound");
    g.only({"pct", "source", "computed"});
    out = GainBound{g.number("pct"), g.text("source"), std::nullopt};
    if (g.has("computed")) {
        const Fields c = g.child("computed");
        c.only({"item", "kind", "part", "window", "occurrence", "exposed_ns", "window_ns"});
        out->computed = GainBound::Computed{c.text("item"),          c.text("kind"),
                                            c.text("part"),          c.text("window"),
                                            c.integer("occurrence"), c.integer("exposed_ns"),
                                            c.integer("window_ns")};
    }
    return out;
}

}  // namespace

SnapshotRefRecord SnapshotRefRecord::from_json(const Json& j, std::string_view file,
                                               std::string_view where) {
    const Fields f(j, file, std::string(where));
    f.only({"digest", "kind", "source", "file_count", "total_bytes"});
    return SnapshotRefRecord{f.text("digest"), f.text("kind"), f.text("source"),
                             f.integer("file_count"), f.integer("total_bytes")};
}

Json SnapshotRefRecord::to_json() const {
    return Json{{"digest", digest},
                {"kind", kind},
                {"source", source},
                {"file_count", file_count},
                {"total_bytes", total_bytes}};
}

// ---- target.json

TargetRecord TargetRecord::from_json(const Json& j, std::string_view file) {
    const Fields f(j, file, "$");
    f.only({"format_version", "id", "spec", "spec_sha256", "spec_dir", "environment",
            "created_unix_s", "created_by", "deadline_unix_s", "original", "cases",
            "driver_identity", "gpus", "smoke", "submit_host_environment", "slurm_node",
            "store_filesystem"});
    f.format_version("cko/target-v1");
    TargetRecord t;
    t.id = f.text("id");
    t.spec = f.object("spec");
    t.spec_sha256 = f.text("spec_sha256");
    t.spec_dir = f.text("spec_dir");
    t.environment = f.object("environment");
    t.created_unix_s = f.integer("created_unix_s");
    t.created_by = f.text("created_by");
    if (f.has("deadline_unix_s")) {
        t.deadline_unix_s = f.integer("deadline_unix_s");
    }
    if (f.has("original")) {
        t.original = SnapshotRefRecord::from_json(f.object("original"), file, f.path("original"));
    }
    if (f.has("cases")) {
        t.cases.emplace();
        const Json& cases = f.array("cases");
        for (std::size_t i = 0; i < cases.size(); ++i) {
            const Fields c(cases[i], file, fmt::format("$.cases[{}]", i));
            c.only({"id", "snapshot"});
            t.cases->push_back(
                Case{c.text("id"),
                     SnapshotRefRecord::from_json(c.object("snapshot"), file, c.path("snapshot"))});
        }
    }
    if (f.has("driver_identity")) {
        t.driver_identity = f.array("driver_identity");
    }
    if (f.has("gpus")) {
        t.gpus = f.texts("gpus");
    }
    if (f.has("smoke")) {
        t.smoke = f.texts("smoke");
    }
    if (f.has("submit_host_environment")) {
        t.submit_host_environment = f.object("submit_host_environment");
    }
    if (f.has("slurm_node")) {
        const Json& node = f.member("slurm_node");
        if (!node.is_string() && !node.is_null()) {
            f.fail("slurm_node", fmt::format("is {}, not a string or null", node.type_name()));
        }
        t.slurm_node = node;
    }
    if (f.has("store_filesystem")) {
        t.store_filesystem = f.object("store_filesystem");
    }
    return t;
}

Json TargetRecord::to_json() const {
    Json j{{"format_version", "cko/target-v1"}, {"spec", spec},
           {"spec_sha256", spec_sha256},        {"spec_dir", spec_dir},
           {"environment", environment},        {"created_unix_s", created_unix_s},
           {"created_by", created_by}};
    if (!id.empty()) {
        j["id"] = id;
    }
    if (deadline_unix_s) {
        j["deadline_unix_s"] = *deadline_unix_s;
    }
    if (original) {
        j["original"] = original->to_json();
    }
    if (cases) {
        j["cases"] = Json::array();
        for (const auto& c : *cases) {
            j["cases"].push_back(Json{{"id", c.id}, {"snapshot", c.snapshot.to_json()}});
        }
    }
    if (driver_identity) {
        j["driver_identity"] = *driver_identity;
    }
    if (gpus) {
        j["gpus"] = *gpus;
    }
    if (smoke) {
        j["smoke"] = *smoke;
    }
    if (submit_host_environment) {
        j["submit_host_environment"] = *submit_host_environment;
    }
    if (slurm_node) {
        j["slurm_node"] = *slurm_node;
    }
    if (store_filesystem) {
        j["store_filesystem"] = *store_filesystem;
    }
    return j;
}

// ---- experiments/<id>.json

ExperimentRecord ExperimentRecord::from_json(const Json& j, std::string_view file) {
    const Fields f(j, file, "$");
    f.only({"format_version",
            "id",
            "target",
            "candidate",
            "base",
            "changed_files",
            "hypothesis",
            "mechanism",
            "claim_layer",
            "minimum_effect_pct",
            "falsifier",
            "no_falsifier_reason",
            "failure_closes",
            "screen_design",
            "estimated_cost_s",
            "gain_bound",
            "extra_correctness_gates",
            "secondary_metrics",
            "diagnostics_only",
            "relationship",
            "lifecycle",
            "premises",
            "control",
            "created_unix_s",
            "tests_hypothesis"});
    f.format_version("cko/experiment-v1");
    ExperimentRecord e;
    e.id = f.text("id");
    {
        const Fields t = f.child("target");
        t.only({"id", "sha256"});
        e.target = TargetRef{t.text("id"), t.text("sha256")};
    }
    e.candidate = SnapshotRefRecord::from_json(f.object("candidate"), file, f.path("candidate"));
    {
        const Fields b = f.child("base");
        b.only({"kind", "experiment_id", "digest"});
        e.base = Base{b.word<BaseKind>("kind"), b.text_or_null("experiment_id"), b.text("digest")};
    }
    e.changed_files = f.texts("changed_files");
    e.hypothesis = f.text("hypothesis");
    e.mechanism = f.text("mechanism");
    e.claim_layer = f.word<ClaimLayer>("claim_layer");
    e.minimum_effect_pct = f.number("minimum_effect_pct");
    e.falsifier = f.text_or_null("falsifier");
    e.no_falsifier_reason = f.text_or_null("no_falsifier_reason");
    e.failure_closes = f.word<FailureCloses>("failure_closes");
    e.screen_design = f.word<ScreenDesign>("screen_design");
    e.estimated_cost_s = f.number("estimated_cost_s");
    e.gain_bound = gain_bound_of(f);
    e.extra_correctness_gates = f.texts("extra_correctness_gates");
    const Json& secondary = f.array("secondary_metrics");
    for (std::size_t i = 0; i < secondary.size(); ++i) {
        const Fields s(secondary[i], file, fmt::format("$.secondary_metrics[{}]", i));
        s.only({"name", "threshold_pct"});
        e.secondary_metrics.push_back(Secondary{s.text("name"), s.number("threshold_pct")});
    }
    e.diagnostics_only = f.texts("diagnostics_only");
    e.relationship = f.word<Relationship>("relationship");
    e.lifecycle = f.word<Lifecycle>("lifecycle");
    e.premises = f.texts("premises");
    if (f.has("control")) {
        e.control = f.boolean("control");
    }
    if (f.has("created_unix_s")) {
        e.created_unix_s = f.integer("created_unix_s");
    }
    if (f.has("tests_hypothesis")) {
        e.tests_hypothesis = f.text("tests_hypothesis");
    }
    return e;
}

Json ExperimentRecord::to_json() const {
    Json secondary = Json::array();
    for (const auto& s : secondary_metrics) {
        secondary.push_back(Json{{"name", s.name}, {"threshold_pct", s.threshold_pct}});
    }
    Json j{{"format_version", "cko/experiment-v1"},
           {"target", {{"id", target.id}, {"sha256", target.sha256}}},
           {"candidate", candidate.to_json()},
           {"base",
            {{"kind", base_kind_name(base.kind)},
             {"experiment_id", optional_text(base.experiment_id)},
             {"digest", base.digest}}},
           {"changed_files", changed_files},
           {"hypothesis", hypothesis},
           {"mechanism", mechanism},
           {"claim_layer", claim_layer_name(claim_layer)},
           {"minimum_effect_pct", minimum_effect_pct},
           {"falsifier", optional_text(falsifier)},
           {"no_falsifier_reason", optional_text(no_falsifier_reason)},
           {"failure_closes", failure_closes_name(failure_closes)},
           {"screen_design", screen_design_name(screen_design)},
           {"estimated_cost_s", estimated_cost_s},
           {"gain_bound", gain_bound_json(gain_bound)},
           {"extra_correctness_gates", extra_correctness_gates},
           {"secondary_metrics", secondary},
           {"diagnostics_only", diagnostics_only},
           {"relationship", relationship_name(relationship)},
           {"lifecycle", lifecycle_name(lifecycle)},
           {"premises", premises}};
    if (!id.empty()) {
        j["id"] = id;
    }
    if (control) {
        j["control"] = *control;
    }
    if (created_unix_s) {
        j["created_unix_s"] = *created_unix_s;
    }
    if (tests_hypothesis) {
        j["tests_hypothesis"] = *tests_hypothesis;
    }
    return j;
}

// ---- invocations/<id>/request.json

InvocationRecord InvocationRecord::from_json(const Json& j, std::string_view file) {
    const Fields f(j, file, "$");
    f.only({"format_version", "id", "kind", "created_unix_ns", "owner", "limits", "request"});
    f.format_version("cko/invocation-request-v1");
    InvocationRecord r;
    r.id = f.text("id");
    r.kind = f.text("kind");
    r.created_unix_ns = f.integer("created_unix_ns");
    {
        const Fields o = f.child("owner");
        o.only({"pid", "start_ticks", "boot_id", "hostname"});
        r.owner = Owner{o.integer("pid"), o.natural("start_ticks"), o.text("boot_id"),
                        o.text("hostname")};
    }
    {
        const Fields l = f.child("limits");
        l.only({"operation_timeout_s", "command_timeout_s", "resource_wait_timeout_s",
                "cleanup_timeout_s"});
        r.limits = Limits{l.number("operation_timeout_s"), l.number("command_timeout_s"),
                          l.number("resource_wait_timeout_s"), l.number("cleanup_timeout_s")};
    }
    r.request = f.object("request");
    return r;
}

Json InvocationRecord::to_json() const {
    return Json{{"format_version", "cko/invocation-request-v1"},
                {"id", id},
                {"kind", kind},
                {"created_unix_ns", created_unix_ns},
                {"owner",
                 {{"pid", owner.pid},
                  {"start_ticks", owner.start_ticks},
                  {"boot_id", owner.boot_id},
                  {"hostname", owner.hostname}}},
                {"limits",
                 {{"operation_timeout_s", limits.operation_timeout_s},
                  {"command_timeout_s", limits.command_timeout_s},
                  {"resource_wait_timeout_s", limits.resource_wait_timeout_s},
                  {"cleanup_timeout_s", limits.cleanup_timeout_s}}},
                {"request", request}};
}

// ---- invocations/<id>/result.json

InvocationResultRecord InvocationResultRecord::from_json(const Json& j, std::string_view file) {
    const Fields f(j, file, "$");
    f.only({"format_version", "id", "kind", "state", "reason", "started_unix_ns",
            "finished_unix_ns", "cost", "outputs", "error"});
    f.format_version("cko/invocation-result-v1");
    InvocationResultRecord r;
    r.id = f.text("id");
    r.kind = f.text("kind");
    r.state = f.text("state");
    if (r.state != "succeeded" && r.state != "failed" && r.state != "cancelled" &&
        r.state != "timed_out" && r.state != "lost") {
        f.fail("state", fmt::format("is \"{}\", not a terminal state", r.state));
    }
    r.reason = f.text("reason");
    r.started_unix_ns = f.integer("started_unix_ns");
    r.finished_unix_ns = f.integer("finished_unix_ns");
    {
        const Fields c = f.child("cost");
        c.only({"wall_s", "gpu_s", "driver_calls"});
        const auto null_or = [&c](std::string_view key, auto read) {
            return c.member(key).is_null() ? std::nullopt : std::optional(read(key));
        };
        r.cost.wall_s = null_or("wall_s", [&c](std::string_view k) { return c.number(k); });
        r.cost.gpu_s = null_or("gpu_s", [&c](std::string_view k) { return c.number(k); });
        r.cost.driver_calls =
            null_or("driver_calls", [&c](std::string_view k) { return c.integer(k); });
    }
    r.outputs = f.object("outputs");
    if (f.has("error")) {
        r.error = f.object("error");
    }
    return r;
}

Json InvocationResultRecord::to_json() const {
    const auto or_null = [](const auto& v) { return v ? Json(*v) : Json(nullptr); };
    Json j{{"format_version", "cko/invocation-result-v1"},
           {"id", id},
           {"kind", kind},
           {"state", state},
           {"reason", reason},
           {"started_unix_ns", started_unix_ns},
           {"finished_unix_ns", finished_unix_ns},
           {"cost",
            {{"wall_s", or_null(cost.wall_s)},
             {"gpu_s", or_null(cost.gpu_s)},
             {"driver_calls", or_null(cost.driver_calls)}}},
           {"outputs", outputs}};
    if (error) {
        j["error"] = *error;
    }
    return j;
}

// ---- champion/selections/<id>.json

SelectionRecord SelectionRecord::from_json(const Json& j, std::string_view file) {
    const Fields f(j, file, "$");
    f.only({"format_version", "id", "experiment_id", "confirm", "restore", "previous", "digest",
            "selected_unix_s", "accepted_regressions"});
    f.format_version("cko/selection-v1");
    SelectionRecord s;
    s.id = f.text("id");
    s.experiment_id = f.text_or_null("experiment_id");
    if (f.has("confirm")) {
        const Fields c = f.child("confirm");
        c.only({"id", "sha256"});
        s.confirm = Confirm{c.text("id"), c.text("sha256")};
    }
    if (f.has("restore")) {
        const Fields r = f.child("restore");
        r.only({"audit", "verdict", "reason"});
        if (r.has("reason")) {
            (void)r.text("reason");
        } else {
            (void)r.text("audit");
            (void)r.text("verdict");
        }
        s.restore = f.object("restore");
    }
    if (s.confirm.has_value() == s.restore.has_value()) {
        f.fail(s.confirm ? "restore" : "confirm",
               "must be present exactly when the other is absent (a select has confirm, a "
               "restore has restore)");
    }
    {
        const Fields p = f.child("previous");
        p.only({"champion", "digest", "current_sha256"});
        s.previous = Previous{p.text("champion"), p.text("digest"), p.text("current_sha256")};
    }
    s.digest = f.text("digest");
    s.selected_unix_s = f.integer("selected_unix_s");
    if (f.has("accepted_regressions")) {
        s.accepted_regressions = f.texts("accepted_regressions");
    }
    return s;
}

Json SelectionRecord::to_json() const {
    Json j{{"format_version", "cko/selection-v1"},
           {"experiment_id", optional_text(experiment_id)},
           {"previous",
            {{"champion", previous.champion},
             {"digest", previous.digest},
             {"current_sha256", previous.current_sha256}}},
           {"digest", digest},
           {"selected_unix_s", selected_unix_s}};
    if (!id.empty()) {
        j["id"] = id;
    }
    if (confirm) {
        j["confirm"] = Json{{"id", confirm->id}, {"sha256", confirm->sha256}};
    }
    if (restore) {
        j["restore"] = *restore;
    }
    if (accepted_regressions) {
        j["accepted_regressions"] = *accepted_regressions;
    }
    return j;
}

// ---- reading from the store

namespace {}  // namespace

TargetRecord read_target_record(const Store& store) {
    const std::string rel(layout::kTarget);
    if (!store.exists(rel)) {
        throw Error(ErrorCode::not_found,
                    fmt::format("{} holds no {}; freeze one with `cko target freeze`",
                                store.root().string(), rel));
    }
    return TargetRecord::from_json(store.read_record(rel), rel);
}

ExperimentRecord read_experiment_record(const Store& store, std::string_view id) {
    require_safe_name(std::string(id), "experiment id");
    const std::string rel = layout::experiment_record(id);
    return ExperimentRecord::from_json(store.read_named_record(rel, "experiment", id, "cko ls"),
                                       rel);
}

InvocationRecord read_invocation_record(const Store& store, std::string_view id) {
    require_safe_name(std::string(id), "invocation id");
    const std::string rel = layout::invocation_request(id);
    return InvocationRecord::from_json(store.read_named_record(rel, "invocation", id, "cko ls"),
                                       rel);
}

InvocationResultRecord read_invocation_result_record(const Store& store, std::string_view id) {
    require_safe_name(std::string(id), "invocation id");
    const std::string rel = layout::invocation_result(id);
    return InvocationResultRecord::from_json(
        store.read_named_record(rel, "result of invocation", id, "cko ls"), rel);
}

SelectionRecord read_selection_record(const Store& store, std::string_view id) {
    require_safe_name(std::string(id), "selection id");
    const std::string rel = layout::selection_record(id);
    return SelectionRecord::from_json(store.read_named_record(rel, "selection", id, "cko ls"), rel);
}

std::vector<std::string> list_selections(const Store& store) {
    return store.record_ids(layout::kSelectionsDir, "sel");
}

}  // namespace cko::store
