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
    // Refuses the character at `at`, named by line and column (an escape in a multi-line string
    // may look past newlines, so the line is counted up to `at`).
    const auto refuse = [&](std::size_t at, std::string_view what, std::string_view fix) {
        std::size_t l = line;
        std::size_t start = line_start;
        for (std::size_t k = line_start; k < at; ++k) {
            if (text[k] == '\n') {
                ++l;
                start = k + 1;
            }
        }
        const std::string where = fmt::format("{}:{}:{}", spec_path.string(), l, at - start + 1);
        throw Error(
            ErrorCode::invalid_spec,
            fmt::format("{}: the character U+{:04X} {}", where, code_point_at(text, at), what),
            {{"field", where}, {"fix", std::string(fix)}});
    };
    // A quote opens a string only where TOML has one: a value (after '=', '[', ',' or '{', or at
    // the start of a line inside an array) or a quoted key (at the start of a line, after '.', '['
    // or '{' / ','). Elsewhere (`x = +'é'`) toml++ reads the quote as part of a bare value and
    // classifies what follows, so what follows is outside a string here too.
    char before = '\0';  // the last non-blank character of this line outside strings, or '\0'
    const auto string_may_start = [&] {
        return before == '\0' || before == '=' || before == '[' || before == ',' || before == '{' ||
               before == '.';
    };
    const auto starts = [&](std::size_t i, std::string_view s) {
        return text.substr(i, s.size()) == s;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
            line_start = i + 1;
            if (state == State::normal || state == State::comment || state == State::basic ||
                state == State::literal) {
                before = '\0';
            }
            if (state == State::comment || state == State::basic || state == State::literal) {
                state = State::normal;  // single-line forms end at the line (toml++ reports that)
            }
            continue;
        }
        switch (state) {
        case State::normal:
            if (c == '#') {
                state = State::comment;
            } else if (string_may_start() && starts(i, "\"\"\"")) {
                state = State::multi_basic;
                i += 2;
            } else if (string_may_start() && starts(i, "'''")) {
                state = State::multi_literal;
                i += 2;
            } else if (string_may_start() && c == '"') {
                state = State::basic;
            } else if (string_may_start() && c == '\'') {
                state = State::literal;
            } else if (static_cast<unsigned char>(c) >= 0x80) {
                refuse(i, "is outside a string or comment; TOML allows only ASCII there",
                       "quote the text (\"...\") or move it into a # comment");
            }
            if (c != ' ' && c != '\t' && c != '\r' && state == State::normal) {
                before = c;
            }
            break;
        case State::basic:
        case State::multi_basic:
            if (c == '\\') {
                // An escape. toml++ classifies what follows a backslash (and, after a line-ending
                // backslash, every blank up to the next character) as whitespace or not: with a
                // non-ASCII character there it reaches the same table holes. No TOML escape is
                // non-ASCII, so refuse it by name.
                std::size_t j = i + 1;
                if (state == State::multi_basic) {
                    while (j < text.size() && (text[j] == ' ' || text[j] == '\t' ||
                                               text[j] == '\r' || text[j] == '\n')) {
                        ++j;
                    }
                }
                if (j < text.size() && static_cast<unsigned char>(text[j]) >= 0x80) {
                    refuse(j, "follows a backslash; no TOML escape has it",
                           "write \\\\ for a backslash, or \\uXXXX for the character");
                }
                ++i;  // the next byte is never a closing quote
            } else if (state == State::basic && c == '"') {
                state = State::normal;
                before = '"';
            } else if (state == State::multi_basic && starts(i, "\"\"\"")) {
                state = State::normal;
                before = '"';
                i += 2;
            }
            break;
        case State::literal:
            if (c == '\'') {
                state = State::normal;
                before = '\'';
            }
            break;
        case State::multi_literal:
            if (starts(i, "'''")) {
                state = State::normal;
                before = '\'';
                i += 2;
            }
            break;
        case State::comment:
            break;
        }
    }
}

}  // namespace cko::eval
