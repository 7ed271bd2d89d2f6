// Decimal microseconds → integer nanoseconds (never via double): exact, or rounded in decimal.
#include "cko/profile/kineto/microseconds.hpp"

#include <limits>

namespace cko::profile::kineto {

std::optional<std::int64_t> microseconds_text_to_ns(std::string_view text, bool* rounded) noexcept {
    if (rounded != nullptr) {
        *rounded = false;
    }
    std::size_t i = 0;
    const bool negative = !text.empty() && text[0] == '-';
    if (negative) {
        ++i;
    }
    constexpr std::uint64_t kMaxUs =
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max() / 1000);
    std::uint64_t whole = 0;
    const std::size_t digits_start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        whole = whole * 10 + static_cast<std::uint64_t>(text[i] - '0');
        if (whole > kMaxUs) {
            return std::nullopt;
        }
        ++i;
    }
    if (i == digits_start) {
        return std::nullopt;
    }
    std::uint64_t fraction = 0;
    int fraction_digits = 0;
    bool round_up = false;     // the first dropped digit is 5 or more
    bool any_dropped = false;  // some dropped digit is not zero
    if (i < text.size() && text[i] == '.') {
        ++i;
        const std::size_t fraction_start = i;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            if (fraction_digits < 3) {
                fraction = fraction * 10 + static_cast<std::uint64_t>(text[i] - '0');
                ++fraction_digits;
            } else {
                if (fraction_digits == 3 && text[i] >= '5') {
                    round_up = true;
                }
                any_dropped = any_dropped || text[i] != '0';
                ++fraction_digits;  // counts past 3 only to find the first dropped digit
            }
            ++i;
        }
        if (i == fraction_start) {
            return std::nullopt;
        }
    }
    if (i != text.size()) {
        return std::nullopt;  // exponent or trailing garbage
    }
    for (; fraction_digits < 3; ++fraction_digits) {
        fraction *= 10;
    }
    const std::uint64_t ns = whole * 1000 + fraction + (round_up ? 1 : 0);
    if (rounded != nullptr) {
        *rounded = any_dropped;
    }
    if (ns > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        return std::nullopt;
    }
    return negative ? -static_cast<std::int64_t>(ns) : static_cast<std::int64_t>(ns);
}

}  // namespace cko::profile::kineto
