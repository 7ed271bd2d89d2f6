// The claim an environment identity supports: identity gaps — no machine id, a container, target
// GPUs the monitor did not verify — cap the stated claim below the Target's claim layer, each with
// its reason (docs/statistics.md, "Identity gaps lower the claim"). Pure: the report and the
// handoff state what it returns; it never raises a claim.
#pragma once

#include "cko/store/conclusion_record.hpp"
#include "cko/store/experiment_words.hpp"
#include "cko/util/closed_enum.hpp"
#include "cko/util/json.hpp"

#include <string>
#include <vector>

namespace cko::eval {

#define CKO_IDENTITY_GAPS(X) X(no_machine_id) X(container) X(gpu_unverified)
CKO_CLOSED_ENUM(IdentityGap, CKO_IDENTITY_GAPS, identity_gap_name, identity_gap_from_name)

// What the rule reads of the identity the evidence was measured under.
struct MeasuredIdentity {
    bool machine_id_known = true;  // host.machine_id was recorded (neither null nor empty)
    bool in_container = false;
    std::vector<std::string> container_hints;  // why cko thought so ("/.dockerenv exists")
    // The formal comparisons (finished confirms and audits with a firm verdict) of a GPU Target
    // whose target GPUs the monitor did not verify, each "confirm inv-… (improved): why".
    std::vector<std::string> unverified_gpu_windows;
};

struct IdentityGapFound {
    IdentityGap gap = IdentityGap::no_machine_id;
    store::LoweredTo caps_at = store::LoweredTo::kernel;  // the highest claim the gap leaves
    std::string reason;  // what is missing, and why that caps the claim there
};

struct IdentityClaim {
    store::ClaimLayer target_layer = store::ClaimLayer::kernel;
    std::vector<IdentityGapFound> gaps;  // in the table's order; empty: no gap
    // The lower of the Target's layer and every gap's cap (unconfirmed -1 < kernel 0 < …).
    [[nodiscard]] int rank() const;
    [[nodiscard]] std::string word() const;  // kernel | workload | serving | unconfirmed
    [[nodiscard]] bool lowers() const;       // below the Target's claim layer
    // {supports, lowers, gaps: [{gap, caps_at, reason}]}
    [[nodiscard]] Json to_json() const;
};

// The lowering table: no machine id → kernel; a container → kernel; target GPUs not verified
// during a formal comparison → unconfirmed. Every gap found is listed, whether or not it lowers
// the Target's layer.
[[nodiscard]] IdentityClaim identity_claim(const MeasuredIdentity& identity,
                                           store::ClaimLayer target_layer);

// The claim stated when a manual lowering (`stated_rank`: the Target's layer or the latest `cko
// conclusion lower`) meets the identity's cap: the lower of the two, so neither is ever raised.
[[nodiscard]] int combined_claim_rank(int stated_rank, const IdentityClaim& identity);

// A claim rank's word: -1 unconfirmed, 0 kernel, 1 workload, 2 serving.
[[nodiscard]] std::string claim_word(int rank);

// What the rule reads, from a Target's frozen environment (cko/identity-v1), whether the Target
// measures on GPUs, and the history's comparison entries (each with its `observation`: {applied,
// gpu}, or null when its record has none).
[[nodiscard]] MeasuredIdentity measured_identity(const Json& environment, bool gpu_target,
                                                 const Json& comparisons);

}  // namespace cko::eval
