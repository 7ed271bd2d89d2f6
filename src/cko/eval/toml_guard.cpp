// A small TOML lexer that knows only strings and comments, to find non-ASCII bytes outside them.
#include "cko/eval/toml_guard.hpp"

#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <cstdint>

namespace cko::eval {
namespace {

// The code point of the UTF-8 sequence at text[i] (best effort: invalid sequences give the byte).
std::uint32_t code_point_at(std::string_view text, std::size_t i) {
    const auto b = [&](std::size_t k) {
        return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u;
    };
    const unsigned c = b(0);
    if (c >= 0xF0 && (b(1) & 0xC0) == 0x80 && (b(2) & 0xC0) == 0x80 && (b(3) & 0xC0) == 0x80) {
        return ((c & 0x07u) << 18) | ((b(1) & 0x3Fu) << 12) | ((b(2) & 0x3Fu) << 6) |
               (b(3) & 0x3Fu);
    }
    if (c >= 0xE0 && (b(1) & 0xC0) == 0x80 && (b(2) & 0xC0) == 0x80) {
        return ((c & 0x0Fu) << 12) | ((b(1) & 0x3Fu) << 6) | (b(2) & 0x3Fu);
    }
    if (c >= 0xC0 && (b(1) & 0xC0) == 0x80) {
        return ((c & 0x1Fu) << 6) | (b(1) & 0x3Fu);
    }
    return c;
}

}  // namespace

void refuse_non_ascii_outside_strings(std::string_view text,
                                      const std::filesystem::path& spec_path) {
    enum class State { normal, comment, basic, literal, multi_basic, multi_literal };
    State state = State::normal;
    std::size_t line = 1;
    std::size_t line_start = 0;
    const auto starts = [&](std::size_t i, std::string_view s) {
        return text.substr(i, s.size()) == s;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
            line_start = i + 1;
            if (state == State::comment || state == State::basic || state == State::literal) {
                state = State::normal;  // single-line forms end at the line (toml++ reports that)
            }
            continue;
        }
        switch (state) {
        case State::normal:
            if (c == '#') {
                state = State::comment;
            } else if (starts(i, "\"\"\"")) {
                state = State::multi_basic;
                i += 2;
            } else if (starts(i, "'''")) {
                state = State::multi_literal;
                i += 2;
            } else if (c == '"') {
                state = State::basic;
            } else if (c == '\'') {
                state = State::literal;
            } else if (static_cast<unsigned char>(c) >= 0x80) {
                const std::string where =
                    fmt::format("{}:{}:{}", spec_path.string(), line, i - line_start + 1);
                throw Error(
                    ErrorCode::invalid_spec,
                    fmt::format("{}: the character U+{:04X} is outside a string or comment; "
                                "TOML allows only ASCII there",
                                where, code_point_at(text, i)),
                    {{"field", where},
                     {"fix", "quote the text (\"...\") or move it into a # comment"}});
            }
            break;
        case State::basic:
        case State::multi_basic:
            if (c == '\\') {
                ++i;  // an escape: the next byte is never a closing quote
            } else if (state == State::basic && c == '"') {
                state = State::normal;
            } else if (state == State::multi_basic && starts(i, "\"\"\"")) {
                state = State::normal;
                i += 2;
            }
            break;
        case State::literal:
            if (c == '\'') {
                state = State::normal;
            }
            break;
        case State::multi_literal:
            if (starts(i, "'''")) {
                state = State::normal;
                i += 2;
            }
            break;
        case State::comment:
            break;
        }
    }
}

}  // namespace cko::eval
