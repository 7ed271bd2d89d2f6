// The ustar header's layout (POSIX pax format's ustar header), shared by util/tar's writer and
// reader: field offsets, the block, the checksum and the readers of its text and octal fields.
// Internal to util.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cko::tar_format {

inline constexpr std::size_t kBlock = 512;
inline constexpr std::string_view kPaxName = "././@PaxHeader";

// Offsets and sizes of the ustar header fields.
struct Field {
    std::size_t at;
    std::size_t size;
};
inline constexpr Field kName{0, 100};
inline constexpr Field kMode{100, 8};
inline constexpr Field kUid{108, 8};
inline constexpr Field kGid{116, 8};
inline constexpr Field kSize{124, 12};
inline constexpr Field kMtime{136, 12};
inline constexpr Field kChecksum{148, 8};
inline constexpr std::size_t kTypeAt = 156;
inline constexpr Field kMagic{257, 6};
inline constexpr Field kVersion{263, 2};
inline constexpr Field kDevMajor{329, 8};
inline constexpr Field kDevMinor{337, 8};
inline constexpr Field kPrefix{345, 155};

using Block = std::array<char, kBlock>;

inline std::uint64_t header_sum(const Block& b) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < kBlock; ++i) {
        const bool in_checksum = i >= kChecksum.at && i < kChecksum.at + kChecksum.size;
        sum += in_checksum ? static_cast<unsigned char>(' ') : static_cast<unsigned char>(b[i]);
    }
    return sum;
}

inline std::string_view field_text(const Block& b, Field f) {
    const std::string_view raw(b.data() + f.at, f.size);
    return raw.substr(0, std::min(raw.find('\0'), raw.size()));
}

// An octal field (spaces and NULs around the digits allowed); nullopt when it is not one (base-256
// sizes included: nothing cko writes is that large).
inline std::optional<std::uint64_t> octal_field(const Block& b, Field f) {
    std::string_view s(b.data() + f.at, f.size);
    while (!s.empty() && (s.front() == ' ')) {
        s.remove_prefix(1);
    }
    std::uint64_t value = 0;
    std::size_t digits = 0;
    for (; digits < s.size() && s[digits] >= '0' && s[digits] <= '7'; ++digits) {
        value = value * 8 + static_cast<std::uint64_t>(s[digits] - '0');
    }
    for (std::size_t i = digits; i < s.size(); ++i) {
        if (s[i] != ' ' && s[i] != '\0') {
            return std::nullopt;
        }
    }
    return digits == 0 ? std::nullopt : std::optional<std::uint64_t>(value);
}

}  // namespace cko::tar_format
