// The evidence-loop verbs: init, target freeze, baseline, experiment new, screen/confirm/audit, champion.
#include "cko/cli/operation.hpp"
#include "cko/cli/verbs.hpp"
#include "cko/eval/champion.hpp"
#include "cko/eval/compare.hpp"
#include "cko/eval/experiment.hpp"
#include "cko/eval/judge.hpp"
#include "cko/eval/history.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <fmt/format.h>

#include <cmath>
#include <memory>

namespace cko::cli {
namespace {

struct Options {
    std::string root;
    std::string spec = "cko.toml";
    std::string name = "my-target";
    bool force = false;
    bool detach = false;
    int calls_per_case = 3;
    int aa_pairs = 0;
    std::uint64_t seed = 0;
    std::string experiment;
    std::string confirm;
    std::string audit;
    std::string retry_of;
    std::string reason;
    eval::ExperimentSpec exp;
    double min_effect = 0;
    double gain_bound = -1;
    std::vector<std::string> secondary;
    std::vector<std::string> accept_regression;
    std::string export_to;
};

std::string pct_interval(const Json& estimate) {
    const auto pct = [&](const char* key) {
        const Json& v = estimate.value(key, Json());
        return v.is_number() ? fmt::format("{:+.2f}%", v.get<double>()) : std::string("n/a");
    };
    return fmt::format("[{}, {}]", pct("ci_low_pct"), pct("ci_high_pct"));
}

std::string outcome_text(const std::string& verb, const eval::OperationOutcome& o, const eval::TargetSpec& spec) {
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
        text += fmt::format("  reference {} ({}) against candidate {} ({})\n", out["reference"].value("label", "?"),
                            out["reference"].value("digest", "").substr(0, 12), out["candidate"].value("label", "?"),
                            out["candidate"].value("digest", "").substr(0, 12));
    }
    if (out.contains("reason")) {
        text += fmt::format("  {}\n", out["reason"].get<std::string>());
    }
    const stats::Direction dir = spec.primary.direction == "lower" ? stats::Direction::lower : stats::Direction::higher;
    if (out.contains("per_case") && out["per_case"].is_array() && out["per_case"].size() > 1) {
        for (const auto& c : out["per_case"]) {
            const Json& e = c["estimate"];
            const double hl = e.value("hl", Json()).is_number() ? e["hl"].get<double>() : std::nan("");
            text += fmt::format("  case {:<12} {:<13} {}  {}{}\n", c.value("case_id", "?"), c.value("verdict", "?"),
                                eval::describe_effect(hl, dir, spec.primary.name), pct_interval(e),
                                c.value("regressed", false) ? "  REGRESSED" : "");
        }
    }
    if (out.contains("aa")) {
        text += fmt::format("  A/A check (original against itself): {} after {} pairs, {}\n",
                            out["aa"].value("verdict", "?"), out["aa"].value("pairs", 0), pct_interval(out["aa"]["estimate"]));
    }
    if (out.contains("resolution")) {
        text += fmt::format("  resolution: {}\n", out["resolution"].value("statement", ""));
    }
    if (out.contains("cases") && out["cases"].is_object()) {
        for (const auto& [id, c] : out["cases"].items()) {
            text += fmt::format("  case {:<12} median {:.6g} {}  MAD {:.3g} {}  CV {:.2f}%\n", id,
                                c["median"].get<double>(), c["unit"].get<std::string>(), c["mad"].get<double>(),
                                c["unit"].get<std::string>(), 100 * c["cv"].get<double>());
        }
    }
    for (const auto& note : out.value("notes", Json::array())) {
        text += fmt::format("  note: {}\n", note.get<std::string>());
    }
    return text;
}

CommandResult from_outcome(const std::string& verb, const eval::OperationOutcome& o, const store::Store& store,
                           const eval::TargetSpec& spec) {
    Json j = run::invocation_status(store, o.invocation_id).to_json();
    return CommandResult{outcome_text(verb, o, spec), j, o.exit_code};
}

eval::ComparisonKind kind_of(const std::string& verb) {
    return verb == "screen" ? eval::ComparisonKind::screen
           : verb == "confirm" ? eval::ComparisonKind::confirm
                               : eval::ComparisonKind::audit;
}

void add_comparison(CLI::App& app, const std::string& verb, const std::string& help) {
    auto o = std::make_shared<Options>();
    auto* cmd = add_verb(app, verb, help, [o, verb] {
        return run_maybe_detached(o->detach, [&](const Announce& announce) {
            install_cancel_handlers();
            const store::Store store = store::Store::open(o->root);
            const eval::Target target = eval::Target::open(store);
            eval::CompareOptions c;
            c.kind = kind_of(verb);
            c.experiment_id = o->experiment;
            c.retry_of = o->retry_of;
            c.retry_reason = o->reason;
            c.seed = o->seed;
            c.cancel = cancel_flag();
            c.progress = [](const std::string& line) { progress(json_output(), line); };
            if (c.kind != eval::ComparisonKind::audit && c.experiment_id.empty()) {
                throw Error(ErrorCode::invalid_argument, fmt::format("{} needs the experiment id (see cko ls)", verb),
                            Json{{"field", "experiment"}});
            }
            progress(json_output(), fmt::format("{} running…", verb));
            const auto out = eval::run_comparison(target, c, announce);
            progress(json_output(), "");
            return from_outcome(verb, out, store, target.spec());
        });
    });
    add_root_option(cmd, o->root);
    if (verb != "audit") {
        cmd->add_option("experiment", o->experiment, "Experiment id (exp-…)");
    }
    if (verb == "confirm") {
        cmd->add_option("--retry-of", o->retry_of, "An earlier confirm of this experiment that failed for infrastructure reasons");
        cmd->add_option("--reason", o->reason, "The infrastructure failure a retry cites");
    }
    cmd->add_option("--seed", o->seed, "Seed of the AB/BA order (default: derived from the ids, recorded)");
    cmd->add_flag("--detach", o->detach, "Run in the background; print the invocation id");
}

}  // namespace

void register_target(CLI::App& app) {
    auto o = std::make_shared<Options>();

    auto* init = add_verb(app, "init", "Write a commented cko.toml Target spec to fill in", [o] {
        if (!o->force && std::filesystem::exists(o->spec)) {
            throw Error(ErrorCode::already_exists, fmt::format("{} exists; use --force to overwrite it", o->spec));
        }
        require_safe_name(o->name, "--name");
        const std::string text = eval::target_spec_template(o->name);
        if (o->force) {
            std::filesystem::remove(o->spec);
        }
        write_file_create_once(o->spec, text);
        return CommandResult{fmt::format("wrote {}: fill it in, then cko target freeze --spec {} --root artifacts\n",
                                         o->spec, o->spec),
                             Json{{"spec", o->spec}, {"name", o->name}}, 0};
    });
    init->add_option("--spec", o->spec, "Where to write the spec")->capture_default_str();
    init->add_option("--name", o->name, "Target name")->capture_default_str();
    init->add_flag("--force", o->force, "Overwrite an existing file");

    auto* target = app.add_subcommand("target", "Freeze a Target (the one immutable reference for all later work)");
    target->require_subcommand(1);
    auto* freeze = add_verb(*target, "freeze", "Validate the spec, snapshot, smoke, and create the artifact root", [o] {
        install_cancel_handlers();
        eval::FreezeOptions f;
        f.spec = o->spec;
        f.root = o->root;
        f.cancel = cancel_flag();
        progress(json_output(), "freezing: snapshots, identity, smoke…");
        const eval::FreezeOutcome out = eval::freeze_target(f);
        progress(json_output(), "");
        const Json& t = out.target;
        std::string text = fmt::format("froze Target {} ({}) at {}\n", t["id"].get<std::string>(),
                                       t["spec"]["name"].get<std::string>(), out.root.string());
        if (t.contains("original")) {
            text += fmt::format("  original {} ({} files), {} case(s), smoke {}\n",
                                t["original"]["digest"].get<std::string>().substr(0, 12),
                                t["original"]["file_count"].get<int>(), t["cases"].size(),
                                fmt::join(out.smoke_invocations, ", "));
        }
        return CommandResult{text, t, 0};
    });
    freeze->add_option("--spec", o->spec, "The cko.toml to freeze")->capture_default_str();
    add_root_option(freeze, o->root);

    auto* baseline = add_verb(app, "baseline", "Measure the original per case and the A/A resolution", [o] {
        return run_maybe_detached(o->detach, [&](const Announce& announce) {
            install_cancel_handlers();
            const store::Store store = store::Store::open(o->root);
            const eval::Target target = eval::Target::open(store);
            eval::BaselineOptions b;
            b.calls_per_case = o->calls_per_case;
            b.aa_pairs = o->aa_pairs;
            b.seed = o->seed;
            b.cancel = cancel_flag();
            b.progress = [](const std::string& line) { progress(json_output(), line); };
            progress(json_output(), "baseline running…");
            const auto out = eval::run_baseline(target, b, announce);
            progress(json_output(), "");
            return from_outcome("baseline", out, store, target.spec());
        });
    });
    add_root_option(baseline, o->root);
    baseline->add_option("--calls-per-case", o->calls_per_case, "Single calls of the original per case")->capture_default_str();
    baseline->add_option("--aa-pairs", o->aa_pairs, "A/A pairs (default: min(max_pairs, 2*min_pairs))");
    baseline->add_option("--seed", o->seed, "Seed of the A/A pair order");
    baseline->add_flag("--detach", o->detach, "Run in the background; print the invocation id");

    auto* experiment = app.add_subcommand("experiment", "Freeze candidates before they are measured");
    experiment->require_subcommand(1);
    auto* exp_new = add_verb(*experiment, "new", "Freeze one candidate with its hypothesis and contract", [o] {
        const store::Store store = store::Store::open(o->root);
        const eval::Target target = eval::Target::open(store);
        eval::ExperimentSpec spec = o->exp;
        if (o->min_effect > 0) {
            spec.minimum_effect_pct = o->min_effect;
        }
        if (o->gain_bound >= 0) {
            spec.gain_bound_pct = o->gain_bound;
        }
        for (const auto& s : o->secondary) {
            const auto colon = s.find(':');
            if (colon == std::string::npos) {
                throw Error(ErrorCode::invalid_argument, fmt::format("--secondary \"{}\": write NAME:THRESHOLD_PCT", s),
                            Json{{"field", "secondary"}});
            }
            spec.secondary.push_back({s.substr(0, colon), std::stod(s.substr(colon + 1))});
        }
        const Json record = eval::create_experiment(target, spec);
        return CommandResult{fmt::format("{}  {} file(s) changed: {}\n", record["id"].get<std::string>(),
                                         record["changed_files"].size(), fmt::join(record["changed_files"], " ")),
                             record, 0};
    });
    add_root_option(exp_new, o->root);
    exp_new->add_option("--candidate", o->exp.candidate, "The candidate's file or directory (laid out like the original)");
    exp_new->add_flag("--control", o->exp.control, "An A/A control: the candidate is the base itself (the instrument check)");
    exp_new->add_option("--hypothesis", o->exp.hypothesis, "What you expect and why");
    exp_new->add_option("--mechanism", o->exp.mechanism, "A short key for the mechanism, e.g. vectorized-loads");
    exp_new->add_option("--base", o->exp.base, "original or champion")->capture_default_str();
    exp_new->add_option("--claim-layer", o->exp.claim_layer, "kernel, workload or serving (at most the Target's)");
    exp_new->add_option("--minimum-effect-pct", o->min_effect, "Default: the Target's");
    exp_new->add_option("--falsifier", o->exp.falsifier, "The cheapest command that could prove the hypothesis wrong");
    exp_new->add_option("--no-falsifier-reason", o->exp.no_falsifier_reason, "Why no falsifier is needed");
    exp_new->add_option("--failure-closes", o->exp.failure_closes, "implementation, integration or mechanism");
    exp_new->add_option("--screen-design", o->exp.screen_design, "conservative_bound or diagnostic_proxy")->capture_default_str();
    exp_new->add_option("--estimated-cost-s", o->exp.estimated_cost_s, "Expected seconds of measurement");
    exp_new->add_option("--gain-bound-pct", o->gain_bound, "Pre-registered upper bound of the end-to-end gain");
    exp_new->add_option("--gain-bound-source", o->exp.gain_bound_source, "Where that bound comes from");
    exp_new->add_option("--correctness-gate", o->exp.extra_correctness_gates, "Extra correctness gate (repeatable)");
    exp_new->add_option("--secondary", o->secondary, "Secondary metric NAME:THRESHOLD_PCT (repeatable)");
    exp_new->add_option("--diagnostic-metric", o->exp.diagnostics_only, "Diagnostics-only metric (repeatable)");
    exp_new->add_option("--relationship", o->exp.relationship, "implementation_equivalence, artifact_fidelity or deployment_effect")->capture_default_str();
    exp_new->add_option("--lifecycle", o->exp.lifecycle, "isolated_process or same_process")->capture_default_str();
    exp_new->add_option("--premise", o->exp.premises, "A premise the hypothesis rests on (repeatable)");

    add_comparison(app, "screen", "Cheap paired look: can reject or pass to confirm, never select");
    add_comparison(app, "confirm", "The formal paired comparison (one per experiment)");
    add_comparison(app, "audit", "Re-check the original against the current champion");

    auto* champion = app.add_subcommand("champion", "The one mutable pointer: show, select, restore");
    champion->require_subcommand(1);
    auto* show = add_verb(*champion, "show", "The current champion", [o] {
        const store::Store store = store::Store::open(o->root);
        const eval::Champion c = eval::read_champion(store);
        return CommandResult{fmt::format("champion: {} ({})\n", c.experiment_id.value_or("original"), c.digest.substr(0, 12)),
                             c.to_json(), 0};
    });
    add_root_option(show, o->root);
    auto* select = add_verb(*champion, "select", "Select an experiment whose confirm said improved", [o] {
        const store::Store store = store::Store::open(o->root);
        const eval::Target target = eval::Target::open(store);
        const Json sel = eval::select_champion(target, o->experiment, o->confirm, o->accept_regression);
        return CommandResult{fmt::format("champion is now {} ({})\n", o->experiment, sel["id"].get<std::string>()), sel, 0};
    });
    add_root_option(select, o->root);
    select->add_option("--experiment", o->experiment, "Experiment id")->required();
    select->add_option("--confirm", o->confirm, "The confirm invocation whose verdict is improved")->required();
    select->add_option("--accept-regression", o->accept_regression,
                       "A regressed case of a `mixed` confirm that you accept (repeatable; each must be named)");
    auto* exp = add_verb(*champion, "export", "Write the champion's files into a new directory", [o] {
        const store::Store store = store::Store::open(o->root);
        const eval::Target target = eval::Target::open(store);
        const Json j = eval::export_champion(target, o->export_to);
        return CommandResult{fmt::format("wrote {} ({} file(s) of {}) to {}\n", j["champion"].get<std::string>(),
                                         j["files"].get<std::size_t>(), j["digest"].get<std::string>().substr(0, 12),
                                         j["destination"].get<std::string>()),
                             j, 0};
    });
    add_root_option(exp, o->root);
    exp->add_option("--to", o->export_to, "A directory that does not exist yet")->required();

    auto* history = add_verb(app, "history", "Experiments and every screen/confirm/audit in time order", [o] {
        const Json h = eval::target_history(store::Store::open(o->root));
        return CommandResult{eval::history_text(h), h, 0};
    });
    add_root_option(history, o->root);

    auto* restore = add_verb(*champion, "restore", "Make the original the champion again", [o] {
        const store::Store store = store::Store::open(o->root);
        const eval::Target target = eval::Target::open(store);
        const Json sel = eval::restore_original(target, o->audit, o->reason);
        return CommandResult{fmt::format("the original is the champion again ({})\n", sel["id"].get<std::string>()), sel, 0};
    });
    add_root_option(restore, o->root);
    restore->add_option("--audit", o->audit, "A failed audit invocation");
    restore->add_option("--reason", o->reason, "Or an explicit reason");
}

}  // namespace cko::cli
