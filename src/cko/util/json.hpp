// Strict JSON reading (with the JSON path of the offending value) and canonical JSON writing.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace cko {

using Json = nlohmann::json;

struct JsonLimits {
    std::size_t max_bytes = std::size_t{64} << 20;
    std::size_t max_depth = 64;
};

// Parses one JSON document and rejects what nlohmann's parser would let through silently:
// duplicate object keys, non-finite numbers (NaN/Infinity literals and overflowing numbers such as
// 1e400), invalid UTF-8, nesting deeper than max_depth, input above max_bytes, and trailing
// content. Errors name the source and the JSON path ("$.a[2].b") of the offending value.
[[nodiscard]] Json parse_json_strict(std::string_view text, const JsonLimits& limits = {},
                                     std::string_view source = "<input>");

// Reads a file (refusing it above limits.max_bytes) and parses it strictly.
[[nodiscard]] Json read_json_file(const std::filesystem::path& path, const JsonLimits& limits = {});

// Canonical bytes: object keys sorted by UTF-8 bytes, no insignificant whitespace, UTF-8 output
// (no \u escapes for non-ASCII), shortest round-trip numbers. The same value always gives the same
// bytes. Throws json_non_finite for NaN/Infinity. Ill-formed UTF-8 in a string (bytes from the
// outside world: file names, driver output) is written as U+FFFD, so every stored document is
// valid UTF-8 and no outside byte can make a record unwritable.
[[nodiscard]] std::string canonical_json(const Json& value);

// A document to print (stdout, --json): indented, never throws, always valid UTF-8 (ill-formed
// bytes become U+FFFD, as in canonical_json).
[[nodiscard]] std::string printable_json(const Json& value, int indent = 2);

// Path syntax used in error messages: $, $.key, $["odd key"], $[3].
[[nodiscard]] std::string json_path_append_key(std::string_view parent, std::string_view key);
[[nodiscard]] std::string json_path_append_index(std::string_view parent, std::size_t index);

}  // namespace cko
