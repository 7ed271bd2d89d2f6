// The handoff skeleton: facts with their evidence ids, rejections with what they closed, marked
// sections.
#include "cko/report/handoff.hpp"

#include "cko/report/report_model.hpp"
#include "cko/report/termination.hpp"
#include "cko/report/testing/synthetic_store.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko::report {
namespace {

std::size_t count_in(const std::string& hay, const std::string& needle) {
    std::size_t n = 0;
    for (auto p = hay.find(needle); p != std::string::npos;
         p = hay.find(needle, p + needle.size())) {
        ++n;
    }
    return n;
}

class HandoffTest : public test::ScratchTest {};

TEST_F(HandoffTest, TheSkeletonCitesTheEvidenceAndMarksWhatAPersonMustWrite) {
    testing::SyntheticStore s(dir_ / "art");
    (void)s.baseline();
    const std::string fast = s.experiment("loop-order");
    const std::string c1 = s.comparison("confirm", fast, 0.9, "improved");
    const std::string sel = s.select(fast, c1);
    const std::string a1 = s.comparison("audit", fast, 0.85, "improved");
    const std::string wrong = s.experiment("loop-order", "mechanism");
    const std::string s2 = s.comparison("screen", wrong, 0, "invalid", "rejected");
    const std::string slow = s.experiment("unroll", "integration");
    const std::string c3 = s.comparison("confirm", slow, -0.2, "regressed");

    std::string md = render_handoff(build_report_model(s.store(), 0));
    EXPECT_EQ(md.rfind("# Handoff: synthetic (Target `tgt-00000000000000aa`)", 0), 0u);
    // No stop yet: the termination reason is one more section to write, and a gap.
    EXPECT_EQ(count_in(md, kWriteHere),
              1u + 3u + 1u);  // the banner, three sections, the termination
    EXPECT_NE(md.find("- **Claim layer:** kernel"), std::string::npos);
    EXPECT_NE(md.find("**reached**"), std::string::npos);
    EXPECT_NE(md.find("- **Keep:** champion `" + fast + "`"), std::string::npos);
    EXPECT_NE(md.find("selection `" + sel + "`"), std::string::npos);
    EXPECT_NE(md.find("  - confirm `" + c1 + "`: "), std::string::npos);
    EXPECT_NE(md.find("  - audit `" + a1 + "`: "), std::string::npos);
    EXPECT_NE(md.find("host `bench-host`"), std::string::npos);
    // Conclusion per experiment with its evidence ids.
    EXPECT_NE(md.find("| `" + wrong + "` |"), std::string::npos);
    EXPECT_NE(md.find("`" + wrong + "`, `" + s2 + "`"), std::string::npos);
    // Rejections and what each closed.
    EXPECT_NE(
        md.find(
            "closed: **implementation** — this implementation only; the mechanism stays open (the "
            "contract declared mechanism"),
        std::string::npos);
    EXPECT_NE(md.find("closed: **integration**"), std::string::npos);
    EXPECT_NE(md.find("`" + slow + "`, `" + c3 + "`"), std::string::npos);
    EXPECT_NE(md.find("- wall: 1 min 16 s of 1 h 00 min (2 %), 58 min"), std::string::npos);
    EXPECT_NE(md.find("no termination reason recorded"), std::string::npos);

    (void)record_stop(s.store(), "goal reached; the remaining directions are not worth the budget");
    md = render_handoff(build_report_model(s.store(), 0));
    EXPECT_EQ(count_in(md, kWriteHere), 1u + 3u);
    EXPECT_NE(md.find("## Termination reason\n\ngoal reached; the remaining directions are not "
                      "worth the budget (`stop-"),
              std::string::npos);
    EXPECT_EQ(md.find("no termination reason recorded"), std::string::npos);
}

TEST_F(HandoffTest, WithoutAChampionTheOriginalIsKept) {
    testing::SyntheticStore s(dir_ / "art");
    const std::string md = render_handoff(build_report_model(s.store(), 0));
    EXPECT_NE(md.find("- **Keep:** the original"), std::string::npos);
    EXPECT_NE(md.find("**not reached**"), std::string::npos);
    EXPECT_NE(md.find("None rejected."), std::string::npos);
    EXPECT_NE(md.find("no baseline"), std::string::npos);
}

}  // namespace
}  // namespace cko::report
