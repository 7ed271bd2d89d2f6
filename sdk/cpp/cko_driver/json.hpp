// Minimal JSON for cko drivers: a strict parser for the request and a writer for the result (no
// dependencies).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cko_driver {
namespace json {

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Member;

struct Value {
    enum class Kind { null, boolean, number, string, array, object };
    Kind kind = Kind::null;
    bool boolean = false;
    double number = 0.0;
    std::string number_text;  // the literal, so that integers beyond 2^53 (seeds) stay exact
    std::string string;
    std::vector<Value> array;
    // Insertion order; keys are unique. A vector of a declared-only struct, not of
    // std::pair<std::string, Value>: the pair would need Value complete here, which clang with
    // libstdc++ enforces (GCC lets it pass).
    std::vector<Member> object;

    const Value* find(const std::string& key) const;
    bool is_integer() const {
        return kind == Kind::number && number_text.find_first_of(".eE") == std::string::npos;
    }
};

struct Member {
    std::string first;  // the key
    Value second;       // the value
};

inline const Value* Value::find(const std::string& key) const {
    for (const auto& kv : object)
        if (kv.first == key)
            return &kv.second;
    return nullptr;
}

namespace detail {

class Parser {
public:
    explicit Parser(const std::string& text) : s_(text) {}

    Value parse_document() {
        Value v = parse_value(0);
        skip_ws();
        if (i_ != s_.size())
            fail("trailing characters");
        return v;
    }

private:
    const std::string& s_;
    size_t i_ = 0;

    [[noreturn]] void fail(const std::string& what) const {
        throw Error("JSON " + what + " at byte " + std::to_string(i_));
    }
    void skip_ws() {
        while (i_ < s_.size() &&
               (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
            ++i_;
    }
    bool consume(char c) {
        skip_ws();
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!consume(c))
            fail(std::string("expected '") + c + "'");
    }
    bool literal(const char* word) {
        size_t n = std::char_traits<char>::length(word);
        if (s_.compare(i_, n, word) != 0)
            return false;
        i_ += n;
        return true;
    }

    Value parse_value(int depth) {
        if (depth > 64)
            fail("nesting too deep");
        skip_ws();
        if (i_ >= s_.size())
            fail("unexpected end");
        Value v;
        char c = s_[i_];
        if (c == '{') {
            ++i_;
            v.kind = Value::Kind::object;
            if (consume('}'))
                return v;
            do {
                skip_ws();
                if (i_ >= s_.size() || s_[i_] != '"')
                    fail("expected a key");
                std::string key = parse_string();
                if (v.find(key))
                    fail("duplicate key \"" + key + "\"");
                expect(':');
                v.object.push_back(Member{std::move(key), parse_value(depth + 1)});
            } while (consume(','));
            expect('}');
        } else if (c == '[') {
            ++i_;
            v.kind = Value::Kind::array;
            if (consume(']'))
                return v;
            do
                v.array.push_back(parse_value(depth + 1));
            while (consume(','));
            expect(']');
        } else if (c == '"') {
            v.kind = Value::Kind::string;
            v.string = parse_string();
        } else if (literal("true")) {
            v.kind = Value::Kind::boolean;
            v.boolean = true;
        } else if (literal("false")) {
            v.kind = Value::Kind::boolean;
        } else if (literal("null")) {
            v.kind = Value::Kind::null;
        } else {
            v.kind = Value::Kind::number;
            parse_number(v);
        }
        return v;
    }

    void parse_number(Value& v) {
        size_t start = i_;
        auto digits = [&] {
            size_t d = i_;
            while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9')
                ++i_;
            if (i_ == d)
                fail("bad number");
        };
        if (i_ < s_.size() && s_[i_] == '-')
            ++i_;
        if (i_ < s_.size() && s_[i_] == '0')
            ++i_;
        else
            digits();
        if (i_ < s_.size() && s_[i_] == '.') {
            ++i_;
            digits();
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
            ++i_;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-'))
                ++i_;
            digits();
        }
        v.number_text = s_.substr(start, i_ - start);
        v.number = std::strtod(v.number_text.c_str(), nullptr);
        if (!std::isfinite(v.number))
            fail("number out of range");
    }

    unsigned hex4() {
        if (i_ + 4 > s_.size())
            fail("bad \\u escape");
        unsigned code = 0;
        for (int k = 0; k < 4; ++k) {
            char h = s_[i_++];
            code <<= 4;
            if (h >= '0' && h <= '9')
                code |= unsigned(h - '0');
            else if (h >= 'a' && h <= 'f')
                code |= unsigned(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F')
                code |= unsigned(h - 'A' + 10);
            else
                fail("bad \\u escape");
        }
        return code;
    }

    static void append_utf8(std::string& out, unsigned cp) {
        if (cp < 0x80) {
            out += char(cp);
        } else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xF0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3F));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        }
    }

    std::string parse_string() {
        ++i_;  // opening quote
        std::string out;
        while (true) {
            if (i_ >= s_.size())
                fail("unterminated string");
            char c = s_[i_++];
            if (c == '"')
                return out;
            if (static_cast<unsigned char>(c) < 0x20)
                fail("control character in string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i_ >= s_.size())
                fail("unterminated string");
            char e = s_[i_++];
            switch (e) {
            case '"':
                out += '"';
                break;
            case '\\':
                out += '\\';
                break;
            case '/':
                out += '/';
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                unsigned cp = hex4();
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    if (!literal("\\u"))
                        fail("lone surrogate");
                    unsigned lo = hex4();
                    if (lo < 0xDC00 || lo > 0xDFFF)
                        fail("bad surrogate pair");
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                    fail("lone surrogate");
                }
                append_utf8(out, cp);
                break;
            }
            default:
                fail("bad escape");
            }
        }
    }
};

}  // namespace detail

// Parses one JSON document; throws json::Error (duplicate keys, NaN/Infinity and trailing bytes
// rejected).
inline Value parse(const std::string& text) {
    return detail::Parser(text).parse_document();
}

// Appends `s` as a JSON string literal.
inline void write_string(std::string& out, const std::string& s) {
    out += '"';
    for (char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    out += '"';
}

// Appends a finite number in its shortest round-trip form; throws for NaN and infinities.
inline void write_number(std::string& out, double x) {
    if (!std::isfinite(x))
        throw Error("cannot write a non-finite number as JSON");
    char buf[40];
    for (int precision = 15; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, x);
        if (std::strtod(buf, nullptr) == x)
            break;
    }
    out += buf;
}

}  // namespace json
}  // namespace cko_driver
