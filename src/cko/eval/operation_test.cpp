// The operation frame: how a body's ending, or the Error it throws, becomes the invocation's
// terminal state, exit class and result, and that the outcome is what a later read gives.
#include "cko/eval/operation.hpp"

#include "cko/store/records.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace cko::eval {
namespace {

class OperationTest : public test::ScratchTest {
protected:
    void SetUp() override {
        ScratchTest::SetUp();
        store_.emplace(store::Store::create(dir_ / "art"));
    }

    OperationOutcome run(const OperationBody& body, const OperationBody& settle = {},
                         bool records_exit_code = true) {
        InvocationSpec spec{"baseline", Json{{"what", "a test"}}, run::Limits{}, &cancel_};
        spec.records_exit_code = records_exit_code;
        return run_in_invocation(
            *store_, spec, [this](const std::string& id) { announced_.push_back(id); }, body,
            settle);
    }

    // The outcome carries what run::invocation_status and the typed readers read back.
    void expect_read_back_equal(const OperationOutcome& out) const {
        EXPECT_EQ(out.status.to_json(),
                  run::invocation_status(*store_, out.invocation_id).to_json());
        EXPECT_EQ(out.entry.request.to_json(),
                  store::read_invocation_record(*store_, out.invocation_id).to_json());
        ASSERT_TRUE(out.entry.result.has_value());
        EXPECT_EQ(out.entry.result->to_json(),
                  store::read_invocation_result_record(*store_, out.invocation_id).to_json());
    }

    std::optional<store::Store> store_;
    std::atomic<bool> cancel_{false};
    std::vector<std::string> announced_;
};

TEST_F(OperationTest, ASuccessFinishesSucceededWithTheBodysReasonAndOutputs) {
    const OperationOutcome out = run([](run::Invocation&, OperationEnd& end) {
        end.reason = "measured";
        end.outputs["cases"] = 1;
        end.verdict = "inconclusive";
    });
    ASSERT_EQ(announced_, std::vector<std::string>{out.invocation_id});
    EXPECT_EQ(out.state, "succeeded");
    EXPECT_EQ(out.exit_code, 0);
    EXPECT_EQ(out.verdict, "inconclusive");
    EXPECT_FALSE(out.error.has_value());
    EXPECT_EQ(out.outputs, (Json{{"cases", 1}, {"exit_code", 0}}));
    EXPECT_EQ(out.status.state, run::InvocationState::succeeded);
    EXPECT_EQ(out.status.result.at("reason"), "measured");
    EXPECT_FALSE(out.status.to_json().contains("owner_alive"));  // finished: a fixed record
    EXPECT_FALSE(out.status.result.contains("error"));
    expect_read_back_equal(out);
}

// The states and exit classes the four hand-written endings gave (run::state_for_error and
// Error::exit_code), one Error of each exit class.
TEST_F(OperationTest, AThrownErrorOfEachClassEndsTheInvocationAsTheOldEndingsDid) {
    struct Case {
        ErrorCode code;
        run::InvocationState state;
        int exit_code;
    };
    const std::vector<Case> cases{
        {ErrorCode::invalid_spec, run::InvocationState::failed, 2},
        {ErrorCode::tampered_record, run::InvocationState::failed, 2},
        {ErrorCode::environment_mismatch, run::InvocationState::failed, 3},
        {ErrorCode::driver_failed, run::InvocationState::failed, 3},
        {ErrorCode::internal, run::InvocationState::failed, 3},
        {ErrorCode::timed_out, run::InvocationState::timed_out, 4},
        {ErrorCode::interrupted, run::InvocationState::cancelled, 4},
        {ErrorCode::still_running, run::InvocationState::failed, 5},
    };
    for (const Case& c : cases) {
        const std::string name(error_code_name(c.code));
        const OperationOutcome out = run([&](run::Invocation&, OperationEnd& end) {
            end.outputs["partial"] = true;  // what the body recorded before it failed stays
            end.verdict = "improved";
            throw Error(c.code, "it broke: " + name, Json{{"why", name}});
        });
        EXPECT_EQ(out.state, run::state_name(c.state)) << name;
        EXPECT_EQ(out.exit_code, c.exit_code) << name;
        EXPECT_EQ(out.outputs, (Json{{"partial", true}, {"exit_code", c.exit_code}})) << name;
        EXPECT_EQ(out.verdict, "improved") << name;
        ASSERT_TRUE(out.error.has_value()) << name;
        EXPECT_EQ(out.error->code(), c.code);
        EXPECT_EQ(out.status.result.at("reason"), "it broke: " + name);
        EXPECT_EQ(out.status.result.at("error").at("code"), name);
        EXPECT_EQ(out.status.result.at("error").at("details").at("why"), name);
        expect_read_back_equal(out);
    }
}

// As a baseline and a comparison do: cancellation seen by the body is an interrupted Error.
TEST_F(OperationTest, ACancelledOperationFinishesCancelled) {
    cancel_ = true;
    const OperationOutcome out = run([](run::Invocation& inv, OperationEnd& end) {
        end.reason = "measured";
        if (inv.cancelled()) {
            throw Error(ErrorCode::interrupted, "baseline cancelled");
        }
    });
    EXPECT_EQ(out.state, "cancelled");
    EXPECT_EQ(out.exit_code, 4);
    EXPECT_EQ(out.status.result.at("reason"), "baseline cancelled");
    EXPECT_EQ(out.status.result.at("error").at("code"), "interrupted");
    expect_read_back_equal(out);
}

// A contaminated baseline: the body ends itself, succeeded with a negative exit class.
TEST_F(OperationTest, ABodysOwnEndingIsRecordedAsItSaysIt) {
    const OperationOutcome out = run([](run::Invocation&, OperationEnd& end) {
        end.reason = "the measurement window was contaminated: x";
        end.verdict = "invalid";
        end.exit_code = 1;
    });
    EXPECT_EQ(out.state, "succeeded");
    EXPECT_EQ(out.exit_code, 1);
    EXPECT_EQ(out.outputs.at("exit_code"), 1);
    EXPECT_FALSE(out.error.has_value());
    expect_read_back_equal(out);
}

TEST_F(OperationTest, SettleCompletesTheOutputsAfterAFailureAndMaySetTheExitClass) {
    const OperationOutcome out =
        run([](run::Invocation&, OperationEnd&) { throw Error(ErrorCode::driver_failed, "died"); },
            [](run::Invocation&, OperationEnd& end) {
                end.outputs["infrastructure_failure"] = end.error.has_value();
                end.outputs["reason"] = end.reason;
            });
    EXPECT_EQ(out.state, "failed");
    EXPECT_EQ(out.outputs,
              (Json{{"infrastructure_failure", true}, {"reason", "died"}, {"exit_code", 3}}));
    expect_read_back_equal(out);
}

// A standalone driver call's outputs carry no exit_code; the outcome still has the exit class.
TEST_F(OperationTest, WithoutRecordingTheExitClassTheOutputsAreTheBodys) {
    const OperationOutcome out =
        run([](run::Invocation&, OperationEnd&) { throw Error(ErrorCode::driver_failed, "died"); },
            {}, false);
    EXPECT_EQ(out.exit_code, 3);
    EXPECT_EQ(out.outputs, Json::object());
    expect_read_back_equal(out);
}

// What the outcome carries is what was written: bytes from the outside world as stored (U+FFFD).
TEST_F(OperationTest, TheStatusIsTheWrittenDocumentNotTheInMemoryOne) {
    const OperationOutcome out = run([](run::Invocation&, OperationEnd& end) {
        end.reason = "driver said \xff";
        end.outputs["stderr"] = "bad \xfe byte";
    });
    EXPECT_EQ(out.status.result.at("outputs").at("stderr"), "bad \xEF\xBF\xBD byte");
    expect_read_back_equal(out);
}

// Only an Error is an operation's ending: anything else leaves the invocation running (then
// declared lost), as before.
TEST_F(OperationTest, AnythingButAnErrorPropagatesAndLeavesTheInvocationUnfinished) {
    EXPECT_THROW((void)run([](run::Invocation&, OperationEnd&) { throw std::logic_error("bug"); }),
                 std::logic_error);
    ASSERT_EQ(announced_.size(), 1U);
    EXPECT_EQ(run::invocation_status(*store_, announced_.front()).state,
              run::InvocationState::running);
}

}  // namespace
}  // namespace cko::eval
