// Markdown of the report model: summary, Target, baseline, experiments, comparisons, champion,
// cost, findings.
#include "cko/report/markdown_printer.hpp"

#include "cko/report/handoff.hpp"
#include "cko/report/text.hpp"
#include "cko/stats/paired_estimate.hpp"
#include "cko/util/build_info.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace cko::report {
namespace {

std::string c(const Json& j, const char* key) {
    return md_cell(j.value(key, ""));
}

std::string when(const Json& j) {
    return utc_text(j.value("t_unix_s", std::int64_t{0}));
}

std::string ids_md(const Json& ids) {
    std::string out;
    for (const auto& id : ids) {
        out += fmt::format("{}`{}`", out.empty() ? "" : ", ", id.get<std::string>());
    }
    return out.empty() ? "–" : out;
}

}  // namespace

std::string interval_strip(const Json& e, double minimum_effect_pct, double lo, double hi) {
    constexpr int kCols = 40;
    if (!(hi > lo) || !e.value("ci_low_pct", Json()).is_number() ||
        !e.value("ci_high_pct", Json()).is_number()) {
        return "";
    }
    const auto col = [&](double d) {
        const double t = (std::clamp(d, lo, hi) - lo) / (hi - lo);
        return std::clamp(static_cast<int>(std::lround(t * (kCols - 1))), 0, kCols - 1);
    };
    std::vector<std::string_view> cells(kCols, "·");
    const double m = stats::pct_to_log(minimum_effect_pct);
    cells[static_cast<std::size_t>(col(-m))] = "|";
    cells[static_cast<std::size_t>(col(m))] = "|";
    cells[static_cast<std::size_t>(col(0))] = ":";
    const int a = col(stats::pct_to_log(e["ci_low_pct"].get<double>()));
    const int b = col(stats::pct_to_log(e["ci_high_pct"].get<double>()));
    for (int i = a; i <= b; ++i) {
        cells[static_cast<std::size_t>(i)] = "=";
    }
    cells[static_cast<std::size_t>(a)] = "[";
    cells[static_cast<std::size_t>(b)] = "]";
    if (e.value("effect_pct", Json()).is_number()) {
        cells[static_cast<std::size_t>(col(stats::pct_to_log(e["effect_pct"].get<double>())))] =
            "◆";
    }
    std::string out;
    for (const auto& s : cells) {
        out += s;
    }
    return out;
}

namespace {

// The title line and the summary list.
std::string summary_md(const Json& model) {
    const Json& t = model["target"];
    const Json& f = model["findings"];
    const Json& stop = model["stop"];
    std::string s =
        fmt::format("# cko report: {}\n\nTarget `{}` · generated {} from `{}` · cko {}\n\n",
                    t.value("name", ""), t.value("id", ""),
                    utc_text(model.value("generated_unix_s", std::int64_t{0})),
                    model.value("root", ""), build_version());
    s += fmt::format(
        "## Summary\n\n- **Champion:** `{}`\n- **Primary goal ({} layer):** {}\n- **Experiments:** "
        "{} · "
        "**comparisons:** {}\n- **Cost:** {} wall, {} GPU\n- **Termination:** {}\n\n",
        model["champion"].value("current", ""), f["goal"].value("claim_layer", ""),
        f["goal"].value("text", ""), model["experiments"].size(), model["comparisons"].size(),
        seconds_text(model["cost"].value("wall_s", 0.0)),
        seconds_text(model["cost"].value("gpu_s", 0.0)),
        stop.is_null() ? "not recorded (`cko stop --reason …`)" : stop.value("reason", ""));
    if (f["goal"].contains("lowered")) {
        s.insert(s.rfind("- **Experiments:**"),
                 fmt::format("- **Conclusion lowered:** the claim stated is now {}: {}\n",
                             f["goal"].value("stated_claim", ""),
                             f["goal"]["lowered"].value("text", "")));
    }
    if (f["goal"].value("identity", Json::object()).value("lowers", false)) {
        s.insert(s.rfind("- **Experiments:**"), identity_lowering_md(f["goal"]));
    }
    return s;
}

// The Target table: original, cases, metric, correctness, environment.
std::string target_md(const Json& t) {
    const Json& metric = t["metric"];
    const double m = t.value("minimum_effect_pct", 0.0);
    std::string s;
    std::string cases;
    for (const auto& id : t.value("cases", Json::array())) {
        cases += fmt::format("`{}` ", id.get<std::string>());
    }
    const Json& corr = t["correctness"];
    const Json& id = t["identity"];
    std::string gpus;
    for (const auto& g : id.value("gpus", Json::array())) {
        gpus += fmt::format("{} `{}` ", md_cell(g.value("name", "")), g.value("uuid", ""));
    }
    s += fmt::format(
        "## Target\n\n| | |\n|---|---|\n| original | {} (`{}`) |\n| cases | {} |\n| primary metric "
        "| {} ({}), "
        "{} is better |\n| minimum effect | {:g} % |\n| correctness | {} {} {} |\n| claim layer | "
        "{} |\n"
        "| environment | host {} ({} ×{}), kernel {}; GPUs: {}; driver {} |\n\n",
        c(t["original"], "source"), t["original"].value("digest", "").substr(0, 16), cases,
        c(metric, "name"), c(metric, "unit"), c(metric, "direction"), m, c(corr, "metric"),
        c(corr, "operator"), corr.value("threshold", Json()).dump(), c(t, "claim_layer"),
        c(id, "hostname"), c(id, "cpu_model"), value_text(id.value("logical_cpus", Json())),
        c(id, "kernel_release"), gpus.empty() ? "none" : gpus,
        value_text(id.value("driver_version", Json())));
    return s;
}

// The baseline with its resolution, and the experiments in time order.
std::string baseline_and_experiments_md(const Json& model) {
    std::string s;
    const Json& b = model["baseline"];
    s += "## Baseline and resolution\n\n";
    if (b.is_null()) {
        s += "No baseline: the measurement noise is unknown (`cko baseline`).\n\n";
    } else {
        s += fmt::format("Baseline `{}` ({}): A/A check **{}** {} over {} pairs.\n\n{}\n\n",
                         b.value("id", ""), when(b), b.value("verdict", ""), interval_text(b),
                         b.value("pairs", 0), b.value("resolution", ""));
    }
    s += "## Experiments in time order\n\n| frozen | experiment | hypothesis | mechanism | a "
         "failure closes | status | "
         "conclusion |\n|---|---|---|---|---|---|---|\n";
    for (const auto& x : model["experiments"]) {
        s += fmt::format("| {} | `{}` | {}{} | {} | {} | **{}** | {} |\n", when(x),
                         x.value("id", ""), x.value("control", false) ? "[A/A control] " : "",
                         c(x, "hypothesis"), c(x, "mechanism"), c(x, "failure_closes"),
                         c(x, "status"), c(x, "conclusion"));
    }
    return s;
}

// The strip's axis: ±1.6 m at least, wide enough for every comparison's and case's interval.
std::pair<double, double> strip_axis(const Json& comparisons, double m) {
    double lo = -1.6 * stats::pct_to_log(m);
    double hi = -lo;
    const auto take = [&](const Json& e) {
        for (const char* k : {"ci_low_pct", "ci_high_pct"}) {
            if (e.value(k, Json()).is_number()) {
                lo = std::min(lo, stats::pct_to_log(e[k].get<double>()));
                hi = std::max(hi, stats::pct_to_log(e[k].get<double>()));
            }
        }
    };
    for (const auto& e : comparisons) {
        take(e);
        for (const auto& pc : e.value("per_case", Json::array())) {
            take(pc);
        }
    }
    return {lo, hi};
}

// The interval strip as Markdown code, "–" where there is no interval.
std::string strip_md(const Json& e, double m, std::pair<double, double> axis) {
    const std::string strip = interval_strip(e, m, axis.first, axis.second);
    return strip.empty() ? "–" : "`" + strip + "`";
}

// What a comparison measured: its experiment's mechanism with the experiment's id beside.
std::string subject_md(const Json& e) {
    const std::string subject = e.value("subject", e.value("experiment_id", ""));
    return fmt::format("{}{} (`{}`)", e.value("type", "") == "audit" ? "champion " : "",
                       md_cell(e.value("name", subject)), subject);
}

// One comparison's row, then one row per case under it (a regressed case marked ✘). The reason
// of an invalid, cancelled or failed comparison goes to `notes`, cited as [k].
std::string comparison_rows_md(const Json& e, double m, std::pair<double, double> axis,
                               std::vector<std::string>& notes) {
    const std::string type = e.value("type", "");
    std::string verdict = md_cell(verdict_or_state(e));
    std::string mark;
    const std::string state = e.value("state", "");
    if ((verdict == "invalid" || (state != "succeeded" && state != "running")) &&
        !e.value("reason", "").empty()) {
        notes.push_back(fmt::format("{} `{}` ({}) {}: {}", type, e.value("id", ""),
                                    md_cell(e.value("name", "")), verdict,
                                    md_cell(e.value("reason", ""))));
        mark = fmt::format(" [{}]", notes.size());
    }
    if (!e.value("regressed_cases", Json::array()).empty()) {
        mark += " — regressed on " + md_cell(list_text(e["regressed_cases"]));
    }
    std::string s = fmt::format("| {} | {} `{}` | {} | **{}**{}{} | {} | {} | {} | {} | {} |\n",
                                when(e), type, e.value("id", ""), subject_md(e), verdict,
                                type == "screen" ? " / " + md_cell(e.value("decision", "")) : "",
                                mark, c(e, "effect_words"), interval_text(e), strip_md(e, m, axis),
                                e.value("pairs", 0), seconds_text(e.value("wall_s", 0.0)));
    for (const auto& pc : e.value("per_case", Json::array())) {
        const bool regressed = pc.value("regressed", false);
        s += fmt::format("| | ↳ case `{}` | | {} | {} | {} | {} | | |\n", pc.value("case_id", ""),
                         regressed ? "✘ **regressed case**" : md_cell(pc.value("verdict", "")),
                         c(pc, "effect_words"), interval_text(pc), strip_md(pc, m, axis));
    }
    return s;
}

// The comparisons table: each comparison's row with its interval strip and its cases' rows; the
// reasons of those that decided nothing as numbered notes under the table. `m`: the minimum
// effect in %.
std::string comparisons_table_md(const Json& model, double m) {
    const auto axis = strip_axis(model["comparisons"], m);
    std::string s = fmt::format(
        "\n## Comparisons\n\nThe picture: `[==◆==]` is the deciding interval and its estimate, `|` "
        "marks "
        "±{:g} % (the minimum effect), `:` no difference; right = candidate better. Each case's "
        "row (↳) follows its comparison's.\n\n"
        "| started | what | subject | verdict | effect | deciding interval | picture | pairs | "
        "wall |\n"
        "|---|---|---|---|---|---|---|---|---|\n",
        m);
    std::vector<std::string> notes;
    for (const auto& e : model["comparisons"]) {
        s += comparison_rows_md(e, m, axis, notes);
    }
    if (!notes.empty()) {
        s += "\nNotes:\n\n";
        for (std::size_t k = 0; k < notes.size(); ++k) {
            s += fmt::format("[{}] {}\n", k + 1, notes[k]);
            s += k + 1 < notes.size() ? "\n" : "";
        }
    }
    return s;
}

// Each comparison's reason, per-case and constraint detail and notes.
std::string comparison_details_md(const Json& model) {
    std::string s;
    for (const auto& e : model["comparisons"]) {
        if (e.value("per_case", Json::array()).empty() && e.value("reason", "").empty()) {
            continue;
        }
        s += fmt::format("\n**{} `{}`** of {}: {}\n", e.value("type", ""), e.value("id", ""),
                         subject_md(e), e.value("reason", ""));
        for (const auto& pc : e.value("per_case", Json::array())) {
            s += fmt::format("- case `{}`: {}{}, {} {}\n", pc.value("case_id", ""),
                             pc.value("verdict", ""),
                             pc.value("regressed", false) ? " (regressed)" : "",
                             pc.value("effect_words", ""), interval_text(pc));
        }
        // Bound first: a temporary inside a range-for initializer dies before the loop (C++20).
        const Json constraints_of = e.value("constraints", Json::object());
        for (const auto& [name, k] : constraints_of.items()) {
            s += fmt::format("- constraint {}: {} (tolerance {:g} %) {}\n", name,
                             k.value("status", ""), k.value("max_regression_pct", 0.0),
                             interval_text(k));
            for (const auto& pc : k.value("per_case", Json::array())) {
                s += fmt::format("  - case `{}`: {} {}\n", pc.value("case_id", ""),
                                 pc.value("status", ""), interval_text(pc));
            }
        }
        for (const auto& n : e.value("notes", Json::array())) {
            s += "- note: " + n.get<std::string>() + "\n";
        }
    }
    return s;
}

// The champion's lineage and the audits.
std::string champion_and_audits_md(const Json& model) {
    std::string s;
    const Json& ch = model["champion"];
    s += fmt::format(
        "\n## Champion and lineage\n\nChampion now: **`{}`** (code `{}`).\n\n1. original\n",
        ch.value("current", ""), ch.value("digest", "").substr(0, 16));
    for (const auto& l : ch["lineage"]) {
        s += l.value("type", "") == "select"
                 ? fmt::format("1. → `{}` selected {} on confirm `{}` (selection `{}`)\n",
                               l.value("experiment_id", ""), when(l), l.value("confirm", ""),
                               l.value("id", ""))
                 : fmt::format("1. → original restored {} (selection `{}`)\n", when(l),
                               l.value("id", ""));
    }
    s += "\n## Audit\n\n";
    if (model["audits"].empty()) {
        s += "No audit.\n";
    }
    for (const auto& a : model["audits"]) {
        s += fmt::format("- `{}` of `{}`: **{}**, {} {}\n", a.value("id", ""),
                         a.value("candidate", ""), verdict_or_state(a), a.value("effect_words", ""),
                         interval_text(a));
    }
    return s;
}

// The cost against the budgets, and the stored profiles.
std::string cost_and_profiles_md(const Json& model) {
    std::string s;
    const Json& cost = model["cost"];
    const Json& budget = cost["budget"];
    s += fmt::format(
        "\n## Cost\n\n{} wall, {} GPU, {:.0f} driver calls; GPU budget {}, wall budget {}.\n\n",
        seconds_text(cost.value("wall_s", 0.0)), seconds_text(cost.value("gpu_s", 0.0)),
        cost.value("driver_calls", 0.0),
        budget.value("gpu_s", 0.0) > 0 ? seconds_text(budget.value("gpu_s", 0.0)) : "none",
        budget.value("wall_s", 0.0) > 0 ? seconds_text(budget.value("wall_s", 0.0)) : "none");
    s += "## Profiles\n\n";
    if (model["profiles"].empty()) {
        s += "profiles: none stored\n";
    }
    for (const auto& p : model["profiles"]) {
        std::string files;
        for (const auto& src : p.value("sources", Json::array())) {
            files +=
                fmt::format("{}`{}` (sha256 `{}`)", files.empty() ? "" : ", ",
                            src.value("path", ""), src.value("report_sha256", "").substr(0, 16));
        }
        const Json collection = p.value("collection", Json());
        s +=
            fmt::format("- `{}`: {} of {}{}{}{}{}\n", p.value("id", ""), p.value("kind", ""), files,
                        p.value("experiment_id", Json()).is_string()
                            ? fmt::format(", {} for `{}` ({})",
                                          p.value("foreign", false) ? "offered" : "evidence",
                                          p["experiment_id"].get<std::string>(),
                                          p.value("subject", Json("")).get<std::string>())
                            : "",
                        collection.is_object() ? fmt::format(", collected by `{}` on case `{}`",
                                                             collection.value("invocation_id", ""),
                                                             collection.value("case_id", ""))
                                               : "",
                        p.value("foreign", false) ? "; foreign evidence: no claim may cite it" : "",
                        p.value("question", Json()).is_string()
                            ? "; answers: " + p["question"].get<std::string>()
                            : std::string());
    }
    return s;
}

// Rejected directions, evidence gaps, and the termination reason.
std::string findings_md(const Json& f, const Json& stop) {
    std::string s;
    s += "\n## Rejected directions, evidence gaps and open risks\n\n";
    for (const auto& r : f["rejected"]) {
        s += fmt::format(
            "- rejected `{}` ({}): {}; closes **{}**. Evidence: {}\n", r.value("id", ""),
            r.value("mechanism", ""), r.value("conclusion", ""),
            r.value("closes", Json("")).is_string() ? r["closes"].get<std::string>() : "",
            ids_md(r["evidence"]));
    }
    for (const auto& g : f["gaps"]) {
        s += fmt::format("- ⚠ {}{}\n", g.value("text", ""),
                         g["evidence"].empty() ? "" : " (" + ids_md(g["evidence"]) + ")");
    }
    s += fmt::format("\n## Termination\n\n{}\n",
                     stop.is_null()
                         ? "No termination reason recorded (`cko stop --root R --reason TEXT`)."
                         : fmt::format("Stopped {} (`{}`): {}",
                                       utc_text(stop.value("stopped_unix_s", std::int64_t{0})),
                                       stop.value("id", ""), stop.value("reason", "")));
    return s;
}

}  // namespace

std::string render_markdown(const Json& model) {
    const Json& t = model["target"];
    std::string s = summary_md(model);
    s += target_md(t);
    s += baseline_and_experiments_md(model);
    s += comparisons_table_md(model, t.value("minimum_effect_pct", 0.0));
    s += comparison_details_md(model);
    s += champion_and_audits_md(model);
    s += cost_and_profiles_md(model);
    s += "\n## Competing hypotheses\n\n" +
         hypotheses_md(model.value("hypotheses", Json::object()), false);
    s += findings_md(model["findings"], model["stop"]);
    return s;
}

}  // namespace cko::report
