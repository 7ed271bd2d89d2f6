// Card parsing and checking: closed objects, every error names the file, the card and the field.
#include "cko/knowledge/card.hpp"

#include "cko/fact/fact_id.hpp"
#include "cko/knowledge/embedded_cards.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace cko::knowledge {
namespace {

namespace fs = std::filesystem;

class CardReader {
public:
    CardReader(std::string_view file, std::string where) : file_(file), where_(std::move(where)) {}

    [[noreturn]] void fail(const std::string& field, const std::string& message) const {
        throw Error(ErrorCode::invalid_record,
                    fmt::format("{}: {}.{}: {}", file_, where_, field, message),
                    Json{{"path", std::string(file_)}, {"card", where_}, {"field", field}});
    }

    void closed(const Json& obj, const std::string& field,
                std::initializer_list<std::string_view> keys) const {
        if (!obj.is_object()) {
            fail(field, "must be an object");
        }
        for (const auto& [key, value] : obj.items()) {
            if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
                std::string known;
                for (std::string_view k : keys) {
                    known += known.empty() ? "" : ", ";
                    known += k;
                }
                fail(field.empty() ? key : field + "." + key,
                     fmt::format("unknown key; the known keys are {}", known));
            }
        }
    }

    std::string text(const Json& obj, const char* key, bool required = true) const {
        const auto it = obj.find(key);
        if (it == obj.end()) {
            if (required) {
                fail(key, "is required (a non-empty string)");
            }
            return {};
        }
        if (!it->is_string() || it->get<std::string>().empty()) {
            fail(key, "must be a non-empty string");
        }
        return it->get<std::string>();
    }

    std::vector<std::string> texts(const Json& obj, const char* key, bool required,
                                   std::size_t min) const {
        const auto it = obj.find(key);
        if (it == obj.end()) {
            if (required) {
                fail(key, fmt::format("is required (a list of at least {} strings)", min));
            }
            return {};
        }
        if (!it->is_array() || it->size() < min) {
            fail(key, fmt::format("must be a list of at least {} non-empty strings", min));
        }
        std::vector<std::string> out;
        for (const Json& v : *it) {
            if (!v.is_string() || v.get<std::string>().empty()) {
                fail(key, "must hold non-empty strings only");
            }
            out.push_back(v.get<std::string>());
        }
        return out;
    }

    VersionRange range(const Json& obj, const std::string& field) const {
        closed(obj, field, {"min", "max"});
        VersionRange r;
        for (const char* end : {"min", "max"}) {
            const auto it = obj.find(end);
            if (it == obj.end()) {
                continue;
            }
            const auto v = it->is_string() ? Version::parse(it->get<std::string>()) : std::nullopt;
            if (!v) {
                fail(field + "." + end, "must be a dotted version string such as \"12.4\"");
            }
            (std::string_view(end) == "min" ? r.min : r.max) = v;
        }
        if (!r.min && !r.max) {
            fail(field, "needs \"min\", \"max\" or both");
        }
        // A max compares only the parts it gives ("max": "3" holds 3.9), so min 3.1 with max 3 is
        // the range 3.1 to every 3.x, not an empty one.
        if (r.min && r.max) {
            Version min_cut = *r.min;
            min_cut.parts.resize(std::min(min_cut.parts.size(), r.max->parts.size()));
            if (*r.max < min_cut) {
                fail(field, "max is below min");
            }
        }
        return r;
    }

private:
    std::string_view file_;
    std::string where_;
};

bool valid_date(const std::string& d) {
    if (d.size() != 10 || d[4] != '-' || d[7] != '-') {
        return false;
    }
    for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
        if (d[i] < '0' || d[i] > '9') {
            return false;
        }
    }
    const int month = std::stoi(d.substr(5, 2));
    const int day = std::stoi(d.substr(8, 2));
    return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

IdentityConstraints read_identity(const Json& j, const CardReader& r) {
    IdentityConstraints c;
    r.closed(j, "identity", {"families", "compute_capability", "cuda", "driver", "frameworks"});
    if (const auto f = j.find("families"); f != j.end()) {
        if (!f->is_array() || f->empty()) {
            r.fail("identity.families", "must be a non-empty list of families");
        }
        for (const Json& v : *f) {
            const auto fam =
                v.is_string() ? arch_family_from_name(v.get<std::string>()) : std::nullopt;
            if (!fam) {
                std::string known;
                for (std::string_view s : kArchFamilySpellings) {
                    known += known.empty() ? "" : ", ";
                    known += s;
                }
                r.fail("identity.families",
                       fmt::format("{} is not a family; use one of {}", v.dump(), known));
            }
            c.families.push_back(*fam);
        }
    }
    if (const auto cc = j.find("compute_capability"); cc != j.end()) {
        r.closed(*cc, "identity.compute_capability", {"min", "max"});
        for (const char* end : {"min", "max"}) {
            const auto it = cc->find(end);
            if (it == cc->end()) {
                continue;
            }
            const auto v = it->is_string() ? parse_cc(it->get<std::string>()) : std::nullopt;
            if (!v) {
                r.fail(std::string("identity.compute_capability.") + end,
                       "must be \"MAJOR.MINOR\" such as \"9.0\"");
            }
            (std::string_view(end) == "min" ? c.cc_min : c.cc_max) = v;
        }
        if (!c.cc_min && !c.cc_max) {
            r.fail("identity.compute_capability", "needs \"min\", \"max\" or both");
        }
    }
    if (const auto v = j.find("cuda"); v != j.end()) {
        c.cuda = r.range(*v, "identity.cuda");
    }
    if (const auto v = j.find("driver"); v != j.end()) {
        c.driver = r.range(*v, "identity.driver");
    }
    if (const auto f = j.find("frameworks"); f != j.end()) {
        if (!f->is_object() || f->empty()) {
            r.fail("identity.frameworks", "must be an object of framework name -> {min, max}");
        }
        for (const auto& [name, range] : f->items()) {
            const std::string canonical = canonical_framework(name);
            if (canonical != name) {
                r.fail("identity.frameworks." + name, fmt::format("spell it \"{}\"", canonical));
            }
            c.frameworks[canonical] = r.range(range, "identity.frameworks." + name);
        }
    }
    return c;
}

// The card's sources, each {url, title} with an https:// address.
std::vector<SourceRef> read_sources(const Json& s, const CardReader& r) {
    if (!s.is_array()) {
        r.fail("sources", "must be a list of {url, title}");
    }
    std::vector<SourceRef> sources;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const Json& src = s[i];
        const std::string field = fmt::format("sources[{}]", i);
        r.closed(src, field, {"url", "title"});
        SourceRef ref;
        ref.url = src.value("url", "");
        ref.title = src.value("title", "");
        if (!ref.url.starts_with("https://") || ref.url.size() < 12) {
            r.fail(field + ".url", "must be an https:// address of the source");
        }
        if (ref.title.empty()) {
            r.fail(field + ".title", "must name the document");
        }
        sources.push_back(std::move(ref));
    }
    return sources;
}

// The part of a card its kind asks for: a contract's {claim, does_not_claim} (and a primary
// source), or a heuristic's {direction, cheapest_falsifier, competing_explanations}.
void read_kind_part(const Json& j, const CardReader& r, Card& c) {
    if (c.kind == CardKind::contract) {
        if (j.contains("heuristic")) {
            r.fail("heuristic", "a contract card has \"contract\", not \"heuristic\"");
        }
        const auto ct = j.find("contract");
        if (ct == j.end()) {
            r.fail("contract", "is required for a contract card: {claim, does_not_claim}");
        }
        r.closed(*ct, "contract", {"claim", "does_not_claim"});
        c.claim = r.text(*ct, "claim");
        c.does_not_claim = r.texts(*ct, "does_not_claim", true, 1);
        if (c.sources.empty()) {
            r.fail("sources", "a contract card needs the URL of its primary source");
        }
    } else {
        if (j.contains("contract")) {
            r.fail("contract", "a heuristic card has \"heuristic\", not \"contract\"");
        }
        const auto h = j.find("heuristic");
        if (h == j.end()) {
            r.fail("heuristic",
                   "is required: {direction, cheapest_falsifier, competing_explanations}");
        }
        r.closed(*h, "heuristic", {"direction", "cheapest_falsifier", "competing_explanations"});
        c.direction = r.text(*h, "direction");
        c.cheapest_falsifier = r.text(*h, "cheapest_falsifier");
        c.competing_explanations = r.texts(*h, "competing_explanations", true, 1);
    }
}

// The card's triggers, each {fact, op, value} on a fact of the vocabulary.
std::vector<Trigger> read_triggers(const Json& t, const CardReader& r) {
    if (!t.is_array()) {
        r.fail("triggers", "must be a list of {fact, op, value}");
    }
    std::vector<Trigger> triggers;
    for (std::size_t i = 0; i < t.size(); ++i) {
        const Json& tj = t[i];
        const std::string field = fmt::format("triggers[{}]", i);
        r.closed(tj, field, {"fact", "op", "value"});
        Trigger trig;
        trig.fact = tj.value("fact", "");
        if (fact::lookup_fact_id(trig.fact) == nullptr) {
            r.fail(field + ".fact",
                   fmt::format("\"{}\" is not in the fact vocabulary "
                               "(src/cko/fact/fact_id.cpp; docs/knowledge.md lists it)",
                               trig.fact));
        }
        const auto op = tj.contains("op") && tj["op"].is_string()
                            ? comparison_from_symbol(tj["op"].get<std::string>())
                            : std::nullopt;
        if (!op) {
            r.fail(field + ".op", "must be one of ==, !=, <, <=, >, >=");
        }
        trig.op = *op;
        if (!tj.contains("value") || !tj["value"].is_number()) {
            r.fail(field + ".value", "must be a number (in the fact's base unit)");
        }
        trig.value = tj["value"].get<double>();
        triggers.push_back(std::move(trig));
    }
    return triggers;
}

}  // namespace

std::optional<Comparison> comparison_from_symbol(std::string_view s) noexcept {
    if (s == "==")
        return Comparison::eq;
    if (s == "!=")
        return Comparison::ne;
    if (s == "<")
        return Comparison::lt;
    if (s == "<=")
        return Comparison::le;
    if (s == ">")
        return Comparison::gt;
    if (s == ">=")
        return Comparison::ge;
    return std::nullopt;
}

std::string_view comparison_symbol(Comparison c) noexcept {
    switch (c) {
    case Comparison::eq:
        return "==";
    case Comparison::ne:
        return "!=";
    case Comparison::lt:
        return "<";
    case Comparison::le:
        return "<=";
    case Comparison::gt:
        return ">";
    case Comparison::ge:
        return ">=";
    }
    return "?";
}

bool compare(double v, Comparison c, double t) noexcept {
    switch (c) {
    case Comparison::eq:
        return v == t;
    case Comparison::ne:
        return v != t;
    case Comparison::lt:
        return v < t;
    case Comparison::le:
        return v <= t;
    case Comparison::gt:
        return v > t;
    case Comparison::ge:
        return v >= t;
    }
    return false;
}

Card card_from_json(const Json& j, std::string_view file, std::size_t index) {
    std::string where = fmt::format("cards[{}]", index);
    if (j.is_object() && j.contains("id") && j["id"].is_string()) {
        where = j["id"].get<std::string>();
    }
    const CardReader r(file, where);
    r.closed(j, "",
             {"id", "title", "kind", "topics", "summary", "contract", "heuristic", "sources",
              "identity", "triggers", "trigger_mode", "last_reviewed"});
    Card c;
    c.file = std::string(file);
    c.id = r.text(j, "id");
    for (char ch : c.id) {
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' ||
              ch == '_')) {
            r.fail("id", "use lower-case letters, digits, '.', '-' and '_' only");
        }
    }
    c.title = r.text(j, "title");
    const std::string kind = r.text(j, "kind");
    const auto k = card_kind_from_name(kind);
    if (!k) {
        r.fail("kind",
               "must be \"contract\" (a primary source's claim) or \"heuristic\" (a direction to "
               "test)");
    }
    c.kind = *k;
    c.topics = r.texts(j, "topics", true, 1);
    c.summary = r.text(j, "summary");
    if (const auto s = j.find("sources"); s != j.end()) {
        c.sources = read_sources(*s, r);
    }
    read_kind_part(j, r, c);
    if (const auto id = j.find("identity"); id != j.end()) {
        c.identity = read_identity(*id, r);
    }
    if (const auto t = j.find("triggers"); t != j.end()) {
        c.triggers = read_triggers(*t, r);
    }
    if (const auto m = j.find("trigger_mode"); m != j.end()) {
        if (!m->is_string() || (*m != "any" && *m != "all")) {
            r.fail("trigger_mode", "must be \"any\" or \"all\"");
        }
        c.triggers_all = *m == "all";
    }
    c.last_reviewed = r.text(j, "last_reviewed");
    if (!valid_date(c.last_reviewed)) {
        r.fail("last_reviewed", "must be a date YYYY-MM-DD");
    }
    return c;
}

std::vector<Card> cards_from_document(const Json& doc, std::string_view file) {
    if (!doc.is_object() || doc.value("format_version", "") != "cko/knowledge-cards-v1" ||
        !doc.contains("cards") || !doc["cards"].is_array()) {
        throw Error(
            ErrorCode::invalid_record,
            fmt::format("{}: a card file is {{\"format_version\": \"cko/knowledge-cards-v1\", "
                        "\"cards\": [...]}}",
                        file),
            Json{{"path", std::string(file)}});
    }
    for (const auto& [key, value] : doc.items()) {
        if (key != "format_version" && key != "cards") {
            throw Error(ErrorCode::invalid_record,
                        fmt::format("{}: unknown top-level key \"{}\"", file, key),
                        Json{{"path", std::string(file)}, {"field", key}});
        }
    }
    std::vector<Card> out;
    for (std::size_t i = 0; i < doc["cards"].size(); ++i) {
        out.push_back(card_from_json(doc["cards"][i], file, i));
    }
    return out;
}

std::vector<Card> load_cards(const std::string& dir) {
    std::vector<Card> cards;
    if (dir.empty()) {
        for (const EmbeddedCardFile& f : embedded_card_files()) {
            const Json doc = parse_json_strict(f.text, {}, f.name);
            std::vector<Card> part = cards_from_document(doc, f.name);
            cards.insert(cards.end(), part.begin(), part.end());
        }
    } else {
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) {
            throw Error(ErrorCode::not_found,
                        fmt::format("--cards {}: not a directory of card files", dir),
                        Json{{"path", dir}});
        }
        std::vector<fs::path> files;
        for (const auto& e : fs::directory_iterator(dir)) {
            if (e.path().extension() == ".json") {
                files.push_back(e.path());
            }
        }
        std::sort(files.begin(), files.end());
        for (const fs::path& p : files) {
            std::vector<Card> part = cards_from_document(read_json_file(p), p.string());
            cards.insert(cards.end(), part.begin(), part.end());
        }
    }
    std::set<std::string> ids;
    for (const Card& c : cards) {
        if (!ids.insert(c.id).second) {
            throw Error(
                ErrorCode::invalid_record,
                fmt::format("{}: card id \"{}\" is used twice; ids must be unique", c.file, c.id),
                Json{{"path", c.file}, {"card", c.id}});
        }
    }
    return cards;
}

Json card_to_json(const Card& c) {
    Json out{
        {"id", c.id},         {"title", c.title},     {"kind", std::string(card_kind_name(c.kind))},
        {"topics", c.topics}, {"summary", c.summary}, {"last_reviewed", c.last_reviewed}};
    Json sources = Json::array();
    for (const SourceRef& s : c.sources) {
        sources.push_back(Json{{"url", s.url}, {"title", s.title}});
    }
    out["sources"] = sources;
    if (c.kind == CardKind::contract) {
        out["contract"] = Json{{"claim", c.claim}, {"does_not_claim", c.does_not_claim}};
    } else {
        out["heuristic"] = Json{{"direction", c.direction},
                                {"cheapest_falsifier", c.cheapest_falsifier},
                                {"competing_explanations", c.competing_explanations}};
    }
    return out;
}

}  // namespace cko::knowledge
