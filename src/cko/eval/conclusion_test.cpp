// The rules of a lowered conclusion, in process: it only goes lower, never on an audit that upheld
// the champion, and each accepted lowering is recorded and becomes the claim stated.
#include "cko/eval/conclusion.hpp"

#include "cko/eval/champion.hpp"
#include "cko/eval/history.hpp"
#include "cko/eval/test_support.hpp"

#include <gtest/gtest.h>

namespace cko::eval {
namespace {

class ConclusionTest : public testing::FrozenTargetTest {
protected:
    void SetUp() override {
        ScratchTest::SetUp();
        freeze("", "ok", "workload");
    }
    StatedClaim claim() const { return stated_claim(*store_, target_->spec().claim_layer); }
};

TEST_F(ConclusionTest, AnAcceptedLoweringIsRecordedAndBecomesTheClaim) {
    const std::string exp = experiment("kernel v1\n");
    (void)select_champion(*target_, exp, planted("confirm", exp, "improved", original_digest()));
    const std::string failed = planted("audit", "", "regressed", digest_of(exp));
    EXPECT_EQ(claim().word(), "workload");

    const Json written = lower_conclusion(*target_, {"kernel", "the audit regressed", failed});
    EXPECT_EQ(written.at("lowered_from"), "workload");
    EXPECT_EQ(written.at("lowered_to"), "kernel");
    EXPECT_EQ(written.at("reason"), "the audit regressed");
    EXPECT_EQ(written.at("audit"), (Json{{"id", failed}, {"verdict", "regressed"}}));
    EXPECT_EQ(written.at("champion"), exp);
    const std::string id = written.at("id");
    EXPECT_EQ(store::read_conclusion_record(*store_, id).to_json(), written);
    EXPECT_TRUE(store_->is_ledgered(store::layout::conclusion_record(id)));
    EXPECT_EQ(claim().word(), "kernel");

    // Lower again: only below kernel.
    const Json again = lower_conclusion(*target_, {"unconfirmed", "no longer reproduced", ""});
    EXPECT_EQ(again.at("lowered_from"), "kernel");
    EXPECT_FALSE(again.contains("audit"));
    EXPECT_EQ(claim().word(), "unconfirmed");

    const Json history = target_history(*store_);
    int lowerings = 0;
    for (const auto& e : history.at("entries")) {
        lowerings += e.value("type", "") == "lower" ? 1 : 0;
    }
    EXPECT_EQ(lowerings, 2);
    EXPECT_NE(history_text(history).find("conclusion workload -> kernel"), std::string::npos);
}

TEST_F(ConclusionTest, ALoweringThatDoesNotGoLowerIsRefused) {
    (void)lower_conclusion(*target_, {"kernel", "measured at the kernel only", ""});
    std::string message;
    EXPECT_EQ(code_of(
                  [&] {
                      (void)lower_conclusion(*target_, {"kernel", "again", ""});
                  },
                  &message),
              ErrorCode::invalid_argument);
    EXPECT_NE(message.find("choose unconfirmed"), std::string::npos) << message;
    EXPECT_EQ(field_of([&] { (void)lower_conclusion(*target_, {"kernel", "again", ""}); }), "to");
    (void)lower_conclusion(*target_, {"unconfirmed", "gone", ""});
    EXPECT_EQ(code_of([&] {
                  (void)lower_conclusion(*target_, {"unconfirmed", "more", ""});
              }),
              ErrorCode::invalid_argument);
    EXPECT_EQ(store::list_conclusions(*store_).size(), 2u);
}

TEST_F(ConclusionTest, AKernelTargetCanOnlyBeLoweredToUnconfirmed) {
    freeze("", "ok", "kernel");
    EXPECT_EQ(field_of([&] { (void)lower_conclusion(*target_, {"kernel", "why", ""}); }), "to");
    EXPECT_EQ(lower_conclusion(*target_, {"unconfirmed", "why", ""}).at("lowered_from"), "kernel");
}

TEST_F(ConclusionTest, AnAuditThatUpheldTheChampionIsRefused) {
    const std::string exp = experiment("kernel v1\n");
    (void)select_champion(*target_, exp, planted("confirm", exp, "improved", original_digest()));
    const std::string upheld = planted("audit", "", "improved", digest_of(exp));
    std::string message;
    EXPECT_EQ(code_of(
                  [&] {
                      (void)lower_conclusion(*target_, {"kernel", "why", upheld});
                  },
                  &message),
              ErrorCode::invalid_argument);
    EXPECT_NE(message.find("audit: audit " + upheld + " says `improved`"), std::string::npos)
        << message;
    EXPECT_EQ(field_of([&] {
                  (void)lower_conclusion(*target_, {"kernel", "why", upheld});
              }),
              "audit");
    EXPECT_TRUE(store::list_conclusions(*store_).empty());
    EXPECT_EQ(claim().word(), "workload");
}

TEST_F(ConclusionTest, BadInputNamesTheField) {
    const std::string exp = experiment("kernel v1\n");
    const std::string confirm = planted("confirm", exp, "regressed", original_digest());
    EXPECT_EQ(field_of([&] {
                  (void)lower_conclusion(*target_, {"kernel", "why", confirm});
              }),
              "audit");  // not an audit
    EXPECT_EQ(code_of([&] {
                  (void)lower_conclusion(*target_, {"kernel", "why", "inv-0000000000000000"});
              }),
              ErrorCode::not_found);
    EXPECT_EQ(field_of([&] {
                  (void)lower_conclusion(*target_, {"kernel", "why", "inv-0000000000000000"});
              }),
              "audit");
    EXPECT_EQ(field_of([&] { (void)lower_conclusion(*target_, {"kernel", "", ""}); }), "reason");
    std::string message;
    EXPECT_EQ(code_of(
                  [&] {
                      (void)lower_conclusion(*target_, {"workload", "why", ""});
                  },
                  &message),
              ErrorCode::invalid_argument);
    EXPECT_NE(message.find("to:"), std::string::npos) << message;
    EXPECT_NE(message.find("unconfirmed"), std::string::npos) << message;
    EXPECT_TRUE(store::list_conclusions(*store_).empty());
}

}  // namespace
}  // namespace cko::eval
