// Planning a comparison: the reference the experiment names, the rounds, the sequential plan,
// notes.
#pragma once

#include "cko/eval/compare.hpp"
#include "cko/eval/judge.hpp"
#include "cko/eval/ledger.hpp"
#include "cko/eval/session.hpp"
#include "cko/stats/sequential.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cko::eval {

// Everything fixed before the first driver call, recorded in the invocation's request.
struct ComparisonPlan {
    store::Snapshot reference;
    std::string reference_label;  // "original" or the champion experiment's id
    store::BaseKind reference_kind = store::BaseKind::original;
    store::Snapshot candidate;
    std::string candidate_label;
    std::optional<store::ExperimentRecord> experiment;  // none for audits
    Json reference_json;
    Json candidate_json;
    double minimum_effect_pct = 0;
    std::size_t min_rounds = 6;
    std::size_t max_rounds = 40;  // a pair is a round over every case
    std::uint64_t seed = 0;
    std::optional<stats::SequentialPlan> sequential;
    Json notes = Json::array();  // what is known about noise before measuring
    // The latest A/A check's instance effect (baseline or control), carried into the verdict.
    std::optional<InstrumentBias> instrument_bias;
    double load_at_start = 0;  // 1-minute load average
    Json request;
};

// Checks the one-confirm rule, the Target (driver files unchanged: else driver_changed, exit 3,
// nothing measured), the budget; resolves the reference from the experiment's base (the original,
// or the champion frozen into the experiment) and the rounds. Earlier confirms, the budget spent
// and the latest baseline and A/A check come from `ledger`, the operation's one read of the
// invocations.
[[nodiscard]] ComparisonPlan plan_comparison(const Target& target, const CompareOptions& options,
                                             const InvocationLedger& ledger);

// Which subject a driver said it was running when it died (driver::running_subject: the SDKs'
// file in the call's output directory, else the last `cko: subject ROLE case ID` line of its
// stderr); "" when it did not say.
[[nodiscard]] std::string subject_running_at_failure(const Error& error);

// "; driver notes: …; stderr ends with: …" for a measurement whose subject did not pass ("" if
// none).
[[nodiscard]] std::string driver_notes_of(const Measurement& m);

// The last progress event of a running comparison (pairs done / at most, effect so far, elapsed
// and expected seconds); null when it has none yet.
[[nodiscard]] Json comparison_progress(const store::Store& store, const std::string& invocation_id);

// A note when the host's load average exceeded its cores during the comparison.
[[nodiscard]] std::vector<std::string> host_load_notes(double load_at_start);
[[nodiscard]] double load_average_now();

}  // namespace cko::eval
