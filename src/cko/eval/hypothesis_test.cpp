// Competing hypotheses in process: rivals of one bottleneck recorded with what would separate
// them, one settled on a stored record (once), the board and the history; and the refusals, each
// naming its field.
#include "cko/eval/hypothesis.hpp"

#include "cko/eval/history.hpp"
#include "cko/eval/test_support.hpp"

#include <gtest/gtest.h>

namespace cko::eval {
namespace {

using HypothesisTest = testing::FrozenTargetTest;

TEST_F(HypothesisTest, TwoRivalsOfOneBottleneckAreOpenUntilOneIsSettledOnStoredEvidence) {
    const std::string exp = experiment("kernel v1\n");
    const std::string map = testing::stored_map(*store_, exp, "reference");
    const std::string bottleneck = "map:" + map + "#gemm";
    const Json a = add_hypothesis(
        *target_, {bottleneck, "the GEMM is memory-bound", "dram throughput near peak in ncu", {}});
    const std::string a_id = a.at("id");
    EXPECT_TRUE(a_id.starts_with("hyp-"));
    // The map item is read from the map: its largest exposed share, 150 of 500 ns.
    EXPECT_EQ(a.at("bottleneck_map").at("map"), map);
    EXPECT_DOUBLE_EQ(a.at("bottleneck_map").at("share_pct").get<double>(), 30.0);
    EXPECT_EQ(store::read_hypothesis_record(*store_, a_id).to_json(), a);
    EXPECT_TRUE(store_->is_ledgered(store::layout::hypothesis_record(a_id)));

    const Json b = add_hypothesis(*target_, {bottleneck,
                                             "the GEMM waits on its launch",
                                             "a gap before each gemm in the nsys timeline",
                                             {a_id, a_id}});
    const std::string b_id = b.at("id");
    EXPECT_EQ(b.at("rivals"), Json::array({a_id}));  // named twice, recorded once

    Json board = hypothesis_board(*store_);
    EXPECT_EQ(board.at("open"), 2);
    ASSERT_EQ(board.at("bottlenecks").size(), 1U);
    EXPECT_EQ(board.at("bottlenecks")[0].at("open"), Json::array({a_id, b_id}));
    EXPECT_EQ(board.at("hypotheses")[0].at("rivals_now"),
              Json::array({Json{{"id", b_id}, {"state", "open"}}}));
    EXPECT_NE(hypothesis_board_text(board).find("separated by: dram throughput near peak"),
              std::string::npos);

    const Json settled =
        settle_hypothesis(*target_, {a_id, "refuted", map, "dram at 30 % of peak"});
    EXPECT_EQ(settled.at("evidence"), (Json{{"kind", "map"}, {"id", map}}));
    EXPECT_EQ(settled.at("hypothesis"), a_id);
    board = hypothesis_board(*store_);
    EXPECT_EQ(board.at("open"), 1);
    EXPECT_EQ(board.at("bottlenecks")[0].at("open"), Json::array({b_id}));
    EXPECT_EQ(board.at("bottlenecks")[0].at("settled"), Json::array({a_id}));
    EXPECT_EQ(board.at("hypotheses")[0].at("state"), "refuted");
    EXPECT_EQ(board.at("hypotheses")[0].at("settlement"), settled);

    // Written once.
    ErrorCode code = ErrorCode::internal;
    EXPECT_EQ(field_of(
                  [&] {
                      (void)settle_hypothesis(*target_, {a_id, "supported", exp, ""});
                  },
                  &code),
              "hypothesis");
    EXPECT_EQ(code, ErrorCode::already_exists);

    const std::string text = history_text(target_history(*store_));
    EXPECT_NE(text.find(a_id + " refuted on map " + map + " — dram at 30 % of peak"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(bottleneck + ": the GEMM waits on its launch"), std::string::npos) << text;
}

TEST_F(HypothesisTest, EachRefusalNamesItsField) {
    const std::string exp = experiment("kernel v1\n");
    const std::string map = testing::stored_map(*store_, exp, "reference");
    ErrorCode code = ErrorCode::internal;
    if (const auto e = EXPECT_CKO_ERROR((void)add_hypothesis(*target_, {"", "", "", {}}),
                                        ErrorCode::invalid_argument)) {
        EXPECT_EQ(e->details().at("problems").size(), 3U);  // every problem at once
    }
    EXPECT_EQ(field_of([&] {
                  (void)add_hypothesis(*target_, {"map:" + map, "e", "s", {}});
              }),
              "bottleneck");
    EXPECT_EQ(field_of([&] {
                  (void)add_hypothesis(*target_, {"map:" + map + "#nosuch", "e", "s", {}});
              }),
              "bottleneck");
    EXPECT_EQ(
        field_of([&] {
            (void)add_hypothesis(*target_, {"map:profile-0000000000000000#gemm", "e", "s", {}});
        }),
        "bottleneck");
    const std::string words = add_hypothesis(*target_, {"softmax", "e", "s", {}}).at("id");
    EXPECT_EQ(field_of(
                  [&] {
                      (void)add_hypothesis(*target_, {"gemm", "e2", "s", {words}});
                  },
                  &code),
              "rival");
    EXPECT_EQ(code, ErrorCode::invalid_argument);  // a rival of another bottleneck
    EXPECT_EQ(
        field_of(
            [&] {
                (void)add_hypothesis(*target_, {"softmax", "e2", "s", {"hyp-0000000000000000"}});
            },
            &code),
        "rival");
    EXPECT_EQ(code, ErrorCode::not_found);
    EXPECT_EQ(field_of(
                  [&] {
                      (void)add_hypothesis(*target_, {"softmax", "e", "other", {}});
                  },
                  &code),
              "explanation");
    EXPECT_EQ(code, ErrorCode::already_exists);

    EXPECT_EQ(field_of([&] {
                  (void)settle_hypothesis(*target_, {words, "maybe", exp, ""});
              }),
              "outcome");
    EXPECT_EQ(
        field_of(
            [&] {
                (void)settle_hypothesis(*target_, {words, "refuted", "inv-0000000000000000", ""});
            },
            &code),
        "evidence");
    EXPECT_EQ(code, ErrorCode::not_found);
    EXPECT_EQ(field_of([&] {
                  (void)settle_hypothesis(*target_, {words, "refuted", "notes.txt", ""});
              }),
              "evidence");
    EXPECT_EQ(
        field_of(
            [&] {
                (void)settle_hypothesis(*target_, {"hyp-0000000000000000", "refuted", exp, ""});
            },
            &code),
        "hypothesis");
    EXPECT_EQ(code, ErrorCode::not_found);
    EXPECT_FALSE(std::filesystem::exists(store_->root() / store::layout::kSettlementsDir));
}

TEST_F(HypothesisTest, AnExperimentNamesTheHypothesisItTestsAndAnUnknownOneIsRefused) {
    const std::string h = add_hypothesis(*target_, {"softmax", "e", "s", {}}).at("id");
    put(dir_ / "cand" / "k.cu", "kernel v9\n");
    ExperimentSpec e;
    e.candidate = dir_ / "cand";
    e.hypothesis = "h";
    e.mechanism = "m";
    e.failure_closes = "mechanism";
    e.no_falsifier_reason = "test";
    e.tests_hypothesis = "hyp-0000000000000000";
    std::string message;
    EXPECT_EQ(code_of([&] { (void)create_experiment(*target_, e); }, &message),
              ErrorCode::not_found);
    EXPECT_NE(message.find("tests_hypothesis"), std::string::npos) << message;
    e.tests_hypothesis = h;
    const std::string exp = create_experiment(*target_, e).at("id");
    EXPECT_EQ(load_experiment(*store_, exp).tests_hypothesis, h);
    EXPECT_EQ(hypothesis_board(*store_).at("hypotheses")[0].at("tested_by"), Json::array({exp}));
    EXPECT_NE(history_text(target_history(*store_)).find("tests " + h), std::string::npos);
}

}  // namespace
}  // namespace cko::eval
