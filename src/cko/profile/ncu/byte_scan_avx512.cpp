// copy_json_plain and the text check's block loop 64 bytes at a time with AVX-512BW, chosen at
// run time (byte_scan.hpp). Each function carries its own target attribute, so the rest of cko
// stays baseline x86-64 and a CPU without AVX-512 never runs an instruction of it.
#include "cko/profile/ncu/byte_scan.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define CKO_BYTE_SCAN_AVX512 1
#endif

namespace cko::profile::ncu::byte_scan {

#ifdef CKO_BYTE_SCAN_AVX512

namespace {

// No byte of x is a backslash or below 0x20. (A lambda would not carry the target attribute.)
__attribute__((target("avx512f,avx512bw"))) inline bool plain_json_block(__m512i x) noexcept {
    return (_mm512_cmplt_epu8_mask(x, _mm512_set1_epi8(0x20)) |
            _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('\\'))) == 0;
}

}  // namespace

__attribute__((target("avx512f,avx512bw"))) bool copy_json_plain_avx512(const char* p,
                                                                        std::size_t n,
                                                                        char* out) noexcept {
    if (n < 64) {
        return copy_json_plain(p, n, out);
    }
    std::size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        const __m512i x = _mm512_loadu_si512(p + i);
        if (!plain_json_block(x)) {
            return false;
        }
        _mm512_storeu_si512(out + i, x);
    }
    if (i < n) {  // the last 64 bytes, overlapping what was copied
        const __m512i x = _mm512_loadu_si512(p + n - 64);
        if (!plain_json_block(x)) {
            return false;
        }
        _mm512_storeu_si512(out + n - 64, x);
    }
    return true;
}

__attribute__((target("avx512f,avx512bw"))) std::size_t skip_usual_blocks_avx512(
    const char* p, std::size_t from, std::size_t size, bool high) noexcept {
    const __m512i space = _mm512_set1_epi8(0x20);
    std::size_t i = from;
    for (; i + 64 <= size; i += 64) {
        const __m512i x = _mm512_loadu_si512(p + i);
        // Below 0x20 (unsigned) and not one of the allowed controls; with `high`, or above 0x7f.
        __mmask64 flagged = _mm512_cmplt_epu8_mask(x, space);
        flagged &= ~(_mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('\t')) |
                     _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('\n')) |
                     _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('\r')) |
                     _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8('\f')) |
                     _mm512_cmpeq_epi8_mask(x, _mm512_set1_epi8(0x1b)));
        if (high) {
            flagged |= _mm512_movepi8_mask(x);  // the top bit: a byte above 0x7f
        }
        if (flagged != 0) {
            return i;
        }
    }
    return i;
}

bool avx512bw_available() noexcept {
    // libgcc's (and compiler-rt's) CPU model also checks that the OS saves the AVX-512 state.
    static const bool available =
        __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512bw") != 0;
    return available;
}

#else

bool copy_json_plain_avx512(const char* p, std::size_t n, char* out) noexcept {
    return copy_json_plain(p, n, out);
}

std::size_t skip_usual_blocks_avx512(const char* p, std::size_t from, std::size_t size,
                                     bool high) noexcept {
    return skip_usual_blocks_narrow(p, from, size, high);
}

bool avx512bw_available() noexcept {
    return false;
}

#endif

}  // namespace cko::profile::ncu::byte_scan
