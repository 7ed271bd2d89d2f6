// --root/--experiment/--subject on the verbs whose parsed document can be kept as evidence.
#pragma once

#include "cko/eval/profile_collect.hpp"
#include "cko/util/json.hpp"
#include "cko/verbs/verb.hpp"

#include <string>
#include <vector>

namespace cko::verbs {

// The three optional keys; `root` here has no default: without it nothing is stored.
[[nodiscard]] std::vector<Param> evidence_params();
// `params` followed by evidence_params().
[[nodiscard]] std::vector<Param> with_evidence_params(std::vector<Param> params);

// With `root`: stores the outcome's document (eval::store_profile) and adds `stored`
// {id, path, sha256} to it and a line to the text. Without: nothing (and --experiment or
// --subject alone is an error naming --root).
void store_if_asked(const Request& request, const std::string& kind, const Json& sources,
                    Outcome& outcome);

// `cko profile collect ncu|nsys|torch` in its store form: --experiment, --subject, --case (the
// root is the verb's own: ncu's has no default, since without it the verb is the diagnostic form).
[[nodiscard]] std::vector<Param> collect_params();

// Opens the Target at `root`, collects (eval::collect_profile) with the request's experiment,
// subject, case and, for ncu/nsys, the program under the key `<tool>` and options under
// `<tool>_arg`, and builds the outcome: the importer's text and document, the document with
// `stored` {id, path, sha256, collection}.
[[nodiscard]] Outcome collect_into_store(const Request& request, Context& context,
                                         const std::string& tool,
                                         const eval::ProfileImport& importer);

}  // namespace cko::verbs
