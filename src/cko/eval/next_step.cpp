// What a finished comparison's evidence allows next (next_step.hpp).
#include "cko/eval/next_step.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace cko::eval {

Json NextStep::to_json() const {
    return Json{{"statement", statement}, {"command", command}};
}

namespace {

std::string root_flag(const ComparisonEnd& e) {
    return e.root.empty() ? "" : fmt::format(" --root {}", e.root);
}

NextStep after_failure(const ComparisonEnd& e, std::string_view verb) {
    if (e.state == run::InvocationState::cancelled) {
        return {"cancelled: nothing was decided; run it again when the budget allows",
                e.kind == ComparisonKind::audit
                    ? fmt::format("cko audit{}", root_flag(e))
                    : fmt::format("cko {} {}{}", verb, e.experiment_id, root_flag(e))};
    }
    if (e.kind == ComparisonKind::confirm) {
        return {
            "the confirm failed before a verdict (the reason says why): once the cause is "
            "fixed, retry it on the record",
            fmt::format("cko confirm {}{} --retry-of {} --reason \"…\"", e.experiment_id,
                        root_flag(e), e.invocation_id)};
    }
    return {fmt::format("the {} failed before a verdict (the reason says why): fix the cause and "
                        "run it again",
                        verb),
            e.kind == ComparisonKind::audit
                ? fmt::format("cko audit{}", root_flag(e))
                : fmt::format("cko screen {}{}", e.experiment_id, root_flag(e))};
}

NextStep after_control(const ComparisonEnd& e) {
    if (e.verdict == stats::Verdict::equivalent || e.verdict == stats::Verdict::below_minimum) {
        return {
            "the A/A control found no effect beyond the minimum: the instrument is fit to "
            "compare candidates",
            ""};
    }
    return {
        "the A/A control did not come out equivalent: read its instrument_check before "
        "trusting a small effect; a repeated control shows whether the bias stays",
        fmt::format("cko experiment new{} --control …", root_flag(e))};
}

NextStep after_screen(const ComparisonEnd& e) {
    const std::string confirm = fmt::format("cko confirm {}{}", e.experiment_id, root_flag(e));
    switch (e.decision.value_or(ScreenDecision::no_decision)) {
    case ScreenDecision::pass_to_confirm:
        return {"the screen passes it on: confirm it (the verdict that can make a champion)",
                confirm};
    case ScreenDecision::needs_judgement:
        return {
            "the screen could not decide: confirm it only if the direction is worth a "
            "confirm's budget, or close it and try another hypothesis",
            confirm};
    case ScreenDecision::rejected:
        return {
            "the screen rejects it: record what it rules out and try another hypothesis; "
            "the evidence does not ask for a confirm",
            fmt::format("cko experiment new{} --candidate …", root_flag(e))};
    case ScreenDecision::no_decision:
        break;
    }
    return after_failure(e, "screen");
}

NextStep after_confirm(const ComparisonEnd& e) {
    const std::string select = fmt::format("cko champion select{} --experiment {} --confirm {}",
                                           root_flag(e), e.experiment_id, e.invocation_id);
    switch (e.verdict.value_or(stats::Verdict::inconclusive)) {
    case stats::Verdict::improved:
        return {
            "improved beyond the minimum effect: it may become the champion (an explicit "
            "choice)",
            select};
    case stats::Verdict::mixed: {
        std::string accept;
        for (const std::string& c : e.regressed_cases) {
            accept += fmt::format(" --accept-regression {}", c);
        }
        return {fmt::format("improved overall but regressed on {}: it may become the champion "
                            "only by accepting each of those cases by name",
                            fmt::join(e.regressed_cases, ", ")),
                select + accept};
    }
    case stats::Verdict::inconclusive:
        return {
            "undecided: the evidence allows no promotion; more pairs (a Target with a larger "
            "max_pairs) or a quieter host could decide it",
            ""};
    case stats::Verdict::invalid:
        return {
            "the candidate failed correctness: audit and profile collect of it refuse "
            "(candidate_failed); a fixed version is a new experiment",
            fmt::format("cko experiment new{} --candidate …", root_flag(e))};
    default:
        return {fmt::format("{}: not a champion; record what it rules out and try another "
                            "hypothesis",
                            stats::verdict_name(*e.verdict)),
                fmt::format("cko experiment new{} --candidate …", root_flag(e))};
    }
}

NextStep after_audit(const ComparisonEnd& e) {
    if (e.verdict == stats::Verdict::improved) {
        return {"the audit reproduced the champion's gain: the report and the handoff can cite it",
                fmt::format("cko report{} --out report.html", root_flag(e))};
    }
    return {fmt::format("the audit did not reproduce the champion's gain ({}): restore the "
                        "original as champion, citing this audit, and/or lower the stated claim "
                        "(cko conclusion lower{} --to kernel|unconfirmed --reason … --audit {})",
                        stats::verdict_name(e.verdict.value_or(stats::Verdict::inconclusive)),
                        root_flag(e), e.invocation_id),
            fmt::format("cko champion restore{} --audit {}", root_flag(e), e.invocation_id)};
}

}  // namespace

NextStep next_step(const ComparisonEnd& e) {
    const std::string_view verb = e.kind == ComparisonKind::screen    ? "screen"
                                  : e.kind == ComparisonKind::confirm ? "confirm"
                                                                      : "audit";
    if (e.state != run::InvocationState::succeeded || !e.verdict) {
        return after_failure(e, verb);
    }
    if (e.control) {
        return after_control(e);
    }
    if (e.verdict == stats::Verdict::invalid && e.kind == ComparisonKind::screen) {
        return {
            "the candidate failed correctness: confirm and profile collect of it refuse "
            "(candidate_failed); a fixed version is a new experiment",
            fmt::format("cko experiment new{} --candidate …", root_flag(e))};
    }
    switch (e.kind) {
    case ComparisonKind::screen:
        return after_screen(e);
    case ComparisonKind::confirm:
        return after_confirm(e);
    case ComparisonKind::audit:
        break;
    }
    return after_audit(e);
}

ComparisonEnd comparison_end_of(ComparisonKind kind, run::InvocationState state,
                                const Json& outputs) {
    ComparisonEnd e;
    e.kind = kind;
    e.state = state;
    if (!outputs.is_object()) {
        return e;
    }
    if (outputs.contains("verdict") && outputs["verdict"].is_string()) {
        e.verdict = stats::verdict_from_name(outputs["verdict"].get<std::string>());
    }
    if (outputs.contains("decision") && outputs["decision"].is_string()) {
        const std::string d = outputs["decision"].get<std::string>();
        for (const ScreenDecision s :
             {ScreenDecision::rejected, ScreenDecision::pass_to_confirm,
              ScreenDecision::needs_judgement, ScreenDecision::no_decision}) {
            if (screen_decision_name(s) == d) {
                e.decision = s;
            }
        }
    }
    e.control = outputs.contains("instrument_check");
    if (outputs.contains("regressed_cases") && outputs["regressed_cases"].is_array()) {
        e.regressed_cases = cases_to_accept(outputs);
    }
    return e;
}

}  // namespace cko::eval
