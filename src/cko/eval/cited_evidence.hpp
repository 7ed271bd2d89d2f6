// Stored profiles and maps cited by a claim — an experiment's gain bound, a falsify record, a
// hypothesis's bottleneck: which may be cited, what code they measured, on which case, and an
// item's share of a map. Every refusal is invalid_argument naming the citing field.
#pragma once

#include "cko/eval/target.hpp"
#include "cko/store/records.hpp"
#include "cko/util/json.hpp"

#include <string>

namespace cko::eval {

// The map `id` cited under `field`: refused when the store does not hold it, it is another kind of
// profile, or it is foreign evidence.
[[nodiscard]] Json cited_map(const Target& target, const std::string& id, const std::string& field);

// The snapshot a stored profile or map measured: the collected subject's, else the reference (the
// experiment's base) or candidate of the experiment it is stored for. Refused when it is bound to
// no experiment (what code it measured is not recorded).
[[nodiscard]] std::string cited_subject_digest(const Target& target, const Json& cited,
                                               const std::string& id, const std::string& field);

// A cited profile or map must be one of this Target's, and a collected one taken on one of its
// cases.
void require_cited_target_and_case(const Target& target, const Json& cited, const std::string& id,
                                   const std::string& field);

// A profile or map a claim about `experiment` cites (falsify's evidence) must be of this Target,
// of the experiment's candidate or its base (by snapshot digest: a profile stored for another
// experiment of the same code counts) and, when collected, on one of the Target's cases; refused
// naming `field`, what it measured and what the experiment compares, and the fix.
void require_profile_of_experiment(const Target& target, const Json& cited, const std::string& id,
                                   const store::ExperimentRecord& experiment,
                                   const std::string& field);

// The item's largest removable share of a window over every part and window of the map
// (exposed_ns / duration_ns, in percent: the Amdahl bound if it took no time at all), with where
// it was read; refused naming `field` when the map has no such item (naming some it has).
[[nodiscard]] store::ExperimentRecord::GainBound map_item_bound(const Json& document,
                                                                const std::string& id,
                                                                const std::string& item,
                                                                const std::string& source,
                                                                const std::string& field);

// The share of a window a map must have recorded (coverage.recorded_ns / duration_ns, in percent)
// for a gain bound to be read from it (docs/map.md, "Citing a map as an experiment's gain bound").
inline constexpr double kGainBoundMinCoveragePct = 80.0;

// A gain bound is an upper bound only where the map saw the window: every window the item appears
// in (those the bound is the largest share of) must have recorded at least
// kGainBoundMinCoveragePct of its time; refused naming `field`, the window, what it recorded and
// the fix. A window without a coverage member recorded nothing cko can vouch for: refused too.
void require_map_coverage(const Json& document, const std::string& id, const std::string& item,
                          const std::string& field);

}  // namespace cko::eval
