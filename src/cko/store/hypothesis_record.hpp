// Competing hypotheses (hypotheses/<hyp-id>.json, hypothesis-v1): one explanation of one
// bottleneck and the evidence that would separate it from its rivals; and their settlements
// (hypotheses/settlements/<hset-id>.json, hypothesis-settlement-v1), each citing the hypothesis it
// closes and the stored evidence that closed it. Both are written once.
#pragma once

#include "cko/util/closed_enum.hpp"
#include "cko/util/json.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cko::store {

// How a hypothesis was settled: the evidence supported it, or refuted it.
#define CKO_HYPOTHESIS_OUTCOMES(X) X(supported) X(refuted)
CKO_CLOSED_ENUM(HypothesisOutcome, CKO_HYPOTHESIS_OUTCOMES, hypothesis_outcome_name,
                hypothesis_outcome_from_name)

// What a settlement cites: a stored experiment, invocation, profile or map of the same root.
#define CKO_SETTLEMENT_EVIDENCE(X) X(experiment) X(invocation) X(profile) X(map)
CKO_CLOSED_ENUM(SettlementEvidence, CKO_SETTLEMENT_EVIDENCE, settlement_evidence_name,
                settlement_evidence_from_name)

struct HypothesisRecord {
    // The map item the bottleneck cites ("map:<id>#<item>"), read from the map when it was
    // recorded: the item's largest exposed share of a window (as a gain bound reads it).
    struct MapItem {
        std::string map;   // the map's profile id
        std::string item;  // the item's name in the map
        std::string kind;  // kernel | category | annotation
        std::string window;
        double share_pct = 0;
        bool operator==(const MapItem&) const = default;
    };
    std::string id;          // "" before content_id names it
    std::string bottleneck;  // as given: "map:<id>#<item>" or free text
    std::optional<MapItem> bottleneck_map;
    std::string explanation;          // why the bottleneck is there, on this hypothesis
    std::string separated_by;         // the evidence that would tell it from its rivals
    std::vector<std::string> rivals;  // hypotheses of the same bottleneck it competes with
    std::int64_t created_unix_ns = 0;

    [[nodiscard]] static HypothesisRecord from_json(const Json& j, std::string_view file);
    [[nodiscard]] Json to_json() const;  // without "id" while id is ""
    bool operator==(const HypothesisRecord&) const = default;
};

struct HypothesisSettlementRecord {
    struct Evidence {
        SettlementEvidence kind = SettlementEvidence::invocation;
        std::string id;
        bool operator==(const Evidence&) const = default;
    };
    std::string id;          // "" before content_id names it
    std::string hypothesis;  // the hyp-… it settles
    HypothesisOutcome outcome = HypothesisOutcome::refuted;
    Evidence evidence;
    std::string note;  // "" when none was given
    std::int64_t settled_unix_ns = 0;

    [[nodiscard]] static HypothesisSettlementRecord from_json(const Json& j, std::string_view file);
    [[nodiscard]] Json to_json() const;  // without "id" while id is ""
    bool operator==(const HypothesisSettlementRecord&) const = default;
};

class Store;

// Read from their catalogue paths and parsed strictly (not_found naming the id; invalid_record
// naming the file and member).
[[nodiscard]] HypothesisRecord read_hypothesis_record(const Store& store, std::string_view id);
[[nodiscard]] HypothesisSettlementRecord read_settlement_record(const Store& store,
                                                                std::string_view id);
// Every hypothesis, and every settlement, oldest first (by time, then id); none when the
// directory is missing.
[[nodiscard]] std::vector<HypothesisRecord> list_hypotheses(const Store& store);
[[nodiscard]] std::vector<HypothesisSettlementRecord> list_settlements(const Store& store);

}  // namespace cko::store
