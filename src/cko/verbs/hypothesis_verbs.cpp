// The competing-hypotheses verbs: `cko hypotheses add`, `list` and `settle`.
#include "cko/eval/hypothesis.hpp"
#include "cko/eval/target.hpp"
#include "cko/verbs/verb.hpp"

#include <fmt/format.h>

namespace cko::verbs {
namespace {

Outcome hypotheses_add(const Request& r, Context& /*context*/) {
    const store::Store store = store::Store::open(r.text("root"));
    const eval::Target target = eval::Target::open(store);
    const Json record = eval::add_hypothesis(target, {r.text("bottleneck"), r.text("explanation"),
                                                      r.text("separated_by"), r.list("rival")});
    const Json& map = record.value("bottleneck_map", Json());
    std::string text = fmt::format("{}  {}: {}\n  separated by: {}\n", record.value("id", ""),
                                   record.value("bottleneck", ""), record.value("explanation", ""),
                                   record.value("separated_by", ""));
    if (map.is_object()) {
        text += fmt::format("  map item {} ({}): {:.1f} % exposed in window '{}'\n",
                            map.value("item", ""), map.value("kind", ""),
                            map.value("share_pct", 0.0), map.value("window", ""));
    }
    if (!record.value("rivals", Json::array()).empty()) {
        text += fmt::format("  rivals: {}\n",
                            fmt::join(record["rivals"].get<std::vector<std::string>>(), ", "));
    }
    return Outcome{text, record, 0, {}};
}

Outcome hypotheses_list(const Request& r, Context& /*context*/) {
    const Json board = eval::hypothesis_board(store::Store::open(r.text("root")));
    return Outcome{eval::hypothesis_board_text(board), board, 0, {}};
}

Outcome hypotheses_settle(const Request& r, Context& /*context*/) {
    const store::Store store = store::Store::open(r.text("root"));
    const eval::Target target = eval::Target::open(store);
    const Json record = eval::settle_hypothesis(
        target, {r.text("hypothesis"), r.text("outcome"), r.text("evidence"), r.text("note")});
    const Json& evidence = record.at("evidence");
    return Outcome{fmt::format("{}: {} {} on {} {}\n", record.value("id", ""),
                               record.value("hypothesis", ""), record.value("outcome", ""),
                               evidence.value("kind", ""), evidence.value("id", "")),
                   record,
                   0,
                   {}};
}

}  // namespace

void add_hypothesis_verbs(std::vector<Verb>& table, std::vector<Group>& groups) {
    groups.push_back(
        {{"hypotheses"}, "Competing explanations of one bottleneck, and what would separate them"});
    table.push_back(Verb{
        {"hypotheses", "add"},
        "Record one explanation of a bottleneck and the evidence that would separate it from its "
        "rivals",
        RequestDef{{root_param(),
                    required(string_param("bottleneck",
                                          "map:ID#ITEM (an item of a stored map) or words; "
                                          "hypotheses of one bottleneck compete")),
                    required(string_param("explanation",
                                          "Why the bottleneck is there, on this "
                                          "hypothesis")),
                    required(string_param("separated_by",
                                          "The evidence that would tell it from its rivals")),
                    list_param("rival",
                               "An earlier hypothesis of the same bottleneck "
                               "(repeatable)")}},
        &hypotheses_add});
    table.push_back(Verb{{"hypotheses", "list"},
                         "The hypotheses by bottleneck: open or settled, and what would separate "
                         "the open ones",
                         RequestDef{{root_param()}},
                         &hypotheses_list,
                         true});
    table.push_back(Verb{
        {"hypotheses", "settle"},
        "Record that a hypothesis was supported or refuted, citing a stored record (written once)",
        RequestDef{
            {root_param(), positional(required(string_param("hypothesis", "hyp-…"))),
             required(string_param("outcome", "supported or refuted")),
             required(string_param("evidence", "A record of this store: exp-…, inv-…, profile-…")),
             string_param("note", "What the evidence showed")}},
        &hypotheses_settle});
}

}  // namespace cko::verbs
