// The SVG charts: one marker per pair, the deciding interval, case rows, the band, and escaping.
#include "cko/report/effect_chart.hpp"

#include <gtest/gtest.h>

#include <string_view>

namespace cko::report {
namespace {

std::size_t count(const std::string& hay, const std::string& needle) {
    std::size_t n = 0;
    for (auto p = hay.find(needle); p != std::string::npos;
         p = hay.find(needle, p + needle.size())) {
        ++n;
    }
    return n;
}

Json confirm_entry() {
    return Json{{"type", "confirm"},
                {"id", "inv-0000000000000001"},
                {"verdict", "improved"},
                {"state", "succeeded"},
                {"minimum_effect_pct", 5.0},
                {"d", Json::array({0.30, 0.35, 0.28, 0.33, 0.31, 0.29})},
                {"effect_pct", 36.0},
                {"ci_low_pct", 33.0},
                {"ci_high_pct", 41.0},
                {"deciding", {{"look", 2}, {"looks_planned", 3}, {"level", 0.982}}},
                {"nominal", {{"confidence", 0.95}, {"ci_low_pct", 34.0}, {"ci_high_pct", 40.0}}},
                {"per_case", Json::array({Json{{"case_id", "small"},
                                               {"verdict", "improved"},
                                               {"effect_pct", 30.0},
                                               {"ci_low_pct", 25.0},
                                               {"ci_high_pct", 35.0}},
                                          Json{{"case_id", "large"},
                                               {"verdict", "improved"},
                                               {"effect_pct", 42.0},
                                               {"ci_low_pct", 38.0},
                                               {"ci_high_pct", 46.0}}})},
                {"constraints",
                 {{"peak_mem",
                   {{"status", "ok"},
                    {"max_regression_pct", 2.0},
                    {"effect_pct", 0.1},
                    {"ci_low_pct", -0.5},
                    {"ci_high_pct", 0.6}}}}}};
}

const Json kMetric{{"name", "latency_us"}, {"direction", "lower"}};

TEST(EffectChart, DrawsEveryPairTheDecidingIntervalAndEveryCase) {
    const std::string svg = comparison_chart(confirm_entry(), kMetric, 5.0);
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find(R"(class="effect-chart")"), std::string::npos);
    EXPECT_NE(svg.find(R"(data-comparison="inv-0000000000000001")"), std::string::npos);
    EXPECT_EQ(count(svg, R"(class="pair")"), 6u);
    EXPECT_EQ(count(svg, R"(class="interval deciding")"), 1u);
    EXPECT_EQ(count(svg, "estimate square"), 2u);    // the two cases
    EXPECT_EQ(count(svg, "estimate triangle"), 1u);  // the constraint
    EXPECT_NE(svg.find("deciding, look 2/3 (98.2 %)"), std::string::npos);
    EXPECT_NE(svg.find("nominal (95 %)"), std::string::npos);
    EXPECT_NE(svg.find("hatched band ±5 % = minimum effect"), std::string::npos);
    EXPECT_NE(svg.find(R"~(fill="url(#hatch-chart-inv-0000000000000001)")~"), std::string::npos);
    EXPECT_NE(svg.find("lower latency_us"), std::string::npos);
    EXPECT_NE(svg.find(">0<"), std::string::npos) << "a tick at no difference";
    EXPECT_EQ(svg.find("nan"), std::string::npos);
    // Every path has a non-empty d.
    EXPECT_EQ(svg.find(R"(d="")"), std::string::npos);
    EXPECT_TRUE(svg.ends_with("</svg>"));
}

// The number that starts right after the first `key` found at or after the first `anchor` in svg
// (std::regex is avoided: GCC 12 under ASan warns maybe-uninitialized inside <regex>).
double number_after(const std::string& svg, std::string_view anchor, std::string_view key) {
    const auto at = svg.find(anchor);
    if (at == std::string::npos) {
        ADD_FAILURE() << "no " << anchor << " in the chart";
        return 0;
    }
    const auto k = svg.find(key, at);
    if (k == std::string::npos) {
        ADD_FAILURE() << "no " << key << " after " << anchor;
        return 0;
    }
    return std::stod(svg.substr(k + key.size(), 32));
}

TEST(EffectChart, TheDecidingIntervalSitsRightOfTheBandWhenImproved) {
    const std::string svg = comparison_chart(confirm_entry(), kMetric, 5.0);
    const std::string_view interval = R"(class="interval deciding" d="M)";
    const double lo = number_after(svg, interval, "M");
    const double hi = number_after(svg, interval, "H");
    const std::string_view band = R"(<rect class="band" )";
    const double band_right =
        number_after(svg, band, R"(x=")") + number_after(svg, band, R"(width=")");
    EXPECT_GT(lo, band_right);
    EXPECT_GT(hi, lo);
}

// The y of the first <text> whose class is `cls` (the attribute x="…" y="…" precedes class).
double text_y(const std::string& svg, std::string_view cls) {
    const auto at = svg.find(std::string("class=\"") + std::string(cls) + "\"");
    if (at == std::string::npos) {
        ADD_FAILURE() << "no " << cls << " in the chart";
        return 0;
    }
    const auto y = svg.rfind(R"( y=")", at);
    return std::stod(svg.substr(y + 4, 32));
}

// Issue [19]: the reason was drawn in the plot, over the row labels; it is a note below the axis.
TEST(EffectChart, AComparisonWithoutValidPairsSaysWhyBelowThePlot) {
    Json c{{"type", "screen"},
           {"id", "inv-2"},
           {"verdict", "invalid"},
           {"d", Json::array()},
           {"reason", "the candidate failed correctness on case <small>"}};
    const std::string svg = comparison_chart(c, kMetric, 5.0);
    EXPECT_EQ(count(svg, R"(class="pair")"), 0u);
    EXPECT_NE(svg.find("no valid pairs: see [1] below"), std::string::npos);
    EXPECT_NE(
        svg.find(
            R"(class="chart-note">[1] the candidate failed correctness on case &lt;small&gt;)"),
        std::string::npos);
    EXPECT_GT(text_y(svg, "chart-note"), text_y(svg, "axis-caption"));
    EXPECT_NE(svg.find(R"(class="zero" d="M)"), std::string::npos);
}

Json mixed_entry() {
    Json c = confirm_entry();
    c["verdict"] = "mixed";
    c["experiment_id"] = "exp-0000000000000007";
    c["subject"] = "exp-0000000000000007";
    c["name"] = "loop-order";
    c["regressed_cases"] = Json::array({"large"});
    c["per_case"][1] = Json{{"case_id", "large"},  {"verdict", "regressed"}, {"regressed", true},
                            {"effect_pct", -10.0}, {"ci_low_pct", -12.0},    {"ci_high_pct", -8.0}};
    return c;
}

Json overview_model(Json comparisons) {
    return Json{{"target", {{"minimum_effect_pct", 5.0}, {"metric", kMetric}}},
                {"comparisons", std::move(comparisons)}};
}

// Issue [19]: the overview showed the pooled interval only; a mixed comparison's regressed case
// was invisible there. Now every case has its row under the pooled one, a regressed one with ✕.
TEST(EffectChart, TheOverviewHasARowPerComparisonAndOnePerCase) {
    const std::string svg = overview_chart(overview_model(Json::array(
        {confirm_entry(), mixed_entry(), Json{{"type", "screen"}, {"verdict", "invalid"}}})));
    EXPECT_NE(svg.find(R"(class="overview-chart")"), std::string::npos);
    EXPECT_EQ(count(svg, R"(class="row-label")"), 3u + 2u + 2u);
    EXPECT_EQ(count(svg, R"(class="interval deciding")"), 2u);
    EXPECT_EQ(count(svg, R"(class="interval")"), 4u) << "one thin bar per case";
    EXPECT_EQ(count(svg, "estimate cross"), 1u) << "the regressed case, told apart by shape";
    EXPECT_EQ(count(svg, "estimate square"), 3u);
    EXPECT_EQ(count(svg, "✘ regressed case"), 1u);
    EXPECT_NE(svg.find(">case large<"), std::string::npos);
    // The case rows follow their comparison's row.
    EXPECT_LT(svg.find(">confirm loop-order<"), svg.find("✘ regressed case"));
}

// Issue [19]: rows were labelled "confirm exp-…": the mechanism names them, the id is beside.
TEST(EffectChart, TheOverviewNamesAComparisonByItsMechanismWithTheIdBeside) {
    Json audit = mixed_entry();
    audit["type"] = "audit";
    const std::string svg = overview_chart(overview_model(Json::array({mixed_entry(), audit})));
    EXPECT_NE(svg.find(R"(class="row-label">confirm loop-order<)"), std::string::npos);
    EXPECT_NE(svg.find(R"(class="row-sublabel" font-size="10">exp-0000000000000007<)"),
              std::string::npos);
    EXPECT_NE(svg.find(R"(class="row-label">audit loop-order<)"), std::string::npos);
    EXPECT_NE(svg.find(">champion exp-0000000000000007<"), std::string::npos);
    EXPECT_EQ(svg.find(">confirm exp-"), std::string::npos);
}

// Issue [19]: an invalid or cancelled row printed its reason over the chart's labels. Each reason
// is a numbered note, wrapped, below the axis caption; the row cites its number.
TEST(EffectChart, TheReasonsOfRowsThatDecidedNothingAreNumberedNotesBelowTheChart) {
    const std::string long_reason =
        "the candidate failed correctness on case small: max_rel_err 0.4 is above the threshold "
        "1e-06 of the Target, so no performance claim is made for this candidate at all";
    Json invalid{{"type", "screen"},     {"id", "inv-3"},    {"state", "succeeded"},
                 {"verdict", "invalid"}, {"name", "tiling"}, {"subject", "exp-3"},
                 {"reason", long_reason}};
    Json cancelled{{"type", "confirm"},
                   {"id", "inv-4"},
                   {"state", "cancelled"},
                   {"verdict", ""},
                   {"name", "unroll"},
                   {"subject", "exp-4"},
                   {"reason", "cancelled by the user"}};
    const std::string svg =
        overview_chart(overview_model(Json::array({confirm_entry(), invalid, cancelled})));
    EXPECT_NE(svg.find(R"(class="row-note">invalid [1]<)"), std::string::npos);
    EXPECT_NE(svg.find(R"(class="row-note">cancelled [2]<)"), std::string::npos);
    EXPECT_NE(svg.find(R"(class="chart-note">[1] screen tiling (inv-3) invalid: the candidate)"),
              std::string::npos);
    EXPECT_NE(
        svg.find(
            R"(class="chart-note">[2] confirm unroll (inv-4) cancelled: cancelled by the user<)"),
        std::string::npos);
    EXPECT_GE(count(svg, R"(class="chart-note")"), 3u) << "the long reason wraps";
    EXPECT_EQ(svg.find(R"(class="row-note">)" + long_reason), std::string::npos);
    EXPECT_GT(text_y(svg, "chart-note"), text_y(svg, "axis-caption"))
        << "the notes lie below everything the plot draws";
    // The viewBox is tall enough for every line of the notes.
    const double height = number_after(svg, R"(viewBox="0 0 760.0 )", "760.0 ");
    const auto last = svg.rfind(R"(class="chart-note")");
    EXPECT_LT(std::stod(svg.substr(svg.rfind(R"( y=")", last) + 4, 32)), height);
}

TEST(EffectChart, TheCostBarShowsEachKindAndTheBudget) {
    Json cost{{"wall_s", 40.0},
              {"budget", {{"wall_s", 100.0}}},
              {"by_kind",
               {{"baseline", {{"wall_s", 28.0}, {"count", 1}}},
                {"confirm", {{"wall_s", 12.0}, {"count", 1}}}}}};
    const std::string svg = cost_chart(cost);
    EXPECT_NE(svg.find(R"(class="cost baseline")"), std::string::npos);
    EXPECT_NE(svg.find(R"(class="cost confirm")"), std::string::npos);
    EXPECT_NE(svg.find(R"(class="budget")"), std::string::npos);
    EXPECT_NE(svg.find("wall budget 1 min 40 s"), std::string::npos);
    cost["budget"]["wall_s"] = 0.0;
    EXPECT_NE(cost_chart(cost).find("no wall budget set"), std::string::npos);
}

}  // namespace
}  // namespace cko::report
