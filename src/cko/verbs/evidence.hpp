// --root/--experiment/--subject on the verbs whose parsed document can be kept as evidence.
#pragma once

#include "cko/util/json.hpp"
#include "cko/verbs/verb.hpp"

#include <string>
#include <vector>

namespace cko::verbs {

// The three optional keys; `root` here has no default: without it nothing is stored.
[[nodiscard]] std::vector<Param> evidence_params();

// With `root`: stores the outcome's document (eval::store_profile) and adds `stored`
// {id, path, sha256} to it and a line to the text. Without: nothing (and --experiment or
// --subject alone is an error naming --root).
void store_if_asked(const Request& request, const std::string& kind, const Json& sources,
                    Outcome& outcome);

}  // namespace cko::verbs
