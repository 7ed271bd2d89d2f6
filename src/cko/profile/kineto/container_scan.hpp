// Finds where a JSON object or array ends, 64 bytes at a time (quote, escape and bracket bitmaps).
#pragma once

// Why hand-written: the tokenizer must find each event's end before simdjson sees it. A byte loop
// with a memchr per string was a fifth of `cko profile torch` (perf, 510 MB trace); this is the
// bitmap method of simdjson's stage 1 (escapes by odd backslash runs, strings by a prefix XOR of
// the quotes), so only the brackets outside strings are visited one by one. SSE2 where the
// compiler has it (every x86-64), plain 64-bit arithmetic elsewhere: no CPU dispatch.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cko::profile::kineto::container_scan {

// Bit i of each mask describes byte i of a 64-byte block.
struct BlockBits {
    std::uint64_t quote = 0;      // '"'
    std::uint64_t backslash = 0;  // '\\'
    std::uint64_t open = 0;       // '{' or '['
    std::uint64_t close = 0;      // '}' or ']'
    std::uint64_t high = 0;       // a byte above 0x7f (not ASCII)
};

inline std::uint64_t bits_where_swar(const unsigned char* p, unsigned char c, unsigned char fold) {
    std::uint64_t bits = 0;
    for (int i = 0; i < 64; ++i) {
        bits |= std::uint64_t{(p[i] | fold) == c} << i;
    }
    return bits;
}

// The 64 bytes at p must be readable.
inline BlockBits classify_block(const char* p) noexcept {
    BlockBits b;
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i fold = _mm_set1_epi8(0x20);  // '[' | 0x20 == '{', ']' | 0x20 == '}'
    const __m128i open = _mm_set1_epi8('{');
    const __m128i close = _mm_set1_epi8('}');
    for (int i = 0; i < 4; ++i) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i));
        const __m128i folded = _mm_or_si128(x, fold);
        const auto shift = 16 * i;
        const auto bits = [](__m128i m) {
            return std::uint64_t{static_cast<std::uint32_t>(_mm_movemask_epi8(m))};
        };
        b.quote |= bits(_mm_cmpeq_epi8(x, quote)) << shift;
        b.backslash |= bits(_mm_cmpeq_epi8(x, backslash)) << shift;
        b.open |= bits(_mm_cmpeq_epi8(folded, open)) << shift;
        b.close |= bits(_mm_cmpeq_epi8(folded, close)) << shift;
        b.high |= bits(x) << shift;
    }
#else
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    b.quote = bits_where_swar(u, '"', 0);
    b.backslash = bits_where_swar(u, '\\', 0);
    b.open = bits_where_swar(u, '{', 0x20);
    b.close = bits_where_swar(u, '}', 0x20);
    for (int i = 0; i < 64; ++i) {
        b.high |= std::uint64_t{u[i] >= 0x80} << i;
    }
#endif
    return b;
}

// Bit i set when an odd number of bits at or below i are set in x: inside a string, given the
// quotes (the opening quote counts as inside, the closing one as outside).
inline std::uint64_t prefix_xor(std::uint64_t x) noexcept {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

// The bytes escaped by a backslash (the byte right after an odd run of backslashes), carrying
// whether the first byte of the next block is escaped. simdjson's find_escaped.
inline std::uint64_t escaped_bits(std::uint64_t backslash, std::uint64_t& carry) noexcept {
    if (backslash == 0 && carry == 0) {
        return 0;
    }
    constexpr std::uint64_t kEven = 0x5555555555555555ULL;
    backslash &= ~carry;  // an escaped backslash starts no escape
    const std::uint64_t follows_escape = backslash << 1 | carry;
    const std::uint64_t odd_starts = backslash & ~kEven & ~follows_escape;
    std::uint64_t even_starts = 0;
    carry = __builtin_add_overflow(odd_starts, backslash, &even_starts) ? 1 : 0;
    const std::uint64_t invert = even_starts << 1;
    return (kEven ^ invert) & follows_escape;
}

struct ContainerEnd {
    const char* end = nullptr;  // just past the matching close; nullptr: not inside [p, limit)
    bool ascii = true;          // no byte above 0x7f in [p, end)
};

// p points at '{' or '['; finds the matching close in [p, limit). The 64 bytes from any position
// below limit must be readable, and the bytes at and past limit must hold no quote or bracket
// (the tokenizer's padding is spaces).
inline ContainerEnd find_container_end(const char* p, const char* limit) noexcept {
    ContainerEnd out;
    std::uint64_t escape_carry = 0;
    std::uint64_t in_string = 0;  // all ones while a string is open across blocks
    std::uint64_t high = 0;
    int depth = 0;
    for (const char* block = p; block < limit; block += 64) {
        const BlockBits b = classify_block(block);
        const std::uint64_t escaped = escaped_bits(b.backslash, escape_carry);
        const std::uint64_t inside = prefix_xor(b.quote & ~escaped) ^ in_string;
        in_string = static_cast<std::uint64_t>(static_cast<std::int64_t>(inside) >> 63);
        // A backslash escapes the byte after it outside strings too (simdjson's reading; valid
        // JSON has none there).
        std::uint64_t brackets = (b.open | b.close) & ~inside & ~escaped;
        while (brackets != 0) {
            const int i = std::countr_zero(brackets);
            brackets &= brackets - 1;
            if ((b.open >> i) & 1) {
                ++depth;
            } else if (--depth == 0) {
                if (block + i >= limit) {
                    return out;
                }
                const std::uint64_t upto =
                    i == 63 ? ~std::uint64_t{0} : (std::uint64_t{2} << i) - 1;
                out.ascii = ((high | (b.high & upto))) == 0;
                out.end = block + i + 1;
                return out;
            }
        }
        high |= b.high;
    }
    return out;
}

}  // namespace cko::profile::kineto::container_scan
