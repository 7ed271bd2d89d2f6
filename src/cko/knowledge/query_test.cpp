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

// docs/knowledge.md: every range is inclusive at both ends, and a max compares only the parts it
// gives. Each edge of each field, one value at a time.
TEST(Query, EveryVersionBoundIsInclusiveAndAMaxComparesOnlyItsOwnParts) {
    const std::vector<Card> cards = {card(
        R"({"id": "edges", "title": "t", "kind": "heuristic", "topics": ["x"], "summary": "s",
        "heuristic": {"direction": "d", "cheapest_falsifier": "f", "competing_explanations": ["e"]},
        "identity": {"compute_capability": {"min": "8.0", "max": "9.0"},
                     "cuda": {"min": "12.2", "max": "12.4"},
                     "driver": {"min": "550", "max": "580.65"},
                     "frameworks": {"triton": {"min": "3.1.0", "max": "3"}}},
        "last_reviewed": "2026-12-01"})")};
    const auto status = [&](const std::string& field, const Identity& id) {
        return reason(query_cards(cards, id, {}, false).answers.at(0), field).status;
    };
    const auto with_cuda = [](const char* v) {
        Identity id;
        id.cuda = Version::parse(v);
        return id;
    };
    for (const char* v : {"12.2", "12.2.0", "12.3", "12.4", "12.4.1", "12.4.99"}) {
        EXPECT_EQ(status("identity.cuda", with_cuda(v)), "holds") << v;
    }
    for (const char* v : {"12.1", "12.1.9", "12.5", "13.0", "11.8"}) {
        EXPECT_EQ(status("identity.cuda", with_cuda(v)), "fails") << v;
    }
    const auto with_driver = [](const char* v) {
        Identity id;
        id.driver = Version::parse(v);
        return id;
    };
    for (const char* v : {"550", "550.0.0", "580.65", "580.65.06", "580.7"}) {
        EXPECT_EQ(status("identity.driver", with_driver(v)), "holds") << v;
    }
    for (const char* v : {"549.99", "580.66", "581"}) {
        EXPECT_EQ(status("identity.driver", with_driver(v)), "fails") << v;
    }
    const auto with_triton = [](const char* v) {
        Identity id;
        id.frameworks["triton"] = *Version::parse(v);
        return id;
    };
    for (const char* v : {"3.1.0", "3.1", "3.6.0", "3.99"}) {
        EXPECT_EQ(status("identity.frameworks.triton", with_triton(v)), "holds") << v;
    }
    for (const char* v : {"3.0.9", "4.0", "2.9"}) {
        EXPECT_EQ(status("identity.frameworks.triton", with_triton(v)), "fails") << v;
    }
    const auto with_cc = [](int major, int minor) {
        Identity id;
        id.cc = ComputeCapability{major, minor};
        return id;
    };
    EXPECT_EQ(status("identity.compute_capability", with_cc(8, 0)), "holds");
    EXPECT_EQ(status("identity.compute_capability", with_cc(8, 9)), "holds");
    EXPECT_EQ(status("identity.compute_capability", with_cc(9, 0)), "holds");
    EXPECT_EQ(status("identity.compute_capability", with_cc(7, 5)), "fails");
    EXPECT_EQ(status("identity.compute_capability", with_cc(9, 1)), "fails");
    EXPECT_EQ(status("identity.compute_capability", with_cc(10, 0)), "fails");
    // A field the identity does not give is unknown, never a match or a mismatch.
    EXPECT_EQ(status("identity.cuda", with_cc(9, 0)), "unknown");
}

// The families are compute-capability ranges, inclusive at both ends (docs/knowledge.md).
TEST(Query, FamiliesCoverTheirWholeRangeAndNothingBeyondIt) {
    const struct {
        int major, minor;
        const char* family;
    } cases[] = {{7, 0, "volta"},
                 {7, 2, "volta"},
                 {7, 5, "turing"},
                 {8, 0, "ampere"},
                 {8, 7, "ampere"},
                 {8, 9, "ada"},
                 {9, 0, "hopper"},
                 {9, 9, "hopper"},
                 {10, 0, "blackwell"},
                 {10, 3, "blackwell"},
                 {11, 0, "blackwell"},
                 {12, 0, "blackwell_consumer"},
                 {12, 1, "blackwell_consumer"}};
    for (const auto& c : cases) {
        const auto f = family_of(ComputeCapability{c.major, c.minor});
        ASSERT_TRUE(f.has_value()) << c.major << "." << c.minor;
        EXPECT_EQ(arch_family_name(*f), c.family) << c.major << "." << c.minor;
    }
    for (const auto& [major, minor] :
         {std::pair{6, 1}, std::pair{7, 3}, std::pair{8, 8}, std::pair{13, 0}}) {
        EXPECT_FALSE(family_of(ComputeCapability{major, minor}).has_value())
            << major << "." << minor;
    }
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
