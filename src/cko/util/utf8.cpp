// UTF-8 validation and U+FFFD replacement (Unicode 15, §3.9 "maximal subpart" practice).
#include "cko/util/utf8.hpp"

#include "cko/util/error.hpp"

#include <fmt/format.h>

namespace cko {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the well-formed sequence starting at text[i], or 0 if none starts there; `bad_len`
// gets the length of the maximal ill-formed subpart to replace by one U+FFFD.
std::size_t sequence_length(std::string_view text, std::size_t i, std::size_t& bad_len) noexcept {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char b0 = byte(i);
    bad_len = 1;
    if (b0 < 0x80) {
        return 1;
    }
    std::size_t need = 0;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        need = 1;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        need = 2;
        lo = b0 == 0xE0 ? 0xA0 : 0x80;  // no overlong forms
        hi = b0 == 0xED ? 0x9F : 0xBF;  // no surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        need = 3;
        lo = b0 == 0xF0 ? 0x90 : 0x80;
        hi = b0 == 0xF4 ? 0x8F : 0xBF;  // nothing above U+10FFFF
    } else {
        return 0;
    }
    for (std::size_t k = 1; k <= need; ++k) {
        if (i + k >= text.size()) {
            bad_len = k;
            return 0;
        }
        const unsigned char b = byte(i + k);
        const unsigned char l = k == 1 ? lo : 0x80;
        const unsigned char h = k == 1 ? hi : 0xBF;
        if (b < l || b > h) {
            bad_len = k;
            return 0;
        }
    }
    return need + 1;
}

}  // namespace

bool is_valid_utf8(std::string_view text) noexcept {
    std::size_t bad = 0;
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = sequence_length(text, i, bad);
        if (n == 0) {
            return false;
        }
        i += n;
    }
    return true;
}

std::string utf8_or_replaced(std::string_view text) {
    if (is_valid_utf8(text)) {
        return std::string(text);
    }
    std::string out;
    out.reserve(text.size() + 8);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < text.size();) {
        const std::size_t n = sequence_length(text, i, bad);
        if (n == 0) {
            out += kReplacement;
            i += bad;
        } else {
            out.append(text.substr(i, n));
            i += n;
        }
    }
    return out;
}

nlohmann::json json_with_valid_utf8(const nlohmann::json& value) {
    switch (value.type()) {
    case nlohmann::json::value_t::string: {
        const auto& s = value.get_ref<const std::string&>();
        return is_valid_utf8(s) ? value : nlohmann::json(utf8_or_replaced(s));
    }
    case nlohmann::json::value_t::object: {
        nlohmann::json out = nlohmann::json::object();
        for (const auto& [k, v] : value.items()) {
            out[utf8_or_replaced(k)] = json_with_valid_utf8(v);
        }
        return out;
    }
    case nlohmann::json::value_t::array: {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& v : value) {
            out.push_back(json_with_valid_utf8(v));
        }
        return out;
    }
    default:
        return value;
    }
}

void require_free_text(std::string_view text, std::string_view field, std::size_t max_bytes) {
    if (text.size() > max_bytes) {
        throw Error(
            ErrorCode::field_too_long,
            fmt::format("{}: {} bytes, more than the {}-byte limit for free text; say it in a few "
                        "sentences and put long material in a file the record can cite",
                        field, text.size(), max_bytes),
            nlohmann::json{{"field", field}, {"size", text.size()}, {"limit", max_bytes}});
    }
}

std::string_view utf8_tail(std::string_view text, std::size_t max_bytes) noexcept {
    if (text.size() <= max_bytes) {
        return text;
    }
    std::string_view tail = text.substr(text.size() - max_bytes);
    // Continuation bytes (10xxxxxx) at the start belong to a character cut in two: drop them.
    for (int k = 0;
         k < 3 && !tail.empty() && (static_cast<unsigned char>(tail.front()) & 0xC0) == 0x80; ++k) {
        tail.remove_prefix(1);
    }
    return tail;
}

}  // namespace cko
