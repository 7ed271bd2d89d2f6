// Competing hypotheses and their settlements: the strict readers and writers of hypothesis-v1 and
// hypothesis-settlement-v1, and their listings.
#include "cko/store/hypothesis_record.hpp"

#include "cko/store/record_fields.hpp"
#include "cko/store/store.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"

#include <algorithm>

namespace cko::store {

inline constexpr std::string_view kHypothesisFormat = "cko/hypothesis-v1";
inline constexpr std::string_view kSettlementFormat = "cko/hypothesis-settlement-v1";

namespace {

// A free-text member that must say something.
std::string non_empty(const detail::Fields& f, std::string_view key) {
    std::string text = f.text(key);
    if (text.empty()) {
        f.fail(key, "is empty");
    }
    return text;
}

}  // namespace

HypothesisRecord HypothesisRecord::from_json(const Json& j, std::string_view file) {
    const detail::Fields f(j, file, "$");
    f.only({"format_version", "id", "bottleneck", "bottleneck_map", "explanation", "separated_by",
            "rivals", "created_unix_ns"});
    f.format_version(kHypothesisFormat);
    HypothesisRecord h;
    h.id = f.text("id");
    h.bottleneck = non_empty(f, "bottleneck");
    if (f.has("bottleneck_map")) {
        const detail::Fields m = f.child("bottleneck_map");
        m.only({"map", "item", "kind", "window", "share_pct"});
        h.bottleneck_map = MapItem{m.text("map"), m.text("item"), m.text("kind"), m.text("window"),
                                   m.number("share_pct")};
    }
    h.explanation = non_empty(f, "explanation");
    h.separated_by = non_empty(f, "separated_by");
    h.rivals = f.texts("rivals");
    h.created_unix_ns = f.integer("created_unix_ns");
    return h;
}

Json HypothesisRecord::to_json() const {
    Json j{{"format_version", kHypothesisFormat},
           {"bottleneck", bottleneck},
           {"explanation", explanation},
           {"separated_by", separated_by},
           {"rivals", rivals},
           {"created_unix_ns", created_unix_ns}};
    if (!id.empty()) {
        j["id"] = id;
    }
    if (bottleneck_map) {
        j["bottleneck_map"] = Json{{"map", bottleneck_map->map},
                                   {"item", bottleneck_map->item},
                                   {"kind", bottleneck_map->kind},
                                   {"window", bottleneck_map->window},
                                   {"share_pct", bottleneck_map->share_pct}};
    }
    return j;
}

HypothesisSettlementRecord HypothesisSettlementRecord::from_json(const Json& j,
                                                                 std::string_view file) {
    const detail::Fields f(j, file, "$");
    f.only(
        {"format_version", "id", "hypothesis", "outcome", "evidence", "note", "settled_unix_ns"});
    f.format_version(kSettlementFormat);
    HypothesisSettlementRecord s;
    s.id = f.text("id");
    s.hypothesis = f.text("hypothesis");
    s.outcome = f.word<HypothesisOutcome>("outcome");
    const detail::Fields e = f.child("evidence");
    e.only({"kind", "id"});
    s.evidence = Evidence{e.word<SettlementEvidence>("kind"), e.text("id")};
    s.note = f.text("note");
    s.settled_unix_ns = f.integer("settled_unix_ns");
    return s;
}

Json HypothesisSettlementRecord::to_json() const {
    Json j{
        {"format_version", kSettlementFormat},
        {"hypothesis", hypothesis},
        {"outcome", hypothesis_outcome_name(outcome)},
        {"evidence", Json{{"kind", settlement_evidence_name(evidence.kind)}, {"id", evidence.id}}},
        {"note", note},
        {"settled_unix_ns", settled_unix_ns}};
    if (!id.empty()) {
        j["id"] = id;
    }
    return j;
}

HypothesisRecord read_hypothesis_record(const Store& store, std::string_view id) {
    require_safe_name(std::string(id), "hypothesis id");
    const std::string rel = layout::hypothesis_record(id);
    return HypothesisRecord::from_json(
        store.read_named_record(rel, "hypothesis", id, "cko hypotheses list"), rel);
}

HypothesisSettlementRecord read_settlement_record(const Store& store, std::string_view id) {
    require_safe_name(std::string(id), "settlement id");
    const std::string rel = layout::settlement_record(id);
    return HypothesisSettlementRecord::from_json(
        store.read_named_record(rel, "settlement", id, "cko hypotheses list"), rel);
}

std::vector<HypothesisRecord> list_hypotheses(const Store& store) {
    std::vector<HypothesisRecord> out;
    for (const auto& id : store.record_ids(layout::kHypothesesDir, "hyp")) {
        out.push_back(read_hypothesis_record(store, id));
    }
    std::sort(out.begin(), out.end(), [](const HypothesisRecord& a, const HypothesisRecord& b) {
        return a.created_unix_ns != b.created_unix_ns ? a.created_unix_ns < b.created_unix_ns
                                                      : a.id < b.id;
    });
    return out;
}

std::vector<HypothesisSettlementRecord> list_settlements(const Store& store) {
    std::vector<HypothesisSettlementRecord> out;
    for (const auto& id : store.record_ids(layout::kSettlementsDir, "hset")) {
        out.push_back(read_settlement_record(store, id));
    }
    std::sort(out.begin(), out.end(),
              [](const HypothesisSettlementRecord& a, const HypothesisSettlementRecord& b) {
                  return a.settled_unix_ns != b.settled_unix_ns
                             ? a.settled_unix_ns < b.settled_unix_ns
                             : a.id < b.id;
              });
    return out;
}

}  // namespace cko::store
