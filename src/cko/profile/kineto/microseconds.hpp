// Conversion of Kineto's decimal microsecond text ("5122375887118.662") to integer ns, exact to 3
// digits.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace cko::profile::kineto {

// Parses a JSON number token written in microseconds into nanoseconds without going through a
// double: an optional '-', integer digits, and fraction digits. Up to three fraction digits are
// exact. More (a trace rewritten by a tool with float arithmetic: "12.345678") are rounded to the
// nearest nanosecond, ties away from zero, in decimal, and *rounded is set so the caller can say
// so. Exponents, empty text, and values beyond int64 nanoseconds give nullopt, so a caller can
// fail with the offending text.
[[nodiscard]] std::optional<std::int64_t> microseconds_text_to_ns(std::string_view text,
                                                                  bool* rounded = nullptr) noexcept;

}  // namespace cko::profile::kineto
