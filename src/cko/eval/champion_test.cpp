// The champion rules, in process: only an `improved` confirm of that experiment against the current
// champion selects; restore needs a failed audit or a reason; and the budget rules before a start.
#include "cko/eval/champion.hpp"

#include "cko/eval/session.hpp"
#include "cko/eval/test_support.hpp"

#include <gtest/gtest.h>

namespace cko::eval {
namespace {

using ChampionTest = testing::FrozenTargetTest;

TEST_F(ChampionTest, OnlyAnImprovedConfirmSelects) {
    const std::string exp = experiment("kernel v1\n");
    for (const char* verdict :
         {"invalid", "regressed", "equivalent", "below_minimum", "inconclusive"}) {
        const std::string conf = planted("confirm", exp, verdict, original_digest());
        std::string message;
        EXPECT_EQ(code_of([&] { (void)select_champion(*target_, exp, conf); }, &message),
                  ErrorCode::not_eligible)
            << verdict;
        EXPECT_NE(message.find("only an `improved` confirm"), std::string::npos) << message;
        EXPECT_EQ(champion(), "original") << verdict;
    }
    const std::string good = planted("confirm", exp, "improved", original_digest());
    const Json selection = select_champion(*target_, exp, good);
    EXPECT_EQ(selection.at("experiment_id"), exp);
    EXPECT_EQ(selection.at("confirm").at("id"), good);
    EXPECT_EQ(champion(), exp);
    EXPECT_EQ(read_champion(*store_).digest, digest_of(exp));
}

TEST_F(ChampionTest, AConfirmOfAnotherExperimentOrAScreenDoesNotSelect) {
    const std::string a = experiment("kernel a\n");
    const std::string b = experiment("kernel b\n");
    const std::string conf_b = planted("confirm", b, "improved", original_digest());
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, a, conf_b); }),
              ErrorCode::not_eligible);
    const std::string screen_a = planted("screen", a, "improved", original_digest());
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, a, screen_a); }),
              ErrorCode::not_eligible);
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, a, "inv-0000000000000000"); }),
              ErrorCode::not_found);
    EXPECT_EQ(champion(), "original");
}

TEST_F(ChampionTest, AConfirmAgainstAFormerChampionIsStale) {
    const std::string a = experiment("kernel a\n");
    const std::string b = experiment("kernel b\n");
    const std::string conf_a = planted("confirm", a, "improved", original_digest());
    const std::string conf_b = planted("confirm", b, "improved", original_digest());
    (void)select_champion(*target_, a, conf_a);
    std::string message;
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, b, conf_b); }, &message),
              ErrorCode::not_eligible);
    EXPECT_NE(message.find("--base champion"), std::string::npos) << message;
    EXPECT_EQ(champion(), a);
    // Confirmed against the champion as it is now, b may take over.
    const std::string again = planted("confirm", b, "improved", digest_of(a));
    (void)select_champion(*target_, b, again);
    EXPECT_EQ(champion(), b);
}

TEST_F(ChampionTest, RestoreNeedsAFailedAuditOrAReason) {
    EXPECT_EQ(code_of([&] { (void)restore_original(*target_, "", "why"); }),
              ErrorCode::not_eligible);  // nothing to restore
    const std::string a = experiment("kernel a\n");
    (void)select_champion(*target_, a, planted("confirm", a, "improved", original_digest()));
    EXPECT_EQ(code_of([&] { (void)restore_original(*target_, "", ""); }),
              ErrorCode::invalid_argument);
    const std::string passed_audit = planted("audit", "", "improved", original_digest());
    EXPECT_EQ(code_of([&] { (void)restore_original(*target_, passed_audit, ""); }),
              ErrorCode::not_eligible);
    EXPECT_EQ(champion(), a);
    const std::string failed_audit = planted("audit", "", "equivalent", original_digest());
    const Json selection = restore_original(*target_, failed_audit, "");
    EXPECT_EQ(selection.at("restore").at("audit"), failed_audit);
    EXPECT_EQ(champion(), "original");
    EXPECT_EQ(read_champion(*store_).digest, original_digest());
}

TEST_F(ChampionTest, AWallBudgetSpentRefusesTheNextOperation) {
    freeze("wall_seconds_budget = 1000");
    EXPECT_NO_THROW(require_budget(*target_, 10));
    std::string message;
    EXPECT_EQ(code_of([&] { require_budget(*target_, 2000); }, &message),
              ErrorCode::budget_exhausted);
    EXPECT_NE(message.find("wall seconds are left"), std::string::npos) << message;
}

TEST_F(ChampionTest, ACpuTargetIgnoresTheGpuBudget) {
    freeze("gpu_seconds_budget = 1");
    (void)planted("baseline", "", "equivalent", original_digest(),
                  50);  // no GPU in the Target: not counted
    EXPECT_NO_THROW(require_budget(*target_, 0));
}

// A `mixed` confirm selects only when every regressed case is accepted by name: accepting one of
// two, or a case that did not regress, is refused and names what is missing.
TEST_F(ChampionTest, AMixedConfirmNeedsEveryRegressedCaseAcceptedByName) {
    const std::string exp = experiment("kernel mixed\n");
    run::Invocation inv = run::Invocation::create(*store_, "confirm", Json{{"experiment_id", exp}},
                                                  run::Limits{}, nullptr);
    (void)inv.finish(run::InvocationState::succeeded, "planted by the test",
                     Json{{"experiment_id", exp},
                          {"verdict", "mixed"},
                          {"regressed_cases", {"b", "c"}},
                          {"reference", {{"label", "x"}, {"digest", original_digest()}}}});
    const std::string conf = inv.id();
    std::string message;
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, exp, conf); }, &message),
              ErrorCode::not_eligible);
    EXPECT_NE(message.find("cases b, c regressed"), std::string::npos) << message;
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, exp, conf, {"b"}); }, &message),
              ErrorCode::not_eligible);
    EXPECT_NE(message.find("case c regressed"), std::string::npos) << message;
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, exp, conf, {"a"}); }, &message),
              ErrorCode::not_eligible);
    EXPECT_EQ(code_of(
                  [&] {
                      (void)select_champion(*target_, exp, conf, {"b", "c", "a"});
                  },
                  &message),
              ErrorCode::invalid_argument);
    EXPECT_NE(message.find("has no regressed case a"), std::string::npos) << message;
    EXPECT_EQ(champion(), "original");
    const Json selection = select_champion(*target_, exp, conf, {"c", "b"});
    EXPECT_EQ(selection.at("accepted_regressions"), Json::array({"b", "c"}));
    EXPECT_EQ(champion(), exp);
}

// Issue [18]: a constraint broken on one case makes the confirm `regressed`; select refuses it,
// names the case and the constraint, and --accept-regression cannot wave it through.
TEST_F(ChampionTest, AConstraintBrokenOnACaseIsRefusedByNameAndCannotBeAccepted) {
    const std::string exp = experiment("kernel p99\n");
    run::Invocation inv = run::Invocation::create(*store_, "confirm", Json{{"experiment_id", exp}},
                                                  run::Limits{}, nullptr);
    (void)inv.finish(
        run::InvocationState::succeeded, "planted by the test",
        Json{{"experiment_id", exp},
             {"verdict", "regressed"},
             {"pooled_verdict", "improved"},
             {"regressed_cases", Json::array()},
             {"constraint_regressions", {{{"case_id", "light"}, {"constraint", "p99_ms"}}}},
             {"reference", {{"label", "x"}, {"digest", original_digest()}}}});
    std::string message;
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, exp, inv.id()); }, &message),
              ErrorCode::not_eligible);
    EXPECT_NE(message.find("constraint p99_ms regressed on case light"), std::string::npos)
        << message;
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, exp, inv.id(), {"light"}); }),
              ErrorCode::not_eligible);
    EXPECT_EQ(champion(), "original");
}

// A constraint whose spec sets accept_per_case, regressed on one case but not pooled, makes an
// improvement `mixed`: select refuses it naming the case and the constraint until that case is
// accepted by name, and records the acceptance.
TEST_F(ChampionTest, AnAcceptableConstraintRegressionSelectsOnlyWithTheCaseAccepted) {
    const std::string exp = experiment("kernel batching\n");
    run::Invocation inv = run::Invocation::create(*store_, "confirm", Json{{"experiment_id", exp}},
                                                  run::Limits{}, nullptr);
    (void)inv.finish(
        run::InvocationState::succeeded, "planted by the test",
        Json{{"experiment_id", exp},
             {"verdict", "mixed"},
             {"pooled_verdict", "improved"},
             {"regressed_cases", Json::array()},
             {"constraint_regressions",
              {{{"case_id", "light"}, {"constraint", "p99_ms"}, {"acceptable", true}}}},
             {"reference", {{"label", "x"}, {"digest", original_digest()}}}});
    std::string message;
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, exp, inv.id()); }, &message),
              ErrorCode::not_eligible);
    EXPECT_NE(message.find("constraint p99_ms regressed on case light"), std::string::npos)
        << message;
    EXPECT_NE(message.find("--accept-regression for each (light)"), std::string::npos) << message;
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, exp, inv.id(), {"heavy"}); }),
              ErrorCode::not_eligible);
    EXPECT_EQ(champion(), "original");
    const Json selection = select_champion(*target_, exp, inv.id(), {"light"});
    EXPECT_EQ(selection.at("accepted_regressions"), Json::array({"light"}));
    EXPECT_EQ(champion(), exp);
}

// A `mixed` confirm with a regressed case of the primary and an acceptable constraint regression on
// another needs both cases named; the refusal says what regressed on each.
TEST_F(ChampionTest, AMixedConfirmNeedsThePrimarysAndTheConstraintsCasesAccepted) {
    const std::string exp = experiment("kernel both\n");
    run::Invocation inv = run::Invocation::create(*store_, "confirm", Json{{"experiment_id", exp}},
                                                  run::Limits{}, nullptr);
    (void)inv.finish(run::InvocationState::succeeded, "planted by the test",
                     Json{{"experiment_id", exp},
                          {"verdict", "mixed"},
                          {"regressed_cases", {"b"}},
                          {"constraint_regressions",
                           {{{"case_id", "a"}, {"constraint", "p99_ms"}, {"acceptable", true}}}},
                          {"reference", {{"label", "x"}, {"digest", original_digest()}}}});
    std::string message;
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, exp, inv.id(), {"b"}); }, &message),
              ErrorCode::not_eligible);
    EXPECT_NE(message.find("but constraint p99_ms regressed on case a;"), std::string::npos)
        << message;
    EXPECT_EQ(message.find("case b regressed"), std::string::npos) << message;
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, exp, inv.id(), {"a"}); }, &message),
              ErrorCode::not_eligible);
    EXPECT_NE(message.find("but case b regressed;"), std::string::npos) << message;
    const Json selection = select_champion(*target_, exp, inv.id(), {"a", "b"});
    EXPECT_EQ(selection.at("accepted_regressions"), Json::array({"b", "a"}));
}

TEST_F(ChampionTest, AVerdictTheInstrumentBiasDecidedSaysSo) {
    const std::string exp = experiment("kernel biased\n");
    run::Invocation inv = run::Invocation::create(*store_, "confirm", Json{{"experiment_id", exp}},
                                                  run::Limits{}, nullptr);
    (void)inv.finish(run::InvocationState::succeeded, "planted by the test",
                     Json{{"experiment_id", exp},
                          {"verdict", "inconclusive"},
                          {"instrument_bias",
                           {{"bound_pct", 0.8},
                            {"source", "baseline inv-1"},
                            {"decides", true},
                            {"verdict_without_bias", "improved"},
                            {"note", "n"}}},
                          {"reference", {{"label", "x"}, {"digest", original_digest()}}}});
    std::string message;
    EXPECT_EQ(code_of([&] { (void)select_champion(*target_, exp, inv.id()); }, &message),
              ErrorCode::not_eligible);
    EXPECT_NE(message.find("biased instrument (±0.800 %, baseline inv-1) decided it"),
              std::string::npos)
        << message;
}

}  // namespace
}  // namespace cko::eval
