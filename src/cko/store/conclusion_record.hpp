// A lowered conclusion (conclusions/<low-id>.json, conclusion-v1): the decision maker's recorded
// downgrade of the Target's stated claim, with the word it was lowered to, why, and the audit
// cited.
#pragma once

#include "cko/store/experiment_words.hpp"
#include "cko/util/closed_enum.hpp"
#include "cko/util/json.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cko::store {

// What a conclusion may be lowered to: a kernel-layer claim only, or no confirmed claim at all.
// `unconfirmed` is below every claim layer.
#define CKO_LOWERED_TO(X) X(kernel) X(unconfirmed)
CKO_CLOSED_ENUM(LoweredTo, CKO_LOWERED_TO, lowered_to_name, lowered_to_from_name)

struct ConclusionRecord {
    struct Audit {
        std::string id;       // the audit invocation cited
        std::string verdict;  // its verdict ("" when it gave none); never `improved`
        bool operator==(const Audit&) const = default;
    };
    std::string id;  // "" before content_id names it
    ClaimLayer lowered_from = ClaimLayer::kernel;
    LoweredTo lowered_to = LoweredTo::unconfirmed;
    std::string reason;
    std::optional<Audit> audit;
    std::string champion;  // the champion when it was lowered: an experiment id or "original"
    std::int64_t lowered_unix_ns = 0;

    [[nodiscard]] static ConclusionRecord from_json(const Json& j, std::string_view file);
    [[nodiscard]] Json to_json() const;  // without "id" while id is ""
    bool operator==(const ConclusionRecord&) const = default;
};

class Store;

// Read from conclusions/<id>.json and parsed strictly (invalid_record names the file and member).
[[nodiscard]] ConclusionRecord read_conclusion_record(const Store& store, std::string_view id);
// Every lowered conclusion, oldest first (by lowered_unix_ns, then id); none when the directory is
// missing.
[[nodiscard]] std::vector<ConclusionRecord> list_conclusions(const Store& store);

}  // namespace cko::store
