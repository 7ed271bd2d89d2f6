// The verb table assembled from each group's rows, and `cko help` (a verb like any other).
#include "cko/verbs/verb.hpp"

#include "cko/util/build_info.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cko::verbs {
namespace {

struct Table {
    std::vector<Verb> verbs;
    std::vector<Group> groups;
};

// {name, summary, verbs?} rows nested by path: the document `cko help --json` prints.
Json help_rows(const Table& t, const std::vector<std::string>& prefix) {
    Json rows = Json::array();
    std::vector<std::string> seen;
    const auto under = [&](const std::vector<std::string>& path) {
        return path.size() > prefix.size() &&
               std::equal(prefix.begin(), prefix.end(), path.begin());
    };
    const auto add_row = [&](const std::string& word, const std::string& summary) {
        if (std::find(seen.begin(), seen.end(), word) != seen.end()) {
            return;
        }
        seen.push_back(word);
        std::vector<std::string> path = prefix;
        path.push_back(word);
        Json row{{"name", word}, {"summary", summary}};
        const Json children = help_rows(t, path);
        if (!children.empty()) {
            row["verbs"] = children;
        }
        rows.push_back(std::move(row));
    };
    for (const Verb& v : t.verbs) {
        if (!under(v.path)) {
            continue;
        }
        const std::string& word = v.path[prefix.size()];
        std::string summary;
        if (v.path.size() == prefix.size() + 1) {
            summary = v.summary;
        } else {
            for (const Group& g : t.groups) {
                if (g.path.size() == prefix.size() + 1 &&
                    std::equal(prefix.begin(), prefix.end(), g.path.begin()) &&
                    g.path.back() == word) {
                    summary = g.summary;
                }
            }
            for (const Verb& w :
                 t.verbs) {  // a verb that also holds verbs (`sass` and `sass diff`)
                if (w.path.size() == prefix.size() + 1 &&
                    std::equal(prefix.begin(), prefix.end(), w.path.begin()) &&
                    w.path.back() == word) {
                    summary = w.summary;
                }
            }
        }
        add_row(word, summary);
    }
    return rows;
}

void help_text_rows(const Json& rows, int depth, std::string& out) {
    for (const auto& row : rows) {
        const std::string name =
            std::string(static_cast<std::size_t>(2 * depth), ' ') + row["name"].get<std::string>();
        out += fmt::format("  {:<22} {}\n", name, row["summary"].get<std::string>());
        if (row.contains("verbs")) {
            help_text_rows(row["verbs"], depth + 1, out);
        }
    }
}

const Table& table();

Outcome help(const Request& /*request*/, Context& /*context*/) {
    const Json rows = help_rows(table(), {});
    std::string text = fmt::format(
        "cko: evidence-based GPU performance work\nUsage: cko VERB [OPTIONS]   (cko VERB --help "
        "for a verb's "
        "options; --json prints one JSON document; --request FILE takes the options as "
        "JSON)\n\nVerbs:\n");
    help_text_rows(rows, 0, text);
    text += "\ncko mcp serves these verbs as Model Context Protocol tools over stdio.\n";
    return Outcome{
        text,
        Json{{"format_version", "cko/help-v1"}, {"version", build_version()}, {"verbs", rows}},
        0,
        {}};
}

Table build_table() {
    Table t;
    t.verbs.push_back(Verb{{"help"}, "Show the verbs and what they do", RequestDef{}, &help, true});
    add_self_check_verbs(t.verbs);
    add_doctor_verbs(t.verbs);
    add_loop_verbs(t.verbs, t.groups);
    add_hypothesis_verbs(t.verbs, t.groups);
    add_store_verbs(t.verbs);
    add_driver_verbs(t.verbs, t.groups);
    add_report_verbs(t.verbs);
    add_profile_verbs(t.verbs, t.groups);
    add_compiler_verbs(t.verbs);
    add_knowledge_verbs(t.verbs, t.groups);
    add_map_verbs(t.verbs);
    return t;
}

const Table& table() {
    static const Table t = build_table();
    return t;
}

}  // namespace

std::string Verb::cli_name() const {
    return fmt::format("{}", fmt::join(path, " "));
}

std::string Verb::tool_name() const {
    return fmt::format("{}", fmt::join(path, "_"));
}

const std::vector<Verb>& verb_table() {
    return table().verbs;
}
const std::vector<Group>& verb_groups() {
    return table().groups;
}

const Verb* find_verb_by_tool_name(const std::string& name) {
    for (const Verb& v : verb_table()) {
        if (v.tool_name() == name) {
            return &v;
        }
    }
    return nullptr;
}

}  // namespace cko::verbs
