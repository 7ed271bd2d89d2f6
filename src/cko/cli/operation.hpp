// Support for long verbs: cancellation by signal, --detach, the artifact root option, a TTY progress line.
#pragma once

#include "cko/cli/command.hpp"

#include <atomic>
#include <functional>
#include <string>

namespace cko::cli {

// Set by SIGINT/SIGTERM once install_cancel_handlers() ran: long operations poll it and cancel
// cleanly (child group killed, `cancelled` recorded).
const std::atomic<bool>* cancel_flag();
void install_cancel_handlers();

// Adds --root (default $CKO_ROOT, else ./artifacts) to a verb.
void add_root_option(CLI::App* verb, std::string& root);

// Runs `operation` in a new session in the background. `operation` receives a callback to
// announce the invocation id as soon as it exists; the parent prints it and returns. Without
// --detach the operation runs here, in the foreground.
using Announce = std::function<void(const std::string& invocation_id)>;
CommandResult run_maybe_detached(bool detach, const std::function<CommandResult(const Announce&)>& operation);

// One status line on stderr when it is a terminal (never in --json output); no-op otherwise.
void progress(bool json, const std::string& line);

}  // namespace cko::cli
