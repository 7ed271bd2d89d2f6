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
    // A quote opens a string only where TOML has one: not inside a bare token. toml++ reads a
    // bare value (`+o='é`, `1."é"`, `+['é`) up to a value terminator (a blank, ',', ']', '}', '#',
    // a newline) and classifies every character on the way, quotes included; so a quote inside
    // one opens nothing here either, and what follows is outside a string. A bare key ends at '.'
    // and '=' too; a bare value does not. `value` says whether the line's key has had its '='.
    bool bare = false;   // inside a bare key or value token
    bool value = false;  // past the key's '=' (or inside an array)
    std::string nest;    // open '[' (array), '{' (inline table), 'h' (table header)
    const auto structure = [&](char c) {  // a character outside strings, comments and blanks
        const bool in_array = !nest.empty() && nest.back() == '[';
        if (bare && value) {
            if (c == ',' || c == ']' || c == '}') {
                bare = false;  // a value terminator, then read as structure below
            } else {
                return;  // part of the bare value ('=', '.', '[', '{', quotes, ...)
            }
        }
        if (bare && !value && (c == '.' || c == '=' || c == ']')) {
            bare = false;  // a bare key ends
        }
        if (bare) {
            return;
        }
        switch (c) {
        case '=':
            if (value) {
                bare = true;  // `x = = ...`: toml++ reads on as a value
            }
            value = true;
            break;
        case '[':
            if (!value && nest.empty()) {
                nest.push_back('h');  // a table header: keys inside
            } else if (!value && nest.back() == 'h') {
                nest.push_back('h');  // [[array of tables]]
            } else {
                nest.push_back('[');
                value = true;
            }
            break;
        case '{':
            nest.push_back('{');
            value = false;  // a key first
            break;
        case ']':
        case '}':
            if (!nest.empty()) {
                nest.pop_back();
            }
            value = !nest.empty() && nest.back() != 'h' ? nest.back() == '[' : value;
            break;
        case ',':
            value = in_array;  // the next array element, or the next key of an inline table
            break;
        case '.':
            break;  // a dotted key's dot (a value's is inside its bare token)
        default:
            bare = true;
        }
    };
    const auto starts = [&](std::size_t i, std::string_view s) {
        return text.substr(i, s.size()) == s;
    };
    // A multi-line string's closing delimiter at i may come after up to two more quotes of the
    // string (`""""` is a `"` and the delimiter): the index of its last quote.
    const auto closing_end = [&](std::size_t i, char quote) {
        std::size_t end = i + 2;
        for (int extra = 0; extra < 2 && end + 1 < text.size() && text[end + 1] == quote; ++extra) {
            ++end;
        }
        return end;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            ++line;
            line_start = i + 1;
            if (state == State::normal || state == State::comment || state == State::basic ||
                state == State::literal) {
                bare = false;
                if (nest.empty() || nest.back() == 'h') {
                    nest.clear();
                    value = false;  // a new line's key
                }
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
            } else if (!bare && starts(i, "\"\"\"")) {
                state = State::multi_basic;
                i += 2;
            } else if (!bare && starts(i, "'''")) {
                state = State::multi_literal;
                i += 2;
            } else if (!bare && c == '"') {
                state = State::basic;
            } else if (!bare && c == '\'') {
                state = State::literal;
            } else if (static_cast<unsigned char>(c) >= 0x80) {
                refuse(i, "is outside a string or comment; TOML allows only ASCII there",
                       "quote the text (\"...\") or move it into a # comment");
            }
            if (c != ' ' && c != '\t' && c != '\r' && c != '#' && state == State::normal &&
                static_cast<unsigned char>(c) < 0x80) {
                structure(c);
            } else if ((c == ' ' || c == '\t' || c == '\r') && state == State::normal) {
                bare = false;  // a blank ends a bare token
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
            } else if (state == State::multi_basic && starts(i, "\"\"\"")) {
                state = State::normal;
                i = closing_end(i, '"');
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
                i = closing_end(i, '\'');
            }
            break;
        case State::comment:
            break;
        }
    }
}

}  // namespace cko::eval
