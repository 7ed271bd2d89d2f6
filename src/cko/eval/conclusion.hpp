// Lowered conclusions (`cko conclusion lower`): the decision maker's recorded downgrade of the
// Target's stated claim, the claim a Target states now, and their line in the history.
#pragma once

#include "cko/store/conclusion_record.hpp"
#include "cko/store/store.hpp"
#include "cko/util/json.hpp"

#include <optional>
#include <string>

namespace cko::eval {

class Target;

struct LowerOptions {
    std::string to;      // kernel | unconfirmed (invalid_argument naming `to`)
    std::string reason;  // required, non-empty free text
    std::string audit;   // optional: an audit invocation whose verdict is not `improved`
};

// The claim a Target states now: its claim layer, or the word of its latest (lowest) lowering.
struct StatedClaim {
    store::ClaimLayer target_layer = store::ClaimLayer::kernel;
    std::optional<store::ConclusionRecord> lowered;  // the latest lowering, if any
    [[nodiscard]] std::string word() const;          // kernel | workload | serving | unconfirmed
    // unconfirmed -1 < kernel 0 < workload 1 < serving 2.
    [[nodiscard]] int rank() const;
};

[[nodiscard]] int claim_rank(store::ClaimLayer layer);
[[nodiscard]] int claim_rank(store::LoweredTo word);

// The claim `store`'s Target states now (`target_layer` is its frozen claim layer).
[[nodiscard]] StatedClaim stated_claim(const store::Store& store, store::ClaimLayer target_layer);

// Records one lowering (conclusions/<low-id>.json) and returns the record as written. Refused with
// invalid_argument naming the field: `to` not a closed word or not below the claim stated now,
// `reason` empty, `audit` not an audit, unfinished, or `improved` (the champion still holds);
// not_found naming `audit` for an id that is no invocation of this store. The check and the write
// happen under one lock, so two lowerings cannot both start from the same claim.
[[nodiscard]] Json lower_conclusion(const Target& target, const LowerOptions& options);

// The history entry of a lowering ({type: lower, id, t_unix_s, t_unix_ns, lowered_from,
// lowered_to, reason, audit, audit_verdict, champion}) and its line in `cko history`.
[[nodiscard]] Json lowering_history_entry(const store::ConclusionRecord& record);
[[nodiscard]] std::string lowering_history_line(const std::string& when, const Json& entry);

// "lowered from workload to kernel (low-…): REASON; cites audit inv-… (regressed)": how the
// history, report and handoff state a lowering (`lowered` is a history entry).
[[nodiscard]] std::string lowering_text(const Json& lowered);

}  // namespace cko::eval
