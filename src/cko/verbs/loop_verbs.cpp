// The evidence-loop verbs: init, target freeze, baseline, experiment new, screen/confirm/audit,
// champion, conclusion lower.
#include "cko/eval/champion.hpp"
#include "cko/eval/compare.hpp"
#include "cko/eval/conclusion.hpp"
#include "cko/eval/decision.hpp"
#include "cko/eval/experiment.hpp"
#include "cko/eval/history.hpp"
#include "cko/eval/judge.hpp"
#include "cko/eval/next_step.hpp"
#include "cko/eval/target_spec.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/verbs/frame.hpp"
#include "cko/verbs/verb.hpp"

#include <fmt/format.h>

#include <cmath>
#include <memory>

namespace cko::verbs {
namespace {

std::string pct_interval(const Json& estimate) {
    const auto pct = [&](const char* key) {
        const Json& v = estimate.value(key, Json());
        return v.is_number() ? fmt::format("{:+.2f}%", v.get<double>()) : std::string("n/a");
    };
    return fmt::format("[{}, {}]", pct("ci_low_pct"), pct("ci_high_pct"));
}

// One line on what the monitor saw of the host (and the GPUs) over a comparison's calls.
std::string observation_text(const Json& obs) {
    if (!obs.is_object() || obs.value("calls", 0) == 0) {
        return "";
    }
    if (!obs.value("applied", true)) {
        return "  observation: the driver ran on a Slurm node, which this host's monitor does not "
               "see\n";
    }
    const Json& h = obs["host"];
    const auto num = [&](const char* key, const char* form) {
        const Json& v = h.value(key, Json());
        return v.is_number() ? fmt::format(fmt::runtime(form), v.get<double>())
                             : std::string("unknown");
    };
    const Json& freq = h.value("cpu_freq_mhz", Json());
    std::string text = fmt::format(
        "  observation: host load {} runnable per CPU (limit {}), busy {}, steal {} (limit {}%), "
        "CPU frequency {}; {} readings over {} calls",
        num("load_per_cpu", "{:.2f}"), obs["limits"].value("max_host_load_per_cpu", 0.0),
        num("busy_pct", "{:.0f}%"), num("steal_pct", "{:.1f}%"),
        obs["limits"].value("max_host_steal_pct", 0.0),
        freq.is_object()
            ? fmt::format("{:.0f}-{:.0f} MHz", freq.value("min", 0.0), freq.value("max", 0.0))
            : std::string("unknown"),
        obs.value("samples", 0), obs.value("calls", 0));
    if (obs.value("gpu", Json()).is_object()) {
        text += fmt::format("; GPU readings missing {}/{}", obs["gpu"].value("readings_missing", 0),
                            obs["gpu"].value("readings", 0));
    }
    return text + "\n";
}

std::string outcome_text(const std::string& verb, const eval::OperationOutcome& o,
                         const eval::TargetSpec& spec) {
    std::string text = fmt::format("{} {}: {}", verb, o.invocation_id, o.state);
    const Json& out = o.outputs;
    if (!o.verdict.empty()) {
        text += fmt::format(", verdict {}", o.verdict);
    }
    if (out.contains("decision")) {
        text += fmt::format(", decision {}", out["decision"].get<std::string>());
    }
    text += "\n";
    if (out.contains("reference") && out.contains("candidate")) {
        text += fmt::format("  reference {} ({}) against candidate {} ({})\n",
                            out["reference"].value("label", "?"),
                            out["reference"].value("digest", "").substr(0, 12),
                            out["candidate"].value("label", "?"),
                            out["candidate"].value("digest", "").substr(0, 12));
    }
    if (out.contains("reason") && !o.error) {  // a failure's reason is its error, printed once
        text += fmt::format("  {}\n", out["reason"].get<std::string>());
    }
    text += observation_text(out.value("observation", Json()));
    const stats::Direction dir = spec.primary.direction;
    if (out.contains("per_case") && out["per_case"].is_array() && out["per_case"].size() > 1) {
        for (const auto& c : out["per_case"]) {
            const Json& e = c["estimate"];
            const double hl =
                e.value("hl", Json()).is_number() ? e["hl"].get<double>() : std::nan("");
            text += fmt::format("  case {:<12} {:<13} {}  {}{}\n", c.value("case_id", "?"),
                                c.value("verdict", "?"),
                                eval::describe_effect(hl, dir, spec.primary.name), pct_interval(e),
                                c.value("regressed", false) ? "  REGRESSED" : "");
        }
    }
    if (out.contains("constraints") && out["constraints"].is_object()) {
        for (const auto& [name, k] : out["constraints"].items()) {
            text += fmt::format("  constraint {:<12} {:<13} {}\n", name, k.value("status", "?"),
                                pct_interval(k.value("estimate", Json::object())));
            const Json per_case = k.value("per_case", Json::array());
            for (const auto& pc : per_case.size() > 1 ? per_case : Json::array()) {
                text += fmt::format("    on case {:<10} {:<13} {}\n", pc.value("case_id", "?"),
                                    pc.value("status", "?"),
                                    pct_interval(pc.value("estimate", Json::object())));
            }
        }
    }
    if (out.contains("instrument_check") && out["instrument_check"].value("biased", false)) {
        text += fmt::format("  {}\n", out["instrument_check"].value("statement", ""));
    }
    if (out.contains("aa")) {
        text += fmt::format("  A/A check (original against itself): {} after {} pairs, {}\n",
                            out["aa"].value("verdict", "?"), out["aa"].value("pairs", 0),
                            pct_interval(out["aa"]["estimate"]));
    }
    if (out.contains("resolution")) {
        text += fmt::format("  resolution: {}\n", out["resolution"].value("statement", ""));
    }
    if (out.contains("cases") && out["cases"].is_object()) {
        for (const auto& [id, c] : out["cases"].items()) {
            text += fmt::format("  case {:<12} median {:.6g} {}  MAD {:.3g} {}  CV {:.2f}%\n", id,
                                c["median"].get<double>(), c["unit"].get<std::string>(),
                                c["mad"].get<double>(), c["unit"].get<std::string>(),
                                100 * c["cv"].get<double>());
        }
    }
    for (const auto& note : out.value("notes", Json::array())) {
        text += fmt::format("  note: {}\n", note.get<std::string>());
    }
    return text;
}

Outcome from_outcome(const std::string& verb, const eval::OperationOutcome& o,
                     const store::Store& store, const eval::TargetSpec& spec) {
    // The finished invocation as the operation wrote it: nothing of it is read back.
    Json j = o.status.to_json();
    eval::add_budget_and_next_stage(j, store, o.invocation_id, &o.entry);  // as status gives it
    Outcome outcome{outcome_text(verb, o, spec), j, o.exit_code, {}};
    outcome.failure = o.error;
    return outcome;
}

Outcome compare(const std::string& verb, const Request& r, Context& context) {
    const store::Store store = store::Store::open(r.text("root"));
    const eval::Target target = eval::Target::open(store);
    eval::CompareOptions c;
    c.kind = eval::comparison_kind_from_name(verb).value();  // the verb's own row
    // Each kind reads the keys its row defines (comparison_verb): audit has no experiment, only
    // confirm a retry.
    if (c.kind != eval::ComparisonKind::audit) {
        c.experiment_id = r.text("experiment");
    }
    if (c.kind == eval::ComparisonKind::confirm) {
        c.retry_of = r.text("retry_of");
        c.retry_reason = r.text("reason");
    }
    if (c.kind != eval::ComparisonKind::screen) {
        c.override_failure = r.text("override_failure");
    }
    if (c.kind != eval::ComparisonKind::audit) {
        c.override_falsified = r.text("override_falsified");
    }
    c.stage_limit = r.text("stage_limit");
    c.seed = r.unsigned_integer("seed");
    c.cancel = context.cancel;
    c.progress = [&context](const Progress& step) { context.report_progress(step); };
    if (c.kind != eval::ComparisonKind::audit && c.experiment_id.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("{} needs the experiment id (see cko ls)", verb),
                    Json{{"field", "experiment"}});
    }
    context.report_progress(fmt::format("{} running…", verb));
    const auto out = eval::run_comparison(
        target, c, [&context](const std::string& id) { context.announce_invocation(id); });
    context.report_progress("");
    Outcome outcome = from_outcome(verb, out, store, target.spec());
    add_next_step(outcome, c.kind, r.text("root"), c.experiment_id);
    return outcome;
}

Outcome screen(const Request& r, Context& context) {
    return compare("screen", r, context);
}
Outcome confirm(const Request& r, Context& context) {
    return compare("confirm", r, context);
}
Outcome audit(const Request& r, Context& context) {
    return compare("audit", r, context);
}

Outcome init(const Request& r, Context& /*context*/) {
    const std::string spec = r.text("spec");
    const std::string name = r.text("name");
    const bool force = r.flag("force");
    if (!force && std::filesystem::exists(spec)) {
        throw Error(ErrorCode::already_exists,
                    fmt::format("{} exists; use --force to overwrite it", spec));
    }
    require_safe_name(name, "--name");
    const std::string text = eval::target_spec_template(name);
    if (force) {
        std::filesystem::remove(spec);
    }
    write_file_create_once(spec, text);
    return Outcome{
        fmt::format("wrote {}: fill it in, then cko target freeze --spec {} --root artifacts\n",
                    spec, spec),
        Json{{"spec", spec}, {"name", name}},
        0,
        {}};
}

Outcome freeze(const Request& r, Context& context) {
    eval::FreezeOptions f;
    f.spec = r.text("spec");
    f.root = r.text("root");
    f.cancel = context.cancel;
    context.report_progress("freezing: snapshots, identity, smoke…");
    const eval::FreezeOutcome out = eval::freeze_target(f);
    context.report_progress("");
    const Json& t = out.target;
    std::string text = fmt::format("froze Target {} ({}) at {}\n", t["id"].get<std::string>(),
                                   t["spec"]["name"].get<std::string>(), out.root.string());
    if (t.contains("original")) {
        text += fmt::format("  original {} ({} files), {} case(s), smoke {}\n",
                            t["original"]["digest"].get<std::string>().substr(0, 12),
                            t["original"]["file_count"].get<int>(), t["cases"].size(),
                            fmt::join(out.smoke_invocations, ", "));
    }
    if (!out.reclaimed.empty()) {
        text += fmt::format("  reclaimed what earlier freezes left (their process is gone): {}\n",
                            fmt::join(out.reclaimed, ", "));
    }
    return Outcome{text, t, 0, {}};
}

Outcome baseline(const Request& r, Context& context) {
    const store::Store store = store::Store::open(r.text("root"));
    const eval::Target target = eval::Target::open(store);
    eval::BaselineOptions b;
    b.calls_per_case = static_cast<int>(r.integer("calls_per_case"));
    b.aa_pairs = static_cast<int>(r.integer("aa_pairs"));
    b.seed = r.unsigned_integer("seed");
    b.cancel = context.cancel;
    b.progress = [&context](const Progress& step) { context.report_progress(step); };
    context.report_progress("baseline running…");
    const auto out = eval::run_baseline(
        target, b, [&context](const std::string& id) { context.announce_invocation(id); });
    context.report_progress("");
    return from_outcome("baseline", out, store, target.spec());
}

Outcome experiment_new(const Request& r, Context& /*context*/) {
    const store::Store store = store::Store::open(r.text("root"));
    const eval::Target target = eval::Target::open(store);
    eval::ExperimentSpec spec;
    spec.candidate = r.text("candidate");
    spec.control = r.flag("control");
    spec.hypothesis = r.text("hypothesis");
    spec.mechanism = r.text("mechanism");
    spec.base = r.text("base");
    spec.claim_layer = r.text("claim_layer");
    if (r.has("minimum_effect_pct")) {  // a value given is checked, never dropped
        spec.minimum_effect_pct = r.number("minimum_effect_pct");
    }
    spec.falsifier = r.text("falsifier");
    spec.no_falsifier_reason = r.text("no_falsifier_reason");
    spec.failure_closes = r.text("failure_closes");
    spec.screen_design = r.text("screen_design");
    spec.estimated_cost_s = r.number("estimated_cost_s");
    if (r.has("gain_bound_pct") && r.number("gain_bound_pct") >= 0) {
        spec.gain_bound_pct = r.number("gain_bound_pct");
    }
    spec.gain_bound_source = r.text("gain_bound_source");
    spec.extra_correctness_gates = r.list("correctness_gate");
    for (const auto& s : r.list("secondary")) {
        const auto colon = s.find(':');
        if (colon == std::string::npos) {
            throw Error(ErrorCode::invalid_argument,
                        fmt::format("--secondary \"{}\": write NAME:THRESHOLD_PCT", s),
                        Json{{"field", "secondary"}});
        }
        spec.secondary.push_back({s.substr(0, colon), std::stod(s.substr(colon + 1))});
    }
    spec.diagnostics_only = r.list("diagnostic_metric");
    spec.relationship = r.text("relationship");
    spec.lifecycle = r.text("lifecycle");
    spec.premises = r.list("premise");
    spec.tests_hypothesis = r.text("tests_hypothesis");
    const Json record = eval::create_experiment(target, spec);
    return Outcome{
        fmt::format("{}  {} file(s) changed: {}\n", record["id"].get<std::string>(),
                    record["changed_files"].size(), fmt::join(record["changed_files"], " ")),
        record,
        0,
        {}};
}

Outcome experiment_falsify(const Request& r, Context& context) {
    const store::Store store = store::Store::open(r.text("root"));
    const eval::Target target = eval::Target::open(store);
    eval::FalsifyOptions f;
    f.experiment_id = r.text("experiment");
    f.outcome = r.text("outcome");
    f.evidence = r.text("evidence");
    f.note = r.text("note");
    const eval::OperationOutcome o = eval::record_falsify(
        target, f, [&context](const std::string& inv) { context.announce_invocation(inv); });
    Outcome outcome{fmt::format("{}: {} recorded as {} (evidence {})\n", o.invocation_id,
                                f.experiment_id, f.outcome, o.outputs.at("evidence").dump()),
                    o.status.to_json(),
                    o.exit_code,
                    {}};
    outcome.failure = o.error;
    return outcome;
}

Outcome champion_show(const Request& r, Context& /*context*/) {
    const store::Store store = store::Store::open(r.text("root"));
    const eval::Champion c = eval::read_champion(store);
    return Outcome{fmt::format("champion: {} ({})\n", c.experiment_id.value_or("original"),
                               c.digest.substr(0, 12)),
                   c.to_json(),
                   0,
                   {}};
}

Outcome champion_select(const Request& r, Context& /*context*/) {
    const store::Store store = store::Store::open(r.text("root"));
    const eval::Target target = eval::Target::open(store);
    const std::string experiment = r.text("experiment");
    const Json sel =
        eval::select_champion(target, experiment, r.text("confirm"), r.list("accept_regression"));
    return Outcome{
        fmt::format("champion is now {} ({})\n", experiment, sel["id"].get<std::string>()),
        sel,
        0,
        {}};
}

Outcome champion_export(const Request& r, Context& /*context*/) {
    const store::Store store = store::Store::open(r.text("root"));
    const eval::Target target = eval::Target::open(store);
    const Json j = eval::export_champion(target, r.text("to"));
    return Outcome{
        fmt::format("wrote {} ({} file(s) of {}) to {}\n", j["champion"].get<std::string>(),
                    j["files"].get<std::size_t>(), j["digest"].get<std::string>().substr(0, 12),
                    j["destination"].get<std::string>()),
        j,
        0,
        {}};
}

Outcome champion_restore(const Request& r, Context& /*context*/) {
    const store::Store store = store::Store::open(r.text("root"));
    const eval::Target target = eval::Target::open(store);
    const Json sel = eval::restore_original(target, r.text("audit"), r.text("reason"));
    return Outcome{
        fmt::format("the original is the champion again ({})\n", sel["id"].get<std::string>()),
        sel,
        0,
        {}};
}

Outcome conclusion_lower(const Request& r, Context& /*context*/) {
    const store::Store store = store::Store::open(r.text("root"));
    const eval::Target target = eval::Target::open(store);
    const Json record =
        eval::lower_conclusion(target, {r.text("to"), r.text("reason"), r.text("audit")});
    return Outcome{fmt::format("conclusion {}\n",
                               eval::lowering_text(eval::lowering_history_entry(
                                   store::ConclusionRecord::from_json(record, "(written)")))),
                   record,
                   0,
                   {}};
}

Outcome history(const Request& r, Context& /*context*/) {
    const Json h = eval::target_history(store::Store::open(r.text("root")));
    return Outcome{eval::history_text(h), h, 0, {}};
}

Verb comparison_verb(const std::string& name, const std::string& summary, RunFn run) {
    RequestDef def{{root_param()}};
    if (name != "audit") {
        def.params.push_back(positional(string_param("experiment", "Experiment id (exp-…)")));
    }
    if (name == "confirm") {
        def.params.push_back(string_param(
            "retry_of",
            "An earlier confirm of this experiment that failed for infrastructure reasons"));
        def.params.push_back(string_param("reason", "The infrastructure failure a retry cites"));
    }
    if (name != "screen") {
        def.params.push_back(override_failure_param());
    }
    if (name != "audit") {
        def.params.push_back(override_falsified_param());
    }
    def.params.push_back(stage_limit_param());
    def.params.push_back(
        integer_param("seed", "Seed of the AB/BA order (default: derived from the ids, recorded)"));
    def.params.back().minimum = 0;
    def.params.push_back(detach_param());
    Verb v{{name}, summary, std::move(def), run};
    v.cancellable = true;
    v.detachable = true;
    return v;
}

// The experiment's own minimum effect: the request refuses what the Target's spec would (one rule,
// eval::minimum_effect_problem), so a negative or zero value is named, never ignored.
Param minimum_effect_param() {
    Param p =
        number_param("minimum_effect_pct", "Default: the Target's; a percentage in (0, 1000]");
    p.minimum = 0;
    p.exclusive_minimum = true;
    p.maximum = eval::kMaxMinimumEffectPct;
    return p;
}

}  // namespace

void add_loop_verbs(std::vector<Verb>& table, std::vector<Group>& groups) {
    groups.push_back(
        {{"target"}, "Freeze a Target (the one immutable reference for all later work)"});
    groups.push_back({{"experiment"}, "Freeze candidates before they are measured"});
    groups.push_back({{"champion"}, "The one mutable pointer: show, select, restore"});
    groups.push_back({{"conclusion"}, "Lower the Target's stated claim, for a recorded reason"});

    table.push_back(Verb{{"init"},
                         "Write a commented cko.toml Target spec to fill in",
                         RequestDef{{string_param("spec", "Where to write the spec", "cko.toml"),
                                     string_param("name", "Target name", "my-target"),
                                     flag_param("force", "Overwrite an existing file")}},
                         &init});
    Verb freeze_verb{
        {"target", "freeze"},
        "Validate the spec, snapshot, smoke, and create the artifact root",
        RequestDef{{string_param("spec", "The cko.toml to freeze", "cko.toml"), root_param()}},
        &freeze};
    freeze_verb.cancellable = true;
    table.push_back(std::move(freeze_verb));

    Param seed = integer_param("seed", "Seed of the A/A pair order");
    seed.minimum = 0;
    Verb baseline_verb{
        {"baseline"},
        "Measure the original per case and the A/A resolution",
        RequestDef{{root_param(),
                    integer_param("calls_per_case", "Single calls of the original per case", 3),
                    integer_param("aa_pairs", "A/A pairs (default: min(max_pairs, 2*min_pairs))"),
                    seed, detach_param()}},
        &baseline};
    baseline_verb.cancellable = true;
    baseline_verb.detachable = true;
    table.push_back(std::move(baseline_verb));

    table.push_back(Verb{
        {"experiment", "new"},
        "Freeze one candidate with its hypothesis and contract",
        RequestDef{{
            root_param(),
            string_param("candidate",
                         "The candidate's file or directory (laid out like the original)"),
            flag_param("control",
                       "An A/A control: the candidate is the base itself (the instrument check)"),
            string_param("hypothesis", "What you expect and why"),
            string_param("mechanism", "A short key for the mechanism, e.g. vectorized-loads"),
            string_param("base", "original or champion", "original"),
            string_param("claim_layer", "kernel, workload or serving (at most the Target's)"),
            minimum_effect_param(),
            string_param("falsifier", "The cheapest command that could prove the hypothesis wrong"),
            string_param("no_falsifier_reason", "Why no falsifier is needed"),
            string_param("failure_closes", "implementation, integration or mechanism"),
            string_param("screen_design", "conservative_bound or diagnostic_proxy",
                         "conservative_bound"),
            number_param("estimated_cost_s", "Expected seconds of measurement"),
            number_param("gain_bound_pct",
                         "Pre-registered upper bound of the end-to-end gain (with map:ID#ITEM "
                         "computed from the map; a typed value must agree)"),
            string_param("gain_bound_source",
                         "Where that bound comes from: map:ID#ITEM (an item of a stored map of "
                         "the experiment's base) or free text"),
            list_param("correctness_gate", "Extra correctness gate (repeatable)"),
            list_param("secondary", "Secondary metric NAME:THRESHOLD_PCT (repeatable)"),
            list_param("diagnostic_metric", "Diagnostics-only metric (repeatable)"),
            string_param("relationship",
                         "implementation_equivalence, artifact_fidelity or deployment_effect",
                         "implementation_equivalence"),
            string_param("lifecycle", "isolated_process or same_process", "isolated_process"),
            list_param("premise", "A premise the hypothesis rests on (repeatable)"),
            string_param("tests_hypothesis",
                         "The competing hypothesis (hyp-…, cko hypotheses add) this experiment "
                         "tests"),
        }},
        &experiment_new});

    table.push_back(Verb{
        {"experiment", "falsify"},
        "Record that an experiment's hypothesis was falsified or survived, citing evidence",
        RequestDef{{root_param(), positional(required(string_param("experiment", "Experiment id"))),
                    required(string_param("outcome", "falsified or survived")),
                    required(string_param("evidence",
                                          "A stored id (inv-…, profile-…) or a file (stored "
                                          "content-addressed)")),
                    string_param("note", "What the evidence showed")}},
        &experiment_falsify});

    table.push_back(comparison_verb(
        "screen", "Cheap paired look: can reject or pass to confirm, never select", &screen));
    table.push_back(
        comparison_verb("confirm", "The formal paired comparison (one per experiment)", &confirm));
    table.push_back(
        comparison_verb("audit", "Re-check the original against the current champion", &audit));

    table.push_back(Verb{{"champion", "show"},
                         "The current champion",
                         RequestDef{{root_param()}},
                         &champion_show,
                         true});
    table.push_back(Verb{
        {"champion", "select"},
        "Select an experiment whose confirm said improved",
        RequestDef{
            {root_param(), required(string_param("experiment", "Experiment id")),
             required(string_param("confirm", "The confirm invocation whose verdict is improved")),
             list_param("accept_regression",
                        "A regressed case of a `mixed` confirm that you accept (repeatable; each "
                        "must be named)")}},
        &champion_select});
    table.push_back(
        Verb{{"champion", "export"},
             "Write the champion's files into a new directory",
             RequestDef{{root_param(),
                         required(string_param("to", "A directory that does not exist yet"))}},
             &champion_export});
    table.push_back(Verb{{"history"},
                         "Experiments and every screen/confirm/audit in time order",
                         RequestDef{{root_param()}},
                         &history,
                         true});
    table.push_back(
        Verb{{"champion", "restore"},
             "Make the original the champion again",
             RequestDef{{root_param(), string_param("audit", "A failed audit invocation"),
                         string_param("reason", "Or an explicit reason")}},
             &champion_restore});
    table.push_back(Verb{
        {"conclusion", "lower"},
        "Record that the conclusion is lowered below the Target's claim layer (or lower again)",
        RequestDef{{root_param(),
                    required(string_param("to", "kernel or unconfirmed (below the claim now)")),
                    required(string_param("reason", "Why the conclusion is lowered")),
                    string_param("audit", "An audit whose verdict is not improved (optional)")}},
        &conclusion_lower});
}

// The line after a screen, confirm or audit that says what its evidence allows next, and the same
// as `next_step` in the document (eval::next_step: the CLI and MCP say the same).
void add_next_step(Outcome& outcome, eval::ComparisonKind kind, const std::string& root,
                   const std::string& experiment_id) {
    const Json& doc = outcome.document;
    const auto state =
        run::state_from_name(doc.value("state", "")).value_or(run::InvocationState::failed);
    const Json outputs =
        doc.contains("result") ? doc["result"].value("outputs", Json::object()) : Json::object();
    eval::ComparisonEnd end = eval::comparison_end_of(kind, state, outputs);
    end.root = root;
    end.experiment_id = experiment_id;
    end.invocation_id = doc.value("id", "");
    const eval::NextStep next = eval::next_step(end);
    outcome.document["next_step"] = next.to_json();
    outcome.text += fmt::format("next: {}\n", next.statement);
    if (!next.command.empty()) {
        outcome.text += fmt::format("  {}\n", next.command);
    }
}

}  // namespace cko::verbs
