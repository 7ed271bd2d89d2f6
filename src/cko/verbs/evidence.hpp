// --root/--experiment/--subject on the verbs whose parsed document can be kept as evidence.
#pragma once

#include "cko/eval/profile_collect.hpp"
#include "cko/profile/fact.hpp"
#include "cko/util/json.hpp"
#include "cko/verbs/verb.hpp"

#include <string>
#include <vector>

namespace cko::verbs {

// The optional keys root, experiment, subject, foreign and question; `root` here has no default:
// without it nothing is stored.
[[nodiscard]] std::vector<Param> evidence_params();
// --foreign (a flag): keep a profile whose identity does not match the Target as foreign evidence.
[[nodiscard]] Param foreign_param();
// --question TEXT: the one question the kept profile is meant to answer (the record's `question`).
[[nodiscard]] Param question_param();
// `params` followed by evidence_params().
[[nodiscard]] std::vector<Param> with_evidence_params(std::vector<Param> params);

// With `root`: stores the outcome's document (eval::keep_profile) and adds `stored`
// {id, path, sha256, foreign: true with foreign_reasons for foreign evidence, the question when one
// was given} to it and lines to the text. Without: nothing (and --experiment, --subject, --foreign
// or --question alone is an error naming --root).
void store_if_asked(const Request& request, const std::string& kind, const Json& sources,
                    Outcome& outcome);

// Appends to a document's notes what of the source's tool version (or nsys export schema) is not
// stated or untested (profile::version_notes): a read says what it does not know.
void add_version_notes(std::vector<std::string>& notes, const profile::Source& source);

// --tool-version for an input that does not state its tool's version; one that states it wins,
// and a different --tool-version is refused (invalid_argument naming tool_version), never dropped.
void take_stated_version(profile::Source& source, const std::string& given,
                         const std::string& path);

// The source as a profile record lists it: profile::source_to_json with `path`.
[[nodiscard]] Json source_with_path(const profile::Source& source, const std::string& path);

// `cko profile collect ncu|nsys|torch` in its store form: --experiment, --subject, --case,
// --question (the root is the verb's own: ncu's has no default, since without it the verb is the
// diagnostic form).
[[nodiscard]] std::vector<Param> collect_params();

// Opens the Target at `root`, collects (eval::collect_profile) with the request's experiment,
// subject, case and, for ncu/nsys, the program under the key `<tool>` and options under
// `<tool>_arg`, and builds the outcome: the importer's text and document, the document with
// `stored` {id, path, sha256, collection}.
[[nodiscard]] Outcome collect_into_store(const Request& request, Context& context,
                                         eval::ProfileTool tool,
                                         const eval::ProfileImport& importer);

}  // namespace cko::verbs
