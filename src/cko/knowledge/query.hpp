// `cko knowledge query`: every card judged against an identity and facts, with field-level reasons.
#pragma once

#include "cko/knowledge/card.hpp"
#include "cko/knowledge/fact_documents.hpp"
#include "cko/knowledge/identity.hpp"

#include <string>
#include <vector>

namespace cko::knowledge {

#define CKO_APPLICABILITY(X) X(applicable) X(related) X(not_applicable)
CKO_CLOSED_ENUM(Applicability, CKO_APPLICABILITY, applicability_name, applicability_from_name)
#undef CKO_APPLICABILITY

// One checked field: "holds" (known and inside the constraint), "fails" (known and outside),
// "unknown" (the identity does not say); for triggers "fired", "not_fired", "no_fact",
// "fired_elsewhere" (trigger_mode all: each fired, never all on one kernel) and "none" (the card
// has no trigger while facts were given).
struct Reason {
    std::string field;  // "identity.compute_capability", "triggers[0] ncu.stall.wait_pct > 30"
    std::string status;
    std::string expected;
    std::string actual;
    std::vector<ObservedFact> facts;  // every fact the trigger fired on
};

struct CardAnswer {
    const Card* card = nullptr;
    Applicability applicability = Applicability::related;
    std::vector<Reason> reasons;
};

struct QueryResult {
    std::vector<CardAnswer> answers;  // applicable, then related, then not_applicable; by id within
    std::size_t count[3] = {0, 0, 0};
    bool facts_given = false;
};

// A card is not_applicable when a known identity field falls outside its constraints; applicable
// when every constrained identity field holds and its triggers fire (any one, or with
// trigger_mode "all" every one on the same kernel); without facts given, a card without triggers
// is applicable on its identity alone; related otherwise (an identity field unknown, triggers not
// fired or their facts not given, no trigger while facts were given). No card is ranked above
// another: the order is the class, then the id.
[[nodiscard]] QueryResult query_cards(const std::vector<Card>& cards, const Identity& identity,
                                      const FactSet& facts, bool facts_given);

[[nodiscard]] Json query_result_to_json(const QueryResult& result, const Identity& identity,
                                        const FactSet& facts);

}  // namespace cko::knowledge
