// The Markdown report: the same sections as the page, a comparisons table, and the interval strip.
#include "cko/report/markdown_printer.hpp"

#include "cko/report/report_model.hpp"
#include "cko/report/testing/synthetic_store.hpp"
#include "cko/stats/paired_estimate.hpp"
#include "cko/store/test_support.hpp"

#include <gtest/gtest.h>

namespace cko::report {
namespace {

class MarkdownPrinterTest : public store::testing::ScratchTest {};

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
    EXPECT_NE(md.find("| confirm `" + c + "` | `" + x + "` | **improved** |"), std::string::npos);
    EXPECT_NE(md.find("rows \\| columns"), std::string::npos) << "a pipe in a cell is escaped";
    EXPECT_NE(md.find("Champion now: **`" + x + "`**"), std::string::npos);
    EXPECT_NE(md.find("profiles: none stored"), std::string::npos);
    EXPECT_NE(md.find("- case `small`: improved"), std::string::npos);
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
