// The query: identity constraints, then triggers over facts, each producing a reason.
#include "cko/knowledge/query.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cko::knowledge {
namespace {

std::string range_text(const std::optional<Version>& min, const std::optional<Version>& max) {
    if (min && max) {
        return fmt::format(">= {}, <= {}", min->text(), max->text());
    }
    return min ? fmt::format(">= {}", min->text()) : fmt::format("<= {}", max->text());
}

// max compares only the parts it gives: "12" holds every 12.x, "2.5" every 2.5.x.
bool within(const Version& v, const VersionRange& r) {
    if (r.min && v < *r.min) {
        return false;
    }
    if (r.max) {
        Version cut = v;
        cut.parts.resize(std::min(v.parts.size(), r.max->parts.size()));
        if (*r.max < cut) {
            return false;
        }
    }
    return true;
}

void version_reason(std::vector<Reason>& out, const std::string& field,
                    const std::optional<VersionRange>& range,
                    const std::optional<Version>& actual) {
    if (!range) {
        return;
    }
    Reason r{field, "unknown", range_text(range->min, range->max), "not given", {}};
    if (actual) {
        r.actual = actual->text();
        r.status = within(*actual, *range) ? "holds" : "fails";
    }
    out.push_back(std::move(r));
}

void identity_reasons(const Card& card, const Identity& id, std::vector<Reason>& out) {
    const IdentityConstraints& c = card.identity;
    if (!c.families.empty()) {
        std::string expected;
        for (ArchFamily f : c.families) {
            expected += expected.empty() ? "" : " or ";
            expected += arch_family_name(f);
        }
        Reason r{"identity.families", "unknown", expected, "not given", {}};
        if (id.cc) {
            const auto fam = family_of(*id.cc);
            r.actual = fam ? fmt::format("{} ({})", arch_family_name(*fam), id.cc->text())
                           : fmt::format("no known family ({})", id.cc->text());
            r.status =
                fam && std::find(c.families.begin(), c.families.end(), *fam) != c.families.end()
                    ? "holds"
                    : "fails";
        }
        out.push_back(std::move(r));
    }
    if (c.cc_min || c.cc_max) {
        const auto v = [](const std::optional<ComputeCapability>& cc) {
            return cc ? std::optional<Version>(cc->version()) : std::nullopt;
        };
        Reason r{"identity.compute_capability",
                 "unknown",
                 range_text(v(c.cc_min), v(c.cc_max)),
                 "not given",
                 {}};
        if (id.cc) {
            r.actual =
                id.arch.empty() ? id.cc->text() : fmt::format("{} ({})", id.cc->text(), id.arch);
            const Version have = id.cc->version();
            const bool ok = (!c.cc_min || !(have < c.cc_min->version())) &&
                            (!c.cc_max || !(c.cc_max->version() < have));
            r.status = ok ? "holds" : "fails";
        }
        out.push_back(std::move(r));
    }
    version_reason(out, "identity.cuda", c.cuda, id.cuda);
    version_reason(out, "identity.driver", c.driver, id.driver);
    for (const auto& [name, range] : c.frameworks) {
        const auto it = id.frameworks.find(name);
        version_reason(
            out, "identity.frameworks." + name, range,
            it == id.frameworks.end() ? std::nullopt : std::optional<Version>(it->second));
    }
}

std::string number(double v) {
    return fmt::format("{:g}", v);
}

Reason trigger_reason(const Trigger& t, std::size_t index, const FactSet& facts, bool facts_given) {
    Reason r;
    r.field = fmt::format("triggers[{}] {} {} {}", index, t.fact, comparison_symbol(t.op),
                          number(t.value));
    r.expected = fmt::format("{} {}", comparison_symbol(t.op), number(t.value));
    std::size_t seen = 0;
    double lo = 0;
    double hi = 0;
    for (const ObservedFact& f : facts.facts) {
        if (f.id != t.fact) {
            continue;
        }
        lo = seen == 0 ? f.value : std::min(lo, f.value);
        hi = seen == 0 ? f.value : std::max(hi, f.value);
        ++seen;
        if (compare(f.value, t.op, t.value)) {
            r.facts.push_back(f);
        }
    }
    if (seen == 0) {
        r.status = "no_fact";
        r.actual = facts_given ? "no such fact in the documents given" : "no facts given (--facts)";
    } else {
        r.status = r.facts.empty() ? "not_fired" : "fired";
        r.actual = seen == 1 ? number(lo)
                             : fmt::format("{} facts, {} .. {}", seen, number(lo), number(hi));
    }
    return r;
}

constexpr std::size_t kShownFacts = 5;  // per trigger in the output; facts_fired counts them all

int order(Applicability a) {
    return static_cast<int>(a);
}

// "scale_naive(const float *, ...) (launch 0)" and "scale_naive(float const*, ...) [sm_90]" are one
// kernel: the name before the parameter list (or before the scope's bracket).
std::string kernel_key(const std::string& scope) {
    const std::size_t cut = scope.find_first_of("([");
    std::string key = scope.substr(0, cut);
    while (!key.empty() && key.back() == ' ') {
        key.pop_back();
    }
    return key;
}

// trigger_mode "all": every trigger must fire on one kernel, not each on a different one. The
// reasons keep only the facts of the kernels where all fired.
bool same_kernel_fires(std::vector<Reason>& reasons, std::size_t first) {
    std::vector<std::string> common;
    for (const ObservedFact& f : reasons[first].facts) {
        common.push_back(kernel_key(f.scope));
    }
    for (std::size_t i = first + 1; i < reasons.size(); ++i) {
        std::vector<std::string> here;
        for (const ObservedFact& f : reasons[i].facts) {
            here.push_back(kernel_key(f.scope));
        }
        std::erase_if(common, [&](const std::string& k) {
            return std::find(here.begin(), here.end(), k) == here.end();
        });
    }
    if (common.empty()) {
        for (std::size_t i = first; i < reasons.size(); ++i) {
            reasons[i].status = "fired_elsewhere";
            reasons[i].actual += "; all triggers never fire on one kernel";
        }
        return false;
    }
    for (std::size_t i = first; i < reasons.size(); ++i) {
        std::erase_if(reasons[i].facts, [&](const ObservedFact& f) {
            return std::find(common.begin(), common.end(), kernel_key(f.scope)) == common.end();
        });
    }
    return true;
}

}  // namespace

QueryResult query_cards(const std::vector<Card>& cards, const Identity& identity,
                        const FactSet& facts, bool facts_given) {
    QueryResult result;
    result.facts_given = facts_given;
    for (const Card& card : cards) {
        CardAnswer a;
        a.card = &card;
        identity_reasons(card, identity, a.reasons);
        bool fails = false;
        bool unknown = false;
        for (const Reason& r : a.reasons) {
            fails = fails || r.status == "fails";
            unknown = unknown || r.status == "unknown";
        }
        std::size_t fired = 0;
        const std::size_t first_trigger = a.reasons.size();
        for (std::size_t i = 0; i < card.triggers.size(); ++i) {
            a.reasons.push_back(trigger_reason(card.triggers[i], i, facts, facts_given));
            fired += a.reasons.back().status == "fired" ? 1 : 0;
        }
        bool triggered = card.triggers_all ? fired == card.triggers.size() && fired > 0 : fired > 0;
        if (triggered && card.triggers_all) {
            triggered = same_kernel_fires(a.reasons, first_trigger);
        }
        if (card.triggers.empty()) {
            // With facts given, only a fired trigger makes a card applicable; a card without
            // triggers is general knowledge, applicable on its identity alone when no facts are.
            triggered = !facts_given;
            if (facts_given) {
                a.reasons.push_back(
                    Reason{"triggers",
                           "none",
                           "a trigger over the facts given",
                           "the card has no trigger: the facts say nothing about it",
                           {}});
            }
        }
        if (fails) {
            a.applicability = Applicability::not_applicable;
        } else if (!unknown && triggered) {
            a.applicability = Applicability::applicable;
        } else {
            a.applicability = Applicability::related;
        }
        ++result.count[order(a.applicability)];
        result.answers.push_back(std::move(a));
    }
    std::stable_sort(result.answers.begin(), result.answers.end(),
                     [](const CardAnswer& x, const CardAnswer& y) {
                         return std::make_pair(order(x.applicability), x.card->id) <
                                std::make_pair(order(y.applicability), y.card->id);
                     });
    return result;
}

Json query_result_to_json(const QueryResult& result, const Identity& identity,
                          const FactSet& facts) {
    Json answers = Json::array();
    for (const CardAnswer& a : result.answers) {
        Json reasons = Json::array();
        for (const Reason& r : a.reasons) {
            Json fired = Json::array();
            for (std::size_t i = 0; i < r.facts.size() && i < kShownFacts; ++i) {
                const ObservedFact& f = r.facts[i];
                fired.push_back(Json{{"id", f.id},
                                     {"value", f.value},
                                     {"unit", f.unit},
                                     {"scope", f.scope},
                                     {"document", f.document}});
            }
            Json reason{{"field", r.field},
                        {"status", r.status},
                        {"expected", r.expected},
                        {"actual", r.actual}};
            if (!fired.empty()) {
                reason["facts"] = fired;
                reason["facts_fired"] = r.facts.size();
            }
            reasons.push_back(std::move(reason));
        }
        Json card = card_to_json(*a.card);
        card["applicability"] = std::string(applicability_name(a.applicability));
        card["reasons"] = reasons;
        answers.push_back(std::move(card));
    }
    const std::size_t applicable = result.count[0];
    return Json{
        {"format_version", "cko/knowledge-answer-v1"},
        {"identity", identity.to_json()},
        {"fact_documents", facts.documents},
        {"facts_read", facts.facts.size()},
        {"facts_outside_vocabulary", facts.outside_vocabulary},
        {"counts",
         {{"applicable", result.count[0]},
          {"related", result.count[1]},
          {"not_applicable", result.count[2]}}},
        {"note", applicable == 0
                     ? "no card is applicable: that is an answer, not a blocker; knowledge only "
                       "suggests, local measurement decides"
                     : "cards are listed by class and id; none is chosen for you"},
        {"cards", answers}};
}

}  // namespace cko::knowledge
