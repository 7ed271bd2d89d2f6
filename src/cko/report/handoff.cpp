// handoff.md skeleton: every fact from the report model with its evidence ids; the judgement left
// to a person.
#include "cko/report/handoff.hpp"

#include "cko/eval/hypothesis.hpp"
#include "cko/report/text.hpp"
#include "cko/stats/paired_estimate.hpp"
#include "cko/store/experiment_words.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cko::report {
namespace {

std::string ids_md(const Json& ids) {
    std::string out;
    for (const auto& id : ids) {
        out += fmt::format("{}`{}`", out.empty() ? "" : ", ", id.get<std::string>());
    }
    return out.empty() ? "–" : out;
}

// What a failure closes, in words; the word is the record's closed FailureCloses (a history
// document spells it), anything else is "nothing declared".
std::string closes_words(const std::string& closes) {
    const auto word = store::failure_closes_from_name(closes);
    if (!word) {
        return "nothing declared";
    }
    switch (*word) {
    case store::FailureCloses::implementation:
        return "this implementation only; the mechanism stays open";
    case store::FailureCloses::integration:
        return "this way of integrating it; the mechanism and other integrations stay open";
    case store::FailureCloses::mechanism:
        return "the mechanism itself, under this Target";
    }
    return "nothing declared";
}

std::string budget_line(const char* what, double spent, double budget) {
    if (budget <= 0) {
        return fmt::format("- {}: {} spent; no budget set\n", what, seconds_text(spent));
    }
    return fmt::format("- {}: {} of {} ({:.0f} %), {} left\n", what, seconds_text(spent),
                       seconds_text(budget), 100.0 * spent / budget,
                       seconds_text(std::max(0.0, budget - spent)));
}

std::string write_here(const std::string& title, const std::string& prompt) {
    return fmt::format("\n## {}: {}\n\n<!-- {} -->\n\n", kWriteHere, title, prompt);
}

// The champion's confirms and audits with each case and each constraint on each case.
std::string effect_range_md(const Json& comparisons, const std::string& current) {
    std::string s;
    s += "- **Effect range:**";
    bool any_range = false;
    for (const auto& c : comparisons) {
        const std::string type = c.value("type", "");
        const bool of_champion = (type == "confirm" && c.value("experiment_id", "") == current) ||
                                 (type == "audit" && c.value("candidate", "") == current);
        if (!of_champion || current == "original") {
            continue;
        }
        s += fmt::format("\n  - {} `{}`: {}, deciding interval {} over {} pairs", type,
                         c.value("id", ""), c.value("effect_words", ""), interval_text(c),
                         c.value("pairs", 0));
        for (const auto& pc : c.value("per_case", Json::array())) {
            s += fmt::format("\n    - case `{}`: {} {}", pc.value("case_id", ""),
                             pc.value("effect_words", ""), interval_text(pc));
        }
        // Each constraint on each case: the guard-rails hold case by case, not only pooled.
        const Json constraints_of = c.value("constraints", Json::object());
        for (const auto& [name, k] : constraints_of.items()) {
            for (const auto& pc : k.value("per_case", Json::array())) {
                s +=
                    fmt::format("\n    - constraint {} on case `{}`: {} {}", name,
                                pc.value("case_id", ""), pc.value("status", ""), interval_text(pc));
            }
        }
        any_range = true;
    }
    s += any_range ? "\n" : " none: no champion besides the original.\n";
    return s;
}

// The title, the note on where the facts come from, and the termination reason.
std::string opening_md(const Json& model) {
    const Json& t = model["target"];
    const Json& stop = model["stop"];
    std::string s = fmt::format(
        "# Handoff: {} (Target `{}`)\n\n> Skeleton written by `cko handoff` at {} from the "
        "evidence in `{}`. Every "
        "fact below comes from a record, named by its id in backticks. Sections marked {} are "
        "yours to write. cko "
        "never reads this file back.\n\n",
        t.value("name", ""), t.value("id", ""),
        utc_text(model.value("generated_unix_s", std::int64_t{0})), model.value("root", ""),
        kWriteHere);

    s += "## Termination reason\n\n";
    s += stop.is_null() ? fmt::format(
                              "{}: no termination reason is recorded. Record one with `cko stop "
                              "--root {} --reason "
                              "\"…\"` and regenerate this skeleton.\n",
                              kWriteHere, model.value("root", ""))
                        : fmt::format("{} (`{}`, {}; champion then: `{}`)\n",
                                      stop.value("reason", ""), stop.value("id", ""),
                                      utc_text(stop.value("stopped_unix_s", std::int64_t{0})),
                                      stop["champion"].value("experiment_id", Json()).is_string()
                                          ? stop["champion"]["experiment_id"].get<std::string>()
                                          : "original");
    return s;
}

// The outcome: claim layer, primary goal, what to keep, the champion's effects, where they apply.
std::string outcome_md(const Json& model) {
    const Json& t = model["target"];
    const Json& goal = model["findings"]["goal"];
    const Json& ch = model["champion"];
    const std::string current = ch.value("current", "original");
    std::string s;
    s += "\n## Outcome\n\n";
    s += fmt::format("- **Claim layer:** {} — no claim here reaches beyond it.\n",
                     goal.value("claim_layer", ""));
    if (goal.contains("lowered")) {
        s += fmt::format("- **Conclusion lowered:** the claim stated is now {}: {}\n",
                         goal.value("stated_claim", ""), goal["lowered"].value("text", ""));
    }
    if (goal.value("identity", Json::object()).value("lowers", false)) {
        s += identity_lowering_md(goal);
    }
    s += fmt::format(
        "- **Primary goal** ({} {}, minimum effect {:g} %): **{}** — {}\n",
        t["metric"].value("name", ""),
        stats::direction_from_name(t["metric"].value("direction", "")) == stats::Direction::higher
            ? "higher"
            : "lower",
        t.value("minimum_effect_pct", 0.0),
        goal.value("reached", false) ? "reached" : "not reached", goal.value("text", ""));
    s += current == "original"
             ? fmt::format("- **Keep:** the original (code `{}`): no experiment is the champion.\n",
                           ch.value("digest", "").substr(0, 16))
             : fmt::format(
                   "- **Keep:** champion `{}` (code `{}`, selection `{}`); `cko champion export` "
                   "writes its "
                   "files.\n",
                   current, ch.value("digest", "").substr(0, 16), ch.value("selection", ""));
    s += effect_range_md(model["comparisons"], current);
    const Json& id = t["identity"];
    std::string gpus;
    for (const auto& g : id.value("gpus", Json::array())) {
        gpus += fmt::format("{} `{}`; ", g.value("name", ""), g.value("uuid", ""));
    }
    std::string cases;
    for (const auto& c : t.value("cases", Json::array())) {
        cases += fmt::format("`{}` ", c.get<std::string>());
    }
    s += fmt::format(
        "- **Where it applies:** this environment identity only — host `{}` (machine `{}`), {} "
        "×{}, "
        "kernel {}{}; GPUs: {}; driver {}, CUDA {}; cases {}\n",
        id.value("hostname", ""), id.value("machine_id", ""), id.value("cpu_model", ""),
        value_text(id.value("logical_cpus", Json())), id.value("kernel_release", ""),
        id.value("in_container", Json()) == Json(true) ? ", in a container" : "",
        gpus.empty() ? "none" : gpus, value_text(id.value("driver_version", Json())),
        value_text(id.value("cuda_driver_version", Json())), cases);
    return s;
}

// One row per experiment, then each rejected direction with what its rejection closed.
std::string conclusions_md(const Json& model) {
    const Json& f = model["findings"];
    std::string s;
    s += "\n## Conclusion per experiment\n\n| experiment | mechanism | hypothesis | status | "
         "conclusion | evidence |\n"
         "|---|---|---|---|---|---|\n";
    for (const auto& x : model["experiments"]) {
        s += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", x.value("id", ""),
                         md_cell(x.value("mechanism", "")), md_cell(x.value("hypothesis", "")),
                         x.value("status", ""), md_cell(x.value("conclusion", "")),
                         ids_md(x.value("evidence", Json::array())));
    }
    if (model["experiments"].empty()) {
        s += "| – | – | – | – | no experiment frozen | – |\n";
    }

    s += "\n## Rejected directions and what each rejection closed\n\n";
    if (f["rejected"].empty()) {
        s += "None rejected.\n";
    }
    for (const auto& r : f["rejected"]) {
        const std::string closes =
            r.value("closes", Json("")).is_string() ? r["closes"].get<std::string>() : "";
        s += fmt::format(
            "- `{}` ({}): {}\n  - closed: **{}** — {}{}\n  - evidence: {}\n", r.value("id", ""),
            r.value("mechanism", ""), r.value("conclusion", ""),
            closes.empty() ? "nothing" : closes, closes_words(closes),
            closes != r.value("declared_closes", "")
                ? fmt::format(" (the contract declared {}; a wrong result measures no performance)",
                              r.value("declared_closes", ""))
                : "",
            ids_md(r.value("evidence", Json::array())));
    }
    return s;
}

// Wall and GPU time against the budgets, driver calls, cost by kind of invocation.
std::string cost_md(const Json& cost) {
    std::string s;
    const Json& budget = cost["budget"];
    s += "\n## Cost against the budget\n\n";
    s += budget_line("wall", cost.value("wall_s", 0.0), budget.value("wall_s", 0.0));
    s += budget_line("GPU", cost.value("gpu_s", 0.0), budget.value("gpu_s", 0.0));
    s += fmt::format("- driver calls: {:.0f}\n", cost.value("driver_calls", 0.0));
    // Bound first: a temporary inside a range-for initializer dies before the loop (C++20).
    const Json by_kind_of = cost.value("by_kind", Json::object());
    for (const auto& [kind, v] : by_kind_of.items()) {
        s += fmt::format("  - {} ×{:.0f}: {} wall, {} GPU\n", kind, v.value("count", 0.0),
                         seconds_text(v.value("wall_s", 0.0)), seconds_text(v.value("gpu_s", 0.0)));
    }
    if (budget.value("deadline", Json()).is_string()) {
        s += "- deadline: " + budget["deadline"].get<std::string>() + "\n";
    }
    return s;
}

// One hypothesis of a board as a Markdown list item.
std::string hypothesis_md(const Json& h) {
    const Json& s = h.value("settlement", Json());
    if (s.is_object()) {
        const Json& ev = s.value("evidence", Json::object());
        return fmt::format(
            "  - {} `{}`: {} — on {} `{}` (`{}`){}\n", h.value("state", ""), h.value("id", ""),
            h.value("explanation", ""), ev.value("kind", ""), ev.value("id", ""), s.value("id", ""),
            s.value("note", "").empty() ? std::string() : ": " + s.value("note", ""));
    }
    const Json& tested = h.value("tested_by", Json::array());
    return fmt::format("  - open `{}`: {} — **separated by:** {}{}\n", h.value("id", ""),
                       h.value("explanation", ""), h.value("separated_by", ""),
                       tested.empty() ? std::string() : "; tested by " + ids_md(tested));
}

}  // namespace

std::string hypotheses_md(const Json& board, bool open_only) {
    const Json& all = board.value("hypotheses", Json::array());
    if (all.empty()) {
        return "None recorded (`cko hypotheses add --root R --bottleneck … --explanation … "
               "--separated-by …`).\n";
    }
    std::string s = fmt::format("{} recorded, {} open (`cko hypotheses list`).\n\n", all.size(),
                                board.value("open", 0));
    for (const auto& g : board.value("bottlenecks", Json::array())) {
        const Json& open = g.value("open", Json::array());
        if (open_only && open.empty()) {
            continue;
        }
        s += fmt::format("- **Bottleneck** {}:\n", eval::bottleneck_text(g));
        std::string settled;
        for (const auto& h : all) {
            if (h.value("bottleneck", "") != g.value("bottleneck", "")) {
                continue;
            }
            if (!open_only || h.value("state", "") == "open") {
                s += hypothesis_md(h);
            } else {
                settled += fmt::format("{}`{}` {}", settled.empty() ? "" : ", ", h.value("id", ""),
                                       h.value("state", ""));
            }
        }
        if (!settled.empty()) {
            s += "  - settled rivals: " + settled + "\n";
        }
    }
    if (open_only && board.value("open", 0) == 0) {
        s += "None open: every hypothesis recorded was settled.\n";
    }
    return s;
}

std::string identity_lowering_md(const Json& goal) {
    return fmt::format(
        "- **Claim lowered by the environment identity:** the claim stated is now "
        "{}: {}\n",
        goal.value("stated_claim", ""), goal.value("identity", Json::object()).value("text", ""));
}

// What each experiment's next stage would cost: its estimated_cost_s and what its last
// comparison took to its verdict.
std::string next_stages_md(const Json& model) {
    std::string s;
    for (const auto& x : model["experiments"]) {
        const Json& n = x.value("next_stage", Json());
        if (!n.is_object()) {
            continue;
        }
        const Json& last = n.value("last_to_verdict", Json());
        s += fmt::format(
            "- next stage of `{}`: {}{}, estimated {}; {}\n", x.value("id", ""),
            n.value("stage", ""), n.value("authorized", true) ? "" : " (not authorized)",
            n.value("estimated_cost_s", Json()).is_number()
                ? seconds_text(n["estimated_cost_s"].get<double>())
                : std::string("nothing (no estimated_cost_s)"),
            last.is_object()
                ? fmt::format("its last comparison `{}` took {} pairs, {} GPU, {} wall to its "
                              "verdict",
                              last.value("invocation_id", ""), last.value("pairs", 0),
                              seconds_text(last.value("gpu_s", 0.0)),
                              seconds_text(last.value("wall_s", 0.0)))
                : std::string("not measured yet"));
    }
    return s;
}

std::string render_handoff(const Json& model) {
    const Json& f = model["findings"];
    std::string s = opening_md(model);
    s += outcome_md(model);
    s += conclusions_md(model);
    s += "\n## Open hypotheses by bottleneck\n\n";
    s += hypotheses_md(model.value("hypotheses", Json::object()), true);
    s += cost_md(model["cost"]);
    s += next_stages_md(model);
    s += "\n## Evidence gaps and open risks\n\n";
    for (const auto& g : f["gaps"]) {
        s += fmt::format("- {}{}\n", g.value("text", ""),
                         g["evidence"].empty() ? "" : " (" + ids_md(g["evidence"]) + ")");
    }

    s += write_here(
        "Conclusion",
        "What held, what did not, and how sure we are, in your words, citing the ids above.");
    s += write_here("What was learned",
                    "Which mechanisms are now understood, and what the rejections taught.");
    s += write_here("Next steps",
                    "Directions still open (see the rejections above for what they did not close), "
                    "and the cheapest evidence that would close each gap listed above.");
    return s;
}

}  // namespace cko::report
