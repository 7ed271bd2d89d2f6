// The evidence gaps and open risks the report and the handoff list: what the baseline, the
// comparisons, the experiments, the champion, the claim layer and the environment identity leave
// open, each with the ids it concerns.
#include "cko/report/evidence_gaps.hpp"

#include "cko/eval/judge.hpp"
#include "cko/report/text.hpp"

#include <fmt/format.h>

#include <map>

namespace cko::report {
namespace {

void add_gap(Json& gaps, const std::string& kind, const std::string& text, Json evidence) {
    gaps.push_back(
        Json{{"kind", kind}, {"text", one_line(text)}, {"evidence", std::move(evidence)}});
}

// What the baseline leaves open: none at all, a minimum effect it cannot resolve, an A/A check
// that was not equivalent.
void baseline_gaps(Json& gaps, const Json& baseline) {
    if (baseline.is_null()) {
        add_gap(gaps, "no_baseline",
                "no baseline: the noise of the measurement (A/A) was never measured",
                Json::array());
    } else {
        const Json facts = baseline.value("resolution_facts", Json::object());
        if (facts.is_object() && facts.contains("resolvable") && !facts.value("resolvable", true)) {
            add_gap(gaps, "unresolvable_minimum_effect",
                    "the baseline cannot resolve the minimum effect: " +
                        text_of(baseline, "resolution"),
                    Json::array({text_of(baseline, "id")}));
        }
        const std::string aa = text_of(baseline, "verdict");
        if (aa != "equivalent" && aa != "inconclusive" && !aa.empty()) {
            add_gap(gaps, "aa_not_equivalent",
                    fmt::format("the A/A check (original against itself) said {}: about 1 run in "
                                "20 by chance at 95 %; "
                                "repeated, it means a bias in the measurement",
                                aa),
                    Json::array({text_of(baseline, "id")}));
        }
    }
}

// What the comparisons leave open: failed or undecided invocations, mixed verdicts, and each note
// once with the comparisons that made it.
void comparison_gaps(Json& gaps, const Json& comparisons) {
    std::map<std::string, Json> notes;
    for (const auto& c : comparisons) {
        const std::string id = text_of(c, "id");
        for (const auto& n : c.value("notes", Json::array())) {
            auto& ids = notes[n.get<std::string>()];
            if (ids.is_null()) {
                ids = Json::array();
            }
            ids.push_back(id);
        }
        const std::string state = text_of(c, "state");
        if (state != "succeeded") {
            add_gap(gaps, "failed_invocation",
                    fmt::format("{} {} ended {}: {}", text_of(c, "type"), id, state,
                                text_of(c, "reason")),
                    Json::array({id}));
        } else if (c.value("infrastructure_failure", false)) {
            add_gap(gaps, "infrastructure_failure",
                    fmt::format("{} {} decided nothing (infrastructure failure): {}",
                                text_of(c, "type"), id, text_of(c, "reason")),
                    Json::array({id}));
        }
        if (text_of(c, "verdict") == "mixed") {
            add_gap(gaps, "mixed",
                    fmt::format("{} {} is mixed: regressed on {}", text_of(c, "type"), id,
                                list_text(Json(eval::cases_to_accept(c)))),
                    Json::array({id}));
        }
    }
    for (const auto& [note, ids] : notes) {
        add_gap(gaps, "note", note, ids);
    }
}

// Every identity gap (eval::identity_claim), whether or not it lowers the Target's layer.
void identity_gaps(Json& gaps, const Json& identity, const std::string& target_id) {
    for (const auto& g : identity.value("gaps", Json::array())) {
        add_gap(gaps, "identity",
                fmt::format("identity gap ({}): {}", text_of(g, "gap"), text_of(g, "reason")),
                Json::array({target_id}));
    }
}

}  // namespace

Json evidence_gaps(const Json& model, const Json& comparisons, const Json& identity) {
    Json gaps = Json::array();
    baseline_gaps(gaps, model["baseline"]);
    comparison_gaps(gaps, comparisons);
    for (const auto& x : model["experiments"]) {
        const std::string status = text_of(x, "status");
        if (status == "unconfirmed" || status == "unmeasured" || status == "unresolved") {
            add_gap(gaps, "unconfirmed",
                    fmt::format("{} ({}): {}", text_of(x, "id"), text_of(x, "mechanism"),
                                text_of(x, "conclusion")),
                    x.value("evidence", Json::array()));
        }
    }
    const Json& champion = model["champion"];
    if (champion.value("current", "original") != "original") {
        if (!champion.value("audited", false)) {
            add_gap(gaps, "not_audited",
                    "the champion was never audited (cko audit) after its selection",
                    Json::array({text_of(champion, "selection")}));
        } else if (text_of(champion, "audit_verdict") != "improved") {
            add_gap(gaps, "audit_not_improved",
                    fmt::format(
                        "the latest audit of the champion says {}, yet it is still the champion",
                        text_of(champion, "audit_verdict")),
                    Json::array({text_of(champion, "audit")}));
        }
    }
    add_gap(gaps, "claim_layer",
            fmt::format("every effect here is measured at the {} layer on this machine; it says "
                        "nothing about a "
                        "higher layer or another environment",
                        model["target"].value("claim_layer", "")),
            Json::array({model["target"].value("id", "")}));
    identity_gaps(gaps, identity, model["target"].value("id", ""));
    if (model.value("profiles", Json::array()).empty()) {
        add_gap(gaps, "no_profiles",
                "profiles: none stored; no profiler fact supports or refutes a mechanism",
                Json::array());
    }
    if (model["stop"].is_null()) {
        add_gap(gaps, "no_termination",
                "no termination reason recorded (cko stop --root R --reason TEXT)", Json::array());
    }
    return gaps;
}

}  // namespace cko::report
