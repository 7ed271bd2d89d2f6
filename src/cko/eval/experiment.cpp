// Experiment records: validated contract, change scope from manifests, create-once.
#include "cko/eval/experiment.hpp"

#include "cko/eval/champion.hpp"
#include "cko/eval/cited_evidence.hpp"
#include "cko/eval/field_problems.hpp"
#include "cko/eval/hypothesis.hpp"
#include "cko/eval/ledger.hpp"
#include "cko/eval/profile_evidence.hpp"
#include "cko/util/clock.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"
#include "cko/util/utf8.hpp"

#include <fmt/format.h>

#include <fnmatch.h>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace cko::eval {
namespace {

// A typed gain bound agrees with the one computed from the cited map within this (percentage
// points): the rounding of a printed value.
constexpr double kGainBoundTolerancePct = 0.05;

[[noreturn]] void bad(const std::string& field, const std::string& problem,
                      const std::string& fix) {
    field_error(ErrorCode::invalid_argument, field, problem, fix);
}

// A changed path inside the snapshot, seen from the Target folder (where change_scope lives).
std::string target_relative(const TargetSpec& spec, const std::string& snapshot_path) {
    return snapshot_path.empty() ? spec.original : spec.original + "/" + snapshot_path;
}

bool in_scope(const TargetSpec& spec, const std::string& path) {
    for (const auto& pattern : spec.change_scope) {
        if (::fnmatch(pattern.c_str(), path.c_str(), FNM_PATHNAME) == 0) {
            return true;
        }
    }
    return false;
}

// One formal confirm per candidate, not per hypothesis text: the same candidate against the same
// base is the same experiment whatever its story says.
// The comparison contract: what a confirm tests besides the code (a stricter gate or another
// minimum effect is a different question about the same candidate; a reworded hypothesis is not).
bool same_contract(const store::ExperimentRecord& a, const store::ExperimentRecord& b) {
    return a.minimum_effect_pct == b.minimum_effect_pct &&
           a.extra_correctness_gates == b.extra_correctness_gates &&
           a.secondary_metrics == b.secondary_metrics && a.claim_layer == b.claim_layer &&
           a.is_control() == b.is_control();
}

void refuse_refreeze(const Target& target, const store::ExperimentRecord& record) {
    if (record.is_control()) {
        // An A/A control checks the instrument, not a candidate: it may be repeated ([18]), each
        // repeat its own experiment and its own confirm.
        return;
    }
    const store::Store& store = target.store();
    for (const auto& id : list_experiments(store)) {
        const store::ExperimentRecord e = store::read_experiment_record(store, id);
        if (e.candidate.digest != record.candidate.digest || e.base.digest != record.base.digest ||
            !same_contract(e, record)) {
            continue;
        }
        // Read only on a refusal: a freeze that goes ahead never reads the invocations.
        std::string confirmed;
        const InvocationLedger ledger = InvocationLedger::read(store);
        if (const InvocationEntry* c = ledger.confirmed_by(id)) {
            confirmed = fmt::format(", confirmed by {} (`{}`)", c->id(),
                                    c->result->outputs.value("verdict", c->result->state));
        }
        throw Error(ErrorCode::already_exists,
                    fmt::format("this candidate is already frozen against this base as {}{}: one "
                                "formal confirm per "
                                "candidate; use that experiment",
                                id, confirmed),
                    Json{{"id", id}, {"field", "candidate"}});
    }
}

}  // namespace

std::vector<std::string> list_experiments(const store::Store& store) {
    std::vector<std::pair<std::int64_t, std::string>> found;
    const std::filesystem::path dir = store.root() / store::layout::kExperimentsDir;
    if (std::filesystem::is_directory(dir)) {
        for (const auto& entry : std::filesystem::directory_iterator(dir)) {
            const std::string name = entry.path().filename().string();
            if (entry.path().extension() == ".json" && name.starts_with("exp-")) {
                const std::string id = entry.path().stem().string();
                const store::ExperimentRecord e = store::read_experiment_record(store, id);
                found.emplace_back(e.created_unix_s.value_or(0), id);
            }
        }
    }
    std::sort(found.begin(), found.end());
    std::vector<std::string> ids;
    for (auto& [t, id] : found) {
        ids.push_back(std::move(id));
    }
    return ids;
}

std::vector<std::string> changed_files(const store::Snapshot& base,
                                       const store::Snapshot& candidate) {
    std::map<std::string, std::string> a;
    std::map<std::string, std::string> b;
    for (const auto& e : base.entries) {
        a[e.path] = e.sha256 + std::to_string(e.mode);
    }
    for (const auto& e : candidate.entries) {
        b[e.path] = e.sha256 + std::to_string(e.mode);
    }
    std::vector<std::string> out;
    for (const auto& [path, digest] : b) {
        const auto it = a.find(path);
        if (it == a.end()) {
            out.push_back("+" + path);
        } else if (it->second != digest) {
            out.push_back("~" + path);
        }
    }
    for (const auto& [path, digest] : a) {
        if (!b.contains(path)) {
            out.push_back("-" + path);
        }
    }
    return out;
}

namespace {

// The story every experiment but a control must tell: candidate, hypothesis, mechanism, falsifier.
void check_story(const ExperimentSpec& spec, FieldProblems& p) {
    if (!spec.control && spec.candidate.empty()) {
        p.add("candidate", "missing",
              "give the candidate's file or directory, or --control for an A/A control");
    }
    if (spec.control && !spec.candidate.empty()) {
        p.add("candidate", "given with --control",
              "a control's candidate is its base: drop --candidate");
    }
    if (spec.hypothesis.empty()) {
        p.add("hypothesis", "missing", "say what you expect and why, in one or two sentences");
    }
    if (spec.mechanism.empty()) {
        p.add("mechanism", "missing", "give a short key for the mechanism, e.g. vectorized-loads");
    } else if (!is_safe_name(spec.mechanism)) {
        p.add("mechanism", fmt::format("\"{}\" is not a safe name", spec.mechanism),
              "use 1-128 characters from [A-Za-z0-9._-], not \".\" or \"..\"");
    }
    if (spec.falsifier.empty() == spec.no_falsifier_reason.empty()) {
        p.add("falsifier", "give exactly one of falsifier and no_falsifier_reason",
              "name the cheapest command that could prove the hypothesis wrong, or say why none "
              "is needed");
    }
}

template <class Enum>
void check_word(FieldProblems& p, const char* field, const std::string& value) {
    p.check([&] { (void)closed_word<Enum>(ErrorCode::invalid_argument, field, value); });
}

// The closed words of the contract, each against its set, and what they require of the Target.
void check_words(const TargetSpec& t, const ExperimentSpec& spec, FieldProblems& p) {
    check_word<store::FailureCloses>(p, "failure_closes", spec.failure_closes);
    check_word<store::ScreenDesign>(p, "screen_design", spec.screen_design);
    check_word<store::Relationship>(p, "relationship", spec.relationship);
    check_word<store::Lifecycle>(p, "lifecycle", spec.lifecycle);
    if (spec.lifecycle == "same_process" && !t.can_pair_in_process()) {
        p.add("lifecycle", "same_process needs a driver declared paired_in_process",
              "use isolated_process");
    }
    check_word<store::BaseKind>(p, "base", spec.base);
    p.check([&] {
        if (spec.claim_layer.empty()) {
            return;  // the Target's own
        }
        const store::ClaimLayer claim = closed_word<store::ClaimLayer>(
            ErrorCode::invalid_argument, "claim_layer", spec.claim_layer);
        if (claim > t.claim_layer) {  // ordered from the narrowest claim to the widest
            bad("claim_layer",
                fmt::format("\"{}\" claims more than the Target's evidence layer \"{}\"",
                            spec.claim_layer, store::claim_layer_name(t.claim_layer)),
                "claim at most the Target's layer; a wider claim needs a Target measured at that "
                "layer");
        }
    });
}

// The numbers and metrics of the contract: minimum effect, gain bound, gates, secondary metrics.
void check_measures(const TargetSpec& t, const ExperimentSpec& spec, FieldProblems& p) {
    const double min_effect = spec.minimum_effect_pct.value_or(t.minimum_effect_pct);
    if (const std::string problem = minimum_effect_problem(min_effect); !problem.empty()) {
        p.add("minimum_effect_pct", problem, "give the smallest gain worth having, in percent");
    }
    if (spec.gain_bound_pct && spec.gain_bound_source.empty()) {
        p.add("gain_bound_source", "missing",
              "say where the upper bound comes from (e.g. an Amdahl bound from a profile)");
    }
    if (spec.gain_bound_source.starts_with("map:") &&
        spec.gain_bound_source.find('#') == std::string::npos) {
        p.add("gain_bound_source",
              fmt::format("'{}' names no item of the map", spec.gain_bound_source),
              "cite map:<id>#<item> (an item's name in the map's JSON): cko computes the bound");
    }
    for (std::size_t i = 0; i < spec.extra_correctness_gates.size(); ++i) {
        p.check([&] {
            (void)parse_correctness_gate(spec.extra_correctness_gates[i],
                                         fmt::format("correctness_gate[{}]", i));
        });
    }
    for (const auto& s : spec.secondary) {
        const bool known = std::any_of(t.constraints.begin(), t.constraints.end(),
                                       [&](const ConstraintSpec& c) { return c.name == s.name; });
        if (!known) {
            p.add("secondary",
                  fmt::format("\"{}\" is not one of the Target's constraint metrics", s.name),
                  "secondary metrics must be measured: list Target constraints only");
        }
    }
}

// An A/A control needs no story: it checks the instrument. A repeated one is numbered (its
// record, and so its content-addressed id, differs from the earlier controls').
ExperimentSpec with_control_defaults(const ExperimentSpec& given, const store::Store& store) {
    ExperimentSpec spec = given;
    if (!spec.control) {
        return spec;
    }
    if (spec.hypothesis.empty()) {
        int earlier = 0;
        for (const auto& id : list_experiments(store)) {
            earlier += store::read_experiment_record(store, id).is_control() ? 1 : 0;
        }
        spec.hypothesis = fmt::format(
            "A/A control{}: the candidate is its base, so the comparison should find no effect",
            earlier == 0 ? std::string() : fmt::format(" (repeat {})", earlier + 1));
    }
    if (spec.mechanism.empty()) {
        spec.mechanism = "aa-control";
    }
    if (spec.falsifier.empty() && spec.no_falsifier_reason.empty()) {
        spec.no_falsifier_reason = "a control tests the instrument, not a hypothesis";
    }
    if (spec.failure_closes.empty()) {
        spec.failure_closes = "implementation";
    }
    return spec;
}

// The map a gain bound cites must be of this Target and of this experiment's base, on one of the
// Target's cases.
void check_map_subject(const Target& target, const Json& cited, const std::string& id,
                       const std::string& base_digest) {
    require_cited_target_and_case(target, cited, id, "gain_bound_source");
    const std::string digest = cited_subject_digest(target, cited, id, "gain_bound_source");
    if (digest != base_digest) {
        bad("gain_bound_source",
            fmt::format("cites map '{}' of snapshot {}, but this experiment's base is {}", id,
                        digest.substr(0, 12), base_digest.substr(0, 12)),
            "cite a map of the code the candidate is compared against (its base)");
    }
}

// A bound citing a map item is computed from it; a typed bound must agree with it to rounding.
std::optional<store::ExperimentRecord::GainBound> cited_bound(const Target& target,
                                                              const ExperimentSpec& spec,
                                                              const std::string& base_digest) {
    if (!spec.gain_bound_source.starts_with("map:")) {
        return std::nullopt;
    }
    const std::string cited_ref = spec.gain_bound_source.substr(4);
    const std::size_t hash = cited_ref.find('#');
    const std::string id = cited_ref.substr(0, hash);
    const Json cited = cited_map(target, id, "gain_bound_source");
    check_map_subject(target, cited, id, base_digest);
    require_map_coverage(cited.value("document", Json::object()), id, cited_ref.substr(hash + 1),
                         "gain_bound_source");
    const auto bound =
        map_item_bound(cited.value("document", Json::object()), id, cited_ref.substr(hash + 1),
                       spec.gain_bound_source, "gain_bound_source");
    if (spec.gain_bound_pct &&
        std::abs(*spec.gain_bound_pct - bound.pct) > kGainBoundTolerancePct) {
        bad("gain_bound_pct",
            fmt::format("is {}% but the cited map computes {:.4f}% ('{}' exposes {} ns of its "
                        "{} ns window '{}')",
                        *spec.gain_bound_pct, bound.pct, bound.computed->item,
                        bound.computed->exposed_ns, bound.computed->window_ns,
                        bound.computed->window),
            "leave --gain-bound-pct out: cko computes it from the map");
    }
    return bound;
}

// The base this candidate is compared against (the original, or the champion right now), the
// candidate's snapshot and the files it changes, refused when any lies outside the change scope.
struct Subjects {
    bool on_champion = false;
    Champion champion;
    store::Snapshot base;
    store::Snapshot candidate;
    std::vector<std::string> changes;
};

Subjects snapshot_subjects(const Target& target, const ExperimentSpec& spec,
                           store::BaseKind base_kind) {
    const TargetSpec& t = target.spec();
    Subjects s;
    s.champion = read_champion(target.store());
    s.on_champion = base_kind == store::BaseKind::champion && s.champion.experiment_id.has_value();
    if (base_kind == store::BaseKind::champion && !s.on_champion) {
        bad("base", "there is no champion yet", "use base original, or select a champion first");
    }
    s.base = store::load_snapshot(target.store(),
                                  s.on_champion ? s.champion.digest : target.original().digest);
    s.candidate = spec.control ? s.base : store::take_snapshot(target.store(), spec.candidate);
    if (s.candidate.kind != s.base.kind) {
        bad("candidate",
            fmt::format("is a {} but the original is a {}", s.candidate.kind, s.base.kind),
            "lay the candidate out like the original");
    }
    s.changes = changed_files(s.base, s.candidate);
    if (s.changes.empty() && !spec.control) {
        bad("candidate", "is identical to its base",
            "change something inside the change scope, or freeze an A/A control with --control");
    }
    std::vector<std::string> outside;
    for (const auto& c : s.changes) {
        const std::string path = target_relative(t, c.substr(1));
        if (!in_scope(t, path)) {
            outside.push_back(path);
        }
    }
    if (!outside.empty()) {
        throw Error(
            ErrorCode::scope_violation,
            fmt::format(
                "the candidate changes {} outside the Target's change scope [{}]; revert them or "
                "freeze a Target whose scope includes them",
                fmt::join(outside, ", "), fmt::join(t.change_scope, ", ")),
            Json{{"outside", outside}, {"change_scope", t.change_scope}});
    }
    return s;
}

// The record of a checked contract (words already validated) over its subjects, before its id.
store::ExperimentRecord record_of(const Target& target, const ExperimentSpec& spec,
                                  const Subjects& subjects,
                                  const std::optional<store::ExperimentRecord::GainBound>& cited) {
    const TargetSpec& t = target.spec();
    store::ExperimentRecord record;
    record.target = {target.id(), sha256_file_hex(target.store().path_of(store::layout::kTarget))};
    record.candidate = store::SnapshotRefRecord::from_json(subjects.candidate.reference(),
                                                           "(candidate)", "$.candidate");
    record.base = {subjects.on_champion ? store::BaseKind::champion : store::BaseKind::original,
                   subjects.on_champion ? subjects.champion.experiment_id : std::nullopt,
                   subjects.base.digest};
    record.changed_files = subjects.changes;
    record.hypothesis = spec.hypothesis;
    record.mechanism = spec.mechanism;
    record.claim_layer =
        spec.claim_layer.empty() ? t.claim_layer : *store::claim_layer_from_name(spec.claim_layer);
    record.minimum_effect_pct = spec.minimum_effect_pct.value_or(t.minimum_effect_pct);
    if (!spec.falsifier.empty()) {
        record.falsifier = spec.falsifier;
    }
    if (!spec.no_falsifier_reason.empty()) {
        record.no_falsifier_reason = spec.no_falsifier_reason;
    }
    record.failure_closes = *store::failure_closes_from_name(spec.failure_closes);
    record.screen_design = *store::screen_design_from_name(spec.screen_design);
    record.estimated_cost_s = spec.estimated_cost_s;
    if (cited) {
        record.gain_bound = cited;
    } else if (spec.gain_bound_pct) {
        record.gain_bound = store::ExperimentRecord::GainBound{
            *spec.gain_bound_pct, spec.gain_bound_source, std::nullopt};
    }
    record.extra_correctness_gates = spec.extra_correctness_gates;
    for (const auto& s : spec.secondary) {
        record.secondary_metrics.push_back({s.name, s.threshold_pct});
    }
    record.diagnostics_only = spec.diagnostics_only;
    record.relationship = *store::relationship_from_name(spec.relationship);
    record.lifecycle = *store::lifecycle_from_name(spec.lifecycle);
    record.premises = spec.premises;
    record.control = spec.control;
    if (!spec.tests_hypothesis.empty()) {
        record.tests_hypothesis = spec.tests_hypothesis;
    }
    record.created_unix_s = unix_seconds_now();
    if (spec.control) {
        // A control's candidate is its base, loaded from the store (which keeps no source path):
        // the record names where the base came from, as every other candidate record does.
        record.candidate.source =
            subjects.on_champion
                ? store::read_experiment_record(target.store(), *subjects.champion.experiment_id)
                      .candidate.source
                : target.record().original.value_or(store::SnapshotRefRecord{}).source;
    }
    return record;
}

}  // namespace

std::vector<Error> experiment_spec_problems(const TargetSpec& t, const ExperimentSpec& spec) {
    FieldProblems p(ErrorCode::invalid_argument);
    check_story(spec, p);
    check_words(t, spec, p);
    check_measures(t, spec, p);
    return p.problems();
}

Json create_experiment(const Target& target, const ExperimentSpec& given) {
    if (target.spec().diagnostic) {
        throw Error(ErrorCode::not_eligible,
                    "a diagnostic Target has no workload to compare candidates on");
    }
    const ExperimentSpec spec = with_control_defaults(given, target.store());
    FieldProblems problems(ErrorCode::invalid_argument);
    for (const Error& e : experiment_spec_problems(target.spec(), spec)) {
        problems.check([&] { throw e; });
    }
    problems.throw_if_any();
    for (const auto& [field, text] :
         {std::pair{"hypothesis", &spec.hypothesis}, std::pair{"falsifier", &spec.falsifier},
          std::pair{"no_falsifier_reason", &spec.no_falsifier_reason},
          std::pair{"gain_bound_source", &spec.gain_bound_source}}) {
        require_free_text(*text, field);
    }
    if (!spec.tests_hypothesis.empty()) {
        require_hypothesis(target.store(), spec.tests_hypothesis, "tests_hypothesis");
    }
    const Subjects subjects =
        snapshot_subjects(target, spec, *store::base_kind_from_name(spec.base));
    store::ExperimentRecord record =
        record_of(target, spec, subjects, cited_bound(target, spec, subjects.base.digest));
    refuse_refreeze(target, record);
    record.id = content_id("exp", record.to_json());
    const std::string rel = store::layout::experiment_record(record.id);
    if (target.store().exists(rel)) {
        throw Error(
            ErrorCode::already_exists,
            fmt::format("experiment {} already exists with exactly this content", record.id),
            Json{{"id", record.id}});
    }
    const Json written = record.to_json();
    target.store().write_record(rel, written);
    return written;
}

store::ExperimentRecord load_experiment(const store::Store& store, const std::string& id) {
    require_safe_name(id, "experiment id");
    if (!id.starts_with("exp-") || !store.exists(store::layout::experiment_record(id))) {
        throw Error(ErrorCode::not_found, fmt::format("no experiment {} (see cko ls)", id),
                    Json{{"id", id}});
    }
    return store::read_experiment_record(store, id);
}

}  // namespace cko::eval
