// The failure gate: earlier comparisons that failed a candidate stop its confirm, audit and
// profile.
#include "cko/eval/failure_gate.hpp"

#include "cko/util/error.hpp"
#include "cko/util/utf8.hpp"

#include <fmt/format.h>

namespace cko::eval {

Json CandidateFailure::to_json() const {
    return Json{{"invocation_id", invocation_id},
                {"kind", kind},
                {"verdict", verdict},
                {"decision", decision},
                {"reason", reason}};
}

std::vector<CandidateFailure> candidate_failures(const InvocationLedger& ledger,
                                                 std::string_view experiment_id,
                                                 std::string_view candidate_digest, bool control) {
    std::vector<CandidateFailure> found;
    for (const InvocationEntry& e : ledger.entries()) {
        const store::InvocationRecord& req = e.request;
        if (req.kind != "screen" && req.kind != "confirm" && req.kind != "audit") {
            continue;
        }
        const Json& candidate = req.request.value("candidate", Json::object());
        const bool same_experiment = req.kind != "audit" && !experiment_id.empty() &&
                                     req.request.value("experiment_id", "") == experiment_id;
        const bool same_snapshot = !candidate_digest.empty() && candidate.is_object() &&
                                   candidate.value("digest", "") == candidate_digest;
        if ((!same_experiment && !same_snapshot) || !e.result) {
            continue;
        }
        if (!e.result->succeeded()) {
            continue;  // an error, a cancel or a timeout says nothing about the candidate
        }
        const Json& out = e.result->outputs;
        const std::string verdict = out.value("verdict", "");
        const std::string decision = out.value("decision", "");
        const bool own_failure = verdict == "invalid" && !out.value("infrastructure_failure", true);
        if (own_failure || (!control && req.kind == "screen" && decision == "rejected")) {
            found.push_back({e.id(), req.kind, verdict, decision, out.value("reason", "")});
        }
    }
    return found;
}

Json require_candidate_not_failed(const InvocationLedger& ledger, std::string_view operation,
                                  std::string_view experiment_id, std::string_view candidate_digest,
                                  const std::string& override_reason, bool control) {
    require_free_text(override_reason, "override_failure");
    const std::vector<CandidateFailure> failures =
        candidate_failures(ledger, experiment_id, candidate_digest, control);
    if (failures.empty()) {
        if (!override_reason.empty()) {
            throw Error(ErrorCode::invalid_argument,
                        fmt::format("--override-failure: no screen, confirm or audit failed {}; "
                                    "there is no failure to override (leave the option out)",
                                    experiment_id),
                        Json{{"field", "override_failure"}});
        }
        return Json();
    }
    Json listed = Json::array();
    for (const auto& f : failures) {
        listed.push_back(f.to_json());
    }
    if (!override_reason.empty()) {
        return Json{{"reason", override_reason}, {"failed_invocations", listed}};
    }
    const CandidateFailure& first = failures.front();
    throw Error(
        ErrorCode::candidate_failed,
        fmt::format("{} of {} refused: the candidate failed in {} {} (verdict {}{}){}; once a "
                    "candidate fails, no further performance call or profile runs for it (its "
                    "correctness evidence is kept). To run it anyway, pass --override-failure "
                    "REASON (recorded in the invocation)",
                    operation, experiment_id, first.kind, first.invocation_id, first.verdict,
                    first.decision.empty() ? "" : ", decision " + first.decision,
                    failures.size() > 1 ? fmt::format(" and {} more", failures.size() - 1) : ""),
        Json{{"experiment_id", std::string(experiment_id)},
             {"failed_invocation", first.invocation_id},
             {"failures", listed},
             {"field", "override_failure"}});
}

void gate_failed_candidate(const CompareOptions& o, ComparisonPlan& plan,
                           const InvocationLedger& ledger) {
    if (o.kind == ComparisonKind::screen) {
        return;
    }
    const Json overridden = require_candidate_not_failed(
        ledger, comparison_kind_name(o.kind), plan.candidate_label, plan.candidate.digest,
        o.override_failure, plan.experiment && plan.experiment->is_control());
    if (!overridden.is_null()) {
        plan.request["override_failure"] = overridden;
    }
}

}  // namespace cko::eval
