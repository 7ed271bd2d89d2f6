// The one operation frame: request checking, detaching, the outcome document and its exit class,
// the same for a direct CLI run, `--detach` + `wait`, and an MCP tools/call.
#pragma once

#include "cko/eval/compare.hpp"
#include "cko/util/error.hpp"
#include "cko/verbs/verb.hpp"

namespace cko::verbs {

// Normalizes `request` against the verb's definition and runs it. With `detach` (detachable verbs
// only) the operation runs in a new session in the background: the frame returns as soon as the
// invocation exists, with the document {"id","detached":true,"pid"}. `before_run` runs in the
// process that runs the operation (the CLI installs its signal handlers there).
Outcome run_operation(const Verb& verb, const Json& request, Context& context,
                      const std::function<void()>& before_run = {});
// The same for a request already normalized against verb.request (an MCP call reads its root from
// it first): checked once, not twice.
Outcome run_operation(const Verb& verb, const Request& request, Context& context,
                      const std::function<void()>& before_run = {});

// The document of a failed operation ({"error":{code,message,details}}) and its exit class.
[[nodiscard]] Json error_document(const Error& error);

// The line after a finished screen, confirm or audit that says what its evidence allows next, and
// the same as `next_step` in the document. The direct run, `status` and `wait` all add it, so each
// gives the same document (`root` as the caller spelled it, for the command it names).
void add_next_step(Outcome& outcome, eval::ComparisonKind kind, const std::string& root,
                   const std::string& experiment_id);

// SIGINT/SIGTERM/SIGHUP set this flag once install_signal_cancel() ran: long operations poll it
// and cancel cleanly (child group killed, `cancelled` recorded).
const std::atomic<bool>* signal_cancel_flag();
void install_signal_cancel();

}  // namespace cko::verbs
