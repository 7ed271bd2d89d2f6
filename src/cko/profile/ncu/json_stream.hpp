// The NCU document's JSON printer: a plain buffer flushed a megabyte at a time
// (ncu_report_json.cpp writes `cko/ncu-report-v3` through it).
#pragma once

#include "cko/profile/ncu/byte_scan.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <ostream>
#include <string_view>

namespace cko::profile::ncu {

// Why not nlohmann: a DOM of every metric of every launch costs ~700 bytes a metric, 10x a 100 MB
// export (bench/ncu_verb_bench.cpp). Strings here are valid UTF-8 already (the parser repairs the
// text first), so escaping is only quotes, backslashes and control characters. The buffer is a
// plain array, not a std::string: a raw page's 13.7 million metrics per 100 MB are each a few
// fixed-size copies into it, with one room check per row.
class JsonStream {
public:
    explicit JsonStream(std::ostream& out)
        : out_(&out), buffer_(new char[kFlushBytes + kSlack]), capacity_(kFlushBytes + kSlack) {}
    // A stream that holds what is written, never flushing, until write_to() sends it on and
    // clear() starts over: a piece of the document written on one thread and sent on by it in
    // its turn (ncu_report_json.cpp). The buffer grows as needed and is kept across clear().
    struct Held {};
    explicit JsonStream(Held /*tag*/)
        : buffer_(new char[kFlushBytes + kSlack]), capacity_(kFlushBytes + kSlack) {}
    ~JsonStream() { flush(); }
    JsonStream(const JsonStream&) = delete;
    JsonStream& operator=(const JsonStream&) = delete;

    // Room for `bytes` more; the caller then writes through tail() and commit().
    char* reserve(std::size_t bytes) {
        if (size_ + bytes > capacity_) {
            make_room(bytes);
        }
        return buffer_.get() + size_;
    }
    void commit(char* end) {
        size_ = static_cast<std::size_t>(end - buffer_.get());
        maybe_flush();
    }

    void raw(std::string_view text) {
        char* out = reserve(text.size());
        commit(copy(out, text));
    }
    void put(char c) {
        char* out = reserve(1);
        *out = c;
        commit(out + 1);
    }
    // A JSON string: quotes, backslashes and control characters escaped (\n, \r, \t, else
    // \u00XX).
    void string(std::string_view text) {
        if (needs_escape(text)) {
            escaped(text);
        } else {
            quoted(text);
        }
    }
    // A string as nlohmann's dump() writes it (\b and \f as such): for members that v2 printed
    // from DOMs (scope, rules, extras), so they keep their bytes.
    void dom_string(std::string_view text) {
        if (needs_escape(text)) {
            raw(nlohmann::json(std::string(text)).dump());
        } else {
            quoted(text);  // not string(): the text was just checked (rule descriptions are long)
        }
    }
    [[nodiscard]] static bool needs_escape(std::string_view text) noexcept {
        return byte_scan::find_json_special(text.data(), text.data() + text.size()) !=
               text.data() + text.size();
    }
    // A double as fmt's shortest form (the facts' spelling since v2), null when not finite. An
    // integral value of magnitude below 1e15 (counts, bytes, nanoseconds) is its digits in fmt's
    // form too (fixed notation up to 1e16, and such a double is the integer exactly), written
    // without the float formatting; so is a short decimal (short_decimal).
    void number(double v) {
        if (!std::isfinite(v)) {
            raw("null");  // as nlohmann writes non-finite numbers
            return;
        }
        char* out = reserve(kNumberBytes);
        if (v != 0 && std::fabs(v) < 1e15 && v == std::trunc(v)) {  // not 0: fmt keeps "-0"
            commit(std::to_chars(out, out + kNumberBytes, static_cast<std::int64_t>(v)).ptr);
            return;
        }
        if (char* end = short_decimal(v, out)) {
            commit(end);
            return;
        }
        commit(fmt::format_to(out, FMT_COMPILE("{}"), v));
    }
    // Writes v at `out` as fmt's "{}" would and returns the end, when v is the double of a decimal
    // of at most 15 significant digits in fixed notation ("52.88", "-0.0123", an export's cells),
    // |v| in [1e-4, 1e15); otherwise writes nothing and returns nullptr. At most 20 bytes.
    static char* short_decimal(double v, char* out) noexcept;
    // A double as nlohmann's dump() writes it (members that came from DOMs in v2: scope, rules,
    // roofline): its own Grisu2 to_chars ("100.0", "3.88e+12").
    void dom_number(double v) {
        if (!std::isfinite(v)) {
            raw("null");
            return;
        }
        char* out = reserve(kNumberBytes);
        commit(nlohmann::detail::to_chars(out, out + kNumberBytes, v));
    }
    template <typename Int>
    void integer(Int v) {
        char* out = reserve(kNumberBytes);
        commit(std::to_chars(out, out + kNumberBytes, v).ptr);
    }
    void optional_integer(const std::optional<std::int64_t>& v) {
        if (v) {
            integer(*v);
        } else {
            raw("null");
        }
    }
    void dim3(const std::optional<std::array<std::int64_t, 3>>& d) {
        if (!d) {
            raw("null");
            return;
        }
        for (std::size_t i = 0; i < 3; ++i) {
            put(i == 0 ? '[' : ',');
            integer((*d)[i]);
        }
        put(']');
    }
    void key(std::string_view name) {
        string(name);
        put(':');
    }
    // A DOM value, byte for byte as value.dump() would print it, without the string dump()
    // builds: objects, arrays, numbers and strings that need no escape are written here,
    // anything else goes through nlohmann.
    void dom(const nlohmann::json& value);
    // A held stream: its bytes so far to `out` (then clear() it); any other: to its own stream.
    void flush() {
        if (out_ != nullptr) {
            write_to(*out_);
        }
    }
    void write_to(std::ostream& out) {
        out.write(buffer_.get(), static_cast<std::streamsize>(size_));
        size_ = 0;
    }
    void clear() noexcept { size_ = 0; }

private:
    static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
    static constexpr std::size_t kSlack = 64;  // room past a write for fixed-size copies
    static constexpr std::size_t kNumberBytes = 40;
    void maybe_flush() {
        if (size_ >= kFlushBytes) {  // a held stream's flush() keeps its bytes
            flush();
        }
    }
    // Flushed, or (held, or a write larger than the buffer) a larger buffer that keeps the bytes.
    void make_room(std::size_t bytes) {
        if (out_ != nullptr) {
            flush();
        }
        if (size_ + bytes > capacity_) {
            const std::size_t capacity = std::max(2 * capacity_, size_ + bytes + kSlack);
            std::unique_ptr<char[]> bigger(new char[capacity]);
            std::memcpy(bigger.get(), buffer_.get(), size_);
            buffer_ = std::move(bigger);
            capacity_ = capacity;
        }
    }
    void escaped(std::string_view text);
    // `text` in quotes, as it stands: for a text that needs no escape.
    void quoted(std::string_view text) {
        char* out = reserve(text.size() + 2);
        *out++ = '"';
        out = copy(out, text);
        *out++ = '"';
        commit(out);
    }
    // text's bytes at out, and the end of them. An empty view copies nothing: its data() may be
    // null (a column the export lacks), and memcpy's source must not be, even for no bytes.
    static char* copy(char* out, std::string_view text) noexcept {
        if (!text.empty()) {
            std::memcpy(out, text.data(), text.size());
        }
        return out + text.size();
    }
    std::ostream* out_ = nullptr;  // none: held
    std::unique_ptr<char[]> buffer_;
    std::size_t capacity_;
    std::size_t size_ = 0;
};

}  // namespace cko::profile::ncu
