// Refuses cko.toml text that toml++ would mishandle: non-ASCII outside strings and comments.
#pragma once

#include <filesystem>
#include <string_view>

namespace cko::eval {

// TOML 1.0 allows only ASCII outside strings and comments, and the Debian toml++ (3.x) classifies
// some non-ASCII characters there by a table with holes that reach __builtin_unreachable (found by
// fuzz/fuzz_target_spec.cpp: U+FE7F, U+FEFE, and e.g. U+00E9 as a bare character). So such text
// is refused here first: Error(invalid_spec) naming "path:line:column" and the code point.
void refuse_non_ascii_outside_strings(std::string_view text,
                                      const std::filesystem::path& spec_path);

}  // namespace cko::eval
