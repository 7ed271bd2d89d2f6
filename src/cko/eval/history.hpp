// The history of a Target: experiments, every comparison with its reference and verdict, champion
// changes.
#pragma once

#include "cko/store/store.hpp"
#include "cko/util/json.hpp"

namespace cko::eval {

// One document, in time order: `entries` holds baselines (A/A interval, resolution, case medians),
// experiments (with hypothesis, mechanism, base, claim layer, what a failure closes, the competing
// hypothesis it tests), screens/confirms/audits (reference, verdict, decision, effect, deciding
// interval, per-pair log ratios `d`, per-case intervals, constraints, notes, pairs, GPU and wall
// seconds), champion selections/restores, lowered conclusions, competing hypotheses and their
// settlements, and profiles (with the question each answers). Reads only: never marks anything
// lost. The report is drawn from it.
[[nodiscard]] Json target_history(const store::Store& store);

// The table people read (one line per entry, effects as "2.58× faster (−61.3 % latency_us)").
[[nodiscard]] std::string history_text(const Json& history);

}  // namespace cko::eval
