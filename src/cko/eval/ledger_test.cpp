// The invocation ledger: one scan of invocations/ per operation (a confirm, a retried confirm, a
// screen, a baseline, the history), and the answers the rules of a comparison ask of it.
#include "cko/eval/ledger.hpp"

#include "cko/eval/baseline.hpp"
#include "cko/eval/compare.hpp"
#include "cko/eval/history.hpp"
#include "cko/eval/test_support.hpp"

#include <gtest/gtest.h>

namespace cko::eval {
namespace {

class LedgerTest : public testing::FrozenTargetTest {
protected:
    // How many times `operation` read the invocations directory.
    static std::uint64_t scans_during(const std::function<void()>& operation) {
        const std::uint64_t before = run::invocation_scans();
        operation();
        return run::invocation_scans() - before;
    }

    OperationOutcome compare(ComparisonKind kind, const std::string& experiment_id,
                             const std::string& retry_of = "") {
        CompareOptions o;
        o.kind = kind;
        o.experiment_id = experiment_id;
        o.retry_of = retry_of;
        o.retry_reason = retry_of.empty() ? "" : "the node rebooted";
        return run_comparison(*target_, o, [](const std::string&) {});
    }

    // A finished invocation of `kind` with this request, state, outputs and cost.
    std::string finished(const std::string& kind, const Json& request, run::InvocationState state,
                         const Json& outputs, double gpu_seconds = 0) {
        run::Invocation inv =
            run::Invocation::create(*store_, kind, request, run::Limits{}, nullptr);
        inv.add_gpu_seconds(gpu_seconds);
        const std::optional<Error> error =
            state == run::InvocationState::succeeded
                ? std::nullopt
                : std::optional<Error>(Error(ErrorCode::driver_failed, "planted failure"));
        (void)inv.finish(state, "planted by the test", outputs, error);
        return inv.id();
    }
};

// Issue [20]: a confirm read every invocation five times (earlier confirms, the budget, the latest
// baseline, the latest A/A check, the failure gate), a screen three times; each reads them once
// now.
TEST_F(LedgerTest, AConfirmReadsTheInvocationsOnce) {
    EXPECT_EQ(scans_during([&] {
                  BaselineOptions o;
                  o.calls_per_case = 1;
                  o.aa_pairs = 2;
                  (void)run_baseline(*target_, o, [](const std::string&) {});
              }),
              1u);
    const std::string screened = experiment("kernel v2\n");
    EXPECT_EQ(scans_during([&] { (void)compare(ComparisonKind::screen, screened); }), 1u);
    const std::string exp = experiment("kernel v1\n");
    OperationOutcome confirm;
    EXPECT_EQ(scans_during([&] { confirm = compare(ComparisonKind::confirm, exp); }), 1u);
    EXPECT_EQ(confirm.state, "succeeded");
    // The one-confirm rule still sees the confirm just made.
    EXPECT_EQ(scans_during([&] {
                  EXPECT_EQ(code_of([&] { (void)compare(ComparisonKind::confirm, exp); }),
                            ErrorCode::already_confirmed);
              }),
              1u);
    EXPECT_EQ(scans_during([&] { (void)target_history(*store_); }), 1u);
}

TEST_F(LedgerTest, ARetriedConfirmReadsTheInvocationsOnce) {
    const std::string exp = experiment("kernel v1\n");
    const std::string failed =
        finished("confirm", Json{{"experiment_id", exp}}, run::InvocationState::failed,
                 Json{{"experiment_id", exp}, {"infrastructure_failure", true}});
    OperationOutcome retry;
    EXPECT_EQ(scans_during([&] { retry = compare(ComparisonKind::confirm, exp, failed); }), 1u);
    EXPECT_EQ(retry.state, "succeeded");
}

TEST_F(LedgerTest, AnswersFromOneReading) {
    const std::size_t smoke = InvocationLedger::read(*store_).entries().size();  // the freeze's
    const std::string a = experiment("kernel a\n");
    const std::string b = experiment("kernel b\n");
    const std::string base1 = finished("baseline", Json::object(), run::InvocationState::succeeded,
                                       Json{{"resolution", {{"resolvable", true}}}}, 2.0);
    const std::string conf_a = planted("confirm", a, "improved", original_digest(), 3.0);
    const std::string base2 = finished("baseline", Json::object(), run::InvocationState::succeeded,
                                       Json{{"instrument_check", {{"biased", false}}}}, 4.0);
    (void)finished("baseline", Json::object(), run::InvocationState::failed, Json::object(), 8.0);
    run::Invocation running =
        run::Invocation::create(*store_, "confirm", Json{{"experiment_id", b}}, {}, nullptr);

    const std::uint64_t before = run::invocation_scans();
    const InvocationLedger ledger = InvocationLedger::read(*store_);
    EXPECT_EQ(run::invocation_scans() - before, 1u);
    ASSERT_EQ(ledger.entries().size(), smoke + 5);
    EXPECT_TRUE(std::is_sorted(
        ledger.entries().begin(), ledger.entries().end(),
        [](const InvocationEntry& x, const InvocationEntry& y) { return x.id() < y.id(); }));

    // A running confirm counts for the one-confirm rule, and has no result.
    ASSERT_EQ(ledger.confirms_of(b).size(), 1u);
    EXPECT_EQ(ledger.confirms_of(b).front()->id(), running.id());
    EXPECT_FALSE(ledger.confirms_of(b).front()->result);
    EXPECT_EQ(ledger.confirmed_by(b), nullptr);
    ASSERT_NE(ledger.confirmed_by(a), nullptr);
    EXPECT_EQ(ledger.confirmed_by(a)->id(), conf_a);
    EXPECT_EQ(ledger.confirmed_by(a)->result->outputs.at("verdict"), "improved");

    // Every finished invocation's cost counts, a failed one's too.
    EXPECT_DOUBLE_EQ(ledger.spent().gpu_s, 2.0 + 3.0 + 4.0 + 8.0);
    EXPECT_GE(ledger.spent().wall_s, 0.0);

    // The latest succeeded baseline, and the latest A/A check.
    ASSERT_NE(ledger.latest_baseline(), nullptr);
    EXPECT_EQ(ledger.latest_baseline()->id(), base2);
    ASSERT_NE(ledger.latest_instrument_check(), nullptr);
    EXPECT_EQ(ledger.latest_instrument_check()->id(), base2);
    EXPECT_NE(base1, base2);
}

// A fresh Target holds only its freeze smoke: no confirm, no baseline, no A/A check yet.
TEST_F(LedgerTest, AFreshTargetHasNoConfirmBaselineOrCheck) {
    const InvocationLedger ledger = InvocationLedger::read(*store_);
    EXPECT_TRUE(ledger.confirms_of("exp-0000000000000000").empty());
    EXPECT_EQ(ledger.latest_baseline(), nullptr);
    EXPECT_EQ(ledger.latest_instrument_check(), nullptr);
    EXPECT_DOUBLE_EQ(ledger.spent().gpu_s, 0.0);
}

}  // namespace
}  // namespace cko::eval
