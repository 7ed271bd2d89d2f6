// UTF-8 validation with an ASCII fast path, and byte-wise repair to U+FFFD.
#include "cko/profile/utf8_repair.hpp"

#include <cstdint>
#include <cstring>

namespace cko::profile {
namespace {

// Length of the well-formed sequence starting at p (Unicode Table 3-7), or 0 when invalid.
std::size_t sequence_length(const unsigned char* p, const unsigned char* end) noexcept {
    const unsigned char c = p[0];
    if (c < 0x80) {
        return 1;
    }
    const auto avail = static_cast<std::size_t>(end - p);
    const auto cont = [&](std::size_t i) { return i < avail && (p[i] & 0xC0) == 0x80; };
    if (c >= 0xC2 && c <= 0xDF) {
        return cont(1) ? 2 : 0;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        if (avail < 2) {
            return 0;
        }
        const unsigned char lo = c == 0xE0 ? 0xA0 : 0x80;
        const unsigned char hi = c == 0xED ? 0x9F : 0xBF;
        return p[1] >= lo && p[1] <= hi && cont(2) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (avail < 2) {
            return 0;
        }
        const unsigned char lo = c == 0xF0 ? 0x90 : 0x80;
        const unsigned char hi = c == 0xF4 ? 0x8F : 0xBF;
        return p[1] >= lo && p[1] <= hi && cont(2) && cont(3) ? 4 : 0;
    }
    return 0;
}

bool all_ascii_8(const unsigned char* p) noexcept {
    std::uint64_t word = 0;
    std::memcpy(&word, p, sizeof word);
    return (word & 0x8080808080808080ULL) == 0;
}

}  // namespace

bool is_valid_utf8(std::string_view text) noexcept {
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    const auto* end = p + text.size();
    while (p < end) {
        if (end - p >= 8 && all_ascii_8(p)) {
            p += 8;
            continue;
        }
        const std::size_t n = sequence_length(p, end);
        if (n == 0) {
            return false;
        }
        p += n;
    }
    return true;
}

std::size_t repair_utf8(std::string_view text, std::string& out) {
    out.clear();
    out.reserve(text.size() + 8);
    std::size_t replaced = 0;
    const auto* begin = reinterpret_cast<const unsigned char*>(text.data());
    const auto* p = begin;
    const auto* end = p + text.size();
    while (p < end) {
        const std::size_t n = sequence_length(p, end);
        if (n == 0) {
            out += "\xEF\xBF\xBD";
            ++replaced;
            ++p;
            continue;
        }
        out.append(reinterpret_cast<const char*>(p), n);
        p += n;
    }
    return replaced;
}

std::size_t repair_utf8_in_place(std::string& text) {
    if (is_valid_utf8(text)) {
        return 0;
    }
    std::string out;
    const std::size_t replaced = repair_utf8(text, out);
    text = std::move(out);
    return replaced;
}

std::string_view Utf8Repairs::repaired(std::string_view text, std::string& scratch) {
    if (is_valid_utf8(text)) {
        return text;
    }
    bytes_ += repair_utf8(text, scratch);
    ++strings_;
    return scratch;
}

void Utf8Repairs::repair(std::string& text) {
    const std::size_t n = repair_utf8_in_place(text);
    if (n != 0) {
        bytes_ += n;
        ++strings_;
    }
}

std::string Utf8Repairs::note() const {
    if (strings_ == 0) {
        return {};
    }
    return std::to_string(strings_) + " string(s) held invalid UTF-8 (e.g. Latin-1 bytes); " +
           std::to_string(bytes_) + " byte(s) replaced with U+FFFD";
}

}  // namespace cko::profile
