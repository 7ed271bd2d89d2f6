// The Markdown report: the same sections as the page, a comparisons table, and the interval strip.
#include "cko/report/markdown_printer.hpp"

#include "cko/report/report_model.hpp"
#include "cko/report/testing/synthetic_store.hpp"
#include "cko/stats/paired_estimate.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko::report {
namespace {

class MarkdownPrinterTest : public test::ScratchTest {};

TEST_F(MarkdownPrinterTest, SectionsAndOneTableRowPerComparison) {
    testing::SyntheticStore s(dir_ / "art");
    (void)s.baseline();
    const std::string x = s.experiment("loop-order", "mechanism", "rows | columns");
    const std::string c = s.comparison("confirm", x, 0.9, "improved");
    (void)s.select(x, c);
    const std::string md = render_markdown(build_report_model(s.store(), 0));
    EXPECT_EQ(md.rfind("# cko report: synthetic\n", 0), 0u);
    for (const char* h :
         {"## Summary", "## Target", "## Baseline and resolution", "## Experiments in time order",
          "## Comparisons", "## Champion and lineage", "## Audit", "## Cost", "## Profiles",
          "## Rejected directions, evidence gaps and open risks", "## Termination"}) {
        EXPECT_NE(md.find(std::string("\n") + h + "\n"), std::string::npos) << h;
    }
    EXPECT_NE(md.find("| confirm `" + c + "` | loop-order (`" + x + "`) | **improved** |"),
              std::string::npos);
    EXPECT_NE(md.find("rows \\| columns"), std::string::npos) << "a pipe in a cell is escaped";
    EXPECT_NE(md.find("Champion now: **`" + x + "`**"), std::string::npos);
    EXPECT_NE(md.find("profiles: none stored"), std::string::npos);
    EXPECT_NE(md.find("- case `small`: improved"), std::string::npos);
}

// Issue [19]: the table showed pooled effects only and named comparisons by experiment id; a
// mixed comparison's regressed case was not visible there, its cases were printed as JSON, and
// the reason of a comparison that decided nothing had no place of its own.
TEST_F(MarkdownPrinterTest, EveryCaseHasItsRowUnderItsComparisonNamedByMechanism) {
    testing::SyntheticStore s(dir_ / "art");
    const std::string x = s.experiment("vectorize");
    s.next_regressed = {"small"};
    const std::string c = s.comparison("confirm", x, 0.2, "mixed");
    const std::string y = s.experiment("tiling");
    const std::string w = s.comparison("screen", y, 0, "invalid", "rejected");
    const std::string z = s.experiment("unroll");
    const std::string k = s.invocation("confirm", z, Json{{"experiment_id", z}}, "cancelled", 3,
                                       "cancelled by the user");
    const std::string md = render_markdown(build_report_model(s.store(), 0));
    const auto row = md.find("| confirm `" + c + "` | vectorize (`" + x +
                             "`) | **mixed** — regressed on small |");
    ASSERT_NE(row, std::string::npos) << md;
    const auto small = md.find("| | ↳ case `small` | | ✘ **regressed case** | ", row);
    const auto large = md.find("| | ↳ case `large` | | improved | ", row);
    EXPECT_NE(small, std::string::npos);
    EXPECT_NE(large, std::string::npos);
    EXPECT_LT(small, md.find("| screen `" + w + "`")) << "the cases follow their comparison";
    EXPECT_EQ(md.find("[\""), std::string::npos) << "no list is printed as JSON";
    // Reasons of invalid and cancelled comparisons: numbered notes under the table.
    EXPECT_NE(md.find("| screen `" + w + "` | tiling (`" + y + "`) | **invalid** / rejected [1] |"),
              std::string::npos);
    EXPECT_NE(md.find("| confirm `" + k + "` | unroll (`" + z + "`) | **cancelled** [2] |"),
              std::string::npos);
    EXPECT_NE(md.find("\nNotes:\n\n[1] screen `" + w +
                      "` (tiling) invalid: the candidate failed correctness on case small"),
              std::string::npos);
    EXPECT_NE(md.find("[2] confirm `" + k + "` (unroll) cancelled: cancelled by the user\n"),
              std::string::npos);
}

TEST(IntervalStrip, PlacesTheIntervalAgainstTheBand) {
    // Axis from −20 % to +20 % in log units; band ±5 %; interval [+10 %, +15 %] right of the band.
    const double lo = stats::pct_to_log(-20);
    const double hi = stats::pct_to_log(20);
    const std::string strip = interval_strip(
        Json{{"ci_low_pct", 10.0}, {"ci_high_pct", 15.0}, {"effect_pct", 12.0}}, 5.0, lo, hi);
    const auto zero = strip.find(':');
    const auto open = strip.find('[');
    const auto close = strip.find(']');
    ASSERT_NE(zero, std::string::npos);
    ASSERT_NE(open, std::string::npos);
    ASSERT_NE(close, std::string::npos);
    EXPECT_LT(zero, open);
    EXPECT_LT(open, close);
    EXPECT_NE(strip.find("◆"), std::string::npos);
    const auto right_edge = strip.rfind('|', open);
    EXPECT_NE(right_edge, std::string::npos);
    EXPECT_GT(right_edge, zero) << "the +m edge lies between 0 and the interval";
    EXPECT_EQ(interval_strip(Json{{"ci_low_pct", nullptr}}, 5.0, lo, hi), "");
}

}  // namespace
}  // namespace cko::report
