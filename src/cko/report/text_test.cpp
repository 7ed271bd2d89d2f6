// Numbers as people read them: signed percents with a real minus, intervals, durations, escaping.
#include "cko/report/text.hpp"

#include <gtest/gtest.h>

namespace cko::report {
namespace {

TEST(ReportText, PercentsCarryTheirSignAndThreeFigures) {
    EXPECT_EQ(pct_text(12.345), "+12.3 %");
    EXPECT_EQ(pct_text(-4.3077), "−4.31 %");
    EXPECT_EQ(pct_text(1136.7), "+1137 %");
    EXPECT_EQ(pct_text(0.0), "0 %");
    EXPECT_EQ(pct_text(Json()), "–");
}

// Issue [19]: the report printed a mixed verdict's cases as `["small"]`.
TEST(ReportText, AListIsPrintedAsWordsNeverAsJson) {
    EXPECT_EQ(list_text(Json::array({"small", "large"})), "small, large");
    EXPECT_EQ(list_text(Json::array()), "none");
    EXPECT_EQ(value_text(Json::array({"small"})), "small");
}

TEST(ReportText, WrappedLinesBreakAtSpacesAndKeepEveryWord) {
    const auto lines = wrap_text("the candidate failed\ncorrectness on case small", 20);
    ASSERT_EQ(lines.size(), 3u);
    EXPECT_EQ(lines[0], "the candidate failed");
    EXPECT_EQ(lines[1], "correctness on case");
    EXPECT_EQ(lines[2], "small");
    EXPECT_EQ(wrap_text("averyveryverylongword x", 5),
              (std::vector<std::string>{"averyveryverylongword", "x"}));
    EXPECT_TRUE(wrap_text("", 10).empty());
}

TEST(ReportText, AnIntervalNeedsBothEnds) {
    EXPECT_EQ(interval_text(Json{{"ci_low_pct", 5.5}, {"ci_high_pct", 20.0}}),
              "[+5.50 %, +20.0 %]");
    EXPECT_EQ(interval_text(Json{{"ci_low_pct", 5.5}, {"ci_high_pct", nullptr}}), "–");
}

TEST(ReportText, EffectWordsFollowTheMetricsDirection) {
    // +150 % better for a lower-is-better latency: 2.5× faster, −60 % latency.
    EXPECT_EQ(effect_words(Json(150.0), stats::Direction::lower, "latency_us"),
              "2.50× faster (-60.0 % latency_us)");
    EXPECT_EQ(effect_words(Json(-20.0), stats::Direction::higher, "tflops"),
              "1.25× lower tflops (-20.0 %)");
    EXPECT_EQ(effect_words(Json(), stats::Direction::lower, "latency_us"), "no estimate");
}

TEST(ReportText, DurationsChooseTheirUnit) {
    EXPECT_EQ(seconds_text(0), "0 s");
    EXPECT_EQ(seconds_text(12.34), "12.3 s");
    EXPECT_EQ(seconds_text(245), "4 min 05 s");
    EXPECT_EQ(seconds_text(3720), "1 h 02 min");
}

TEST(ReportText, EscapingKeepsMarkupOut) {
    EXPECT_EQ(html_escape(R"(<a href="x">&'</a>)"),
              "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
    EXPECT_EQ(md_cell("a|b\nc"), "a\\|b c");
    EXPECT_EQ(md_cell(""), "–");
    EXPECT_EQ(utc_text(0), "1970-01-01 00:00:00 UTC");
}

TEST(ReportText, LongDriverMessagesBecomeOneBoundedLine) {
    EXPECT_EQ(one_line("a\nb\tc"), "a b c");
    EXPECT_EQ(one_line("abcdef", 3), "abc…");
    EXPECT_EQ(one_line("ab×cd", 3), "ab…") << "× is two bytes: the cut keeps it whole or drops it";
    EXPECT_EQ(value_text(Json()), "none");
    EXPECT_EQ(value_text(Json("535.1")), "535.1");
    EXPECT_EQ(value_text(Json(2)), "2");
}

}  // namespace
}  // namespace cko::report
