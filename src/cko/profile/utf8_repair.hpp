// Profiler strings enter facts as valid UTF-8: invalid bytes become U+FFFD, and the count is kept.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace cko::profile {

// Whether text is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
[[nodiscard]] bool is_valid_utf8(std::string_view text) noexcept;

// Copies text with every byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD
// (EF BF BD); returns how many bytes were replaced. Valid text is copied unchanged.
std::size_t repair_utf8(std::string_view text, std::string& out);

// Repairs in place; returns the number of bytes replaced (0: the string was already valid).
std::size_t repair_utf8_in_place(std::string& text);

// Counts repairs across one import, so the document can say how many strings were changed.
class Utf8Repairs {
public:
    // Returns text itself when valid, else a repaired copy kept in `scratch`.
    std::string_view repaired(std::string_view text, std::string& scratch);
    void repair(std::string& text);
    [[nodiscard]] std::size_t strings() const noexcept { return strings_; }
    [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }
    // "N string(s) held invalid UTF-8; M byte(s) replaced with U+FFFD", or empty when none.
    [[nodiscard]] std::string note() const;

private:
    std::size_t strings_ = 0;
    std::size_t bytes_ = 0;
};

}  // namespace cko::profile
