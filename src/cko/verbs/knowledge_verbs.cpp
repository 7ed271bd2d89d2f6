// `cko knowledge query`: the offline cards judged against an identity and parsed facts.
#include "cko/knowledge/query.hpp"
#include "cko/util/error.hpp"
#include "cko/verbs/verb.hpp"

#include <fmt/format.h>

#include <memory>

namespace cko::verbs {
namespace {

using knowledge::Applicability;
using knowledge::Identity;
using knowledge::Version;

struct QueryArgs {
    std::string doctor;
    std::string arch;
    std::string cc;
    std::string cuda;
    std::string driver;
    std::string torch;
    std::string triton;
    std::vector<std::string> frameworks;  // NAME=VERSION
    std::vector<std::string> facts;
    std::string cards;
    std::vector<std::string> topics;
    bool all = false;
};

Version version_flag(const std::string& text, const char* flag) {
    const auto v = Version::parse(text);
    if (!v) {
        throw Error(
            ErrorCode::invalid_argument,
            fmt::format("{} '{}': expected a dotted version such as 13.0 or 2.11.0", flag, text),
            Json{{"flag", flag}});
    }
    return *v;
}

Identity identity_from(const QueryArgs& a) {
    Identity id;
    if (!a.doctor.empty()) {
        id = knowledge::identity_from_doctor(read_json_file(a.doctor), a.doctor);
    }
    bool flags = false;
    if (!a.arch.empty()) {
        const auto cc = knowledge::cc_from_arch(a.arch);
        if (!cc) {
            throw Error(
                ErrorCode::invalid_argument,
                fmt::format("--arch '{}': expected sm_NN with an optional suffix, e.g. sm_90a",
                            a.arch),
                Json{{"flag", "--arch"}});
        }
        id.arch = a.arch;
        id.cc = cc;
        flags = true;
    }
    if (!a.cc.empty()) {
        const auto cc = knowledge::parse_cc(a.cc);
        if (!cc) {
            throw Error(ErrorCode::invalid_argument,
                        fmt::format("--cc '{}': expected MAJOR.MINOR, e.g. 9.0", a.cc),
                        Json{{"flag", "--cc"}});
        }
        if (!a.arch.empty() && (cc->major != id.cc->major || cc->minor != id.cc->minor)) {
            throw Error(
                ErrorCode::invalid_argument,
                fmt::format("--cc {} disagrees with --arch {} ({}): give one, or two that agree",
                            a.cc, a.arch, id.cc->text()),
                Json{{"flag", "--cc"}});
        }
        if (a.arch.empty()) {
            id.arch = fmt::format("sm_{}{}", cc->major, cc->minor);
        }
        id.cc = cc;
        flags = true;
    }
    if (!a.cuda.empty()) {
        id.cuda = version_flag(a.cuda, "--cuda");
        flags = true;
    }
    if (!a.driver.empty()) {
        id.driver = version_flag(a.driver, "--driver");
        flags = true;
    }
    std::vector<std::string> fw = a.frameworks;
    if (!a.torch.empty()) {
        fw.push_back("torch=" + a.torch);
    }
    if (!a.triton.empty()) {
        fw.push_back("triton=" + a.triton);
    }
    for (const std::string& item : fw) {
        const std::size_t eq = item.find('=');
        if (eq == std::string::npos || eq == 0) {
            throw Error(
                ErrorCode::invalid_argument,
                fmt::format("--framework '{}': expected NAME=VERSION, e.g. vllm=0.11.0", item),
                Json{{"flag", "--framework"}});
        }
        id.frameworks[knowledge::canonical_framework(item.substr(0, eq))] =
            version_flag(item.substr(eq + 1), "--framework");
        flags = true;
    }
    if (flags) {
        id.source = id.source.empty() ? "flags" : id.source + " + flags";
    }
    return id;
}

std::string reason_line(const knowledge::Reason& r) {
    std::string line =
        fmt::format("      {} {}: expected {}, actual {}", r.status, r.field, r.expected, r.actual);
    for (std::size_t i = 0; i < r.facts.size() && i < 3; ++i) {
        const knowledge::ObservedFact& f = r.facts[i];
        line += fmt::format("\n        {} = {:g} {} in {}", f.id, f.value, f.unit, f.scope);
    }
    if (r.facts.size() > 3) {
        line += fmt::format("\n        ... {} facts in all (--json lists 5)", r.facts.size());
    }
    return line + "\n";
}

// What the card says, so that an answer can be read without opening the card file.
std::string card_body(const knowledge::Card& c) {
    if (c.kind == knowledge::CardKind::contract) {
        std::string out = fmt::format("      claim: {}\n      does not claim: {}\n", c.claim,
                                      fmt::join(c.does_not_claim, "; "));
        for (const knowledge::SourceRef& s : c.sources) {
            out += fmt::format("      source: {} <{}>\n", s.title, s.url);
        }
        return out;
    }
    return fmt::format(
        "      direction: {}\n      cheapest falsifier: {}\n      competing explanations: {}\n",
        c.direction, c.cheapest_falsifier, fmt::join(c.competing_explanations, "; "));
}

std::string query_text(const knowledge::QueryResult& r, const Identity& id,
                       const knowledge::FactSet& facts, bool all) {
    std::string out =
        fmt::format("identity: arch {}, cc {}, CUDA {}, driver {}", id.arch.empty() ? "?" : id.arch,
                    id.cc ? id.cc->text() : "?", id.cuda ? id.cuda->text() : "?",
                    id.driver ? id.driver->text() : "?");
    for (const auto& [name, v] : id.frameworks) {
        out += fmt::format(", {} {}", name, v.text());
    }
    out += fmt::format("\nfacts: {} read from {} documents\n", facts.facts.size(),
                       facts.documents.size());
    out += fmt::format(
        "{} applicable, {} related, {} not applicable (cards are listed, never chosen)\n",
        r.count[0], r.count[1], r.count[2]);
    if (r.count[0] == 0) {
        out += "no card is applicable: that is an answer, not a blocker\n";
    }
    for (const knowledge::CardAnswer& a : r.answers) {
        if (a.applicability == Applicability::not_applicable && !all) {
            continue;
        }
        out += fmt::format("  [{}] {} ({}): {}\n", applicability_name(a.applicability), a.card->id,
                           knowledge::card_kind_name(a.card->kind), a.card->title);
        if (a.applicability != Applicability::related || all) {
            out += card_body(*a.card);
            for (const knowledge::Reason& reason : a.reasons) {
                out += reason_line(reason);
            }
        }
    }
    if (!all && r.count[2] > 0) {
        out += fmt::format("{} not applicable cards left out (--all lists them with reasons)\n",
                           r.count[2]);
    }
    return out;
}

Outcome knowledge_query(const Request& r, Context& /*context*/) {
    QueryArgs a;
    a.doctor = r.text("doctor");
    a.arch = r.text("arch");
    a.cc = r.text("cc");
    a.cuda = r.text("cuda");
    a.driver = r.text("driver");
    a.torch = r.text("torch");
    a.triton = r.text("triton");
    a.frameworks = r.list("framework");
    a.facts = r.list("facts");
    a.cards = r.text("cards");
    a.topics = r.list("topic");
    a.all = r.flag("all");
    const Identity id = identity_from(a);
    std::vector<knowledge::Card> cards = knowledge::load_cards(a.cards);
    if (!a.topics.empty()) {
        std::erase_if(cards, [&](const knowledge::Card& c) {
            for (const std::string& t : c.topics) {
                if (std::find(a.topics.begin(), a.topics.end(), t) != a.topics.end()) {
                    return false;
                }
            }
            return true;
        });
    }
    knowledge::FactSet facts;
    for (const std::string& file : a.facts) {
        knowledge::add_fact_document(facts, read_json_file(file), file);
    }
    const knowledge::QueryResult result =
        knowledge::query_cards(cards, id, facts, !a.facts.empty());
    return Outcome{query_text(result, id, facts, a.all),
                   knowledge::query_result_to_json(result, id, facts),
                   0,
                   {}};
}

}  // namespace

void add_knowledge_verbs(std::vector<Verb>& table, std::vector<Group>& groups) {
    groups.push_back({{"knowledge"}, "Offline knowledge cards: contracts and heuristics"});
    table.push_back(Verb{
        {"knowledge", "query"},
        "Judge every card against an identity and parsed facts",
        RequestDef{{
            string_param("doctor",
                         "A `cko doctor --json` document: GPU compute capability, CUDA, driver"),
            string_param("arch", "GPU architecture, e.g. sm_90, sm_90a, sm_120"),
            string_param("cc", "Compute capability, e.g. 9.0"),
            string_param("cuda", "CUDA version, e.g. 13.0"),
            string_param("driver", "NVIDIA driver version, e.g. 580.159"),
            string_param("torch", "PyTorch version, e.g. 2.11"),
            string_param("triton", "Triton version, e.g. 3.6"),
            list_param("framework", "Another framework as NAME=VERSION (repeat): vllm=0.11"),
            list_param("facts",
                       "The --json output of cko profile ncu / sass / ptxas / triton (repeat)"),
            string_param("cards", "A directory of card files to use instead of the built-in cards"),
            list_param("topic", "Only cards with this topic (repeat)"),
            flag_param("all", "List not-applicable cards too, and every reason"),
        }},
        &knowledge_query,
        true});
}

}  // namespace cko::verbs
