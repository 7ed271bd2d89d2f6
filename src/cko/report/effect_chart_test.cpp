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

TEST(EffectChart, AComparisonWithoutValidPairsSaysWhy) {
    Json c{{"type", "screen"},
           {"id", "inv-2"},
           {"verdict", "invalid"},
           {"d", Json::array()},
           {"reason", "the candidate failed correctness on case <small>"}};
    const std::string svg = comparison_chart(c, kMetric, 5.0);
    EXPECT_EQ(count(svg, R"(class="pair")"), 0u);
    EXPECT_NE(svg.find("no valid pairs: the candidate failed correctness on case &lt;small&gt;"),
              std::string::npos);
    EXPECT_NE(svg.find(R"(class="zero" d="M)"), std::string::npos);
}

TEST(EffectChart, TheOverviewHasOneRowPerComparison) {
    Json model{{"target", {{"minimum_effect_pct", 5.0}, {"metric", kMetric}}},
               {"comparisons", Json::array({confirm_entry(), confirm_entry(),
                                            Json{{"type", "screen"}, {"verdict", "invalid"}}})}};
    const std::string svg = overview_chart(model);
    EXPECT_NE(svg.find(R"(class="overview-chart")"), std::string::npos);
    EXPECT_EQ(count(svg, R"(class="row-label")"), 3u);
    EXPECT_EQ(count(svg, R"(class="interval deciding")"), 2u);
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
