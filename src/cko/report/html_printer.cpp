// The HTML page of the report model: sections, tables and the inline charts; all text escaped on
// the way in.
#include "cko/report/html_printer.hpp"

#include "cko/eval/hypothesis.hpp"
#include "cko/report/effect_chart.hpp"
#include "cko/report/text.hpp"
#include "cko/util/build_info.hpp"

#include <fmt/format.h>

namespace cko::report {
namespace {

// Readable at laptop width (one column, tables scroll sideways), printable in grey.
constexpr const char* kStyle = R"css(
:root{color-scheme:light}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111;background:#fff;margin:0}
main{max-width:1100px;margin:0 auto;padding:16px 24px 48px}
h1{font-size:1.6em;margin:.4em 0 .1em}h2{font-size:1.25em;border-bottom:2px solid #111;padding-bottom:2px;margin-top:1.8em}
h3{font-size:1.05em;margin:1.2em 0 .3em}
.meta,.muted{color:#444;font-size:.9em}
code,.id{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88em;word-break:break-all}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(230px,1fr));gap:10px}
.card{border:1px solid #111;border-radius:6px;padding:8px 12px}
.card b{display:block;font-size:.8em;text-transform:uppercase;letter-spacing:.04em;color:#333}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.9em;margin:.4em 0}
th,td{border:1px solid #999;padding:3px 6px;text-align:left;vertical-align:top}
th{background:#eee}
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:.3em 0}
dl.kv dt{font-weight:600}dl.kv dd{margin:0}
.verdict{display:inline-block;border:1.5px solid #111;border-radius:4px;padding:0 5px;font-weight:600;white-space:nowrap}
.v-improved{border-width:3px}.v-regressed{border-style:double;border-width:4px}
.v-invalid,.v-mixed{border-style:dashed}.v-inconclusive,.v-equivalent,.v-below_minimum{border-style:dotted}
article.comparison{border-left:4px solid #111;padding:2px 0 6px 12px;margin:16px 0}
svg{display:block;max-width:100%;height:auto;font-size:12px}
svg text{fill:#111}
.gap{margin:.2em 0}
.todo{border:2px dashed #111;padding:6px 10px}
@media print{main{max-width:none}article.comparison{break-inside:avoid}}
)css";

std::string e(const std::string& s) {
    return html_escape(s);
}
std::string e(const Json& j, const char* key) {
    return html_escape(j.value(key, ""));
}

std::string ids_html(const Json& ids) {
    std::string out;
    for (const auto& id : ids) {
        if (!out.empty()) {
            out += ", ";
        }
        out += fmt::format("<code>{}</code>", html_escape(id.get<std::string>()));
    }
    return out.empty() ? "–" : out;
}

std::string target_html(const Json& t) {
    const Json& metric = t["metric"];
    const Json& corr = t["correctness"];
    const Json& stat = t["statistics"];
    const Json& id = t["identity"];
    std::string gpus;
    for (const auto& g : id.value("gpus", Json::array())) {
        gpus += fmt::format("{} <code>{}</code>; ", e(g, "name"), e(g, "uuid"));
    }
    std::string constraints;
    for (const auto& c : t.value("constraints", Json::array())) {
        constraints += e(c.is_object() ? c.value("name", c.dump()) : c.dump()) + " ";
    }
    std::string cases;
    for (const auto& c : t.value("cases", Json::array())) {
        cases += fmt::format("<code>{}</code> ", e(c.get<std::string>()));
    }
    return fmt::format(
        "<section id=\"target\"><h2>Target</h2><dl class=\"kv\">"
        "<dt>id</dt><dd><code>{}</code>, frozen {}</dd>"
        "<dt>original</dt><dd>{} ({} files, <code>{}</code>)</dd>"
        "<dt>cases</dt><dd>{}</dd>"
        "<dt>primary metric</dt><dd>{} ({}), {} is better, aggregated by {}</dd>"
        "<dt>minimum effect</dt><dd>{:g} %</dd>"
        "<dt>correctness</dt><dd>{} {} {}</dd>"
        "<dt>constraints</dt><dd>{}</dd>"
        "<dt>statistics</dt><dd>confidence {:g}, {}–{} pairs, sequential {}</dd>"
        "<dt>claim layer</dt><dd>{}</dd>"
        "<dt>environment</dt><dd>host {} (machine <code>{}</code>), {} ×{}, kernel {}{}; GPUs: {}; "
        "driver {}, CUDA {}</dd>"
        "</dl></section>",
        e(t, "id"), e(utc_text(t.value("created_unix_s", std::int64_t{0}))),
        e(t["original"], "source"), t["original"].value("file_count", 0),
        e(t["original"], "digest").substr(0, 16), cases, e(metric, "name"), e(metric, "unit"),
        e(metric, "direction"), e(metric, "aggregation"), t.value("minimum_effect_pct", 0.0),
        e(corr, "metric"), e(corr, "operator"), e(corr.value("threshold", Json()).dump()),
        constraints.empty() ? "none" : constraints, stat.value("confidence", 0.0),
        stat.value("min_pairs", 0), stat.value("max_pairs", 0),
        stat.value("sequential", false) ? "yes" : "no", e(t, "claim_layer"), e(id, "hostname"),
        e(id, "machine_id"), e(id, "cpu_model"), e(value_text(id.value("logical_cpus", Json()))),
        e(id, "kernel_release"),
        id.value("in_container", Json()) == Json(true) ? ", in a container" : "",
        gpus.empty() ? "none" : gpus, e(value_text(id.value("driver_version", Json()))),
        e(value_text(id.value("cuda_driver_version", Json()))));
}

std::string baseline_html(const Json& model) {
    const Json& b = model["baseline"];
    std::string s = "<section id=\"baseline\"><h2>Baseline and resolution</h2>";
    if (b.is_null()) {
        return s +
               "<p class=\"todo\">No baseline: the measurement noise is unknown (cko "
               "baseline).</p></section>";
    }
    s += fmt::format(
        "<p>Baseline <code>{}</code> ({}). A/A check: {} {} over {} pairs.</p><p>{}</p>",
        e(b, "id"), e(utc_text(b.value("t_unix_s", std::int64_t{0}))),
        verdict_label(b.value("verdict", "")), e(interval_text(b)), b.value("pairs", 0),
        e(b, "resolution"));
    s += aa_chart(b, model["target"].value("minimum_effect_pct", 0.0));
    s += "<div "
         "class=\"scroll\"><table><tr><th>case</th><th>median</th><th>CV</th><th>samples</th></tr>";
    // Bound first: a temporary inside a range-for initializer dies before the loop (C++20).
    const Json cases_of = b.value("cases", Json::object());
    for (const auto& [id, c] : cases_of.items()) {
        s += fmt::format(
            "<tr><td><code>{}</code></td><td>{:.6g} {}</td><td>{:.3g}</td><td>{}</td></tr>", e(id),
            c.value("median", 0.0), e(c, "unit"), c.value("cv", 0.0), c.value("samples", 0));
    }
    return s + "</table></div></section>";
}

std::string experiments_html(const Json& model) {
    std::string s =
        "<section id=\"experiments\"><h2>Experiments in time order</h2><div "
        "class=\"scroll\"><table>"
        "<tr><th>frozen</th><th>experiment</th><th>hypothesis</th><th>mechanism</th><th>base</th>"
        "<th>a failure closes</th><th>status</th><th>conclusion</th></tr>";
    for (const auto& x : model["experiments"]) {
        s += fmt::format(
            "<tr><td>{}</td><td><code>{}</code></td><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td>"
            "<td><b>{}</b></td><td>{}</td></tr>",
            e(utc_text(x.value("t_unix_s", std::int64_t{0}))), e(x, "id"),
            x.value("control", false) ? "[A/A control] " : "", e(x, "hypothesis"),
            e(x, "mechanism"),
            e(x.value("base_experiment", Json()).is_string()
                  ? x["base_experiment"].get<std::string>()
                  : x.value("base", "")),
            e(x, "failure_closes"), e(x, "status"), e(x, "conclusion"));
    }
    if (model["experiments"].empty()) {
        s += "<tr><td colspan=\"8\">no experiment frozen yet</td></tr>";
    }
    return s + "</table></div></section>";
}

std::string comparison_html(const Json& c, const Json& model) {
    const Json& t = model["target"];
    const std::string type = c.value("type", "");
    const std::string subject = c.value("subject", c.value("experiment_id", ""));
    std::string s = fmt::format(
        "<article class=\"comparison\" id=\"{}\"><h3>{} of {}{} (<code>{}</code>) against {} — "
        "{}</h3>",
        e(c, "id"), e(type), type == "audit" ? "the champion " : "", e(c.value("name", subject)),
        e(subject), e(c, "reference"), verdict_label(verdict_or_state(c)));
    std::string decided = "";
    const Json deciding = c.value("deciding", Json());
    if (deciding.is_object()) {
        decided =
            deciding.value("look", 0) > 0
                ? fmt::format(" at look {} of {} (interval level {:.1f} %)",
                              deciding.value("look", 0), deciding.value("looks_planned", 0),
                              100 * deciding.value("level", 0.0))
                : fmt::format(" (interval level {:.1f} %)", 100 * deciding.value("level", 0.0));
    }
    s += fmt::format(
        "<p><b>{}</b>, deciding interval {}{} against the minimum effect ±{:g} %{}.</p>",
        e(c, "effect_words"), e(interval_text(c)), e(decided),
        c.value("minimum_effect_pct", Json()).is_number() ? c["minimum_effect_pct"].get<double>()
                                                          : t.value("minimum_effect_pct", 0.0),
        type == "screen" ? "; screen decision: " + e(c, "decision") : "");
    s += comparison_chart(c, t["metric"], t.value("minimum_effect_pct", 0.0));
    s += fmt::format(
        "<p class=\"muted\"><code>{}</code>: {} · {} pairs · {} driver calls · {} wall · {} GPU · "
        "{}</p>",
        e(c, "id"), e(c, "state"), c.value("pairs", 0), e(c.value("driver_calls", Json()).dump()),
        e(seconds_text(c.value("wall_s", 0.0))), e(seconds_text(c.value("gpu_s", 0.0))),
        e(c, "reason"));
    if (!c.value("per_case", Json::array()).empty()) {
        s += "<div "
             "class=\"scroll\"><table><tr><th>case</th><th>verdict</th><th>effect</"
             "th><th>interval</th></tr>";
        for (const auto& pc : c["per_case"]) {
            s += fmt::format("<tr><td><code>{}</code></td><td>{}{}</td><td>{}</td><td>{}</td></tr>",
                             e(pc, "case_id"), verdict_label(pc.value("verdict", "")),
                             pc.value("regressed", false) ? " (regressed)" : "",
                             e(pc, "effect_words"), e(interval_text(pc)));
        }
        s += "</table></div>";
    }
    if (!c.value("constraints", Json::object()).empty()) {
        s += "<div "
             "class=\"scroll\"><table><tr><th>constraint</th><th>status</th><th>tolerance</"
             "th><th>interval</th></tr>";
        for (const auto& [name, k] : c["constraints"].items()) {
            s += fmt::format("<tr><td>{}</td><td>{}</td><td>{:g} %</td><td>{}</td></tr>", e(name),
                             e(k, "status"), k.value("max_regression_pct", 0.0),
                             e(interval_text(k)));
            for (const auto& pc : k.value("per_case", Json::array())) {
                s += fmt::format(
                    "<tr><td>{} on <code>{}</code></td><td>{}</td><td>{:g} %</td><td>{}</td></tr>",
                    e(name), e(pc, "case_id"), e(pc, "status"), k.value("max_regression_pct", 0.0),
                    e(interval_text(pc)));
            }
        }
        s += "</table></div>";
    }
    for (const auto& n : c.value("notes", Json::array())) {
        s += "<p class=\"gap\">⚠ " + e(n.get<std::string>()) + "</p>";
    }
    return s + "</article>";
}

std::string champion_html(const Json& model) {
    const Json& ch = model["champion"];
    std::string s = fmt::format(
        "<section id=\"champion\"><h2>Champion and lineage</h2><p>Champion now: "
        "<strong id=\"champion-name\">{}</strong> (code <code>{}</code>).</p><ol class=\"lineage\">"
        "<li>original (frozen with the Target)</li>",
        e(ch, "current"), e(ch, "digest").substr(0, 16));
    for (const auto& l : ch["lineage"]) {
        if (l.value("type", "") == "select") {
            s += fmt::format(
                "<li>→ <code>{}</code> selected {} on confirm <code>{}</code> (selection "
                "<code>{}</code>){}</li>",
                e(l, "experiment_id"), e(utc_text(l.value("t_unix_s", std::int64_t{0}))),
                e(l, "confirm"), e(l, "id"),
                l.value("accepted_regressions", Json::array()).empty()
                    ? ""
                    : ", accepting regressions on " + e(list_text(l["accepted_regressions"])));
        } else {
            s += fmt::format("<li>→ original restored {} (selection <code>{}</code>): {}</li>",
                             e(utc_text(l.value("t_unix_s", std::int64_t{0}))), e(l, "id"),
                             e(l.value("restore", Json()).dump()));
        }
    }
    s += "</ol></section><section id=\"audit\"><h2>Audit</h2>";
    if (model["audits"].empty()) {
        s += "<p>No audit (cko audit re-measures the original against the champion).</p>";
    }
    for (const auto& a : model["audits"]) {
        s += fmt::format("<p>Audit <code>{}</code> of <code>{}</code>: {} — {} {} ({} pairs).</p>",
                         e(a, "id"), e(a, "candidate"), verdict_label(verdict_or_state(a)),
                         e(a, "effect_words"), e(interval_text(a)), a.value("pairs", 0));
    }
    return s + "</section>";
}

std::string cost_html(const Json& model) {
    const Json& c = model["cost"];
    const Json& b = c["budget"];
    std::string budget = fmt::format(
        "GPU budget {}, wall budget {}{}",
        b.value("gpu_s", 0.0) > 0 ? seconds_text(b.value("gpu_s", 0.0)) : "none",
        b.value("wall_s", 0.0) > 0 ? seconds_text(b.value("wall_s", 0.0)) : "none",
        b.value("deadline", Json()).is_string() ? ", deadline " + b["deadline"].get<std::string>()
                                                : "");
    return fmt::format(
        "<section id=\"cost\"><h2>Cost</h2><p>Spent {} wall, {} GPU, {:.0f} driver calls over the "
        "baseline and comparisons; {}.</p>{}</section>",
        e(seconds_text(c.value("wall_s", 0.0))), e(seconds_text(c.value("gpu_s", 0.0))),
        c.value("driver_calls", 0.0), e(budget), cost_chart(c));
}

std::string findings_html(const Json& model) {
    const Json& f = model["findings"];
    std::string s =
        "<section id=\"findings\"><h2>Rejected directions, evidence gaps and open risks</h2>";
    s += "<h3>Rejected directions</h3>";
    if (f["rejected"].empty()) {
        s += "<p>None rejected.</p>";
    }
    s += "<ul>";
    for (const auto& r : f["rejected"]) {
        s += fmt::format(
            "<li><code>{}</code> ({}): {} — closes <b>{}</b> (declared: {}). Evidence: {}</li>",
            e(r, "id"), e(r, "mechanism"), e(r, "conclusion"),
            e(r.value("closes", Json("")).is_string() ? r["closes"].get<std::string>() : ""),
            e(r, "declared_closes"), ids_html(r["evidence"]));
    }
    s += "</ul><h3>Evidence gaps and open risks</h3><ul>";
    for (const auto& g : f["gaps"]) {
        s += fmt::format("<li class=\"gap\" data-kind=\"{}\">⚠ {}{}</li>", e(g, "kind"),
                         e(g, "text"),
                         g["evidence"].empty() ? "" : " (" + ids_html(g["evidence"]) + ")");
    }
    return s + "</ul></section>";
}

// The profiles kept as evidence: each with its files, its experiment and how it was collected.
std::string profiles_html(const Json& model) {
    std::string s;
    s += "<section id=\"profiles\"><h2>Profiles</h2>";
    if (model["profiles"].empty()) {
        s += "<p>profiles: none stored (the store holds no profile documents or execution maps "
             "yet).</p>";
    } else {
        s += "<ul>";
        for (const auto& p : model["profiles"]) {
            std::string files;
            for (const auto& src : p.value("sources", Json::array())) {
                files += fmt::format("{}<code>{}</code> (sha256 <code>{}</code>)",
                                     files.empty() ? "" : ", ", e(src, "path"),
                                     e(src.value("report_sha256", "").substr(0, 16)));
            }
            const Json collection = p.value("collection", Json());
            s += fmt::format(
                "<li><code>{}</code>: {} of {}{}{}{}</li>", e(p, "id"), e(p, "kind"), files,
                p.value("experiment_id", Json()).is_string()
                    ? fmt::format(", {} for <code>{}</code> ({})",
                                  p.value("foreign", false) ? "offered" : "evidence",
                                  e(p, "experiment_id"),
                                  e(p.value("subject", Json("")).get<std::string>()))
                    : "",
                collection.is_object()
                    ? fmt::format(", collected by <code>{}</code> on case <code>{}</code>",
                                  e(collection, "invocation_id"), e(collection, "case_id"))
                    : "",
                p.value("foreign", false) ? "; foreign evidence: no claim may cite it" : "",
                p.value("question", Json()).is_string() ? "; answers: " + e(p, "question")
                                                        : std::string());
        }
        s += "</ul>";
    }
    s += "</section>";
    return s;
}

// The competing hypotheses, grouped by bottleneck: open ones with what would separate them,
// settled ones with their outcome and evidence.
std::string hypotheses_html(const Json& model) {
    const Json board = model.value("hypotheses", Json::object());
    const Json& all = board.value("hypotheses", Json::array());
    std::string s = "<section id=\"hypotheses\"><h2>Competing hypotheses</h2>";
    if (all.empty()) {
        return s + "<p>None recorded (cko hypotheses add).</p></section>";
    }
    s += fmt::format("<p>{} recorded, {} open.</p><ul>", all.size(), board.value("open", 0));
    for (const auto& g : board.value("bottlenecks", Json::array())) {
        s += fmt::format("<li>bottleneck {}<ul>", e(eval::bottleneck_text(g)));
        for (const auto& h : all) {
            if (h.value("bottleneck", "") != g.value("bottleneck", "")) {
                continue;
            }
            const Json& st = h.value("settlement", Json());
            s += fmt::format("<li>{} <code>{}</code>: {} — {}</li>", e(h, "state"), e(h, "id"),
                             e(h, "explanation"),
                             st.is_object()
                                 ? fmt::format("on {} <code>{}</code> (<code>{}</code>) {}",
                                               e(st["evidence"], "kind"), e(st["evidence"], "id"),
                                               e(st, "id"), e(st, "note"))
                                 : "separated by: " + e(h, "separated_by"));
        }
        s += "</ul></li>";
    }
    return s + "</ul></section>";
}

// The summary card of a goal whose `identity` lowers the claim (eval::identity_claim); "" else.
std::string identity_lowering_html(const Json& goal) {
    const Json identity = goal.value("identity", Json::object());
    if (!identity.value("lowers", false)) {
        return "";
    }
    return fmt::format(
        "<div class=\"card\"><b>claim lowered by the environment identity to {}</b>{}</div>",
        e(goal, "stated_claim"), e(identity, "text"));
}

}  // namespace

std::string verdict_label(const std::string& verdict) {
    static const std::pair<const char*, const char*> symbols[] = {
        {"improved", "✔"},      {"regressed", "✘"},    {"mixed", "◐"},  {"equivalent", "≈"},
        {"below_minimum", "▿"}, {"inconclusive", "?"}, {"invalid", "⚠"}};
    std::string symbol = "•";
    for (const auto& [v, sym] : symbols) {
        if (verdict == v) {
            symbol = sym;
        }
    }
    return fmt::format("<span class=\"verdict v-{}\">{} {}</span>", html_escape(verdict), symbol,
                       html_escape(verdict.empty() ? "none" : verdict));
}

std::string render_html(const Json& model) {
    const Json& t = model["target"];
    const Json& f = model["findings"];
    const Json& stop = model["stop"];
    std::string s = fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
        "content=\"width=device-width, initial-scale=1\"><title>cko report: "
        "{}</title><style>{}</style></head><body><main>"
        "<header><h1>cko report: {}</h1><p class=\"meta\">Target <code>{}</code> · generated {} "
        "from "
        "<code>{}</code> · cko {}</p></header>",
        e(t, "name"), kStyle, e(t, "name"), e(t, "id"),
        e(utc_text(model.value("generated_unix_s", std::int64_t{0}))), e(model, "root"),
        build_version());
    s += fmt::format(
        "<section id=\"summary\"><h2>Summary</h2><div class=\"cards\">"
        "<div class=\"card\"><b>champion</b><span class=\"champion\">{}</span></div>"
        "<div class=\"card\"><b>primary goal ({} layer)</b>{}</div>{}{}"
        "<div class=\"card\"><b>experiments · comparisons</b>{} · {}</div>"
        "<div class=\"card\"><b>cost</b>{} wall, {} GPU</div>"
        "<div class=\"card\"><b>termination</b>{}</div></div></section>",
        e(model["champion"], "current"), e(f["goal"], "claim_layer"), e(f["goal"], "text"),
        f["goal"].contains("lowered")
            ? fmt::format("<div class=\"card\"><b>conclusion lowered to {}</b>{}</div>",
                          e(f["goal"], "stated_claim"), e(f["goal"]["lowered"], "text"))
            : std::string(),
        identity_lowering_html(f["goal"]), model["experiments"].size(), model["comparisons"].size(),
        e(seconds_text(model["cost"].value("wall_s", 0.0))),
        e(seconds_text(model["cost"].value("gpu_s", 0.0))),
        stop.is_null() ? "not recorded (cko stop --reason …)" : e(stop, "reason"));
    s += target_html(t);
    s += baseline_html(model);
    s += "<section id=\"overview\"><h2>All comparisons at a glance</h2>" + overview_chart(model) +
         "<p class=\"muted\">Each comparison is named by its experiment's mechanism (the "
         "experiment's id under it); its ◆ is the estimate (Hodges–Lehmann) with the interval that "
         "decided its verdict, and the rows under it are its cases (■, a regressed case ✕). A "
         "verdict of improved needs the whole interval right of the hatched band. A comparison "
         "that decided nothing cites a numbered note under the chart.</p></section>";
    s += experiments_html(model);
    s += "<section id=\"comparisons\"><h2>Comparisons</h2><p class=\"muted\">How to read a chart: "
         "○ are the pairs' "
         "effects, the thick bar with ◆ is the deciding interval, ■ bars are the cases' intervals, "
         "▲ bars the "
         "constraints'; the hatched band is ± the minimum effect. See docs/report.md.</p>";
    for (const auto& c : model["comparisons"]) {
        s += comparison_html(c, model);
    }
    if (model["comparisons"].empty()) {
        s += "<p>No comparison yet.</p>";
    }
    s += "</section>";
    s += champion_html(model);
    s += cost_html(model);
    s += profiles_html(model);
    s += hypotheses_html(model);
    s += findings_html(model);
    s += fmt::format("<section id=\"termination\"><h2>Termination</h2><p>{}</p></section>",
                     stop.is_null()
                         ? "No termination reason recorded (cko stop --root R --reason TEXT)."
                         : fmt::format("Stopped {} (<code>{}</code>): {}",
                                       e(utc_text(stop.value("stopped_unix_s", std::int64_t{0}))),
                                       e(stop, "id"), e(stop, "reason")));
    s += "<footer class=\"muted\"><p>Self-contained: inline CSS and SVG, nothing fetched. Drawn "
         "from the evidence "
         "store; the tool never reads handoff.md.</p></footer></main></body></html>\n";
    return s;
}

}  // namespace cko::report
