// Competing hypotheses (`cko hypotheses add|list|settle`): explanations of one bottleneck, each
// with the evidence that would separate it from its rivals, recorded before that evidence exists;
// a settlement closes one on a stored record. The board groups them by bottleneck for `list`, the
// history, the report and the handoff.
#pragma once

#include "cko/store/hypothesis_record.hpp"
#include "cko/store/store.hpp"
#include "cko/util/json.hpp"

#include <string>
#include <vector>

namespace cko::eval {

class Target;

struct HypothesisOptions {
    std::string bottleneck;    // "map:<profile-id>#<item>" (an item of a stored map) or free text
    std::string explanation;   // required
    std::string separated_by;  // required: the evidence that would tell it from its rivals
    std::vector<std::string> rivals;  // earlier hypotheses of the same bottleneck (hyp-…)
};

// Records one hypothesis (hypotheses/<hyp-id>.json) and returns the record as written. Refused,
// every problem at once, with invalid_argument naming the field: `bottleneck`, `explanation` or
// `separated_by` empty; a map bottleneck naming no item, a map the store does not hold, another
// kind of profile, foreign evidence, another Target's, or an item the map does not have; a `rival`
// of another bottleneck; not_found naming `rival` for an id that is no hypothesis here;
// already_exists for the same explanation of the same bottleneck (naming it).
[[nodiscard]] Json add_hypothesis(const Target& target, const HypothesisOptions& options);

struct SettleOptions {
    std::string hypothesis;  // hyp-…
    std::string outcome;     // supported | refuted
    std::string evidence;    // exp-…, inv-… (finished), profile-… (a profile or a map)
    std::string note;        // optional
};

// Records how one hypothesis was settled (hypotheses/settlements/<hset-id>.json), citing it and
// the evidence, and returns the record as written. Refused: not_found naming `hypothesis` or
// `evidence` for an id that is not here; invalid_argument naming `outcome` (not a closed word),
// `evidence` (missing, not a record id, an unfinished invocation, foreign evidence) or `note`;
// already_exists when it was settled before (a settlement is written once).
[[nodiscard]] Json settle_hypothesis(const Target& target, const SettleOptions& options);

// Refuses (not_found naming `field`) an id that is no hypothesis of `store`.
void require_hypothesis(const store::Store& store, const std::string& id, const std::string& field);

// The board: {format_version cko/hypotheses-v1, hypotheses[] (each record's members with `state`
// open|supported|refuted, `settlement` or null, `rivals_now` (the others of its bottleneck, each
// {id, state}) and `tested_by` (experiments naming it)), bottlenecks[] ({bottleneck,
// bottleneck_map or null, open[] and settled[] hypothesis ids}, in the order first recorded),
// open (count)}.
[[nodiscard]] Json hypothesis_board(const store::Store& store);
// A bottleneck as people read it: the words, or "map:profile-…#gemm (kernel gemm: 41.5 % exposed
// in window 'step')" for a map item (`group`: a board's bottleneck or hypothesis).
[[nodiscard]] std::string bottleneck_text(const Json& group);
// The board as people read it: each bottleneck, its hypotheses, what would separate them.
[[nodiscard]] std::string hypothesis_board_text(const Json& board);

// The history entries ({type: hypothesis, id, t_unix_s, t_unix_ns, bottleneck, explanation,
// separated_by, rivals}; {type: settle, id, t_unix_s, t_unix_ns, hypothesis, outcome, evidence,
// note}) and their lines in `cko history`.
[[nodiscard]] Json hypothesis_history_entry(const store::HypothesisRecord& record);
[[nodiscard]] Json settlement_history_entry(const store::HypothesisSettlementRecord& record);
[[nodiscard]] std::string hypothesis_history_line(const std::string& when, const Json& entry);

}  // namespace cko::eval
