// The store verbs: `cko ls`, `cko show ID`, `cko fsck` (of a root or a bundle), `cko bundle`, and
// invocation control `status`, `wait`, `cancel`.
#include "cko/eval/compare_context.hpp"
#include "cko/eval/decision.hpp"
#include "cko/eval/store_listing.hpp"
#include "cko/run/invocation.hpp"
#include "cko/store/bundle.hpp"
#include "cko/store/bundle_check.hpp"
#include "cko/store/fsck.hpp"
#include "cko/util/error.hpp"
#include "cko/util/text_table.hpp"
#include "cko/verbs/frame.hpp"
#include "cko/verbs/verb.hpp"

#include <fmt/format.h>

#include <memory>

namespace cko::verbs {
namespace {

// A running operation's last progress event: a comparison's pairs and running effect, or a
// baseline's calls.
std::string progress_text(const Json& progress) {
    const double elapsed = progress.value("elapsed_s", 0.0);
    const double at_most = progress.value("expected_s_at_most", 0.0);
    if (progress.contains("pairs_done")) {
        return fmt::format(
            "{} of at most {} pairs, effect so far {:+.2f}%, {:.0f} s elapsed, at most ~{:.0f} s "
            "in all",
            progress.value("pairs_done", 0), progress.value("pairs_at_most", 0),
            progress.value("effect_pct_so_far", 0.0), elapsed, at_most);
    }
    return fmt::format("{:.0f} of {:.0f} {}, {:.0f} s elapsed, at most ~{:.0f} s in all",
                       progress.value("done", 0.0), progress.value("total", 0.0),
                       progress.value("unit", "steps"), elapsed, at_most);
}

std::string status_text(const run::InvocationStatus& st, const Json& progress) {
    std::string text = fmt::format("{}  {}  {}", st.id, st.kind, run::state_name(st.state));
    if (!st.result.is_null()) {
        const Json& out = st.result.value("outputs", Json::object());
        if (out.contains("verdict")) {
            text += fmt::format("  verdict {}", out["verdict"].get<std::string>());
        }
        text += fmt::format("  {}", st.result.value("reason", ""));
    } else {
        text += fmt::format("  (owner pid {} {})", st.owner.pid, st.owner_alive ? "alive" : "gone");
        if (progress.is_object()) {
            text += "\n  " + progress_text(progress);
        }
    }
    return text + "\n";
}

Json status_json(const run::InvocationStatus& st, const Json& progress) {
    Json j = st.to_json();
    if (progress.is_object()) {
        j["progress"] = progress;
    }
    return j;
}

// The same exit code as the operation had when run directly: a completed comparison keeps its
// verdict's code (1 for a negative verdict), whichever path reads it.
int status_exit(const run::InvocationStatus& st) {
    switch (st.state) {
    case run::InvocationState::running:
        return 0;
    case run::InvocationState::succeeded:
        return st.result.value("outputs", Json::object()).value("exit_code", 0);
    case run::InvocationState::cancelled:
    case run::InvocationState::timed_out:
        return static_cast<int>(ExitClass::interrupted);
    default:
        return static_cast<int>(ExitClass::environment);
    }
}

// The error a terminal invocation recorded when it did not succeed.
std::optional<Error> recorded_failure(const run::InvocationStatus& st) {
    if (st.state == run::InvocationState::running || st.state == run::InvocationState::succeeded ||
        !st.result.is_object()) {
        return std::nullopt;
    }
    const Json& e = st.result.value("error", Json());
    if (!e.is_object()) {  // `lost`: the owner ended without writing a result
        return Error(ErrorCode::missing_result, st.result.value("reason", std::string("failed")));
    }
    return Error(error_code_from_name(e.value("code", "")).value_or(ErrorCode::internal),
                 e.value("message", ""), e.value("details", Json::object()));
}

std::string list_text(const eval::StoreListing& listing) {
    std::string text = fmt::format("artifact root {}\n", listing.root);
    if (listing.target) {
        text += fmt::format("target       {}\n", *listing.target);
    }
    text += fmt::format("experiments  {}\n", listing.experiments.size());
    for (const auto& e : listing.experiments) {
        text += fmt::format("  {}\n", e);
    }
    text += fmt::format("snapshots    {}\ninvocations  {} (oldest first)\n",
                        listing.snapshots.size(), listing.invocations.size());
    TextTable table({{24}, {12}, {10}, {}}, "  ");
    for (const eval::ListedInvocation& inv : listing.invocations) {
        const run::InvocationStatus* st = inv.status ? &*inv.status : nullptr;
        table.add({inv.id, st != nullptr ? st->kind : "",
                   st != nullptr ? std::string(run::state_name(st->state)) : "?",
                   inv.verdict.value_or("")});
    }
    return text + table.render();
}

// A stored profile or map in a few lines: what it is, what it measured, the question it answers.
std::string profile_show_text(const Json& j) {
    const std::string id = j.value("id", "");
    const Json& experiment = j.value("experiment_id", Json());
    const Json& collection = j.value("collection", Json());
    std::string text =
        fmt::format("{}  {}{}\n", id, j.value("kind", ""),
                    j.value("foreign", false) ? "  [foreign evidence: not citable]" : "");
    text +=
        experiment.is_string()
            ? fmt::format("  evidence for {} ({})\n", experiment.get<std::string>(),
                          j.value("subject", Json("")).is_string() ? j["subject"].get<std::string>()
                                                                   : std::string())
            : std::string("  bound to no experiment\n");
    if (collection.is_object()) {
        text += fmt::format("  collected by {} on case {} ({} {})\n",
                            collection.value("invocation_id", ""), collection.value("case_id", ""),
                            collection.value("tool", ""), collection.value("tool_version", ""));
    }
    if (j.value("question", Json()).is_string()) {
        text += fmt::format("  question: {}\n", j["question"].get<std::string>());
    }
    return text + "(cko show " + id + " --json for the whole record)\n";
}

// A few lines a person reads; --json gives the whole record.
std::string show_text(const Json& j) {
    const std::string id = j.value("id", "");
    if (id.starts_with("inv-")) {
        const Json& result = j.value("result", Json());
        std::string text =
            fmt::format("{}  {}  {}\n", id, j.value("kind", ""), j.value("state", ""));
        if (result.is_object()) {
            const Json& out = result.value("outputs", Json::object());
            if (out.contains("reference")) {
                text += fmt::format("  reference {}  candidate {}\n",
                                    out["reference"].value("label", ""),
                                    out.value("candidate", Json::object()).value("label", ""));
            }
            if (out.contains("verdict")) {
                text += fmt::format("  verdict {}{}\n", out["verdict"].get<std::string>(),
                                    out.contains("decision")
                                        ? ", decision " + out["decision"].get<std::string>()
                                        : "");
            }
            text += fmt::format("  {}\n", result.value("reason", ""));
            const Json& cost = result.value("cost", Json::object());
            text += fmt::format("  cost: {} s wall, {} GPU s, {} driver call(s)\n",
                                cost.value("wall_s", Json(0)).dump(),
                                cost.value("gpu_s", Json(0)).dump(),
                                cost.value("driver_calls", Json(0)).dump());
        }
        return text + "(cko show " + id + " --json for the whole record)\n";
    }
    if (id.starts_with("exp-")) {
        return fmt::format(
            "{}{}\n  hypothesis: {}\n  mechanism {}, base {}, minimum effect {}%\n  changed: {}\n"
            "(cko show {} --json for the whole record)\n",
            id, j.value("control", false) ? "  [A/A control]" : "", j.value("hypothesis", ""),
            j.value("mechanism", ""), j.at("base").value("kind", ""),
            j.value("minimum_effect_pct", 0.0),
            fmt::join(j.value("changed_files", std::vector<std::string>{}), " "), id);
    }
    if (id.starts_with("profile-")) {
        return profile_show_text(j);
    }
    return printable_json(j) + "\n";
}

// ls is a step that declares `lost` (run::detect_lost_invocation), unless the caller allows no
// writes (Context::read_only).
Outcome ls(const Request& r, Context& context) {
    const eval::StoreListing listing =
        eval::list_store(store::Store::open(r.text("root")), !context.read_only);
    return Outcome{list_text(listing), listing.to_json(), 0, {}};
}

Outcome show(const Request& r, Context& /*context*/) {
    const Json j = eval::show_record(store::Store::open(r.text("root")), r.text("id"));
    return Outcome{show_text(j), j, 0, {}};
}

Outcome fsck(const Request& r, Context& /*context*/) {
    const std::string bundle = r.text("bundle");
    const store::FsckReport report = bundle.empty()
                                         ? store::fsck_store(store::Store::open(r.text("root")))
                                         : store::fsck_bundle(bundle);
    return Outcome{report.to_text(), report.to_json(), report.damaged() ? 1 : 0, {}};
}

Outcome bundle(const Request& r, Context& /*context*/) {
    const store::Store s = store::Store::open(r.text("root"));
    const store::BundleWritten w =
        store::write_bundle(s, r.text("out"), {r.list("redact"), r.text("redact_reason")});
    const std::string out = w.out.string();
    const store::BundleManifest& m = w.manifest;
    return Outcome{
        fmt::format("bundle {}\n  {} ({} bytes; {} files, {} bytes before compression; {} "
                    "redacted, {} left out)\n  verify: cko fsck --bundle {}\n  render: cko "
                    "report --bundle {}\n",
                    m.id, out, w.bytes, m.files.size(), w.store_bytes, m.redacted.size(),
                    m.left_out.size(), out, out),
        Json{{"id", m.id},
             {"out", out},
             {"bytes", w.bytes},
             {"store_bytes", w.store_bytes},
             {"manifest", m.to_json()}},
        0,
        {}};
}

// A finished screen, confirm or audit reads as its direct run did: with its next step.
void add_next_step_of(Outcome& outcome, const run::InvocationStatus& st, const std::string& root) {
    const auto kind = eval::comparison_kind_from_name(st.kind);
    if (!kind || st.state == run::InvocationState::running) {
        return;
    }
    const Json& outputs = st.result.value("outputs", Json::object());
    add_next_step(outcome, *kind, root, outputs.value("experiment_id", ""));
}

Outcome status(const Request& r, Context& context) {
    const store::Store store = store::Store::open(r.text("root"));
    const std::string id = r.text("id");
    const auto st = context.read_only ? run::invocation_status(store, id)
                                      : run::detect_lost_invocation(store, id);
    const Json progress =
        st.state == run::InvocationState::running ? eval::comparison_progress(store, id) : Json();
    // What the session may still spend and what the next stage costs (decision.hpp).
    const Json budget = eval::budget_and_next_stage(store, id);
    Json document = status_json(st, progress);
    document["budget"] = budget.is_null() ? Json() : budget["budgets"];
    document["next_stage"] = budget.is_null() ? Json() : budget["next_stage"];
    Outcome outcome{status_text(st, progress) + eval::budget_and_next_stage_text(budget),
                    document,
                    status_exit(st),
                    {}};
    add_next_step_of(outcome, st, r.text("root"));
    return outcome;
}

Outcome wait(const Request& r, Context& context) {
    const double timeout = r.number("timeout");
    const std::string id = r.text("id");
    const auto limit = timeout > 0
                           ? std::chrono::milliseconds(static_cast<std::int64_t>(timeout * 1000))
                           : std::chrono::milliseconds(std::chrono::hours(24 * 365));
    const store::Store store = store::Store::open(r.text("root"));
    const auto st = run::wait_invocation(store, id, limit, context.cancel, !context.read_only);
    if (st.state == run::InvocationState::running && !st.owner_alive && context.read_only) {
        throw Error(ErrorCode::still_running,
                    fmt::format("{} has no result and its owner process is gone: it is lost, but "
                                "nothing is declared under --read-only (`cko status {}` declares "
                                "it)",
                                id, id),
                    status_json(st, Json()));
    }
    if (st.state == run::InvocationState::running) {
        // Not the operation's timeout: the operation goes on; exit 5 says so.
        throw Error(
            ErrorCode::still_running,
            fmt::format(
                "{} is still running after waiting {} s (the operation goes on; wait again)", id,
                timeout),
            status_json(st, eval::comparison_progress(store, id)));
    }
    // As the direct call would have ended: a failure is reported as one.
    Json document = st.to_json();
    eval::add_budget_and_next_stage(document, store, id);
    Outcome outcome{status_text(st, Json()), document, status_exit(st), {}};
    outcome.failure = recorded_failure(st);
    add_next_step_of(outcome, st, r.text("root"));
    return outcome;
}

Outcome cancel(const Request& r, Context& /*context*/) {
    const auto st = run::cancel_invocation(store::Store::open(r.text("root")), r.text("id"));
    return Outcome{status_text(st, Json()), st.to_json(), 0, {}};
}

}  // namespace

void add_store_verbs(std::vector<Verb>& table) {
    const auto id_param = [](const char* help) {
        return required(positional(string_param("id", help)));
    };
    table.push_back(
        Verb{{"ls"}, "List what an artifact root holds", RequestDef{{root_param()}}, &ls, true});
    table.push_back(Verb{{"show"},
                         "Show one record (target, exp-…, inv-…, snapshot digest)",
                         RequestDef{{root_param(), id_param("Record id")}},
                         &show,
                         true});
    table.push_back(Verb{
        {"fsck"},
        "Re-hash everything in an artifact root (or a bundle); exit 1 on damage",
        RequestDef{{root_param(),
                    string_param("bundle",
                                 "Check this bundle (cko bundle) instead of the root: every file "
                                 "against its manifest, every record against its ledger")}},
        &fsck,
        true});
    table.push_back(Verb{
        {"bundle"},
        "Write a self-contained case of the root: one .tar.zst a reviewer verifies and renders",
        RequestDef{{root_param(),
                    required(string_param("out",
                                          "The bundle to write, case.tar.zst (written once, "
                                          "outside the root)")),
                    list_param("redact",
                               "Replace this file (relative to the root) by a redaction marker: a "
                               "driver call's captures and outputs, profiler files, a snapshot's "
                               "files (repeatable)"),
                    string_param("redact_reason",
                                 "Why the --redact files are withheld (required with --redact; "
                                 "recorded in the manifest)")}},
        &bundle});
    table.push_back(Verb{{"status"},
                         "State of an invocation (declares `lost` if its owner died)",
                         RequestDef{{root_param(), id_param("Invocation id")}},
                         &status,
                         true});
    table.push_back(
        Verb{{"wait"},
             "Wait until an invocation ends (or --timeout seconds pass)",
             RequestDef{{root_param(), id_param("Invocation id"),
                         number_param("timeout", "Seconds to wait (default: no limit)")}},
             &wait,
             true});
    table.push_back(Verb{{"cancel"},
                         "Cancel a running invocation (its child processes are killed)",
                         RequestDef{{root_param(), id_param("Invocation id")}},
                         &cancel});
}

}  // namespace cko::verbs
