// Sequential looks: the schedule, the per-look levels and when a run stops.
#include "cko/stats/sequential.hpp"

#include "cko/stats/alpha_spending.hpp"
#include "cko/stats/normal.hpp"
#include "cko/util/error.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace cko::stats {
namespace {

// n differences around `center` with a small deterministic spread (distinct values).
std::vector<double> differences(std::size_t n, double center, double spread) {
    std::vector<double> d;
    for (std::size_t i = 0; i < n; ++i) {
        d.push_back(center + spread * std::sin(static_cast<double>(i) * 2.3));
    }
    return d;
}

TEST(SequentialPlan, LooksAfterEveryBlockFromTheMinimumToTheMaximum) {
    const SequentialPlan plan;  // block 4, min 6, max 40
    EXPECT_EQ(plan.look_sizes(), (std::vector<std::size_t>{8, 12, 16, 20, 24, 28, 32, 36, 40}));
    SequentialPlan ragged;
    ragged.block = 5;
    ragged.min_pairs = 10;
    ragged.max_pairs = 22;
    EXPECT_EQ(ragged.look_sizes(), (std::vector<std::size_t>{10, 15, 20, 22}));
}

TEST(SequentialPlan, LevelsStartNearCertaintyAndEndJustAboveTheTarget) {
    const SequentialPlan plan;
    const std::vector<double> levels = plan.look_confidence();
    ASSERT_EQ(levels.size(), 9u);
    // The first look's level is the spending function itself: 1 − α(8/40).
    EXPECT_NEAR(levels.front(), 1.0 - obrien_fleming_spending(0.2, 0.05), 1e-12);
    for (std::size_t k = 1; k < levels.size(); ++k) {
        EXPECT_LT(levels[k], levels[k - 1]);
    }
    // The last look is stricter than 95 % (some alpha went to earlier looks) but not by much.
    EXPECT_GT(levels.back(), 0.95);
    EXPECT_LT(levels.back(), 0.97);
    const Json j = plan.to_json();
    EXPECT_EQ(j["spending"], "lan_demets_obrien_fleming");
    EXPECT_EQ(j["looks"].size(), 9u);
    EXPECT_NEAR(j["looks"][8]["cumulative_alpha"].get<double>(), 0.05, 1e-12);
}

TEST(SequentialPlan, OneLookUsesThePlainConfidence) {
    SequentialPlan fixed;
    fixed.min_pairs = 20;
    fixed.max_pairs = 20;
    EXPECT_EQ(fixed.look_sizes(), std::vector<std::size_t>{20});
    EXPECT_NEAR(fixed.look_confidence()[0], 0.95, 1e-9);
}

TEST(SequentialPlan, RefusesPlansThatCannotRun) {
    SequentialPlan plan;
    plan.block = 0;
    EXPECT_THROW(plan.validate(), Error);
    plan = {};
    plan.max_pairs = 4;  // below min_pairs
    EXPECT_THROW(plan.validate(), Error);
    plan = {};
    plan.block = 1;
    plan.max_pairs = 1000;  // ~1000 looks
    EXPECT_THROW(plan.validate(), Error);
    plan = {};
    plan.confidence = 1.0;
    EXPECT_THROW(plan.validate(), Error);
}

TEST(SequentialLook, TheFirstLookCannotDecideBecauseItsLevelNeedsMorePairs) {
    // Look 1 asks for 1 − 1.2e-5, which 8 pairs cannot reach (the best is 1 − 2/256).
    const LookDecision decision = sequential_look(differences(8, 0.05, 0.001), {}, 0.5);
    EXPECT_EQ(decision.look, 1u);
    EXPECT_FALSE(decision.stop);
    EXPECT_EQ(decision.verdict, Verdict::inconclusive);
    EXPECT_FALSE(decision.estimate.confidence_reached());
}

TEST(SequentialLook, StopsEarlyOnAClearImprovement) {
    // +5 % in every pair: at 16 pairs (look 3, level 99.8 %) the interval clears m = 0.5 %.
    const LookDecision decision = sequential_look(differences(16, 0.05, 0.002), {}, 0.5);
    EXPECT_EQ(decision.look, 3u);
    EXPECT_TRUE(decision.stop);
    EXPECT_EQ(decision.verdict, Verdict::improved);
    EXPECT_NEAR(decision.estimate.confidence, SequentialPlan{}.look_confidence()[2], 1e-15);
    EXPECT_EQ(decision.to_json()["verdict"], "improved");
}

TEST(SequentialLook, StopsOnEquivalenceAndOnRegression) {
    EXPECT_EQ(sequential_look(differences(20, 0.0, 0.001), {}, 0.5).verdict, Verdict::equivalent);
    const LookDecision worse = sequential_look(differences(20, -0.03, 0.002), {}, 0.5);
    EXPECT_TRUE(worse.stop);
    EXPECT_EQ(worse.verdict, Verdict::regressed);
}

TEST(SequentialLook, KeepsGoingWhenUndecidedAndAlwaysStopsAtTheMaximum) {
    // Noise of ±3 % around +0.5 %: nothing can be decided, at 20 pairs or at 40.
    const LookDecision middle = sequential_look(differences(20, 0.005, 0.03), {}, 0.5);
    EXPECT_FALSE(middle.stop);
    EXPECT_EQ(middle.verdict, Verdict::inconclusive);
    const LookDecision last = sequential_look(differences(40, 0.005, 0.03), {}, 0.5);
    EXPECT_EQ(last.look, 9u);
    EXPECT_TRUE(last.stop);
    EXPECT_EQ(last.verdict, Verdict::inconclusive);
}

TEST(SequentialLook, BetweenLooksTakesNoDecisionAndBeyondTheMaximumRefuses) {
    const LookDecision early = sequential_look(differences(4, 0.05, 0.001), {}, 0.5);
    EXPECT_EQ(early.look, 0u);
    EXPECT_FALSE(early.stop);
    EXPECT_EQ(early.verdict, Verdict::inconclusive);
    EXPECT_THROW((void)sequential_look(differences(41, 0.05, 0.001), {}, 0.5), Error);
}

TEST(Spending, PocockTypeSpendsEarlyAndReproducesThePublishedBoundaries) {
    EXPECT_DOUBLE_EQ(spent_alpha(Spending::pocock, 1.0, 0.05), 0.05);
    EXPECT_DOUBLE_EQ(spent_alpha(Spending::pocock, 0.0, 0.05), 0.0);
    EXPECT_NEAR(spent_alpha(Spending::pocock, 0.5, 0.05),
                0.05 * std::log(1.0 + (std::exp(1.0) - 1.0) / 2.0), 1e-15);
    // At a fifth of the information it has spent ~30 % of alpha; O'Brien–Fleming 0.02 %.
    EXPECT_GT(spent_alpha(Spending::pocock, 0.2, 0.05),
              1000 * spent_alpha(Spending::obrien_fleming, 0.2, 0.05));
    // gsDesign sfLDPocock, five equally spaced looks, two-sided
    // 0.05: 2.4380 2.4268 2.4101 2.3966 2.3859.
    const std::vector<double> t{0.2, 0.4, 0.6, 0.8, 1.0};
    std::vector<double> cumulative;
    for (const double x : t) {
        cumulative.push_back(spent_alpha(Spending::pocock, x, 0.05));
    }
    const std::vector<double> c = group_sequential_boundaries(t, cumulative);
    const std::vector<double> published{2.4380, 2.4268, 2.4101, 2.3966, 2.3859};
    for (std::size_t k = 0; k < c.size(); ++k) {
        EXPECT_NEAR(c[k], published[k], 2e-4) << "look " << k + 1;
    }
}

TEST(Spending, TheSmallestExactPHalvesWithEveryPair) {
    EXPECT_DOUBLE_EQ(smallest_exact_p(6), 2.0 / 64.0);
    EXPECT_DOUBLE_EQ(smallest_exact_p(8), 2.0 / 256.0);
    EXPECT_GT(smallest_exact_p(5000), 0.0);  // no undefined shift for huge n
}

TEST(EarlyDecisionPlan, FirstLooksWhereAnExactDecisionIsAttainable) {
    const SequentialPlan plan = SequentialPlan::early_decision(6, 40, 0.95);
    // At 6 pairs Pocock has spent 1.15 % < 2/64: even six pairs of one sign could not stop there.
    // At 8 it has spent 1.48 % >= 2/256: the first look.
    std::vector<std::size_t> expected;
    for (std::size_t n = 8; n <= 40; n += 2) {
        expected.push_back(n);
    }
    EXPECT_EQ(plan.look_sizes(), expected);
    const std::vector<double> levels = plan.look_confidence();
    EXPECT_NEAR(levels.front(), 1.0 - spent_alpha(Spending::pocock, 0.2, 0.05), 1e-12);
    EXPECT_LE(levels.front(), 1.0 - smallest_exact_p(8));
    // Every look after the first is attainable too, and the last stays below 99 %.
    for (std::size_t k = 0; k < levels.size(); ++k) {
        EXPECT_LE(levels[k], 1.0 - smallest_exact_p(expected[k])) << "look " << k + 1;
    }
    EXPECT_GT(levels.back(), 0.985);
    EXPECT_LT(levels.back(), 0.99);
    const Json j = plan.to_json();
    EXPECT_EQ(j["spending"], "lan_demets_pocock");
    EXPECT_EQ(j["exact_first_look"], true);
    EXPECT_EQ(j["block"], 2);
}

TEST(EarlyDecisionPlan, ALargeEffectStopsAtTheFirstLook) {
    const std::vector<double> d = differences(8, 0.4, 0.01);  // +50 % in every pair
    const LookDecision early = sequential_look(d, SequentialPlan::early_decision(6, 40, 0.95), 0.5);
    EXPECT_EQ(early.look, 1u);
    EXPECT_TRUE(early.stop);
    EXPECT_EQ(early.verdict, Verdict::improved);
    // The O'Brien–Fleming plan with the same looks cannot stop there (it asks for 99.999 %).
    SequentialPlan legacy;
    legacy.block = 2;
    const LookDecision late = sequential_look(d, legacy, 0.5);
    EXPECT_FALSE(late.stop);
    EXPECT_EQ(late.verdict, Verdict::inconclusive);
}

TEST(EarlyDecisionPlan, APlanTooShortForAnyExactDecisionKeepsOnlyItsFinalLook) {
    // 5 pairs at 95 %: 2/32 > 5 %, nothing is attainable; the final look is still scheduled.
    const SequentialPlan plan = SequentialPlan::early_decision(2, 5, 0.95);
    EXPECT_EQ(plan.look_sizes(), std::vector<std::size_t>{5});
    EXPECT_EQ(sequential_look(differences(5, 0.4, 0.01), plan, 0.5).verdict, Verdict::inconclusive);
}

}  // namespace
}  // namespace cko::stats
