// cko stop: one termination record per Target, with the champion and the cost at that moment.
#include "cko/report/termination.hpp"

#include "cko/report/testing/synthetic_store.hpp"
#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko::report {
namespace {

class TerminationTest : public test::ScratchTest {};

// The code of the cko::Error `f` throws; `internal` when it throws none.
ErrorCode code_of(const std::function<void()>& f) {
    return test::error_thrown_by(f)->code();
}

TEST_F(TerminationTest, TheReasonIsRecordedOnceWithTheChampionAndTheCost) {
    testing::SyntheticStore s(dir_ / "art");
    const std::string x = s.experiment("loop-order");
    (void)s.select(x, s.comparison("confirm", x, 0.5, "improved"));
    EXPECT_FALSE(read_stop(s.store()).has_value());

    const Json rec = record_stop(s.store(), "the goal is reached");
    EXPECT_EQ(rec["format_version"], "cko/stop-v1");
    EXPECT_EQ(rec["id"].get<std::string>().rfind("stop-", 0), 0u);
    EXPECT_EQ(rec["champion"]["experiment_id"], x);
    EXPECT_DOUBLE_EQ(rec["spent"]["wall_s"].get<double>(), 12.0);
    EXPECT_EQ(rec["target"]["id"], "tgt-00000000000000aa");
    ASSERT_TRUE(read_stop(s.store()).has_value());
    EXPECT_EQ(read_stop(s.store())->at("reason"), "the goal is reached");

    EXPECT_EQ(code_of([&] { (void)record_stop(s.store(), "again"); }), ErrorCode::already_exists);
    EXPECT_EQ(read_stop(s.store())->at("reason"), "the goal is reached")
        << "the first record stays";
}

TEST_F(TerminationTest, ABlankReasonIsRefused) {
    testing::SyntheticStore s(dir_ / "art");
    EXPECT_EQ(code_of([&] { (void)record_stop(s.store(), "  \n"); }), ErrorCode::invalid_request);
    EXPECT_FALSE(read_stop(s.store()).has_value());
}

TEST_F(TerminationTest, WithoutATargetThereIsNothingToStop) {
    const store::Store st = store::Store::create(dir_ / "empty");
    EXPECT_EQ(code_of([&] { (void)record_stop(st, "why"); }), ErrorCode::not_found);
}

}  // namespace
}  // namespace cko::report
