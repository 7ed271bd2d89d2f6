// Stored profiles and maps cited by a claim: what may be cited, of which code and case, and a map
// item's share (one rule for a gain bound, a falsify record and a hypothesis's bottleneck).
#include "cko/eval/cited_evidence.hpp"

#include "cko/eval/field_problems.hpp"
#include "cko/eval/profile_evidence.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace cko::eval {
namespace {

[[noreturn]] void bad(const std::string& field, const std::string& problem,
                      const std::string& fix) {
    field_error(ErrorCode::invalid_argument, field, problem, fix);
}

// "map" or "profile": how a refusal names what was cited.
std::string kind_word(const Json& cited) {
    return cited.value("kind", "") == "map" ? "map" : "profile";
}

// What a cited record measured, in words: "snapshot abc… (exp-…'s candidate)".
std::string measured_words(const Json& cited, const std::string& digest) {
    const Json experiment = cited.value("experiment_id", Json());
    return fmt::format("snapshot {}{}", digest.substr(0, 12),
                       experiment.is_string()
                           ? fmt::format(" ({}'s {})", experiment.get<std::string>(),
                                         cited.value("subject", Json("")).is_string()
                                             ? cited["subject"].get<std::string>()
                                             : std::string("subject"))
                           : std::string());
}

}  // namespace

Json cited_map(const Target& target, const std::string& id, const std::string& field) {
    Json cited;
    try {
        cited = load_profile(target.store(), id);
    } catch (const Error&) {
        bad(field, fmt::format("cites map '{}', which the store does not hold", id),
            "store the map first (cko map FILE --root R) and cite the id it prints");
    }
    if (cited.value("kind", "") != "map") {
        bad(field, fmt::format("cites '{}', a {} profile, not a map", id, cited.value("kind", "")),
            "cite a profile stored by cko map");
    }
    refuse_foreign_citation(cited, field);
    return cited;
}

std::string cited_subject_digest(const Target& target, const Json& cited, const std::string& id,
                                 const std::string& field) {
    const Json collection = cited.value("collection", Json());
    if (collection.is_object() && collection.contains("subject_digest")) {
        return collection.at("subject_digest").get<std::string>();
    }
    const Json experiment = cited.value("experiment_id", Json());
    if (!experiment.is_string()) {
        bad(field,
            fmt::format("cites {} '{}', which is bound to no experiment: what code it measured "
                        "is not recorded",
                        kind_word(cited), id),
            fmt::format("store the {} with --experiment EXP --subject reference|candidate",
                        kind_word(cited)));
    }
    const store::ExperimentRecord e =
        store::read_experiment_record(target.store(), experiment.get<std::string>());
    return cited.value("subject", "") == "candidate" ? e.candidate.digest : e.base.digest;
}

void require_cited_target_and_case(const Target& target, const Json& cited, const std::string& id,
                                   const std::string& field) {
    if (cited.value("target", "") != target.id()) {
        bad(field,
            fmt::format("cites {} '{}' of Target {}, not {}", kind_word(cited), id,
                        cited.value("target", ""), target.id()),
            fmt::format("cite a {} stored for this Target", kind_word(cited)));
    }
    const Json collection = cited.value("collection", Json());
    const auto& cases = target.spec().case_ids;
    if (collection.is_object() && collection.contains("case_id") &&
        std::find(cases.begin(), cases.end(), collection.at("case_id").get<std::string>()) ==
            cases.end()) {
        bad(field,
            fmt::format("cites {} '{}' of case '{}', which is not one of the Target's cases [{}]",
                        kind_word(cited), id, collection.at("case_id").get<std::string>(),
                        fmt::join(cases, ", ")),
            fmt::format("cite a {} taken on one of the Target's cases", kind_word(cited)));
    }
}

void require_profile_of_experiment(const Target& target, const Json& cited, const std::string& id,
                                   const store::ExperimentRecord& experiment,
                                   const std::string& field) {
    require_cited_target_and_case(target, cited, id, field);
    const std::string digest = cited_subject_digest(target, cited, id, field);
    if (digest == experiment.candidate.digest || digest == experiment.base.digest) {
        return;
    }
    bad(field,
        fmt::format("cites {} '{}' of {}, but {} compares candidate {} against base {}: the {} "
                    "measured neither side of this claim",
                    kind_word(cited), id, measured_words(cited, digest), experiment.id,
                    experiment.candidate.digest.substr(0, 12), experiment.base.digest.substr(0, 12),
                    kind_word(cited)),
        fmt::format("cite a {} of {}'s candidate or base (cko profile collect ncu|nsys|torch "
                    "--experiment {} --subject candidate|reference, or an import with "
                    "--experiment {} --subject ...)",
                    kind_word(cited), experiment.id, experiment.id, experiment.id));
}

store::ExperimentRecord::GainBound map_item_bound(const Json& document, const std::string& id,
                                                  const std::string& item,
                                                  const std::string& source,
                                                  const std::string& field) {
    store::ExperimentRecord::GainBound best{-1, source, std::nullopt};
    std::vector<std::string> names;
    for (const auto& part : document.value("parts", Json::array())) {
        for (const auto& w : part.value("windows", Json::array())) {
            const std::int64_t window_ns = w.value("duration_ns", std::int64_t{0});
            for (const auto& it : w.value("items", Json::array())) {
                const std::string name = it.value("name", "");
                if (names.size() < 8 &&
                    std::find(names.begin(), names.end(), name) == names.end()) {
                    names.push_back(name);
                }
                if (name != item || window_ns <= 0) {
                    continue;
                }
                const std::int64_t exposed = it.value("exposed_ns", std::int64_t{0});
                const double pct =
                    100.0 * static_cast<double>(exposed) / static_cast<double>(window_ns);
                if (pct > best.pct) {
                    best.pct = pct;
                    best.computed = store::ExperimentRecord::GainBound::Computed{
                        item,
                        it.value("kind", ""),
                        part.value("source", ""),
                        w.value("name", ""),
                        w.value("occurrence", std::int64_t{0}),
                        exposed,
                        window_ns};
                }
            }
        }
    }
    if (!best.computed) {
        bad(field, fmt::format("map '{}' has no item '{}'", id, item),
            fmt::format("name one of its items, e.g. {}", fmt::join(names, ", ")));
    }
    return best;
}

namespace {

// The recorded share of a window, in percent; nullopt when it states no coverage or no duration.
std::optional<double> recorded_pct(const Json& window) {
    const Json coverage = window.value("coverage", Json());
    const std::int64_t duration = window.value("duration_ns", std::int64_t{0});
    if (!coverage.is_object() || !coverage.contains("recorded_ns") || duration <= 0) {
        return std::nullopt;
    }
    return 100.0 * static_cast<double>(coverage.value("recorded_ns", std::int64_t{0})) /
           static_cast<double>(duration);
}

bool has_item(const Json& window, const std::string& item) {
    for (const auto& it : window.value("items", Json::array())) {
        if (it.value("name", "") == item) {
            return true;
        }
    }
    return false;
}

}  // namespace

void require_map_coverage(const Json& document, const std::string& id, const std::string& item,
                          const std::string& field) {
    for (const auto& part : document.value("parts", Json::array())) {
        for (const auto& w : part.value("windows", Json::array())) {
            if (!has_item(w, item)) {
                continue;
            }
            const std::optional<double> recorded = recorded_pct(w);
            if (recorded && *recorded >= kGainBoundMinCoveragePct) {
                continue;
            }
            bad(field,
                fmt::format(
                    "cites map '{}', whose window '{}' (occurrence {}) of {} {}: below the {:g} % "
                    "a gain bound needs, since the item's share of the time nothing was recorded "
                    "is unknown and the bound could understate it",
                    id, w.value("name", ""), w.value("occurrence", std::int64_t{0}),
                    part.value("source", ""),
                    recorded ? fmt::format("recorded only {:.1f} % of its time", *recorded)
                             : std::string("states no coverage"),
                    kGainBoundMinCoveragePct),
                "cite a map of a trace that records the whole window (CPU activity and GPU work "
                "on, no dropped events), or a --window whose occurrences the trace covers; "
                "without a bound, leave --gain-bound-source out");
        }
    }
}

}  // namespace cko::eval
