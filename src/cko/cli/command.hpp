// The shared shell of every verb: --json / --request plumbing, output and error printing.
#pragma once

#include "cko/util/json.hpp"

#include <CLI/CLI.hpp>

#include <functional>
#include <ostream>
#include <string>

namespace cko::cli {

// What a verb hands back to the shell: a human summary, the JSON document, and the exit code
// (0 success, 1 operation completed with a negative verdict). Errors are thrown as cko::Error.
struct CommandResult {
    std::string text;
    Json json = Json::object();
    int exit_code = 0;
};

// Called by a handler under --json: the document is written by `writer` instead of dumping
// CommandResult::json, so one too large for a DOM (every metric of every NCU launch) is streamed.
void stream_json_output(std::function<void(std::ostream&)> writer);

using Handler = std::function<CommandResult()>;

// Adds a leaf verb under `parent` with the flags every verb shares:
//   --json          print exactly one JSON document on stdout instead of the human summary
//   --request FILE  a closed JSON object whose keys are this verb's option names (without
//                   dashes, '-' or '_' alike); unknown keys are rejected with the list of
//                   known ones
// The handler runs after parsing, with the verb's own option variables filled in.
CLI::App* add_verb(CLI::App& parent, const std::string& name, const std::string& description,
                   Handler handler);

// Whether the running verb was asked for --json (progress output must stay off then).
[[nodiscard]] bool json_output() noexcept;

// Runs the whole command line; returns the process exit code. Never throws.
int run_cli(int argc, char** argv);

}  // namespace cko::cli
