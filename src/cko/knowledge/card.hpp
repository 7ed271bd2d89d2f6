// A knowledge card: a contract (a primary source's claim) or a heuristic (a direction to test).
#pragma once

#include "cko/knowledge/identity.hpp"
#include "cko/util/closed_enum.hpp"
#include "cko/util/json.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cko::knowledge {

#define CKO_CARD_KINDS(X) X(contract) X(heuristic)
CKO_CLOSED_ENUM(CardKind, CKO_CARD_KINDS, card_kind_name, card_kind_from_name)
#undef CKO_CARD_KINDS

#define CKO_COMPARISONS(X) X(eq) X(ne) X(lt) X(le) X(gt) X(ge)
CKO_CLOSED_ENUM(Comparison, CKO_COMPARISONS, comparison_name, comparison_from_name)
#undef CKO_COMPARISONS

// "==", "!=", "<", "<=", ">", ">=" <-> Comparison.
[[nodiscard]] std::optional<Comparison> comparison_from_symbol(std::string_view symbol) noexcept;
[[nodiscard]] std::string_view comparison_symbol(Comparison c) noexcept;
[[nodiscard]] bool compare(double value, Comparison c, double threshold) noexcept;

struct SourceRef {
    std::string url;  // https, a primary source (NVIDIA, PyTorch, Triton ... documentation)
    std::string title;
};

struct VersionRange {
    std::optional<Version> min;  // inclusive
    std::optional<Version> max;  // inclusive, compared on the parts given ("12" holds 12.9)
};

struct IdentityConstraints {
    std::vector<ArchFamily> families;  // empty = any
    std::optional<ComputeCapability> cc_min;
    std::optional<ComputeCapability> cc_max;
    std::optional<VersionRange> cuda;
    std::optional<VersionRange> driver;
    std::map<std::string, VersionRange> frameworks;  // canonical name -> range
};

struct Trigger {
    std::string fact;  // an id of the fact vocabulary (cko/fact/fact_id.hpp)
    Comparison op = Comparison::gt;
    double value = 0;
};

struct Card {
    std::string id;
    std::string title;
    CardKind kind = CardKind::heuristic;
    std::vector<std::string> topics;
    std::string summary;
    // contract
    std::string claim;
    std::vector<SourceRef> sources;  // ≥ 1 for a contract; optional for a heuristic
    std::vector<std::string> does_not_claim;
    // heuristic
    std::string direction;
    std::string cheapest_falsifier;
    std::vector<std::string> competing_explanations;

    IdentityConstraints identity;
    std::vector<Trigger> triggers;
    bool triggers_all = false;  // "all": every trigger must fire; default any one
    std::string last_reviewed;  // YYYY-MM-DD
    std::string file;           // where it was read from, for messages
};

// Parses and checks one card (the same rules as schemas/knowledge-card.json, plus: trigger fact
// ids are in the vocabulary, ranges are ordered). Errors name the file, the card and the field.
[[nodiscard]] Card card_from_json(const Json& j, std::string_view file, std::size_t index);

// Reads a card file: {"format_version":"cko/knowledge-cards-v1","cards":[...]}.
[[nodiscard]] std::vector<Card> cards_from_document(const Json& doc, std::string_view file);

// The cards built into the binary (knowledge/*.json at build time), or those of `dir` when given.
// Card ids must be unique across files.
[[nodiscard]] std::vector<Card> load_cards(const std::string& dir);

[[nodiscard]] Json card_to_json(const Card& card);

}  // namespace cko::knowledge
