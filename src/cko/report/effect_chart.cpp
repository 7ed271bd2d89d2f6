// SVG drawing of interval charts (generated here, nothing fetched): axis, band, rows, markers; the
// cost bar.
#include "cko/report/effect_chart.hpp"

#include "cko/report/text.hpp"
#include "cko/stats/paired_estimate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace cko::report {
namespace {

constexpr double kWidth = 760;
constexpr double kPlotLeft = 210;
constexpr double kPlotRight = 600;
constexpr double kTop = 30;
constexpr double kNoteLineHeight = 15;
constexpr std::size_t kNoteChars = 110;  // a note's line across the chart's width at 12 px
constexpr std::size_t kLabelBytes = 36;  // a label in the 200 px left of the plot

struct Axis {
    double lo = -0.1;
    double hi = 0.1;
    [[nodiscard]] double x(double d) const {
        const double t = (std::clamp(d, lo, hi) - lo) / (hi - lo);
        return kPlotLeft + t * (kPlotRight - kPlotLeft);
    }
};

std::string num(double v) {
    return fmt::format("{:.1f}", v);
}

Axis axis_for(const IntervalChart& chart) {
    const double m = std::max(chart.minimum_effect_log, 0.005);
    double lo = -1.6 * m;
    double hi = 1.6 * m;
    const auto take = [&](double v) {
        if (std::isfinite(v)) {
            lo = std::min(lo, v);
            hi = std::max(hi, v);
        }
    };
    for (const auto& r : chart.rows) {
        std::for_each(r.points.begin(), r.points.end(), take);
        if (r.interval) {
            take(r.interval->low);
            take(r.interval->high);
        }
    }
    const double pad = 0.06 * (hi - lo);
    return Axis{lo - pad, hi + pad};
}

std::string tick_label(double pct) {
    if (std::fabs(pct) < 1e-9) {
        return "0";
    }
    const std::string mag = std::fabs(pct) >= 1 ? fmt::format("{:.0f}", std::fabs(pct))
                                                : fmt::format("{:.1f}", std::fabs(pct));
    return fmt::format("{}{} %", pct < 0 ? "−" : "+", mag);
}

// Ticks at round effects in percent (mapped to log ratios): 0 first, then the farthest from 0,
// each kept only if its label has room (at least kMinTickGap px from every kept tick).
std::vector<double> tick_pcts(const Axis& axis) {
    constexpr double kMinTickGap = 52;
    static const double candidates[] = {
        -99, -95, -90, -75, -50, -20, -10, -5,  -2,  -1,  -0.5, -0.2, -0.1, 0,     0.1,   0.2,
        0.5, 1,   2,   5,   10,  25,  50,  100, 200, 500, 1000, 2000, 5000, 10000, 100000};
    std::vector<double> inside;
    for (const double p : candidates) {
        const double d = stats::pct_to_log(p);
        if (d >= axis.lo && d <= axis.hi) {
            inside.push_back(p);
        }
    }
    std::stable_sort(inside.begin(), inside.end(), [](double a, double b) {
        return (a == 0) != (b == 0)
                   ? a == 0
                   : std::fabs(stats::pct_to_log(a)) > std::fabs(stats::pct_to_log(b));
    });
    std::vector<double> kept;
    for (const double p : inside) {
        const double x = axis.x(stats::pct_to_log(p));
        if (std::all_of(kept.begin(), kept.end(), [&](double k) {
                return std::fabs(axis.x(stats::pct_to_log(k)) - x) >= kMinTickGap;
            })) {
            kept.push_back(p);
        }
    }
    std::sort(kept.begin(), kept.end());
    return kept;
}

std::string marker_path(Marker m, double x, double y, double r) {
    switch (m) {
    case Marker::circle:
        return fmt::format("M{} {}m-{} 0a{} {} 0 1 0 {} 0a{} {} 0 1 0 -{} 0", num(x), num(y),
                           num(r), num(r), num(r), num(2 * r), num(r), num(r), num(2 * r));
    case Marker::diamond:
        return fmt::format("M{} {}l{} {}l-{} {}l-{} -{}Z", num(x), num(y - r), num(r), num(r),
                           num(r), num(r), num(r), num(r));
    case Marker::square:
        return fmt::format("M{} {}h{}v{}h-{}Z", num(x - r * 0.8), num(y - r * 0.8), num(1.6 * r),
                           num(1.6 * r), num(1.6 * r));
    case Marker::triangle:
        return fmt::format("M{} {}l{} {}h-{}Z", num(x), num(y - r), num(r), num(1.8 * r),
                           num(2 * r));
    case Marker::cross:
        return fmt::format("M{} {}l{} {}m0 -{}l-{} {}", num(x - r), num(y - r), num(2 * r),
                           num(2 * r), num(2 * r), num(2 * r), num(2 * r));
    }
    return "";
}

const char* marker_name(Marker m) {
    switch (m) {
    case Marker::circle:
        return "circle";
    case Marker::diamond:
        return "diamond";
    case Marker::square:
        return "square";
    case Marker::triangle:
        return "triangle";
    case Marker::cross:
        return "cross";
    }
    return "";
}

std::optional<ChartInterval> interval_of(const Json& e) {
    const Json lo = e.value("ci_low_pct", Json());
    const Json hi = e.value("ci_high_pct", Json());
    if (!lo.is_number() || !hi.is_number()) {
        return std::nullopt;
    }
    ChartInterval i{stats::pct_to_log(lo.get<double>()), stats::pct_to_log(hi.get<double>()),
                    std::nullopt};
    if (e.value("effect_pct", Json()).is_number()) {
        i.estimate = stats::pct_to_log(e["effect_pct"].get<double>());
    }
    return i;
}

std::vector<double> doubles(const Json& a) {
    std::vector<double> out;
    for (const auto& v : a) {
        if (v.is_number()) {
            out.push_back(v.get<double>());
        }
    }
    return out;
}

std::string better_side(const Json& metric) {
    const std::string name = metric.value("name", "");
    return metric.value("direction", "lower") == "higher" ? fmt::format("higher {}", name)
                                                          : fmt::format("lower {}", name);
}

// A note's lines: "[k] reason…" wrapped to the chart's width, later lines indented.
struct NoteLine {
    double x = 0;
    std::string text;
};

std::vector<NoteLine> note_lines(const std::vector<std::string>& notes) {
    std::vector<NoteLine> lines;
    for (std::size_t k = 0; k < notes.size(); ++k) {
        const std::vector<std::string> wrapped = wrap_text(notes[k], kNoteChars);
        for (std::size_t i = 0; i < wrapped.size(); ++i) {
            lines.push_back(i == 0 ? NoteLine{10, fmt::format("[{}] {}", k + 1, wrapped[i])}
                                   : NoteLine{34, wrapped[i]});
        }
    }
    return lines;
}

std::string svg_open(const IntervalChart& chart, double height) {
    std::string s = fmt::format(
        R"~(<svg xmlns="http://www.w3.org/2000/svg" class="{}" id="{}" {} viewBox="0 0 {} {}" width="100%" )~"
        R"~(preserveAspectRatio="xMinYMin meet" role="img" aria-label="{}"><title>{}</title>)~",
        chart.css_class, html_escape(chart.id), chart.data_attrs, num(kWidth), num(height),
        html_escape(chart.title), html_escape(chart.title));
    s += fmt::format(
        R"~(<defs><pattern id="hatch-{}" width="6" height="6" patternUnits="userSpaceOnUse" )~"
        R"~(patternTransform="rotate(45)"><path d="M0 0V6" stroke="#777" stroke-width="2"/></pattern></defs>)~",
        chart.id);
    return s;
}

// The band (−m, m) with its dashed edges, and the line at no difference.
std::string band_and_zero(const IntervalChart& chart, const Axis& axis, double plot_bottom) {
    std::string s;
    // A verdict of improved needs the whole interval right of +m.
    const double m = chart.minimum_effect_log;
    if (m > 0) {
        s += fmt::format(
            R"~(<rect class="band" x="{}" y="{}" width="{}" height="{}" fill="url(#hatch-{})" opacity="0.45"/>)~",
            num(axis.x(-m)), num(kTop - 6), num(axis.x(m) - axis.x(-m)),
            num(plot_bottom - kTop + 6), chart.id);
        for (const double edge : {-m, m}) {
            s += fmt::format(
                R"~(<path class="threshold" d="M{} {}V{}" stroke="#333" stroke-dasharray="5 3" fill="none"/>)~",
                num(axis.x(edge)), num(kTop - 6), num(plot_bottom));
        }
        s += fmt::format(
            R"~(<text x="{}" y="{}" text-anchor="middle" class="band-label">hatched band ±{:g} % = minimum effect</text>)~",
            num(axis.x(0)), num(kTop - 12), chart.minimum_effect_pct);
    }
    s += fmt::format(
        R"~(<path class="zero" d="M{} {}V{}" stroke="#000" stroke-width="1" fill="none"/>)~",
        num(axis.x(0)), num(kTop - 6), num(plot_bottom));
    return s;
}

// The label (and sublabel) left of the plot, the row's note right of it.
std::string row_text(const ChartRow& r, double y) {
    const bool two_lines = !r.sublabel.empty();
    std::string s =
        fmt::format(R"~(<text x="{}" y="{}" text-anchor="end" class="row-label">{}</text>)~",
                    num(kPlotLeft - 8), num(two_lines ? y - 1 : y + 4),
                    html_escape(one_line(r.label, kLabelBytes)));
    if (two_lines) {
        s += fmt::format(
            R"~(<text x="{}" y="{}" text-anchor="end" class="row-sublabel" font-size="10">{}</text>)~",
            num(kPlotLeft - 8), num(y + 11), html_escape(one_line(r.sublabel, kLabelBytes)));
    }
    if (!r.note.empty()) {
        s += fmt::format(R"~(<text x="{}" y="{}" class="row-note">{}</text>)~",
                         num(kPlotRight + 10), num(y + 4), html_escape(r.note));
    }
    return s;
}

// Row `i`: its shading, texts, pair markers and interval; `any_data` is set when it drew data.
std::string row_svg(const IntervalChart& chart, std::size_t i, const Axis& axis, bool& any_data) {
    const ChartRow& r = chart.rows[i];
    const double h = chart.row_height;
    const double y = kTop + (static_cast<double>(i) + 0.5) * h;
    std::string s;
    if (i % 2 == 1) {
        s += fmt::format(
            R"~(<rect x="0" y="{}" width="{}" height="{}" fill="#000" opacity="0.04"/>)~",
            num(y - h / 2), num(kWidth), num(h));
    }
    s += row_text(r, y);
    for (std::size_t k = 0; k < r.points.size(); ++k) {
        // Spread the points over the row's height (deterministic, by pair number) so that
        // equal values stay visible.
        const double jitter = (static_cast<double>(k % 5) - 2.0) * 3.0;
        s += fmt::format(
            R"~(<path class="pair" d="{}" fill="none" stroke="#1f4e79" stroke-width="1.2"/>)~",
            marker_path(Marker::circle, axis.x(r.points[k]), y + jitter, 3.2));
        any_data = true;
    }
    if (!r.interval) {
        return s;
    }
    s += fmt::format(
        R"~(<path class="interval{}" d="M{} {}H{}" stroke="#111" stroke-width="{}" fill="none"/>)~",
        r.emphasis ? " deciding" : "", num(axis.x(r.interval->low)), num(y),
        num(axis.x(r.interval->high)), r.emphasis ? 5 : 2);
    for (const double end : {r.interval->low, r.interval->high}) {
        s += fmt::format(
            R"~(<path class="whisker" d="M{} {}V{}" stroke="#111" stroke-width="1.5" fill="none"/>)~",
            num(axis.x(end)), num(y - 6), num(y + 6));
    }
    if (r.interval->estimate) {
        s += fmt::format(
            R"~(<path class="estimate {}" d="{}" fill="{}" stroke="#000" stroke-width="{}"/>)~",
            marker_name(r.marker), marker_path(r.marker, axis.x(*r.interval->estimate), y, 6),
            r.emphasis ? "#f2b134" : "#fff", r.marker == Marker::cross ? 2.5 : 1);
    }
    any_data = true;
    return s;
}

// The axis line, its ticks labelled in percent, and the caption under it.
std::string axis_svg(const Axis& axis, double plot_bottom, const std::string& caption) {
    std::string s = fmt::format(R"~(<path class="axis" d="M{} {}H{}" stroke="#000" fill="none"/>)~",
                                num(kPlotLeft), num(plot_bottom), num(kPlotRight));
    for (const double p : tick_pcts(axis)) {
        const double x = axis.x(stats::pct_to_log(p));
        s += fmt::format(
            R"~(<path class="tick" d="M{} {}v5" stroke="#000" fill="none"/><text x="{}" y="{}" )~"
            R"~(text-anchor="middle" class="tick-label">{}</text>)~",
            num(x), num(plot_bottom), num(x), num(plot_bottom + 17), tick_label(p));
    }
    s +=
        fmt::format(R"~(<text x="{}" y="{}" text-anchor="middle" class="axis-caption">{}</text>)~",
                    num((kPlotLeft + kPlotRight) / 2), num(plot_bottom + 36), html_escape(caption));
    return s;
}

// One comparison in the overview: its pooled row, named by the mechanism with the experiment's
// id under it, then one row per case (a regressed case with a ✕). The reason of an invalid,
// cancelled or failed comparison becomes a numbered note below the chart.
void add_overview_rows(IntervalChart& chart, const Json& c) {
    const std::string type = c.value("type", "");
    const std::string subject = c.value("subject", c.value("experiment_id", ""));
    std::string note = verdict_or_state(c);
    const std::string state = c.value("state", "");
    const bool failed = note == "invalid" || (state != "succeeded" && state != "running");
    if (failed && !c.value("reason", "").empty()) {
        chart.notes.push_back(fmt::format("{} {} ({}) {}: {}", type, c.value("name", subject),
                                          c.value("id", ""), note, c.value("reason", "")));
        note += fmt::format(" [{}]", chart.notes.size());
    }
    ChartRow pooled{fmt::format("{} {}", type, c.value("name", subject)),
                    {},
                    interval_of(c),
                    Marker::diamond,
                    true,
                    note,
                    type == "audit" ? "champion " + subject : subject};
    chart.rows.push_back(std::move(pooled));
    for (const auto& pc : c.value("per_case", Json::array())) {
        const bool regressed = pc.value("regressed", false);
        chart.rows.push_back(ChartRow{"case " + pc.value("case_id", ""),
                                      {},
                                      interval_of(pc),
                                      regressed ? Marker::cross : Marker::square,
                                      false,
                                      regressed ? "✘ regressed case" : pc.value("verdict", ""),
                                      ""});
    }
}

}  // namespace

std::string render_interval_chart(const IntervalChart& chart) {
    const Axis axis = axis_for(chart);
    const double rows = static_cast<double>(std::max<std::size_t>(chart.rows.size(), 1));
    const double plot_bottom = kTop + rows * chart.row_height;
    const std::vector<NoteLine> notes = note_lines(chart.notes);
    const double notes_height =
        notes.empty() ? 0 : 8 + kNoteLineHeight * static_cast<double>(notes.size());
    std::string s = svg_open(chart, plot_bottom + 46 + notes_height);
    s += band_and_zero(chart, axis, plot_bottom);
    bool any_data = false;
    for (std::size_t i = 0; i < chart.rows.size(); ++i) {
        s += row_svg(chart, i, axis, any_data);
    }
    if (!any_data && !chart.empty_text.empty()) {
        s += fmt::format(R"~(<text x="{}" y="{}" text-anchor="middle" class="empty">{}</text>)~",
                         num((kPlotLeft + kPlotRight) / 2), num(kTop + chart.row_height * 0.5 + 4),
                         html_escape(chart.empty_text));
    }
    s += axis_svg(axis, plot_bottom, chart.axis_caption);
    // Below the caption, across the whole width: no label or marker lies there.
    double y = plot_bottom + 46 + 8 + kNoteLineHeight - 4;
    for (const NoteLine& line : notes) {
        s += fmt::format(R"~(<text x="{}" y="{}" class="chart-note">{}</text>)~", num(line.x),
                         num(y), html_escape(line.text));
        y += kNoteLineHeight;
    }
    return s + "</svg>";
}

std::string comparison_chart(const Json& c, const Json& metric, double minimum_effect_pct) {
    const std::string id = c.value("id", "");
    IntervalChart chart;
    chart.css_class = "effect-chart";
    chart.id = "chart-" + id;
    chart.data_attrs =
        fmt::format(R"~(data-comparison="{}" data-kind="{}" data-verdict="{}")~", html_escape(id),
                    html_escape(c.value("type", "")), html_escape(c.value("verdict", "")));
    const double m_pct = c.value("minimum_effect_pct", Json()).is_number()
                             ? c["minimum_effect_pct"].get<double>()
                             : minimum_effect_pct;
    chart.minimum_effect_log = stats::pct_to_log(m_pct);
    chart.minimum_effect_pct = m_pct;
    chart.title = fmt::format("{} {}: {} against the minimum effect ±{} %", c.value("type", ""), id,
                              verdict_or_state(c), m_pct);
    chart.axis_caption =
        fmt::format("effect exp(d) − 1 on a log scale; right of 0 = candidate better ({})",
                    better_side(metric));
    // The reason goes below the chart: drawn in the plot, a long one covered the row labels.
    chart.empty_text = "no valid pairs";
    if (!c.value("reason", "").empty() && c.value("d", Json::array()).empty()) {
        chart.notes.push_back(c.value("reason", ""));
        chart.empty_text = "no valid pairs: see [1] below";
    }
    const std::vector<double> d = doubles(c.value("d", Json::array()));
    chart.rows.push_back(ChartRow{fmt::format("pairs (n = {})", d.size()), d, std::nullopt,
                                  Marker::circle, false, "each ○ one pair", ""});
    const Json deciding = c.value("deciding", Json());
    std::string level = "deciding interval";
    if (deciding.is_object()) {
        level = deciding.value("look", 0) > 0
                    ? fmt::format("deciding, look {}/{} ({:.1f} %)", deciding.value("look", 0),
                                  deciding.value("looks_planned", 0),
                                  100 * deciding.value("level", 0.0))
                    : fmt::format("deciding ({:.1f} %)", 100 * deciding.value("level", 0.0));
    }
    if (auto i = interval_of(c)) {
        chart.rows.push_back(
            ChartRow{level, {}, i, Marker::diamond, true, c.value("verdict", ""), ""});
    }
    const Json nominal = c.value("nominal", Json());
    if (nominal.is_object() && deciding.is_object() &&
        deciding.value("level", 0.0) != nominal.value("confidence", 0.0)) {
        if (auto i = interval_of(nominal)) {
            chart.rows.push_back(
                ChartRow{fmt::format("nominal ({:.0f} %)", 100 * nominal.value("confidence", 0.0)),
                         {},
                         i,
                         Marker::diamond,
                         false,
                         "for reference",
                         ""});
        }
    }
    for (const auto& pc : c.value("per_case", Json::array())) {
        chart.rows.push_back(
            ChartRow{"case " + pc.value("case_id", ""),
                     {},
                     interval_of(pc),
                     pc.value("regressed", false) ? Marker::cross : Marker::square,
                     false,
                     pc.value("verdict", "") + (pc.value("regressed", false) ? " (regressed)" : ""),
                     ""});
    }
    // Bound first: a temporary inside a range-for initializer dies before the loop (C++20).
    const Json constraints_of = c.value("constraints", Json::object());
    for (const auto& [name, k] : constraints_of.items()) {
        chart.rows.push_back(ChartRow{"constraint " + name,
                                      {},
                                      interval_of(k),
                                      Marker::triangle,
                                      false,
                                      fmt::format("{} (tolerance {} %)", k.value("status", ""),
                                                  k.value("max_regression_pct", 0.0)),
                                      ""});
    }
    return render_interval_chart(chart);
}

std::string overview_chart(const Json& model) {
    IntervalChart chart;
    chart.css_class = "overview-chart";
    chart.id = "overview";
    const Json& target = model.at("target");
    chart.minimum_effect_pct = target.value("minimum_effect_pct", 0.0);
    chart.minimum_effect_log = stats::pct_to_log(chart.minimum_effect_pct);
    chart.title = "every comparison's deciding interval and its cases, in time order";
    chart.axis_caption = fmt::format("effect exp(d) − 1; right of 0 = candidate better ({})",
                                     better_side(target.value("metric", Json::object())));
    chart.empty_text = "no comparison has an interval yet";
    chart.row_height = 30;
    for (const auto& c : model.at("comparisons")) {
        add_overview_rows(chart, c);
    }
    return render_interval_chart(chart);
}

std::string aa_chart(const Json& b, double minimum_effect_pct) {
    IntervalChart chart;
    chart.css_class = "aa-chart";
    chart.id = "aa-" + b.value("id", "");
    chart.minimum_effect_pct = minimum_effect_pct;
    chart.minimum_effect_log = stats::pct_to_log(minimum_effect_pct);
    chart.title = "A/A check: the original against itself";
    chart.axis_caption = "effect exp(d) − 1 of the original against itself: noise only";
    chart.empty_text = "no A/A pairs";
    const std::vector<double> d = doubles(b.value("d", Json::array()));
    chart.rows.push_back(ChartRow{fmt::format("A/A pairs (n = {})", d.size()), d, std::nullopt,
                                  Marker::circle, false, "", ""});
    if (auto i = interval_of(b)) {
        chart.rows.push_back(
            ChartRow{"A/A interval", {}, i, Marker::diamond, true, b.value("verdict", ""), ""});
    }
    return render_interval_chart(chart);
}

std::string cost_chart(const Json& cost) {
    static const char* fills[] = {"#333", "url(#cost-hatch)", "url(#cost-dots)", "#bbb",
                                  "url(#cost-cross)"};
    const double spent = cost.value("wall_s", 0.0);
    const double budget = cost.value("budget", Json::object()).value("wall_s", 0.0);
    const double scale_max = std::max({spent, budget, 1e-9});
    const double left = 20;
    const double right = kWidth - 20;
    std::string s = fmt::format(
        R"~(<svg xmlns="http://www.w3.org/2000/svg" class="cost-chart" viewBox="0 0 {} 92" width="100%" role="img" )~"
        R"~(aria-label="wall seconds per operation kind"><title>wall seconds per operation kind</title><defs>)~"
        R"~(<pattern id="cost-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><path d="M0 0V6" stroke="#000" stroke-width="2"/></pattern>)~"
        R"~(<pattern id="cost-dots" width="6" height="6" patternUnits="userSpaceOnUse"><path d="M3 2a1 1 0 1 0 0.1 0" stroke="#000" stroke-width="2"/></pattern>)~"
        R"~(<pattern id="cost-cross" width="8" height="8" patternUnits="userSpaceOnUse"><path d="M0 0L8 8M8 0L0 8" stroke="#000" stroke-width="1"/></pattern>)~"
        R"~(</defs>)~",
        num(kWidth));
    double x = left;
    std::size_t k = 0;
    std::string legend;
    double lx = left;
    // Bound first: a temporary inside a range-for initializer dies before the loop (C++20).
    const Json by_kind_of = cost.value("by_kind", Json::object());
    for (const auto& [kind, v] : by_kind_of.items()) {
        const double w = (right - left) * v.value("wall_s", 0.0) / scale_max;
        const char* fill = fills[k % std::size(fills)];
        s += fmt::format(
            R"~(<path class="cost {}" d="M{} 12h{}v26h-{}Z" fill="{}" stroke="#000"/>)~",
            html_escape(kind), num(x), num(std::max(w, 0.5)), num(std::max(w, 0.5)), fill);
        x += w;
        legend += fmt::format(
            R"~(<path d="M{} 54h12v12h-12Z" fill="{}" stroke="#000"/><text x="{}" y="64">{} ×{}: {}</text>)~",
            num(lx), fill, num(lx + 16), html_escape(kind), v.value("count", 0.0),
            html_escape(seconds_text(v.value("wall_s", 0.0))));
        lx += 180;
        ++k;
    }
    s += legend;
    if (budget > 0) {
        const double bx = left + (right - left) * budget / scale_max;
        s += fmt::format(
            R"~(<path class="budget" d="M{} 4V46" stroke="#000" stroke-width="2" stroke-dasharray="4 2"/>)~"
            R"~(<text x="{}" y="86" text-anchor="end">wall budget {}</text>)~",
            num(bx), num(bx), html_escape(seconds_text(budget)));
    } else {
        s += fmt::format(R"~(<text x="{}" y="86">{} wall in all; no wall budget set</text>)~",
                         num(left), html_escape(seconds_text(spent)));
    }
    return s + "</svg>";
}

}  // namespace cko::report
