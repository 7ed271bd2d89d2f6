// Cards: the two kinds, closed objects, vocabulary-checked triggers, and the built-in set.
#include "cko/knowledge/card.hpp"

#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

namespace cko::knowledge {
namespace {

Json contract() {
    return Json::parse(R"({"id": "t.contract", "title": "T", "kind": "contract", "topics": ["tma"],
        "summary": "s", "contract": {"claim": "c", "does_not_claim": ["n"]},
        "sources": [{"url": "https://docs.nvidia.com/cuda/", "title": "CUDA Programming Guide"}],
        "identity": {"compute_capability": {"min": "9.0"}, "cuda": {"min": "12.0"}},
        "triggers": [{"fact": "sass.has.utmaldg", "op": "==", "value": 0}],
        "last_reviewed": "2026-12-01"})");
}

std::string error_of(const Json& j) {
    const test::CaughtError e =
        test::error_thrown_by([&] { (void)card_from_json(j, "f.json", 0); });
    return e ? e->what() : "";
}

TEST(Card, AContractReadsWithItsSourceAndConstraints) {
    const Card c = card_from_json(contract(), "f.json", 0);
    EXPECT_EQ(c.kind, CardKind::contract);
    EXPECT_EQ(c.sources.at(0).url, "https://docs.nvidia.com/cuda/");
    EXPECT_EQ(c.identity.cc_min->text(), "9.0");
    EXPECT_EQ(c.triggers.at(0).op, Comparison::eq);
}

TEST(Card, EveryMistakeNamesTheCardAndTheField) {
    Json j = contract();
    j["sources"] = Json::array();
    EXPECT_NE(error_of(j).find("t.contract.sources: a contract card needs the URL"),
              std::string::npos);
    j = contract();
    j["sources"][0]["url"] = "http://example.com/x";
    EXPECT_NE(error_of(j).find("sources[0].url"), std::string::npos);
    j = contract();
    j["triggers"][0]["fact"] = "ncu.spill_bytes";
    EXPECT_NE(error_of(j).find("\"ncu.spill_bytes\" is not in the fact vocabulary"),
              std::string::npos);
    j = contract();
    j["triggers"][0]["op"] = "=~";
    EXPECT_NE(error_of(j).find("triggers[0].op"), std::string::npos);
    j = contract();
    j["identity"]["families"] = Json::array({"sm_90"});
    EXPECT_NE(error_of(j).find("is not a family"), std::string::npos);
    j = contract();
    j["identity"]["frameworks"] = Json{{"pytorch", Json{{"min", "2.0"}}}};
    EXPECT_NE(error_of(j).find("spell it \"torch\""), std::string::npos);
    j = contract();
    j["surprise"] = 1;
    EXPECT_NE(error_of(j).find("t.contract.surprise: unknown key"), std::string::npos);
    j = contract();
    j["heuristic"] = Json::object();
    EXPECT_NE(error_of(j).find("a contract card has"), std::string::npos);
    j = contract();
    j["last_reviewed"] = "2026-13-01";
    EXPECT_NE(error_of(j).find("last_reviewed"), std::string::npos);
    j = contract();
    j["identity"]["cuda"] = Json{{"min", "13.0"}, {"max", "12.0"}};
    EXPECT_NE(error_of(j).find("max is below min"), std::string::npos);
    j["identity"]["cuda"] = Json{{"min", "12.5"}, {"max", "12.4"}};
    EXPECT_NE(error_of(j).find("max is below min"), std::string::npos);
    // A max compares only its own parts: 12.2 up to every 12.x is a range, not an empty one.
    j["identity"]["cuda"] = Json{{"min", "12.2"}, {"max", "12"}};
    EXPECT_NO_THROW((void)card_from_json(j, "t.json", 0));
}

TEST(Card, AHeuristicNeedsItsFalsifierAndCompetingExplanations) {
    Json j = contract();
    j.erase("contract");
    j["kind"] = "heuristic";
    j["heuristic"] = Json{{"direction", "d"}, {"cheapest_falsifier", "f"}};
    EXPECT_NE(error_of(j).find("competing_explanations"), std::string::npos);
    j["heuristic"]["competing_explanations"] = Json::array({"e"});
    EXPECT_EQ(error_of(j), "");
}

TEST(Card, TheBuiltInCardsLoadWithUniqueIdsAndEnoughOfEachKind) {
    const std::vector<Card> cards = load_cards("");
    EXPECT_GE(cards.size(), 80u);
    std::size_t contracts = 0;
    for (const Card& c : cards) {
        if (c.kind == CardKind::contract) {
            ++contracts;
            EXPECT_FALSE(c.sources.empty()) << c.id;
        }
    }
    EXPECT_GE(contracts, 20u);
}

TEST(Card, ADirectoryOfCardsCanReplaceTheBuiltInOnes) {
    EXPECT_GE(load_cards("knowledge").size(), 80u);
    EXPECT_THROW((void)load_cards("no/such/dir"), Error);
}

}  // namespace
}  // namespace cko::knowledge
