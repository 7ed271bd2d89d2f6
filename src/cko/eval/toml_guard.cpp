// A small TOML lexer that knows only strings and comments, to find non-ASCII bytes outside them.
#include "cko/eval/toml_guard.hpp"

#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <string>

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

// One pass over cko.toml's text that follows strings, comments and bare tokens as toml++ reads
// them, and refuses the first non-ASCII character outside a string or comment.
class AsciiScan {
public:
    AsciiScan(std::string_view text, const std::filesystem::path& spec_path)
        : text_(text), spec_path_(spec_path) {}

    void scan() {
        for (std::size_t i = 0; i < text_.size(); ++i) {
            if (text_[i] == '\n') {
                new_line(i);
                continue;
            }
            switch (state_) {
            case State::normal:
                i = read_normal(i);
                break;
            case State::basic:
            case State::multi_basic:
                i = read_basic(i);
                break;
            case State::literal:
                if (text_[i] == '\'') {
                    state_ = State::normal;
                }
                break;
            case State::multi_literal:
                if (starts(i, "'''")) {
                    state_ = State::normal;
                    i = closing_end(i, '\'');
                }
                break;
            case State::comment:
                break;
            }
        }
    }

private:
    enum class State { normal, comment, basic, literal, multi_basic, multi_literal };

    // Refuses the character at `at`, named by line and column (an escape in a multi-line string
    // may look past newlines, so the line is counted up to `at`).
    [[noreturn]] void refuse(std::size_t at, std::string_view what, std::string_view fix) const {
        std::size_t l = line_;
        std::size_t start = line_start_;
        for (std::size_t k = line_start_; k < at; ++k) {
            if (text_[k] == '\n') {
                ++l;
                start = k + 1;
            }
        }
        const std::string where = fmt::format("{}:{}:{}", spec_path_.string(), l, at - start + 1);
        throw Error(
            ErrorCode::invalid_spec,
            fmt::format("{}: the character U+{:04X} {}", where, code_point_at(text_, at), what),
            {{"field", where}, {"fix", std::string(fix)}});
    }

    // Whether the text at i starts with s.
    [[nodiscard]] bool starts(std::size_t i, std::string_view s) const {
        return text_.substr(i, s.size()) == s;
    }

    // A multi-line string's closing delimiter at i may come after up to two more quotes of the
    // string (`""""` is a `"` and the delimiter): the index of its last quote.
    [[nodiscard]] std::size_t closing_end(std::size_t i, char quote) const {
        std::size_t end = i + 2;
        for (int extra = 0; extra < 2 && end + 1 < text_.size() && text_[end + 1] == quote;
             ++extra) {
            ++end;
        }
        return end;
    }

    // The newline at i: a line's bare token and single-line forms end there, and outside an
    // array or inline table the next line starts with a key.
    void new_line(std::size_t i) {
        ++line_;
        line_start_ = i + 1;
        if (state_ == State::normal || state_ == State::comment || state_ == State::basic ||
            state_ == State::literal) {
            bare_ = false;
            if (nest_.empty() || nest_.back() == 'h') {
                nest_.clear();
                value_ = false;  // a new line's key
            }
        }
        if (state_ == State::comment || state_ == State::basic || state_ == State::literal) {
            state_ = State::normal;  // single-line forms end at the line (toml++ reports that)
        }
    }

    // The character at i outside strings and comments: opens a string or a comment, is refused if
    // non-ASCII, or is structure. Returns the index of the last byte it read.
    std::size_t read_normal(std::size_t i) {
        const char c = text_[i];
        if (c == '#') {
            state_ = State::comment;
        } else if (!bare_ && starts(i, "\"\"\"")) {
            state_ = State::multi_basic;
            i += 2;
        } else if (!bare_ && starts(i, "'''")) {
            state_ = State::multi_literal;
            i += 2;
        } else if (!bare_ && c == '"') {
            state_ = State::basic;
        } else if (!bare_ && c == '\'') {
            state_ = State::literal;
        } else if (static_cast<unsigned char>(c) >= 0x80) {
            refuse(i, "is outside a string or comment; TOML allows only ASCII there",
                   "quote the text (\"...\") or move it into a # comment");
        }
        if (c != ' ' && c != '\t' && c != '\r' && c != '#' && state_ == State::normal &&
            static_cast<unsigned char>(c) < 0x80) {
            structure(c);
        } else if ((c == ' ' || c == '\t' || c == '\r') && state_ == State::normal) {
            bare_ = false;  // a blank ends a bare token
        }
        return i;
    }

    // The character at i inside a basic (or multi-line basic) string: an escape, whose next
    // character is refused if non-ASCII, or the string's end. Returns the index of the last byte
    // it read.
    std::size_t read_basic(std::size_t i) {
        const char c = text_[i];
        if (c == '\\') {
            // An escape. toml++ classifies what follows a backslash (and, after a line-ending
            // backslash, every blank up to the next character) as whitespace or not: with a
            // non-ASCII character there it reaches the same table holes. No TOML escape is
            // non-ASCII, so refuse it by name.
            std::size_t j = i + 1;
            if (state_ == State::multi_basic) {
                while (j < text_.size() && (text_[j] == ' ' || text_[j] == '\t' ||
                                            text_[j] == '\r' || text_[j] == '\n')) {
                    ++j;
                }
            }
            if (j < text_.size() && static_cast<unsigned char>(text_[j]) >= 0x80) {
                refuse(j, "follows a backslash; no TOML escape has it",
                       "write \\\\ for a backslash, or \\uXXXX for the character");
            }
            ++i;  // the next byte is never a closing quote
        } else if (state_ == State::basic && c == '"') {
            state_ = State::normal;
        } else if (state_ == State::multi_basic && starts(i, "\"\"\"")) {
            state_ = State::normal;
            i = closing_end(i, '"');
        }
        return i;
    }

    // An ASCII character outside strings, comments and blanks: where bare tokens start and end,
    // and whether the line is past its key's '='.
    void structure(char c) {
        const bool in_array = !nest_.empty() && nest_.back() == '[';
        if (bare_ && value_) {
            if (c == ',' || c == ']' || c == '}') {
                bare_ = false;  // a value terminator, then read as structure below
            } else {
                return;  // part of the bare value ('=', '.', '[', '{', quotes, ...)
            }
        }
        if (bare_ && !value_ && (c == '.' || c == '=' || c == ']')) {
            bare_ = false;  // a bare key ends
        }
        if (bare_) {
            return;
        }
        switch (c) {
        case '=':
            if (value_) {
                bare_ = true;  // `x = = ...`: toml++ reads on as a value
            }
            value_ = true;
            break;
        case '[':
            if (!value_ && nest_.empty()) {
                nest_.push_back('h');  // a table header: keys inside
            } else if (!value_ && nest_.back() == 'h') {
                nest_.push_back('h');  // [[array of tables]]
            } else {
                nest_.push_back('[');
                value_ = true;
            }
            break;
        case '{':
            nest_.push_back('{');
            value_ = false;  // a key first
            break;
        case ']':
        case '}':
            if (!nest_.empty()) {
                nest_.pop_back();
            }
            value_ = !nest_.empty() && nest_.back() != 'h' ? nest_.back() == '[' : value_;
            break;
        case ',':
            value_ = in_array;  // the next array element, or the next key of an inline table
            break;
        case '.':
            break;  // a dotted key's dot (a value's is inside its bare token)
        default:
            bare_ = true;
        }
    }

    std::string_view text_;
    const std::filesystem::path& spec_path_;
    State state_ = State::normal;
    std::size_t line_ = 1;
    std::size_t line_start_ = 0;
    // A quote opens a string only where TOML has one: not inside a bare token. toml++ reads a
    // bare value (`+o='é`, `1."é"`, `+['é`) up to a value terminator (a blank, ',', ']', '}', '#',
    // a newline) and classifies every character on the way, quotes included; so a quote inside
    // one opens nothing here either, and what follows is outside a string. A bare key ends at '.'
    // and '=' too; a bare value does not. `value_` says whether the line's key has had its '='.
    bool bare_ = false;   // inside a bare key or value token
    bool value_ = false;  // past the key's '=' (or inside an array)
    std::string nest_;    // open '[' (array), '{' (inline table), 'h' (table header)
};

}  // namespace

void refuse_non_ascii_outside_strings(std::string_view text,
                                      const std::filesystem::path& spec_path) {
    AsciiScan(text, spec_path).scan();
}

}  // namespace cko::eval
