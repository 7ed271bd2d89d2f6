// Word-at-a-time byte searches (SWAR) for the NCU tokenizer, text check and JSON printer.
#pragma once

// Why hand-written: an NCU raw page is mostly cells of 3 to 12 bytes ("2,230","52.88"); a memchr
// call per cell costs more than the cell (bench/ncu_bench.cpp, BM_TokenizeNcuRaw). Eight bytes are
// tested at once with plain 64-bit arithmetic (SSE2, part of every x86-64, where the compiler has
// it), so this needs no CPU dispatch.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cko::profile::ncu::byte_scan {

inline constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
inline constexpr std::uint64_t kHigh = 0x8080808080808080ULL;

// Eight bytes, the byte at the lowest address in the lowest bits.
inline std::uint64_t load(const char* p) noexcept {
    std::uint64_t w = 0;
    std::memcpy(&w, p, 8);
    if constexpr (std::endian::native == std::endian::big) {
        w = __builtin_bswap64(w);
    }
    return w;
}

// The high bit of each byte of `w` equal to `c`. The lowest flagged byte is exact; bytes above a
// match may be flagged too (a borrow), so only the lowest one is ever used.
inline std::uint64_t bytes_equal(std::uint64_t w, unsigned char c) noexcept {
    const std::uint64_t x = w ^ (kOnes * c);
    return (x - kOnes) & ~x & kHigh;
}

// The high bit of each byte of `w` below `n` (n <= 0x80); the lowest flagged byte is exact.
inline std::uint64_t bytes_below(std::uint64_t w, unsigned char n) noexcept {
    return (w - kOnes * n) & ~w & kHigh;
}

// Index of the lowest flagged byte of a non-zero mask.
inline std::size_t first_flagged(std::uint64_t mask) noexcept {
    return static_cast<std::size_t>(std::countr_zero(mask)) / 8;
}

// The first byte in [p, end) that a JSON string cannot hold as is ('"', '\\', a control
// character), or end.
inline const char* find_json_special(const char* p, const char* end) noexcept {
    for (; end - p >= 8; p += 8) {
        const std::uint64_t w = load(p);
        if (const std::uint64_t m =
                bytes_equal(w, '"') | bytes_equal(w, '\\') | bytes_below(w, 0x20);
            m != 0) {
            return p + first_flagged(m);
        }
    }
    for (; p < end; ++p) {
        const auto c = static_cast<unsigned char>(*p);
        if (c == '"' || c == '\\' || c < 0x20) {
            return p;
        }
    }
    return end;
}

// Whether the first n (<= 16) of the 16 readable bytes at p hold a byte a JSON string cannot hold
// as is: find_json_special for a short value inside a larger buffer, without its byte loop (a
// raw page's values are 1 to 8 bytes; the loop was half of writing a metric). Word by word: the
// lowest flagged byte of a word is exact, so "one below n" is exact too.
inline bool json_special_in_16_swar(const char* p, std::size_t n) noexcept {
    for (std::size_t at = 0; at < n; at += 8) {
        const std::uint64_t w = load(p + at);
        const std::uint64_t m = bytes_equal(w, '"') | bytes_equal(w, '\\') | bytes_below(w, 0x20);
        if (m != 0) {
            return at + first_flagged(m) < n;
        }
    }
    return false;
}

inline bool json_special_in_16(const char* p, std::size_t n) noexcept {
#if defined(__SSE2__)
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i control =
        _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x1f)), _mm_set1_epi8(0x1f));
    const __m128i special =
        _mm_or_si128(control, _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
                                           _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'))));
    const auto mask = static_cast<std::uint32_t>(_mm_movemask_epi8(special));
    return (mask & ((std::uint32_t{1} << n) - 1)) != 0;
#else
    return json_special_in_16_swar(p, n);
#endif
}

// Copies the n bytes at p to out while none is a backslash or a control character (below 0x20):
// true when all were copied, false at the first such byte (out then holds a partial copy). A raw
// page's metric cells copied as a JSON array's inside: quotes are the cells' own, so these are the
// only bytes that would need an escape. Reads only [p, p + n); writes only [out, out + n).
inline bool copy_json_plain_swar(const char* p, std::size_t n, char* out) noexcept {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const std::uint64_t w = load(p + i);
        if ((bytes_equal(w, '\\') | bytes_below(w, 0x20)) != 0) {
            return false;
        }
        std::memcpy(out + i, p + i, 8);
    }
    for (; i < n; ++i) {
        const auto c = static_cast<unsigned char>(p[i]);
        if (c == '\\' || c < 0x20) {
            return false;
        }
        out[i] = p[i];
    }
    return true;
}

inline bool copy_json_plain(const char* p, std::size_t n, char* out) noexcept {
#if defined(__SSE2__)
    if (n < 16) {
        return copy_json_plain_swar(p, n, out);
    }
    const auto plain = [](__m128i x) {
        const __m128i control =
            _mm_cmpeq_epi8(_mm_max_epu8(x, _mm_set1_epi8(0x1f)), _mm_set1_epi8(0x1f));
        return _mm_movemask_epi8(_mm_or_si128(control, _mm_cmpeq_epi8(x, _mm_set1_epi8('\\')))) ==
               0;
    };
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
        if (!plain(x)) {
            return false;
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), x);
    }
    if (i < n) {  // the last 16 bytes, overlapping what was copied
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + n - 16));
        if (!plain(x)) {
            return false;
        }
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + n - 16), x);
    }
    return true;
#else
    return copy_json_plain_swar(p, n, out);
#endif
}

// The same with AVX-512BW, 64 bytes at a time (byte_scan_avx512.cpp): on the H100 hosts 100 MB of
// 4 KB spans took 11-13 ms against 16-19 ms 16 bytes at a time, nearly memcpy's 10.5-11.5 ms.
// Call only where avx512bw_available() (elsewhere it is copy_json_plain).
bool copy_json_plain_avx512(const char* p, std::size_t n, char* out) noexcept;
// skip_usual_blocks (below) with AVX-512BW (byte_scan_avx512.cpp: 8 mask operations a block
// against ~45 SSE2 ones). Call only where avx512bw_available().
std::size_t skip_usual_blocks_avx512(const char* p, std::size_t from, std::size_t size,
                                     bool high) noexcept;
// Whether this CPU runs AVX-512BW (and the OS keeps its registers); asked once per process.
bool avx512bw_available() noexcept;

// copy_json_plain with the widest check this CPU has.
inline bool copy_json_plain_widest(const char* p, std::size_t n, char* out) noexcept {
    return avx512bw_available() ? copy_json_plain_avx512(p, n, out) : copy_json_plain(p, n, out);
}

// Bit i set where byte i of `w` is `c` (exact for every byte).
inline std::uint64_t char_bits_of_word(std::uint64_t w, char c) noexcept {
    const std::uint64_t x = w ^ (kOnes * static_cast<unsigned char>(c));
    const std::uint64_t nonzero = ((x & ~kHigh) + ~kHigh) | x;  // high bit of each non-zero byte
    const std::uint64_t zero = ~nonzero & kHigh;
    return ((zero >> 7) * 0x0102040810204080ULL) >> 56;  // gathers the 8 high bits
}

// Bit i set where p[i] is `c`, for the 64 bytes at p, a word at a time.
inline std::uint64_t char_bits_swar(const char* p, char c) noexcept {
    std::uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) {
        bits |= char_bits_of_word(load(p + 8 * i), c) << (8 * i);
    }
    return bits;
}

inline std::uint64_t quote_bits_swar(const char* p) noexcept {
    return char_bits_swar(p, '"');
}

// Bit i set where p[i] is `c`, for the 64 bytes at p.
inline std::uint64_t char_bits(const char* p, char c) noexcept {
#if defined(__SSE2__)
    const __m128i want = _mm_set1_epi8(c);
    std::uint64_t bits = 0;
    for (int i = 0; i < 4; ++i) {
        const __m128i chunk = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
        const auto mask =
            static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(chunk, want)));
        bits |= std::uint64_t{mask} << (16 * i);
    }
    return bits;
#else
    return char_bits_swar(p, c);
#endif
}

inline std::uint64_t quote_bits(const char* p) noexcept {
    return char_bits(p, '"');
}

// The cells of a run of `"c","c",...` that start at p (p[0] is a cell's opening quote; the 66
// bytes at p are readable): bit i set where p[i] closes a cell that `","` follows, for every such
// cell before the first quote that is neither a cell's opening nor its closing one. A cell found
// here is exactly the one the tokenizer's cell-by-cell loop takes (the next quote after its
// opening one, a comma after it), and the next cell opens 2 bytes on. Stops before two separators
// 2 bytes apart (a cell that is just ",": `",","`, which the loop reads one quote at a time).
inline std::uint64_t plain_cell_ends(const char* p) noexcept {
    const std::uint64_t q = char_bits(p, '"');
    const std::uint64_t c = char_bits(p, ',');
    const std::uint64_t q64 = p[64] == '"' ? 1 : 0;
    const std::uint64_t q65 = p[65] == '"' ? 1 : 0;
    const std::uint64_t c64 = p[64] == ',' ? 1 : 0;
    // p[0] opens the run's first cell, so it ends none (a cell `","` would look like it).
    std::uint64_t ends =
        q & ((c >> 1) | (c64 << 63)) & ((q >> 2) | (q64 << 62) | (q65 << 63)) & ~std::uint64_t{1};
    // Every quote before the first unexplained one is an opening (p[0], or 2 after an end) or an
    // end; the ends before it are the cells'.
    const std::uint64_t unexplained = q & ~(std::uint64_t{1} | ends | (ends << 2));
    if (unexplained != 0) {
        ends &= (unexplained & -unexplained) - 1;
    }
    if (const std::uint64_t overlap = ends & (ends >> 2); overlap != 0) {
        ends &= (overlap & -overlap) - 1;
    }
    return ends;
}

// Bit i set where p[i], of the 64 bytes at p, is a control byte no text export holds (below 0x20
// and not tab, LF, CR, FF or ESC) or, when `high` is set, a byte above 0x7f: the bytes a text
// check must look at. Lines end in LF, so the plain "any byte below 0x20" test would send every
// block with a line break to the slow path.
inline std::uint64_t unusual_text_bits(const char* p, bool high) noexcept {
#if defined(__SSE2__)
    const __m128i space = _mm_set1_epi8(0x20);
    const __m128i minus_one = _mm_set1_epi8(-1);
    std::uint64_t bits = 0;
    for (int i = 0; i < 4; ++i) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
        __m128i flagged = _mm_cmplt_epi8(x, space);  // signed: bytes above 0x7f are below too
        if (!high) {
            flagged = _mm_and_si128(flagged, _mm_cmpgt_epi8(x, minus_one));
        }
        const __m128i allowed =
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\t')),
                                      _mm_cmpeq_epi8(x, _mm_set1_epi8('\n'))),
                         _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\r')),
                                                   _mm_cmpeq_epi8(x, _mm_set1_epi8('\f'))),
                                      _mm_cmpeq_epi8(x, _mm_set1_epi8(0x1b))));
        const auto mask =
            static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_andnot_si128(allowed, flagged)));
        bits |= std::uint64_t{mask} << (16 * i);
    }
    return bits;
#else
    std::uint64_t bits = 0;
    for (int i = 0; i < 64; ++i) {
        const auto c = static_cast<unsigned char>(p[i]);
        const bool control =
            c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1b;
        if (control || (high && c >= 0x80)) {
            bits |= std::uint64_t{1} << i;
        }
    }
    return bits;
#endif
}

// From `from`, stepping 64 bytes, the first block whose unusual_text_bits(block, high) is not 0,
// or the first offset with fewer than 64 bytes left: the text check passes over usual blocks.
inline std::size_t skip_usual_blocks_narrow(const char* p, std::size_t from, std::size_t size,
                                            bool high) noexcept {
    std::size_t i = from;
    while (i + 64 <= size && unusual_text_bits(p + i, high) == 0) {
        i += 64;
    }
    return i;
}

// skip_usual_blocks_narrow with the widest instructions this CPU has.
inline std::size_t skip_usual_blocks(const char* p, std::size_t from, std::size_t size,
                                     bool high) noexcept {
    return avx512bw_available() ? skip_usual_blocks_avx512(p, from, size, high)
                                : skip_usual_blocks_narrow(p, from, size, high);
}

// The bytes of 64 at p that a number check looks at: bit i of each mask for p[i].
struct NumberClasses {
    std::uint64_t quote = 0;
    std::uint64_t digit = 0;
    std::uint64_t comma = 0;
    std::uint64_t dot = 0;
};

inline NumberClasses number_classes_swar(const char* p) noexcept {
    NumberClasses k;
    for (int i = 0; i < 64; ++i) {
        const std::uint64_t bit = std::uint64_t{1} << i;
        const char c = p[i];
        k.quote |= c == '"' ? bit : 0;
        k.digit |= c >= '0' && c <= '9' ? bit : 0;
        k.comma |= c == ',' ? bit : 0;
        k.dot |= c == '.' ? bit : 0;
    }
    return k;
}

inline NumberClasses number_classes(const char* p) noexcept {
#if defined(__SSE2__)
    NumberClasses k;
    for (int i = 0; i < 4; ++i) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
        const auto bits = [](__m128i m) {
            return std::uint64_t{static_cast<std::uint32_t>(_mm_movemask_epi8(m))};
        };
        const int shift = 16 * i;
        k.quote |= bits(_mm_cmpeq_epi8(x, _mm_set1_epi8('"'))) << shift;
        k.comma |= bits(_mm_cmpeq_epi8(x, _mm_set1_epi8(','))) << shift;
        k.dot |= bits(_mm_cmpeq_epi8(x, _mm_set1_epi8('.'))) << shift;
        // Signed compares: bytes above 0x7f are negative, so never digits.
        k.digit |= bits(_mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)),
                                      _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1))))
                   << shift;
    }
    return k;
#else
    return number_classes_swar(p);
#endif
}

// The cells of `"c","c",...,"c"` (the n bytes at p: every cell quoted, none holding "" escapes,
// as a plain raw row's metric cells are) that may not be numbers: `suspect(offset)` is called with
// an offset inside or at the closing quote of every cell that is neither empty nor a number as
// is_ncu_number decides (a sign, an exponent, "n/a", text, a misplaced separator or dot, a cell
// of 63 bytes or more), and sometimes for a number too; it returns the offset to go on from
// (offsets below it are not reported again). A cell of digits, one grouping of thousands
// ("1,980,000") and an optional fraction is never reported. Returns false, having reported
// nothing for certain, when a cell may be just "," (which looks like a separator between two
// empty cells): the caller then checks every cell.
//
// 64 bytes at a time: byte classes as bitmaps; as no cell holds a quote, every quote is a cell's
// and every comma between two quotes is a separator unless a cell is ",", which the spacing of
// the separators finds; each rule of plain_decimal_shape is then a few bit operations looking back
// at most 4 bytes (the previous block's bits carried) and the digits after a dot are followed to
// their end by one addition carried from block to block. A raw page's 550 number cells per row
// then cost about what reading them costs, not a check each.
template <class Suspect>
bool for_each_number_suspect(const char* p, std::size_t n, std::size_t cells, Suspect&& suspect) {
    std::uint64_t prev_quote = 0;
    std::uint64_t prev_digit = 0;
    std::uint64_t prev_comma = 0;
    std::uint64_t prev_dot = 0;
    std::uint64_t carry = 0;  // the fraction's addition, carried
    std::uint64_t prev_separator = 0;
    std::uint64_t pairs = 0;  // separators two bytes apart: a cell that is just ","
    std::uint64_t any_separator = 0;
    std::size_t resume = 0;
    const auto back = [](std::uint64_t now, std::uint64_t before, int s) {
        return (now << s) | (before >> (64 - s));
    };
    for (std::size_t base = 0; base < n; base += 64) {
        const std::size_t left = n - base;
        NumberClasses k;
        std::uint64_t valid = ~std::uint64_t{0};
        std::uint64_t next_quote = 0;  // whether the byte after the block is a quote
        if (left > 64) {
            k = number_classes(p + base);
            next_quote = p[base + 64] == '"' ? 1 : 0;
        } else {
            char tail[64];
            std::memset(tail, '"', sizeof tail);  // past the end: quotes, never reported
            std::memcpy(tail, p + base, left);
            k = number_classes(tail);
            valid = left == 64 ? valid : (std::uint64_t{1} << left) - 1;
        }
        const std::uint64_t quote = k.quote;
        const std::uint64_t digit = k.digit;
        const std::uint64_t separator =
            k.comma & back(quote, prev_quote, 1) & ((quote >> 1) | (next_quote << 63)) & valid;
        pairs |= separator & back(separator, prev_separator, 2);
        any_separator |= separator;
        const std::uint64_t comma = k.comma & ~separator;
        const std::uint64_t dot = k.dot;
        const std::uint64_t d1 = back(digit, prev_digit, 1);
        // Not a digit, separator, dot or quote: a sign, an exponent, "n/a", text.
        std::uint64_t v = ~(digit | k.comma | dot | quote);
        // A separator: after a digit, not after four; then three digits and a separator, the
        // dot or the cell's end.
        v |= comma & (~d1 | (back(digit, prev_digit, 2) & back(digit, prev_digit, 3) &
                             back(digit, prev_digit, 4)));
        v |=
            (back(comma, prev_comma, 1) | back(comma, prev_comma, 2) | back(comma, prev_comma, 3)) &
            ~digit;
        v |= back(comma, prev_comma, 4) & ~(comma | dot | quote);
        // The dot: after a digit, before one, and only digits from there to the cell's end.
        const std::uint64_t d_after = back(dot, prev_dot, 1);
        v |= dot & ~d1;
        v |= d_after & ~digit;
        std::uint64_t sum = 0;
        std::uint64_t sum2 = 0;
        const bool over = __builtin_add_overflow(digit, d_after, &sum);
        const bool over2 = __builtin_add_overflow(sum, carry, &sum2);
        carry = over || over2 ? 1 : 0;
        v |= sum2 & ~digit & ~quote;  // where a dot's digits end
        // A cell of 63 bytes or more holds a whole 32-byte half without quotes.
        v |= std::uint64_t{(quote & 0xffffffffULL) == 0} | std::uint64_t{(quote >> 32) == 0} << 32;
        v &= valid;
        if (resume > base) {
            v &= resume - base >= 64 ? 0 : ~std::uint64_t{0} << (resume - base);
        }
        while (v != 0) {
            const std::size_t at = base + static_cast<std::size_t>(std::countr_zero(v));
            v &= v - 1;
            if (at >= resume) {
                resume = suspect(at);
            }
        }
        prev_quote = quote;
        prev_separator = separator;
        prev_digit = digit;
        prev_comma = comma;
        prev_dot = dot;
    }
    // Two cells' separators are at least 3 bytes apart (`","` and an empty cell's `""`), and a
    // cell "," sits 2 bytes from the separator before or after it, unless it is the only cell.
    return pairs == 0 && (cells != 1 || any_separator == 0);
}

// The quotes of a text in order, one 64-byte block at a time: a block's bitmap is computed once
// and each quote then costs a bit scan and a bit clear. A raw page has a quote every four bytes
// or so; this replaces one search per cell. Invariant kept by the caller: every quote before the
// position being read has been taken (pop), none after it.
class QuoteCursor {
public:
    explicit QuoteCursor(std::string_view text) noexcept : text_(text) { seek(0); }

    // The next quote (the text's size when there is none), without taking it.
    [[nodiscard]] std::size_t peek() noexcept {
        while (bits_ == 0) {
            if (base_ + 64 >= text_.size()) {
                return text_.size();
            }
            base_ += 64;
            bits_ = block_bits(base_);
        }
        return base_ + static_cast<std::size_t>(std::countr_zero(bits_));
    }
    // The next quote, taken.
    std::size_t pop() noexcept {
        const std::size_t at = peek();
        bits_ &= bits_ - 1;
        return at;
    }
    // Forgets every quote before `pos`.
    void seek(std::size_t pos) noexcept {
        base_ = pos & ~std::size_t{63};
        bits_ = base_ < text_.size() ? block_bits(base_) & (~std::uint64_t{0} << (pos - base_)) : 0;
    }

private:
    [[nodiscard]] std::uint64_t block_bits(std::size_t base) const noexcept {
        if (text_.size() - base >= 64) {
            return quote_bits(text_.data() + base);
        }
        char tail[64] = {};  // the last, partial block: the bytes past the end are no quotes
        std::memcpy(tail, text_.data() + base, text_.size() - base);
        return quote_bits(tail);
    }

    std::string_view text_;
    std::size_t base_ = 0;
    std::uint64_t bits_ = 0;
};

}  // namespace cko::profile::ncu::byte_scan
