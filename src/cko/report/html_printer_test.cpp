// The HTML page: self-contained, one chart per comparison, the champion named, outside text
// escaped.
#include "cko/report/html_printer.hpp"

#include "cko/report/report_model.hpp"
#include "cko/report/testing/synthetic_store.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko::report {
namespace {

std::size_t occurrences(const std::string& hay, const std::string& needle) {
    std::size_t n = 0;
    for (auto p = hay.find(needle); p != std::string::npos;
         p = hay.find(needle, p + needle.size())) {
        ++n;
    }
    return n;
}

class HtmlPrinterTest : public test::ScratchTest {};

TEST_F(HtmlPrinterTest, APageWithOneChartPerComparisonAndTheChampionNamed) {
    testing::SyntheticStore s(dir_ / "art");
    (void)s.baseline();
    const std::string fast = s.experiment("loop-order");
    (void)s.comparison("screen", fast, 0.9, "improved", "pass_to_confirm");
    const std::string c1 = s.comparison("confirm", fast, 0.9, "improved");
    (void)s.select(fast, c1);
    (void)s.comparison("audit", fast, 0.85, "improved");
    const std::string wrong =
        s.experiment("loop-order", "mechanism", "<script>alert('x')</script> & more");
    (void)s.comparison("screen", wrong, 0, "invalid", "rejected");

    const std::string html = render_html(build_report_model(s.store(), 0));
    EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_EQ(occurrences(html, "<article class=\"comparison\""), 4u);
    EXPECT_EQ(occurrences(html, "class=\"effect-chart\""), 4u);
    EXPECT_EQ(occurrences(html, "class=\"aa-chart\""), 1u);
    EXPECT_EQ(occurrences(html, "class=\"overview-chart\""), 1u);
    EXPECT_NE(html.find("<strong id=\"champion-name\">" + fast + "</strong>"), std::string::npos);
    EXPECT_NE(html.find("profiles: none stored"), std::string::npos);
    EXPECT_NE(html.find("✔ improved"), std::string::npos);
    EXPECT_NE(html.find("⚠ invalid"), std::string::npos);
    // Outside text is escaped; nothing is fetched (no script, stylesheet link, image or URL but
    // the SVG namespace).
    EXPECT_EQ(html.find("<script>"), std::string::npos);
    EXPECT_NE(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; more"),
              std::string::npos);
    EXPECT_EQ(html.find("<link"), std::string::npos);
    EXPECT_EQ(html.find("<img"), std::string::npos);
    EXPECT_EQ(html.find("https://"), std::string::npos);
    EXPECT_EQ(occurrences(html, "http://"), occurrences(html, "http://www.w3.org/2000/svg"));
    for (const char* id :
         {"summary", "target", "baseline", "overview", "experiments", "comparisons", "champion",
          "audit", "cost", "profiles", "findings", "termination"}) {
        EXPECT_NE(html.find(std::string("<section id=\"") + id + "\""), std::string::npos) << id;
    }
}

// The overview section of a page, from its heading to the end of its section.
std::string overview_of(const std::string& html) {
    const auto at = html.find("<section id=\"overview\">");
    return at == std::string::npos ? "" : html.substr(at, html.find("</section>", at) - at);
}

// Issue [19]: the overview showed pooled effects only, labelled by experiment id, a mixed
// verdict's cases as JSON, and a cancelled comparison's reason over the chart's labels.
TEST_F(HtmlPrinterTest, TheOverviewShowsEveryCaseNamedByMechanismWithReasonsAsNotes) {
    testing::SyntheticStore s(dir_ / "art");
    const std::string x = s.experiment("vectorize");
    s.next_regressed = {"small"};
    (void)s.comparison("confirm", x, 0.2, "mixed");
    const std::string y = s.experiment("unroll");
    (void)s.invocation("confirm", y, Json{{"experiment_id", y}}, "cancelled", 3,
                       "cancelled by the user");
    const std::string html = render_html(build_report_model(s.store(), 0));
    const std::string overview = overview_of(html);
    ASSERT_NE(overview.find("class=\"overview-chart\""), std::string::npos);
    EXPECT_NE(overview.find(">confirm vectorize<"), std::string::npos);
    EXPECT_NE(overview.find(">" + x + "<"), std::string::npos) << "the id beside the name";
    EXPECT_EQ(occurrences(overview, ">case small<"), 1u);
    EXPECT_EQ(occurrences(overview, ">case large<"), 1u);
    EXPECT_EQ(occurrences(overview, "estimate cross"), 1u) << "the regressed case stands out";
    EXPECT_NE(overview.find(">cancelled [1]<"), std::string::npos);
    EXPECT_NE(overview.find("class=\"chart-note\">[1] confirm unroll"), std::string::npos);
    EXPECT_NE(html.find("improved overall but regressed on small<"), std::string::npos);
    EXPECT_EQ(html.find("[&quot;"), std::string::npos) << "no list is printed as JSON";
    EXPECT_NE(html.find("<h3>confirm of vectorize (<code>" + x + "</code>)"), std::string::npos);
}

TEST_F(HtmlPrinterTest, AnEmptyTargetStillRendersAndSaysWhatIsMissing) {
    testing::SyntheticStore s(dir_ / "art");
    const std::string html = render_html(build_report_model(s.store(), 0));
    EXPECT_NE(html.find("No baseline"), std::string::npos);
    EXPECT_NE(html.find("No comparison yet"), std::string::npos);
    EXPECT_NE(html.find("<strong id=\"champion-name\">original</strong>"), std::string::npos);
    EXPECT_EQ(occurrences(html, "class=\"effect-chart\""), 0u);
    EXPECT_TRUE(html.ends_with("</html>\n"));
}

TEST(VerdictLabel, NoVerdictRestsOnColourAlone) {
    EXPECT_EQ(verdict_label("regressed"), "<span class=\"verdict v-regressed\">✘ regressed</span>");
    EXPECT_EQ(verdict_label(""), "<span class=\"verdict v-\">• none</span>");
}

}  // namespace
}  // namespace cko::report
