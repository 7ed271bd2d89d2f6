// The query: identity reasons per field, triggers over facts, the three classes, an empty answer.
#include "cko/knowledge/query.hpp"

#include <gtest/gtest.h>

namespace cko::knowledge {
namespace {

Card card(const std::string& json) {
    return card_from_json(Json::parse(json), "t.json", 0);
}

const std::string kHopperTma =
    R"({"id": "hopper.tma", "title": "t", "kind": "heuristic", "topics": ["tma"],
    "summary": "s", "heuristic": {"direction": "d", "cheapest_falsifier": "f", "competing_explanations": ["e"]},
    "identity": {"families": ["hopper", "blackwell"], "cuda": {"min": "12.0"}},
    "triggers": [{"fact": "ncu.stall.long_scoreboard_pct", "op": ">", "value": 30}],
    "last_reviewed": "2026-12-01"})";
const std::string kTorch =
    R"({"id": "torch.compile", "title": "t", "kind": "heuristic", "topics": ["pytorch"],
    "summary": "s", "heuristic": {"direction": "d", "cheapest_falsifier": "f", "competing_explanations": ["e"]},
    "identity": {"frameworks": {"torch": {"min": "2.0", "max": "2"}}},
    "last_reviewed": "2026-12-01"})";

Identity h200() {
    Identity id;
    id.arch = "sm_90a";
    id.cc = ComputeCapability{9, 0};
    id.cuda = Version::parse("13.0");
    return id;
}

FactSet facts(double long_scoreboard) {
    FactSet s;
    s.facts.push_back(
        {"ncu.stall.long_scoreboard_pct", long_scoreboard, "%", "k (launch 0)", "r.json"});
    return s;
}

const Reason& reason(const CardAnswer& a, std::string_view prefix) {
    for (const Reason& r : a.reasons) {
        if (r.field.starts_with(prefix)) {
            return r;
        }
    }
    throw std::runtime_error("no reason " + std::string(prefix));
}

TEST(Query, AFiredTriggerOnAMatchingIdentityIsApplicableWithItsFacts) {
    const std::vector<Card> cards = {card(kHopperTma)};
    const QueryResult r = query_cards(cards, h200(), facts(41.5), true);
    ASSERT_EQ(r.answers.size(), 1u);
    const CardAnswer& a = r.answers[0];
    EXPECT_EQ(a.applicability, Applicability::applicable);
    EXPECT_EQ(reason(a, "identity.families").status, "holds");
    EXPECT_EQ(reason(a, "identity.families").actual, "hopper (9.0)");
    const Reason& t = reason(a, "triggers[0]");
    EXPECT_EQ(t.status, "fired");
    ASSERT_EQ(t.facts.size(), 1u);
    EXPECT_EQ(t.facts[0].scope, "k (launch 0)");
}

TEST(Query, ATriggerThatDoesNotFireLeavesTheCardRelated) {
    const std::vector<Card> cards = {card(kHopperTma)};
    const QueryResult r = query_cards(cards, h200(), facts(12), true);
    EXPECT_EQ(r.answers[0].applicability, Applicability::related);
    EXPECT_EQ(reason(r.answers[0], "triggers[0]").status, "not_fired");
}

TEST(Query, AKnownIdentityOutsideTheConstraintIsNotApplicable) {
    Identity ampere;
    ampere.arch = "sm_86";
    ampere.cc = ComputeCapability{8, 6};
    const std::vector<Card> cards = {card(kHopperTma)};
    const QueryResult r = query_cards(cards, ampere, facts(90), true);
    EXPECT_EQ(r.answers[0].applicability, Applicability::not_applicable);
    EXPECT_EQ(reason(r.answers[0], "identity.families").status, "fails");
    EXPECT_EQ(reason(r.answers[0], "identity.cuda").status, "unknown");
}

TEST(Query, AnUnknownFrameworkIsRelatedNeverAMismatch) {
    const std::vector<Card> cards = {card(kTorch)};
    EXPECT_EQ(query_cards(cards, h200(), {}, false).answers[0].applicability,
              Applicability::related);
    Identity with_torch = h200();
    with_torch.frameworks["torch"] = *Version::parse("2.11.0+cu130");
    EXPECT_EQ(query_cards(cards, with_torch, {}, false).answers[0].applicability,
              Applicability::applicable);
    with_torch.frameworks["torch"] = *Version::parse("3.0");
    EXPECT_EQ(query_cards(cards, with_torch, {}, false).answers[0].applicability,
              Applicability::not_applicable);  // max "2" holds every 2.x, not 3.0
}

TEST(Query, WithoutFactsATriggeredCardIsRelatedAndSaysSo) {
    const std::vector<Card> cards = {card(kHopperTma)};
    const QueryResult r = query_cards(cards, h200(), {}, false);
    EXPECT_EQ(r.answers[0].applicability, Applicability::related);
    EXPECT_EQ(reason(r.answers[0], "triggers[0]").actual, "no facts given (--facts)");
}

TEST(Query, AnEmptyAnswerSaysItBlocksNothing) {
    const QueryResult r = query_cards({}, h200(), {}, false);
    const Json j = query_result_to_json(r, h200(), {});
    EXPECT_EQ(j["counts"]["applicable"], 0);
    EXPECT_NE(j["note"].get<std::string>().find("not a blocker"), std::string::npos);
}

TEST(Query, AnswersAreOrderedByClassThenIdNeverByPreference) {
    const std::vector<Card> cards = {card(kTorch), card(kHopperTma)};
    Identity with_torch = h200();
    with_torch.frameworks["torch"] = *Version::parse("2.4");
    const QueryResult r = query_cards(cards, with_torch, facts(50), true);
    EXPECT_EQ(r.answers[0].card->id, "hopper.tma");
    EXPECT_EQ(r.answers[1].card->id, "torch.compile");
}

}  // namespace
}  // namespace cko::knowledge
