// Competing hypotheses: the rules of `cko hypotheses add|settle`, the board `list` prints and the
// report and handoff cite, and their lines in the history.
#include "cko/eval/hypothesis.hpp"

#include "cko/eval/cited_evidence.hpp"
#include "cko/eval/experiment.hpp"
#include "cko/eval/field_problems.hpp"
#include "cko/eval/profile_evidence.hpp"
#include "cko/eval/target.hpp"
#include "cko/util/clock.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"
#include "cko/util/utf8.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

namespace cko::eval {
namespace {

constexpr std::string_view kMapPrefix = "map:";

// The map item a bottleneck cites ("map:<id>#<item>"): a non-foreign map of this Target that has
// the item, read for its largest exposed share of a window.
store::HypothesisRecord::MapItem cited_bottleneck(const Target& target,
                                                  const std::string& bottleneck) {
    const std::string ref = bottleneck.substr(kMapPrefix.size());
    const std::size_t hash = ref.find('#');
    if (hash == std::string::npos || hash + 1 == ref.size()) {
        field_error(ErrorCode::invalid_argument, "bottleneck",
                    fmt::format("'{}' names no item of the map", bottleneck),
                    "cite map:<id>#<item> (an item's name in the map's JSON), or name the "
                    "bottleneck in words");
    }
    const std::string id = ref.substr(0, hash);
    const Json cited = cited_map(target, id, "bottleneck");
    require_cited_target_and_case(target, cited, id, "bottleneck");
    const store::ExperimentRecord::GainBound share =
        map_item_bound(cited.value("document", Json::object()), id, ref.substr(hash + 1),
                       bottleneck, "bottleneck");
    return {id, share.computed->item, share.computed->kind, share.computed->window, share.pct};
}

// A rival must be a hypothesis of this store about the same bottleneck.
void check_rival(const store::Store& store, const std::string& rival,
                 const std::string& bottleneck) {
    require_hypothesis(store, rival, "rival");
    const store::HypothesisRecord r = store::read_hypothesis_record(store, rival);
    if (r.bottleneck != bottleneck) {
        field_error(ErrorCode::invalid_argument, "rival",
                    fmt::format("{} explains the bottleneck '{}', not '{}'", rival, r.bottleneck,
                                bottleneck),
                    "rivals compete for one bottleneck: give the same --bottleneck, or leave this "
                    "--rival out");
    }
}

// The hypothesis's three texts: each required, each capped.
void check_texts(const HypothesisOptions& o, FieldProblems& problems) {
    const std::pair<const char*, const std::string*> texts[] = {{"bottleneck", &o.bottleneck},
                                                                {"explanation", &o.explanation},
                                                                {"separated_by", &o.separated_by}};
    const char* fixes[] = {
        "name the bottleneck: map:<id>#<item> (an item of a stored map) or words",
        "say why the bottleneck is there, on this hypothesis",
        ("name the evidence that would tell this explanation from its rivals (a metric of a "
         "profile, a targeted experiment)")};
    for (std::size_t i = 0; i < 3; ++i) {
        problems.check([&] {
            if (texts[i].second->empty()) {
                field_error(ErrorCode::invalid_argument, texts[i].first, "missing", fixes[i]);
            }
            require_free_text(*texts[i].second, texts[i].first);
        });
    }
}

// The record a settlement cites: an experiment, a finished invocation, or a non-foreign profile or
// map of this Target.
store::HypothesisSettlementRecord::Evidence settlement_evidence(const Target& target,
                                                                const std::string& evidence) {
    using Kind = store::SettlementEvidence;
    const store::Store& store = target.store();
    require_safe_name(evidence, "evidence");
    const auto missing = [&](const std::string& why) {
        return Error(ErrorCode::not_found,
                     fmt::format("evidence: \"{}\" {}; cite a record of this store: an experiment "
                                 "(exp-…), an invocation (inv-…, see cko ls), a profile or a map "
                                 "(profile-…, see cko history)",
                                 evidence, why),
                     Json{{"field", "evidence"}, {"id", evidence}});
    };
    if (evidence.starts_with("exp-")) {
        if (!store.exists(store::layout::experiment_record(evidence))) {
            throw missing("is no experiment of this store");
        }
        return {Kind::experiment, evidence};
    }
    if (evidence.starts_with("inv-")) {
        if (!store.exists(store::layout::invocation_request(evidence))) {
            throw missing("is no invocation of this store");
        }
        if (!store.exists(store::layout::invocation_result(evidence))) {
            field_error(ErrorCode::invalid_argument, "evidence",
                        fmt::format("{} has not finished", evidence),
                        fmt::format("wait for it (cko wait {}) and cite it then", evidence));
        }
        return {Kind::invocation, evidence};
    }
    if (evidence.starts_with("profile-")) {
        if (!store.exists(store::layout::profile_record(evidence))) {
            throw missing("is no profile or map of this store");
        }
        const Json p = load_profile(store, evidence);
        refuse_foreign_citation(p, "evidence");
        require_cited_target_and_case(target, p, evidence, "evidence");
        return {p.value("kind", "") == "map" ? Kind::map : Kind::profile, evidence};
    }
    throw missing("is no record id");
}

std::string state_of(const std::map<std::string, store::HypothesisSettlementRecord>& settled,
                     const std::string& id) {
    const auto it = settled.find(id);
    return it == settled.end() ? std::string("open")
                               : std::string(store::hypothesis_outcome_name(it->second.outcome));
}

// Which experiments name each hypothesis (experiment new --tests-hypothesis).
std::map<std::string, std::vector<std::string>> tested_by(const store::Store& store) {
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& id : list_experiments(store)) {
        const store::ExperimentRecord x = store::read_experiment_record(store, id);
        if (x.tests_hypothesis) {
            out[*x.tests_hypothesis].push_back(id);
        }
    }
    return out;
}

}  // namespace

void require_hypothesis(const store::Store& store, const std::string& id,
                        const std::string& field) {
    require_safe_name(id, field);
    if (!id.starts_with("hyp-") || !store.exists(store::layout::hypothesis_record(id))) {
        throw Error(ErrorCode::not_found,
                    fmt::format("{}: \"{}\" is no hypothesis of this store; see cko hypotheses "
                                "list --root R, or record it with cko hypotheses add",
                                field, id),
                    Json{{"field", field}, {"id", id}});
    }
}

Json add_hypothesis(const Target& target, const HypothesisOptions& o) {
    const store::Store& store = target.store();
    FieldProblems problems(ErrorCode::invalid_argument);
    check_texts(o, problems);
    std::optional<store::HypothesisRecord::MapItem> map;
    if (o.bottleneck.starts_with(kMapPrefix)) {
        problems.check([&] { map = cited_bottleneck(target, o.bottleneck); });
    }
    std::vector<std::string> rivals;
    for (const auto& r : o.rivals) {
        if (std::find(rivals.begin(), rivals.end(), r) == rivals.end()) {
            rivals.push_back(r);
        }
    }
    for (const auto& r : rivals) {
        problems.check([&] { check_rival(store, r, o.bottleneck); });
    }
    problems.throw_if_any();
    const store::StoreLock lock = store.lock_named("hypothesis");
    for (const auto& h : store::list_hypotheses(store)) {
        if (h.bottleneck == o.bottleneck && h.explanation == o.explanation) {
            throw Error(ErrorCode::already_exists,
                        fmt::format("{} already explains '{}' this way; name it as a --rival of "
                                    "a different explanation, or settle it",
                                    h.id, o.bottleneck),
                        Json{{"field", "explanation"}, {"id", h.id}});
        }
    }
    store::HypothesisRecord record;
    record.bottleneck = o.bottleneck;
    record.bottleneck_map = map;
    record.explanation = o.explanation;
    record.separated_by = o.separated_by;
    record.rivals = rivals;
    record.created_unix_ns = unix_nanoseconds_now();
    record.id = content_id("hyp", record.to_json());
    const Json written = record.to_json();
    (void)store.write_record(store::layout::hypothesis_record(record.id), written);
    return written;
}

Json settle_hypothesis(const Target& target, const SettleOptions& o) {
    const store::Store& store = target.store();
    FieldProblems problems(ErrorCode::invalid_argument);
    store::HypothesisOutcome outcome = store::HypothesisOutcome::refuted;
    problems.check([&] {
        outcome = closed_word<store::HypothesisOutcome>(ErrorCode::invalid_argument, "outcome",
                                                        o.outcome);
    });
    problems.check([&] {
        if (o.evidence.empty()) {
            field_error(ErrorCode::invalid_argument, "evidence", "missing",
                        "cite the stored record that settles it: exp-…, inv-… or profile-…");
        }
    });
    problems.check([&] { require_free_text(o.note, "note"); });
    problems.throw_if_any();
    require_hypothesis(store, o.hypothesis, "hypothesis");
    const store::HypothesisSettlementRecord::Evidence evidence =
        settlement_evidence(target, o.evidence);
    const store::StoreLock lock = store.lock_named("hypothesis");
    for (const auto& s : store::list_settlements(store)) {
        if (s.hypothesis == o.hypothesis) {
            throw Error(
                ErrorCode::already_exists,
                fmt::format("{} was settled already: {} on {} {} ({}); a settlement is "
                            "written once",
                            o.hypothesis, store::hypothesis_outcome_name(s.outcome),
                            store::settlement_evidence_name(s.evidence.kind), s.evidence.id, s.id),
                Json{{"field", "hypothesis"}, {"id", s.id}});
        }
    }
    store::HypothesisSettlementRecord record;
    record.hypothesis = o.hypothesis;
    record.outcome = outcome;
    record.evidence = evidence;
    record.note = o.note;
    record.settled_unix_ns = unix_nanoseconds_now();
    record.id = content_id("hset", record.to_json());
    const Json written = record.to_json();
    (void)store.write_record(store::layout::settlement_record(record.id), written);
    return written;
}

std::string bottleneck_text(const Json& group) {
    const Json& m = group.value("bottleneck_map", Json());
    if (!m.is_object()) {
        return group.value("bottleneck", "");
    }
    return fmt::format("{} ({} {}: {:.1f} % exposed in window '{}')", group.value("bottleneck", ""),
                       m.value("kind", ""), m.value("item", ""), m.value("share_pct", 0.0),
                       m.value("window", ""));
}

Json hypothesis_board(const store::Store& store) {
    const std::vector<store::HypothesisRecord> all = store::list_hypotheses(store);
    std::map<std::string, store::HypothesisSettlementRecord> settled;
    for (auto& s : store::list_settlements(store)) {
        settled.emplace(s.hypothesis, std::move(s));  // written once: at most one each
    }
    const auto testing = tested_by(store);
    Json hypotheses = Json::array();
    Json bottlenecks = Json::array();
    int open = 0;
    for (const auto& h : all) {
        Json j = h.to_json();
        j["state"] = state_of(settled, h.id);
        const auto s = settled.find(h.id);
        j["settlement"] = s == settled.end() ? Json() : s->second.to_json();
        const auto t = testing.find(h.id);
        j["tested_by"] = t == testing.end() ? Json::array() : Json(t->second);
        j["rivals_now"] = Json::array();
        for (const auto& other : all) {
            if (other.bottleneck == h.bottleneck && other.id != h.id) {
                j["rivals_now"].push_back(
                    Json{{"id", other.id}, {"state", state_of(settled, other.id)}});
            }
        }
        const auto group = std::find_if(bottlenecks.begin(), bottlenecks.end(), [&](const Json& g) {
            return g.value("bottleneck", "") == h.bottleneck;
        });
        Json& g = group != bottlenecks.end()
                      ? *group
                      : bottlenecks.emplace_back(
                            Json{{"bottleneck", h.bottleneck},
                                 {"bottleneck_map", j.value("bottleneck_map", Json())},
                                 {"open", Json::array()},
                                 {"settled", Json::array()}});
        const bool is_open = j["state"] == "open";
        g[is_open ? "open" : "settled"].push_back(h.id);
        open += is_open ? 1 : 0;
        hypotheses.push_back(std::move(j));
    }
    return Json{{"format_version", "cko/hypotheses-v1"},
                {"hypotheses", hypotheses},
                {"bottlenecks", bottlenecks},
                {"open", open}};
}

std::string hypothesis_board_text(const Json& board) {
    const Json& all = board.at("hypotheses");
    if (all.empty()) {
        return "no hypotheses recorded (cko hypotheses add --root R --bottleneck … --explanation "
               "… --separated-by …)\n";
    }
    std::string text =
        fmt::format("hypotheses: {} recorded, {} open\n", all.size(), board.value("open", 0));
    for (const auto& g : board.at("bottlenecks")) {
        text += fmt::format("bottleneck {}\n", bottleneck_text(g));
        for (const auto& h : all) {
            if (h.value("bottleneck", "") != g.value("bottleneck", "")) {
                continue;
            }
            text += fmt::format("  {:<21} {:<9} {}\n", h.value("id", ""), h.value("state", ""),
                                h.value("explanation", ""));
            const Json& s = h.value("settlement", Json());
            if (s.is_object()) {
                text += fmt::format(
                    "  {:<31} on {} {} ({}){}\n", "", s["evidence"].value("kind", ""),
                    s["evidence"].value("id", ""), s.value("id", ""),
                    s.value("note", "").empty() ? std::string() : ": " + s.value("note", ""));
                continue;
            }
            text += fmt::format("  {:<31} separated by: {}\n", "", h.value("separated_by", ""));
            if (!h.value("tested_by", Json::array()).empty()) {
                text +=
                    fmt::format("  {:<31} tested by: {}\n", "",
                                fmt::join(h["tested_by"].get<std::vector<std::string>>(), ", "));
            }
        }
    }
    return text;
}

Json hypothesis_history_entry(const store::HypothesisRecord& r) {
    return Json{{"type", "hypothesis"},
                {"id", r.id},
                {"t_unix_s", r.created_unix_ns / 1000000000},
                {"t_unix_ns", r.created_unix_ns},
                {"bottleneck", r.bottleneck},
                {"explanation", r.explanation},
                {"separated_by", r.separated_by},
                {"rivals", r.rivals}};
}

Json settlement_history_entry(const store::HypothesisSettlementRecord& r) {
    return Json{{"type", "settle"},
                {"id", r.id},
                {"t_unix_s", r.settled_unix_ns / 1000000000},
                {"t_unix_ns", r.settled_unix_ns},
                {"hypothesis", r.hypothesis},
                {"outcome", store::hypothesis_outcome_name(r.outcome)},
                {"evidence", Json{{"kind", store::settlement_evidence_name(r.evidence.kind)},
                                  {"id", r.evidence.id}}},
                {"note", r.note}};
}

std::string hypothesis_history_line(const std::string& when, const Json& e) {
    if (e.value("type", "") == "settle") {
        const Json& ev = e.value("evidence", Json::object());
        const std::string note = e.value("note", "");
        return fmt::format("{:<9} {:<10} {:<22} {} {} on {} {}{}\n", when, "settle",
                           e.value("id", ""), e.value("hypothesis", ""), e.value("outcome", ""),
                           ev.value("kind", ""), ev.value("id", ""),
                           note.empty() ? std::string() : " — " + note);
    }
    return fmt::format("{:<9} {:<10} {:<22} {}: {} (separated by: {})\n", when, "hypothesis",
                       e.value("id", ""), e.value("bottleneck", ""), e.value("explanation", ""),
                       e.value("separated_by", ""));
}

}  // namespace cko::eval
