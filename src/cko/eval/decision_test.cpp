// The decision record's rules: the latest falsify outcome stands, the falsified gate and its
// override, and the stage limit from the spec or the call.
#include "cko/eval/decision.hpp"

#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko::eval {
namespace {

InvocationEntry falsify_entry(const std::string& id, const std::string& experiment,
                              const std::string& outcome, std::int64_t created_unix_ns) {
    InvocationEntry e;
    e.request.id = id;
    e.request.kind = std::string(kFalsifyKind);
    e.request.created_unix_ns = created_unix_ns;
    e.request.request = Json{{"experiment_id", experiment},
                             {"outcome", outcome},
                             {"evidence", Json{{"kind", "invocation"}, {"id", "inv-1"}}},
                             {"note", ""}};
    store::InvocationResultRecord r;
    r.id = id;
    r.kind = e.request.kind;
    r.state = "succeeded";
    e.result = r;
    return e;
}

TEST(Decision, TheLatestOutcomeStandsWhateverTheIdOrder) {
    const std::vector<InvocationEntry> entries = {
        falsify_entry("inv-a", "exp-1", "survived", 200),
        falsify_entry("inv-b", "exp-1", "falsified", 100),
        falsify_entry("inv-c", "exp-2", "falsified", 300)};
    const InvocationLedger ledger = InvocationLedger::of(entries);
    const auto latest = latest_falsify_record(ledger, "exp-1");
    ASSERT_TRUE(latest);
    EXPECT_EQ(latest->invocation_id, "inv-a");
    EXPECT_EQ(latest->outcome, FalsifyOutcome::survived);
    EXPECT_FALSE(latest_falsify_record(ledger, "exp-3"));
}

TEST(Decision, AFalsifiedExperimentIsRefusedUnlessOverridden) {
    const InvocationLedger ledger =
        InvocationLedger::of({falsify_entry("inv-f", "exp-1", "falsified", 1)});
    if (const auto e = EXPECT_CKO_ERROR((void)require_not_falsified(ledger, "screen", "exp-1", ""),
                                        ErrorCode::falsified, "--override-falsified")) {
        EXPECT_EQ(e->details().at("falsify_invocation"), "inv-f");
    }
    const Json o = require_not_falsified(ledger, "screen", "exp-1", "the evidence was wrong");
    EXPECT_EQ(o.at("reason"), "the evidence was wrong");
    EXPECT_EQ(o.at("falsify_invocation"), "inv-f");
}

TEST(Decision, SurvivedDoesNotBlockAndLeavesNothingToOverride) {
    const InvocationLedger ledger =
        InvocationLedger::of({falsify_entry("inv-s", "exp-1", "survived", 1)});
    EXPECT_TRUE(require_not_falsified(ledger, "confirm", "exp-1", "").is_null());
    if (const auto e =
            EXPECT_CKO_ERROR((void)require_not_falsified(ledger, "confirm", "exp-1", "why not"),
                             ErrorCode::invalid_argument)) {
        EXPECT_EQ(e->details().at("field"), "override_falsified");
    }
}

TEST(Decision, TheStageLimitOfTheSpecAndOfTheCallRefuseWhatLiesPastThem) {
    TargetSpec spec;
    EXPECT_TRUE(require_stage_allowed(spec, Stage::audit, "").is_null());
    spec.farthest_stage = Stage::screen;
    if (const auto e = EXPECT_CKO_ERROR((void)require_stage_allowed(spec, Stage::confirm, ""),
                                        ErrorCode::not_authorized)) {
        EXPECT_EQ(e->details().at("stage_limit"), "screen");
        EXPECT_EQ(e->details().at("field"), "limits.farthest_stage");
    }
    EXPECT_EQ(require_stage_allowed(spec, Stage::screen, "").at("stage"), "screen");
    // The call may tighten the spec's limit, never widen it.
    EXPECT_THROW((void)require_stage_allowed(spec, Stage::confirm, "audit"), Error);
    spec.farthest_stage.reset();
    if (const auto e = EXPECT_CKO_ERROR((void)require_stage_allowed(spec, Stage::audit, "confirm"),
                                        ErrorCode::not_authorized)) {
        EXPECT_EQ(e->details().at("field"), "stage_limit");
    }
    EXPECT_CKO_ERROR((void)require_stage_allowed(spec, Stage::screen, "champion"),
                     ErrorCode::invalid_argument, "screen, confirm, audit");
}

}  // namespace
}  // namespace cko::eval
