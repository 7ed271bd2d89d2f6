// The verb table: every operation cko offers is one row (name, summary, request, run), as in
// Ninja's tool table. The CLI and the MCP server adapt the same rows.
#pragma once

#include "cko/util/error.hpp"
#include "cko/util/progress.hpp"
#include "cko/verbs/request.hpp"

#include <atomic>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace cko::verbs {

// What an operation hands back: the outcome document, a human summary and the exit class
// (0 success, 1 completed with a negative verdict, ...). Errors are thrown as cko::Error.
struct Outcome {
    std::string text;
    Json document = Json::object();
    int exit_code = 0;
    // Set instead of `document` when the document is too large for a DOM (every metric of every
    // NCU launch): it writes the document as it goes.
    std::function<void(std::ostream&)> write_document;

    // Set when the operation ran, recorded its invocation and did not succeed: the error that
    // invocation recorded (`document` is still the invocation's). Each adapter reports it once in
    // its own way: the CLI as `cko: error[code]: message` on stderr, MCP as a tool error.
    std::optional<Error> failure = std::nullopt;

    // The document whatever way it was made (streamed documents are read back).
    [[nodiscard]] Json materialized_document() const;
};

// What the caller gives an operation: cancellation, progress, the invocation announcement, and
// which halves of the outcome it will print.
struct Context {
    const std::atomic<bool>* cancel = nullptr;
    ProgressFn progress;  // a step: a status line ("" clears it), counted where the work is
    std::function<void(const std::string& invocation_id)> announce;  // the invocation exists
    bool want_text = true;
    bool want_document = true;
    // The caller allows no writes (`cko mcp --read-only`): ls, status and wait report an
    // invocation whose owner is gone as it stands (running, owner_alive false) instead of
    // declaring it lost, which writes its result.
    bool read_only = false;

    void report_progress(const std::string& line) const { report_progress(Progress{line}); }
    void report_progress(const Progress& step) const {
        if (progress) {
            progress(step);
        }
    }
    void announce_invocation(const std::string& id) const {
        if (announce) {
            announce(id);
        }
    }
};

using RunFn = Outcome (*)(const Request& request, Context& context);

struct Verb {
    std::vector<std::string> path;  // {"target", "freeze"}
    std::string summary;
    RequestDef request;
    RunFn run = nullptr;
    bool read_only = false;    // changes nothing on disk (offered under `cko mcp --read-only`)
    bool cancellable = false;  // polls Context::cancel (the CLI turns SIGINT/SIGTERM into it)
    bool detachable = false;   // takes `detach` and announces its invocation

    [[nodiscard]] std::string cli_name() const;   // "target freeze"
    [[nodiscard]] std::string tool_name() const;  // "target_freeze", "self-check" (the MCP tool)
};

// A word that groups verbs (`target`, `profile collect`) and its summary.
struct Group {
    std::vector<std::string> path;
    std::string summary;
};

[[nodiscard]] const std::vector<Verb>& verb_table();
[[nodiscard]] const std::vector<Group>& verb_groups();
[[nodiscard]] const Verb* find_verb_by_tool_name(const std::string& name);

// The rows each *_verbs.cpp contributes, in the order `cko help` lists them.
void add_self_check_verbs(std::vector<Verb>& table);
void add_doctor_verbs(std::vector<Verb>& table);
void add_loop_verbs(std::vector<Verb>& table, std::vector<Group>& groups);
void add_hypothesis_verbs(std::vector<Verb>& table, std::vector<Group>& groups);
void add_store_verbs(std::vector<Verb>& table);
void add_driver_verbs(std::vector<Verb>& table, std::vector<Group>& groups);
void add_report_verbs(std::vector<Verb>& table);
void add_profile_verbs(std::vector<Verb>& table, std::vector<Group>& groups);
void add_compiler_verbs(std::vector<Verb>& table);
void add_knowledge_verbs(std::vector<Verb>& table, std::vector<Group>& groups);
void add_map_verbs(std::vector<Verb>& table);

}  // namespace cko::verbs
