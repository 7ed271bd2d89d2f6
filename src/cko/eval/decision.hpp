// The decision record: an experiment's hypothesis declared falsified or survived on cited evidence
// (`cko experiment falsify`), the gate that stops measuring a falsified one, and the stage limit
// (`[limits] farthest_stage`, `--stage-limit`) that stops a session past the stage it may reach.
#pragma once

#include "cko/eval/ledger.hpp"
#include "cko/eval/operation.hpp"
#include "cko/eval/stage.hpp"
#include "cko/eval/target.hpp"
#include "cko/store/records.hpp"
#include "cko/util/closed_enum.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace cko::eval {

#define CKO_FALSIFY_OUTCOMES(X) X(falsified) X(survived)
CKO_CLOSED_ENUM(FalsifyOutcome, CKO_FALSIFY_OUTCOMES, falsify_outcome_name,
                falsify_outcome_from_name)

// The invocation kind of a falsify record (invocations/<id>/{request,result}.json, ledgered).
inline constexpr std::string_view kFalsifyKind = "falsify";

struct FalsifyOptions {
    std::string experiment_id;
    std::string outcome;   // falsified | survived (checked: invalid_argument naming `outcome`)
    std::string evidence;  // a stored id (inv-…, a profile or map id) or a file, stored
    std::string note;      // optional free text
};

// What `evidence` names: an invocation ({kind: invocation, id, invocation_kind}), a stored profile
// or map ({kind: profile|map, id, and the question it answers when it has one}), or an existing
// file, stored content-addressed ({kind: file, digest, source}). Anything else is not_found naming
// the field and how to cite evidence. A cited profile or map must be about `experiment`: of this
// Target, of its candidate's or its base's code, on one of the Target's cases (invalid_argument
// naming `evidence`, what the profile measured and the fix; a profile bound to no experiment
// recorded no code and is refused too), and not foreign.
[[nodiscard]] Json resolve_evidence(const Target& target, const std::string& evidence,
                                    const store::ExperimentRecord& experiment);

// Records the outcome: an invocation of kind `falsify` whose request and outputs are {target,
// experiment_id, outcome, evidence, note}; it succeeds at once (nothing is measured). Every
// problem of the options is reported at once (invalid_argument); an unknown experiment is
// not_found. Through the operation frame: the outcome carries the finished invocation.
[[nodiscard]] OperationOutcome record_falsify(
    const Target& target, const FalsifyOptions& options,
    const std::function<void(const std::string&)>& announce);

// One recorded outcome.
struct FalsifyRecord {
    std::string invocation_id;
    FalsifyOutcome outcome = FalsifyOutcome::falsified;
    Json evidence;
    std::string note;
    std::int64_t created_unix_ns = 0;
    [[nodiscard]] Json to_json() const;
};

// The latest (by creation time) outcome recorded for `experiment_id`: a later record supersedes an
// earlier one; none before the first.
[[nodiscard]] std::optional<FalsifyRecord> latest_falsify_record(const InvocationLedger& ledger,
                                                                 std::string_view experiment_id);

// The gate at the start of screen, confirm and profile collect of an experiment. Not falsified:
// null (an override reason is then invalid_argument: there is nothing to override). Falsified
// without `override_reason`: `falsified` naming the falsify record and how to override. With a
// reason: {reason, falsify_invocation}, which the caller records as `override_falsified`.
[[nodiscard]] Json require_not_falsified(const InvocationLedger& ledger, std::string_view operation,
                                         std::string_view experiment_id,
                                         const std::string& override_reason);

// The stage limit in force for one call: the tighter of the Target's `[limits] farthest_stage` and
// the call's `--stage-limit` (a closed word: invalid_argument naming `stage_limit`). `stage` past
// that limit is not_authorized naming the limit and where it was set. Returns {stage, set_by}
// for the request when a limit is in force, else null.
[[nodiscard]] Json require_stage_allowed(const TargetSpec& spec, Stage stage,
                                         const std::string& stage_limit);

// What a session may still spend and what its next step costs, for `cko status ID` and the
// handoff: {budgets: {wall_s, gpu_s: {budget, spent, remaining} (budget and remaining null when
// unlimited), deadline}, next_stage: null, or for a screen or confirm of an experiment {stage,
// experiment_id, estimated_cost_s (the experiment's estimate, null if it gave none),
// last_to_verdict (what this invocation's verdict took), stage_limit (the Target's
// farthest_stage or null), authorized}}. Reads only; null when the store holds no Target. With
// `finished`, the operation that has just finished that invocation passes it in: its records are
// not read again.
[[nodiscard]] Json budget_and_next_stage(const store::Store& store,
                                         const std::string& invocation_id,
                                         const InvocationEntry* finished = nullptr);
[[nodiscard]] std::string budget_and_next_stage_text(const Json& j);
// Adds `budget` (the budgets above) and `next_stage` to an invocation's document (null without a
// Target): status, wait and the operation itself (passing `finished`) give the same document.
void add_budget_and_next_stage(Json& document, const store::Store& store,
                               const std::string& invocation_id,
                               const InvocationEntry* finished = nullptr);

// The history entry of a falsify invocation ({type: falsify, id, t_unix_s, t_unix_ns,
// experiment_id, outcome, evidence, note}) and its line in `cko history`.
[[nodiscard]] Json falsify_history_entry(const InvocationEntry& entry);
[[nodiscard]] std::string falsify_history_line(const std::string& when, const Json& entry);

}  // namespace cko::eval
