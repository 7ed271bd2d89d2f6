// A small JSON-schema check for the record tests: each to_json against its schema in schemas/.
#pragma once

#include "cko/util/json.hpp"

#include <string>
#include <vector>

namespace cko::store::schema_check {

// What `doc` breaks of schemas/NAME.json (run from the repository root), one line each: empty
// when it meets it.
[[nodiscard]] std::vector<std::string> problems_against(const std::string& schema_name,
                                                        const Json& doc);

}  // namespace cko::store::schema_check
