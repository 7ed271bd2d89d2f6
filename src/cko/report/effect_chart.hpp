// Inline SVG charts of the report: paired effects against the minimum-effect band, and the cost
// bar.
#pragma once

#include "cko/util/json.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cko::report {

// Markers differ in shape (not only colour) so that a grey-scale print keeps them apart.
// `cross` (✕) marks a case that regressed: it is told apart by shape at a glance.
enum class Marker { circle, diamond, square, triangle, cross };

struct ChartInterval {
    double low = 0;  // log ratio d (positive = candidate better)
    double high = 0;
    std::optional<double> estimate;
};

struct ChartRow {
    std::string label;                      // left of the plot
    std::vector<double> points;             // log ratios drawn as small open circles
    std::optional<ChartInterval> interval;  // a bar with the estimate's marker
    Marker marker = Marker::diamond;
    bool emphasis = false;  // the deciding interval: a thicker bar
    std::string note;       // right of the plot (e.g. the verdict); short: a reason goes to notes
    std::string sublabel;   // under the label, smaller (e.g. the experiment's id)
};

// One chart: rows on a common log-ratio axis with ticks labelled as effects in percent
// (exp(d) − 1), the hatched band (−m, m) of the minimum effect and dashed lines at ±m.
struct IntervalChart {
    std::string css_class;          // "effect-chart", "overview-chart"
    std::string id;                 // unique in the page (pattern ids derive from it)
    std::string title;              // <title>, read by screen readers and shown as a tooltip
    std::string data_attrs;         // extra attributes for the <svg> element, already escaped
    double minimum_effect_pct = 0;  // m in percent (the band's label)
    double minimum_effect_log = 0;  // m = ln(1 + pct/100) (the band's edges)
    std::string axis_caption;       // under the axis
    std::string empty_text;         // shown in the plot when no row has data (short)
    double row_height = 26;         // taller where rows carry a sublabel
    std::vector<ChartRow> rows;
    // Numbered notes wrapped below the axis (a row's note cites "[k]"): long text such as the
    // reason of an invalid or cancelled comparison, which would cover the labels in the plot.
    std::vector<std::string> notes;
};

[[nodiscard]] std::string render_interval_chart(const IntervalChart& chart);

// The chart of one comparison entry of the report model: its pairs' effects, the deciding
// interval (with its look and level), the nominal interval, every case's interval and every
// constraint's, against the minimum-effect band. `metric` is the Target's primary metric object.
[[nodiscard]] std::string comparison_chart(const Json& comparison, const Json& metric,
                                           double minimum_effect_pct);

// Every comparison's deciding interval on one axis, in time order, each named by its mechanism
// (the experiment's id under it) and followed by one row per case (a regressed case marked ✕);
// the reasons of invalid, cancelled or failed comparisons are numbered notes below the axis.
[[nodiscard]] std::string overview_chart(const Json& model);

// The A/A check of the baseline: its pairs and interval against the band.
[[nodiscard]] std::string aa_chart(const Json& baseline, double minimum_effect_pct);

// Wall seconds per kind of operation as one stacked bar (each kind its own fill pattern and
// label), with the wall budget as a line when the Target has one.
[[nodiscard]] std::string cost_chart(const Json& cost);

}  // namespace cko::report
