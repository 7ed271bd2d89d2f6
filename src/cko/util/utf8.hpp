// UTF-8 for everything cko prints or stores: outside bytes (stderr, file names, paths) made
// well-formed in one place.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace cko {

// True if `text` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
[[nodiscard]] bool is_valid_utf8(std::string_view text) noexcept;

// `text` with every ill-formed sequence replaced by U+FFFD (one per maximal ill-formed subpart, as
// Unicode recommends); well-formed text comes back unchanged.
[[nodiscard]] std::string utf8_or_replaced(std::string_view text);

// Every string (keys included) inside `value` made well-formed with utf8_or_replaced.
[[nodiscard]] nlohmann::json json_with_valid_utf8(const nlohmann::json& value);

// Free text a person or agent types into a record (a hypothesis, a reason) is capped: above
// kFreeTextMaxBytes, field_too_long naming `field`. Records stay small and reviewable.
inline constexpr std::size_t kFreeTextMaxBytes = 16 * 1024;
void require_free_text(std::string_view text, std::string_view field,
                       std::size_t max_bytes = kFreeTextMaxBytes);

// The last at most `max_bytes` bytes of `text`, never starting inside a UTF-8 character.
[[nodiscard]] std::string_view utf8_tail(std::string_view text, std::size_t max_bytes) noexcept;

}  // namespace cko
