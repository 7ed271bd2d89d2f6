// What the evidence of a finished screen, confirm or audit allows next: one line and, where there
// is one, the command that takes that step ([19]). A pure rule over the comparison's outcome, so
// the CLI's summary and the MCP document say the same thing; it never takes the step itself.
#pragma once

#include "cko/eval/compare.hpp"
#include "cko/eval/judge.hpp"
#include "cko/run/invocation.hpp"
#include "cko/stats/verdict.hpp"
#include "cko/util/json.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cko::eval {

struct ComparisonEnd {
    ComparisonKind kind = ComparisonKind::screen;
    run::InvocationState state = run::InvocationState::succeeded;
    std::optional<stats::Verdict> verdict;     // when the comparison reached one
    std::optional<ScreenDecision> decision;    // a screen's
    bool control = false;                      // an A/A control's comparison
    std::vector<std::string> regressed_cases;  // a mixed verdict's cases to accept by name
    std::string root;                          // as the caller named it
    std::string experiment_id;                 // empty for an audit
    std::string invocation_id;
};

struct NextStep {
    std::string statement;  // what the evidence allows, in words
    std::string command;    // the command that takes the step, or "" when the step is a judgement
    [[nodiscard]] Json to_json() const;
};

[[nodiscard]] NextStep next_step(const ComparisonEnd& end);

// The ComparisonEnd of a finished invocation's result document (`outputs.verdict`,
// `outputs.decision`, the cases to accept (cases_to_accept), the request's control flag where
// given).
[[nodiscard]] ComparisonEnd comparison_end_of(ComparisonKind kind, run::InvocationState state,
                                              const Json& outputs);

}  // namespace cko::eval
