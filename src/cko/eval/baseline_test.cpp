// cko baseline in process: calls of the original per case, an A/A run of exactly the asked pairs,
// and the rules that refuse to start (calls per case, a spent budget) before any invocation exists.
#include "cko/eval/baseline.hpp"

#include "cko/eval/test_support.hpp"

#include <gtest/gtest.h>

namespace cko::eval {
namespace {

using BaselineTest = testing::FrozenTargetTest;

std::size_t invocations(const store::Store& store) {
    return run::list_invocations(store).size();
}

TEST_F(BaselineTest, MeasuresTheOriginalThenAnAaRunOfTheAskedPairs) {
    BaselineOptions o;
    o.calls_per_case = 2;
    o.aa_pairs = 6;
    std::string announced;
    const OperationOutcome out =
        run_baseline(*target_, o, [&](const std::string& id) { announced = id; });
    EXPECT_EQ(out.state, "succeeded");
    EXPECT_EQ(out.invocation_id, announced);
    EXPECT_EQ(out.exit_code, 0);
    const Json& c = out.outputs.at("cases").at("c");
    // 2 calls x samples_per_call (the spec's default 5), each 1.5 us from the fake driver.
    EXPECT_EQ(c.at("samples").size(),
              2u * static_cast<std::size_t>(target_->spec().samples_per_call));
    EXPECT_DOUBLE_EQ(c.at("median").get<double>(), 1.5);
    EXPECT_DOUBLE_EQ(c.at("mad").get<double>(), 0.0);
    const Json& aa = out.outputs.at("aa");
    ASSERT_EQ(aa.at("d").size(), 6u);
    for (const auto& d : aa.at("d")) {
        EXPECT_DOUBLE_EQ(d.get<double>(), 0.0);  // identical subjects, identical samples
    }
    // An interval of exactly 0 lies inside (-5 %, 5 %): the only verdict this A/A can have.
    EXPECT_EQ(aa.at("verdict"), "equivalent");
    EXPECT_EQ(out.verdict, "equivalent");
    EXPECT_EQ(out.outputs.at("resolution").at("n"), 6);
    // The instrument check of [18]: an interval of exactly 0 does not exclude zero.
    const Json& check = out.outputs.at("instrument_check");
    EXPECT_EQ(check.at("biased"), false);
    EXPECT_EQ(check.at("intervals").size(), 1u);  // one case: the pooled interval only
    EXPECT_EQ(check.at("intervals")[0].at("scope"), "pooled");
    const Json result = store_->read_record("invocations/" + out.invocation_id + "/result.json");
    EXPECT_EQ(result.at("kind"), "baseline");
    EXPECT_EQ(result.at("cost").at("driver_calls"),
              2 + 6 * 2);  // single_subject: a pair is two calls
}

TEST_F(BaselineTest, RefusesZeroCallsPerCaseBeforeStarting) {
    const std::size_t before = invocations(*store_);
    BaselineOptions o;
    o.calls_per_case = 0;
    if (const auto e = EXPECT_CKO_ERROR((void)run_baseline(*target_, o, [](const std::string&) {}),
                                        ErrorCode::invalid_argument)) {
        EXPECT_EQ(e->details().value("field", ""), "calls_per_case");
    }
    EXPECT_EQ(invocations(*store_), before);
}

TEST_F(BaselineTest, ASpentWallBudgetRefusesBeforeStarting) {
    freeze("wall_seconds_budget = 0.000001");  // the smoke alone spent more
    const std::size_t before = invocations(*store_);
    EXPECT_CKO_ERROR((void)run_baseline(*target_, BaselineOptions{}, [](const std::string&) {}),
                     ErrorCode::budget_exhausted);
    EXPECT_EQ(invocations(*store_), before);
}

}  // namespace
}  // namespace cko::eval
