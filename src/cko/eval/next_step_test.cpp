// The next-step rule: what each finished comparison's evidence allows, and the command for it.
#include "cko/eval/next_step.hpp"

#include <gtest/gtest.h>

namespace cko::eval {
namespace {

ComparisonEnd end_of(ComparisonKind kind, const Json& outputs,
                     run::InvocationState state = run::InvocationState::succeeded) {
    ComparisonEnd e = comparison_end_of(kind, state, outputs);
    e.root = "art";
    e.experiment_id = "exp-1";
    e.invocation_id = "inv-9";
    return e;
}

TEST(NextStep, AScreenThatPassesItOnAsksForTheConfirm) {
    const NextStep n = next_step(end_of(
        ComparisonKind::screen, Json{{"verdict", "improved"}, {"decision", "pass_to_confirm"}}));
    EXPECT_EQ(n.command, "cko confirm exp-1 --root art");
    EXPECT_NE(n.statement.find("passes it on"), std::string::npos);
}

TEST(NextStep, AnUndecidedScreenIsAJudgementNotAnInstruction) {
    const NextStep n =
        next_step(end_of(ComparisonKind::screen,
                         Json{{"verdict", "inconclusive"}, {"decision", "needs_judgement"}}));
    EXPECT_NE(n.statement.find("only if"), std::string::npos);
}

TEST(NextStep, AnInvalidScreenSaysWhatNowRefuses) {
    const NextStep n = next_step(
        end_of(ComparisonKind::screen, Json{{"verdict", "invalid"}, {"decision", "rejected"}}));
    EXPECT_NE(n.statement.find("candidate_failed"), std::string::npos);
    EXPECT_EQ(n.command.find("cko confirm"), std::string::npos);
}

TEST(NextStep, AnImprovedConfirmNamesTheSelectionWithItsIds) {
    const NextStep n = next_step(end_of(ComparisonKind::confirm, Json{{"verdict", "improved"}}));
    EXPECT_EQ(n.command, "cko champion select --root art --experiment exp-1 --confirm inv-9");
}

TEST(NextStep, AMixedConfirmAcceptsEveryRegressedCaseByName) {
    const NextStep n = next_step(
        end_of(ComparisonKind::confirm,
               Json{{"verdict", "mixed"}, {"regressed_cases", Json::array({"small", "tiny"})}}));
    EXPECT_EQ(n.command,
              "cko champion select --root art --experiment exp-1 --confirm inv-9 "
              "--accept-regression small --accept-regression tiny");
    EXPECT_NE(n.statement.find("small, tiny"), std::string::npos);
}

TEST(NextStep, AMixedConfirmAlsoAcceptsTheCasesOfAnAcceptableConstraintRegression) {
    const NextStep n = next_step(end_of(
        ComparisonKind::confirm,
        Json{{"verdict", "mixed"},
             {"regressed_cases", Json::array()},
             {"constraint_regressions",
              Json::parse(
                  R"([{"case_id": "light", "constraint": "p99_ms", "acceptable": true}])")}}));
    EXPECT_EQ(n.command,
              "cko champion select --root art --experiment exp-1 --confirm inv-9 "
              "--accept-regression light");
}

TEST(NextStep, NoOtherConfirmVerdictOffersASelection) {
    for (const char* v : {"regressed", "equivalent", "below_minimum", "inconclusive", "invalid"}) {
        const NextStep n = next_step(end_of(ComparisonKind::confirm, Json{{"verdict", v}}));
        EXPECT_EQ(n.command.find("champion select"), std::string::npos) << v;
    }
}

TEST(NextStep, AFailedConfirmIsRetriedOnTheRecord) {
    const NextStep n =
        next_step(end_of(ComparisonKind::confirm, Json::object(), run::InvocationState::failed));
    EXPECT_EQ(n.command, "cko confirm exp-1 --root art --retry-of inv-9 --reason \"…\"");
}

TEST(NextStep, AFailedAuditRestoresCitingIt) {
    const NextStep n = next_step(end_of(ComparisonKind::audit, Json{{"verdict", "regressed"}}));
    EXPECT_EQ(n.command, "cko champion restore --root art --audit inv-9");
    EXPECT_NE(n.statement.find("cko conclusion lower --root art --to kernel|unconfirmed --reason … "
                               "--audit inv-9"),
              std::string::npos)
        << n.statement;
    const NextStep ok = next_step(end_of(ComparisonKind::audit, Json{{"verdict", "improved"}}));
    EXPECT_EQ(ok.command.find("restore"), std::string::npos);
}

TEST(NextStep, AnAAControlSpeaksOfTheInstrument) {
    const Json check{{"biased", false}};
    const NextStep clean = next_step(end_of(
        ComparisonKind::confirm, Json{{"verdict", "equivalent"}, {"instrument_check", check}}));
    EXPECT_NE(clean.statement.find("fit to compare"), std::string::npos);
    EXPECT_TRUE(clean.command.empty());
    const NextStep biased = next_step(end_of(
        ComparisonKind::confirm, Json{{"verdict", "improved"}, {"instrument_check", check}}));
    EXPECT_EQ(biased.command.find("champion select"), std::string::npos);
}

}  // namespace
}  // namespace cko::eval
