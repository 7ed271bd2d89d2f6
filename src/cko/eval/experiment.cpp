// Experiment records: validated contract, change scope from manifests, create-once.
#include "cko/eval/experiment.hpp"

#include "cko/eval/champion.hpp"
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
#include <functional>
#include <map>

namespace cko::eval {
namespace {

[[noreturn]] void bad(const std::string& field, const std::string& problem,
                      const std::string& fix) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: {}; {}", field, problem, fix),
                Json{{"field", field}, {"fix", fix}});
}

void one_of(const std::string& field, const std::string& value,
            std::initializer_list<std::string_view> allowed) {
    for (const auto& a : allowed) {
        if (a == value) {
            return;
        }
    }
    bad(field, fmt::format("\"{}\" is not allowed", value),
        fmt::format("use one of: {}", fmt::join(allowed, ", ")));
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

std::vector<Error> experiment_spec_problems(const TargetSpec& t, const ExperimentSpec& spec) {
    std::vector<Error> problems;
    const auto check = [&](const std::function<void()>& f) {
        try {
            f();
        } catch (const Error& e) {
            problems.push_back(e);
        }
    };
    if (!spec.control && spec.candidate.empty()) {
        check([] {
            bad("candidate", "missing",
                "give the candidate's file or directory, or --control for an A/A control");
        });
    }
    if (spec.control && !spec.candidate.empty()) {
        check([] {
            bad("candidate", "given with --control",
                "a control's candidate is its base: drop --candidate");
        });
    }
    if (spec.hypothesis.empty()) {
        check([] {
            bad("hypothesis", "missing", "say what you expect and why, in one or two sentences");
        });
    }
    if (spec.mechanism.empty()) {
        check([] {
            bad("mechanism", "missing",
                "give a short key for the mechanism, e.g. vectorized-loads");
        });
    } else {
        check([&] { require_safe_name(spec.mechanism, "mechanism"); });
    }
    if (spec.falsifier.empty() == spec.no_falsifier_reason.empty()) {
        check([] {
            bad("falsifier", "give exactly one of falsifier and no_falsifier_reason",
                "name the cheapest command that could prove the hypothesis wrong, or say why none "
                "is needed");
        });
    }
    check([&] {
        one_of("failure_closes", spec.failure_closes,
               {"implementation", "integration", "mechanism"});
    });
    check([&] {
        one_of("screen_design", spec.screen_design, {"conservative_bound", "diagnostic_proxy"});
    });
    check([&] {
        one_of("relationship", spec.relationship,
               {"implementation_equivalence", "artifact_fidelity", "deployment_effect"});
    });
    check([&] { one_of("lifecycle", spec.lifecycle, {"isolated_process", "same_process"}); });
    if (spec.lifecycle == "same_process" && !t.can_pair_in_process()) {
        check([] {
            bad("lifecycle", "same_process needs a driver declared paired_in_process",
                "use isolated_process");
        });
    }
    check([&] { one_of("base", spec.base, {"original", "champion"}); });
    return problems;
}

Json create_experiment(const Target& target, const ExperimentSpec& given) {
    const TargetSpec& t = target.spec();
    if (t.diagnostic) {
        throw Error(ErrorCode::not_eligible,
                    "a diagnostic Target has no workload to compare candidates on");
    }
    ExperimentSpec spec = given;
    if (spec.control) {
        // An A/A control needs no story: it checks the instrument.
        if (spec.hypothesis.empty()) {
            spec.hypothesis =
                "A/A control: the candidate is its base, so the comparison should find no effect";
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
    }
    const std::vector<Error> problems = experiment_spec_problems(t, spec);
    if (!problems.empty()) {
        std::vector<std::string> lines;
        Json list = Json::array();
        for (const auto& p : problems) {
            lines.emplace_back(p.what());
            list.push_back(Json{{"field", p.details().value("field", "")},
                                {"message", p.what()},
                                {"fix", p.details().value("fix", "")}});
        }
        throw Error(ErrorCode::invalid_argument,
                    problems.size() == 1
                        ? lines.front()
                        : fmt::format("{} problems: {}", problems.size(), fmt::join(lines, " | ")),
                    Json{{"field", problems.front().details().value("field", "")},
                         {"fix", problems.front().details().value("fix", "")},
                         {"problems", list}});
    }
    for (const auto& [field, text] :
         {std::pair{"hypothesis", &spec.hypothesis}, std::pair{"falsifier", &spec.falsifier},
          std::pair{"no_falsifier_reason", &spec.no_falsifier_reason},
          std::pair{"gain_bound_source", &spec.gain_bound_source}}) {
        require_free_text(*text, field);
    }
    const std::string claim = spec.claim_layer.empty() ? t.claim_layer : spec.claim_layer;
    one_of("claim_layer", claim, {"kernel", "workload", "serving"});
    const std::map<std::string, int> rank{{"kernel", 0}, {"workload", 1}, {"serving", 2}};
    if (rank.at(claim) > rank.at(t.claim_layer)) {
        bad("claim_layer",
            fmt::format("\"{}\" claims more than the Target's evidence layer \"{}\"", claim,
                        t.claim_layer),
            "claim at most the Target's layer; a wider claim needs a Target measured at that "
            "layer");
    }
    const double min_effect = spec.minimum_effect_pct.value_or(t.minimum_effect_pct);
    if (const std::string problem = minimum_effect_problem(min_effect); !problem.empty()) {
        bad("minimum_effect_pct", problem, "give the smallest gain worth having, in percent");
    }
    if (spec.gain_bound_pct && spec.gain_bound_source.empty()) {
        bad("gain_bound_source", "missing",
            "say where the upper bound comes from (e.g. an Amdahl bound from a profile)");
    }
    if (spec.gain_bound_source.rfind("map:", 0) == 0) {
        // A cited map must be one the store holds: the bound is then checkable evidence.
        if (!spec.gain_bound_pct) {
            bad("gain_bound_pct", "missing", "give the bound (percent) read from the cited map");
        }
        const std::string id = spec.gain_bound_source.substr(4);
        Json cited;
        try {
            cited = load_profile(target.store(), id);
        } catch (const Error&) {
            bad("gain_bound_source",
                fmt::format("cites map '{}', which the store does not hold", id),
                "store the map first (cko map FILE --root R) and cite the id it prints");
        }
        if (cited.value("kind", "") != "map") {
            bad("gain_bound_source",
                fmt::format("cites '{}', a {} profile, not a map", id, cited.value("kind", "")),
                "cite a profile stored by cko map");
        }
    }
    for (std::size_t i = 0; i < spec.extra_correctness_gates.size(); ++i) {
        (void)parse_correctness_gate(spec.extra_correctness_gates[i],
                                     fmt::format("correctness_gate[{}]", i));
    }
    for (const auto& s : spec.secondary) {
        bool known = false;
        for (const auto& c : t.constraints) {
            known = known || c.name == s.name;
        }
        if (!known) {
            bad("secondary",
                fmt::format("\"{}\" is not one of the Target's constraint metrics", s.name),
                "secondary metrics must be measured: list Target constraints only");
        }
    }

    // The base this candidate is compared against: the original, or the champion right now.
    const Champion champion = read_champion(target.store());
    const bool on_champion = spec.base == "champion" && champion.experiment_id.has_value();
    if (spec.base == "champion" && !on_champion) {
        bad("base", "there is no champion yet", "use base original, or select a champion first");
    }
    const store::Snapshot base_snap = store::load_snapshot(
        target.store(), on_champion ? champion.digest : target.original().digest);
    const store::Snapshot candidate =
        spec.control ? base_snap : store::take_snapshot(target.store(), spec.candidate);
    if (candidate.kind != base_snap.kind) {
        bad("candidate",
            fmt::format("is a {} but the original is a {}", candidate.kind, base_snap.kind),
            "lay the candidate out like the original");
    }
    const std::vector<std::string> changes = changed_files(base_snap, candidate);
    if (changes.empty() && !spec.control) {
        bad("candidate", "is identical to its base",
            "change something inside the change scope, or freeze an A/A control with --control");
    }
    std::vector<std::string> outside;
    for (const auto& c : changes) {
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
    store::ExperimentRecord record;
    record.target = {target.id(), sha256_file_hex(target.store().path_of(store::layout::kTarget))};
    record.candidate =
        store::SnapshotRefRecord::from_json(candidate.reference(), "(candidate)", "$.candidate");
    record.base = {on_champion ? "champion" : "original",
                   on_champion ? champion.experiment_id : std::nullopt, base_snap.digest};
    record.changed_files = changes;
    record.hypothesis = spec.hypothesis;
    record.mechanism = spec.mechanism;
    record.claim_layer = claim;
    record.minimum_effect_pct = min_effect;
    if (!spec.falsifier.empty()) {
        record.falsifier = spec.falsifier;
    }
    if (!spec.no_falsifier_reason.empty()) {
        record.no_falsifier_reason = spec.no_falsifier_reason;
    }
    record.failure_closes = spec.failure_closes;
    record.screen_design = spec.screen_design;
    record.estimated_cost_s = spec.estimated_cost_s;
    if (spec.gain_bound_pct) {
        record.gain_bound =
            store::ExperimentRecord::GainBound{*spec.gain_bound_pct, spec.gain_bound_source};
    }
    record.extra_correctness_gates = spec.extra_correctness_gates;
    for (const auto& s : spec.secondary) {
        record.secondary_metrics.push_back({s.name, s.threshold_pct});
    }
    record.diagnostics_only = spec.diagnostics_only;
    record.relationship = spec.relationship;
    record.lifecycle = spec.lifecycle;
    record.premises = spec.premises;
    record.control = spec.control;
    record.created_unix_s = unix_seconds_now();
    if (spec.control) {
        // A control's candidate is its base, loaded from the store (which keeps no source path):
        // the record names where the base came from, as every other candidate record does.
        record.candidate.source =
            on_champion ? store::read_experiment_record(target.store(), *champion.experiment_id)
                              .candidate.source
                        : target.record().original.value_or(store::SnapshotRefRecord{}).source;
    }
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
