// Exact conversion of Kineto's decimal microsecond text ("5122375887118.662") to integer ns.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace cko::profile::kineto {

// Parses a JSON number token written in microseconds into nanoseconds without going through a
// double: an optional '-', integer digits, and at most three fraction digits (more are accepted
// only when they are zeros). Exponents, empty text, and values beyond int64 nanoseconds give
// nullopt, so a caller can fail with the offending text instead of silently rounding.
[[nodiscard]] std::optional<std::int64_t> microseconds_text_to_ns(std::string_view text) noexcept;

}  // namespace cko::profile::kineto
