// byte_scan's block checks (quotes, JSON specials, number classes and suspects, plain cell ends),
// each against a byte-at-a-time reading of the same bytes.
#include "cko/profile/ncu/byte_scan.hpp"

#include "cko/profile/ncu/ncu_metrics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace cko::profile::ncu {
namespace {

TEST(QuoteBits, SwarAndVectorAgreeWithAByteLoop) {
    std::string block(64, 'x');
    for (std::size_t i = 0; i < 64; i += 3) {
        block[i] = '"';
    }
    block[63] = '"';
    block[10] = static_cast<char>(0xa2);  // '"' | 0x80: not a quote
    std::uint64_t want = 0;
    for (std::size_t i = 0; i < 64; ++i) {
        want |= std::uint64_t{block[i] == '"'} << i;
    }
    EXPECT_EQ(byte_scan::quote_bits_swar(block.data()), want);
    EXPECT_EQ(byte_scan::quote_bits(block.data()), want);
}

TEST(FindJsonSpecial, StopsAtQuotesBackslashesAndControlBytes) {
    const std::string clean = "1,980,000 NVIDIA H200 \xc3\xa9";
    EXPECT_EQ(byte_scan::find_json_special(clean.data(), clean.data() + clean.size()),
              clean.data() + clean.size());
    for (const char special : {'"', '\\', '\t', '\n'}) {
        for (std::size_t at = 0; at < 20; ++at) {
            std::string text(20, 'v');
            text[at] = special;
            EXPECT_EQ(
                byte_scan::find_json_special(text.data(), text.data() + text.size()) - text.data(),
                static_cast<std::ptrdiff_t>(at));
        }
    }
}

// The 16-byte check answers as find_json_special does over the first n bytes, for every byte
// value at every position, with bytes past n (quotes, high bytes) that must not count.
TEST(FindJsonSpecial, SixteenByteCheckAgreesWithTheSearch) {
    for (int byte = 0; byte < 256; ++byte) {
        for (std::size_t at = 0; at < 16; ++at) {
            for (std::size_t n = 0; n <= 16; ++n) {
                std::string text(16, 'v');
                text[at] = static_cast<char>(byte);
                text += "\"\xff\x01";  // after the 16 bytes: never looked at
                const bool want =
                    byte_scan::find_json_special(text.data(), text.data() + n) != text.data() + n;
                EXPECT_EQ(byte_scan::json_special_in_16(text.data(), n), want)
                    << "byte " << byte << " at " << at << " n " << n;
                EXPECT_EQ(byte_scan::json_special_in_16_swar(text.data(), n), want)
                    << "byte " << byte << " at " << at << " n " << n;
            }
        }
    }
}

// copy_json_plain copies a span exactly when no byte of it is a backslash or a control byte,
// whatever its length and wherever the byte is, and never writes past the span: the word-wide,
// SSE2 and (where the CPU has it) AVX-512BW versions, at lengths past two 64-byte blocks.
TEST(CopyJsonPlain, CopiesExactlyTheSpansWithoutBackslashesOrControlBytes) {
    using Copy = bool (*)(const char*, std::size_t, char*) noexcept;
    std::vector<std::pair<const char*, Copy>> versions = {
        {"word", &byte_scan::copy_json_plain_swar}, {"vector", &byte_scan::copy_json_plain}};
    if (byte_scan::avx512bw_available()) {
        versions.emplace_back("avx512", &byte_scan::copy_json_plain_avx512);
    }
    ::testing::Test::RecordProperty("avx512bw", byte_scan::avx512bw_available() ? 1 : 0);
    for (std::size_t n = 0; n <= 160; ++n) {
        for (std::size_t at = 0; at <= n; ++at) {  // at == n: no special byte
            for (const char special : {'\\', '\n', '\t', '\x01', '\x1f'}) {
                std::string text(n, 'a');
                for (std::size_t i = 0; i < n; ++i) {
                    text[i] = "\",0123456789,\"xy\x7f\x80\xff "[i % 19];
                }
                if (at < n) {
                    text[at] = special;
                }
                for (const auto& [name, copy] : versions) {
                    std::string out(n + 8, '#');
                    const bool copied = copy(text.data(), n, out.data());
                    EXPECT_EQ(copied, at == n) << n << " " << at << " " << name;
                    if (copied) {
                        EXPECT_EQ(out.substr(0, n), text) << name;
                    }
                    EXPECT_EQ(out.substr(n), std::string(8, '#')) << n << " " << name;
                }
            }
        }
    }
}

// The text check's AVX-512BW block loop stops at the block the SSE2 check flags, for every byte
// value at every position, with and without the bytes above 0x7f counted.
TEST(SkipUsualBlocks, StopsWhereTheBlockCheckFlags) {
    if (!byte_scan::avx512bw_available()) {
        ::testing::Test::RecordProperty("avx512bw", 0);  // nothing to compare on this CPU
        return;
    }
    ::testing::Test::RecordProperty("avx512bw", 1);
    const std::string plain = "\"ID\",\"Kernel\",\"1,024.5\"\t\r\n\f\x1b xyz 0123456789";
    std::string text(64 * 5 + 17, ' ');
    for (std::size_t i = 0; i < text.size(); ++i) {
        text[i] = plain[i % plain.size()];
    }
    const auto expected = [](const std::string& t, bool high) {
        std::size_t i = 0;
        while (i + 64 <= t.size() && byte_scan::unusual_text_bits(t.data() + i, high) == 0) {
            i += 64;
        }
        return i;
    };
    for (const bool high : {false, true}) {
        EXPECT_EQ(byte_scan::skip_usual_blocks_avx512(text.data(), 0, text.size(), high),
                  text.size() - 17);  // all usual: to the last whole block's end
        for (int byte = 0; byte < 256; ++byte) {
            for (const std::size_t at : {0UL, 63UL, 64UL, 130UL, 255UL, 319UL, 320UL, 336UL}) {
                std::string t = text;
                t[at] = static_cast<char>(byte);
                EXPECT_EQ(byte_scan::skip_usual_blocks_avx512(t.data(), 0, t.size(), high),
                          expected(t, high))
                    << "byte " << byte << " at " << at << " high " << high;
            }
        }
    }
}

TEST(NumberClasses, VectorAndWordVersionsAgreeOnEveryByte) {
    std::array<char, 64> block{};
    for (int start = 0; start < 256; start += 64) {
        for (std::size_t i = 0; i < 64; ++i) {
            block[i] = static_cast<char>(start + static_cast<int>(i));
        }
        const byte_scan::NumberClasses a = byte_scan::number_classes(block.data());
        const byte_scan::NumberClasses b = byte_scan::number_classes_swar(block.data());
        EXPECT_EQ(a.quote, b.quote);
        EXPECT_EQ(a.digit, b.digit);
        EXPECT_EQ(a.comma, b.comma);
        EXPECT_EQ(a.dot, b.dot);
    }
}

// Cells of `"c","c",...` and the cells for_each_number_suspect points at.
struct SuspectRun {
    std::string span;
    std::vector<std::size_t> starts;  // each cell's first byte in span
    std::vector<bool> reported;
};

SuspectRun run_suspects(const std::vector<std::string>& cells, std::size_t lead) {
    SuspectRun r;
    // `lead` bytes before the span, so that cells fall across 64-byte blocks every way.
    std::string text(lead, 'x');
    for (std::size_t i = 0; i < cells.size(); ++i) {
        text += i == 0 ? "\"" : ",\"";
        r.starts.push_back(text.size() - lead);
        text += cells[i];
        text += '"';
    }
    r.span = text.substr(lead);
    r.reported.assign(cells.size(), false);
    const bool checked = byte_scan::for_each_number_suspect(
        text.data() + lead, r.span.size(), cells.size(), [&](std::size_t at) {
            EXPECT_LT(at, r.span.size());
            const auto after = std::upper_bound(r.starts.begin() + 1, r.starts.end(), at);
            const auto cell = static_cast<std::size_t>(after - 1 - r.starts.begin());
            r.reported[cell] = true;
            return r.starts[cell] + cells[cell].size() + 3;
        });
    // Told the count of separators is wrong: every cell is to be checked.
    const bool comma_cell = std::find(cells.begin(), cells.end(), ",") != cells.end();
    EXPECT_EQ(checked, !comma_cell);
    if (!checked) {
        r.reported.assign(cells.size(), true);
    }
    return r;
}

// Every cell that is neither empty nor a number (as is_ncu_number decides) is pointed at, with
// cells made of the bytes numbers are made of, in every arrangement near the rules' edges: signs,
// exponents, misplaced separators and dots, long cells, text.
TEST(NumberSuspects, PointsAtEveryCellThatIsNotANumber) {
    std::mt19937 random(20251201);
    const std::string alphabet = "0123456789,,..-+eE a/\"";
    const std::vector<std::string> pieces = {"1,980,000",
                                             "2,230",
                                             "52.88",
                                             "0",
                                             "384",
                                             "n/a",
                                             "-1",
                                             "1e5",
                                             "1,23",
                                             "1.",
                                             ".5",
                                             "1,2345",
                                             ",",
                                             ",,",
                                             "1,",
                                             ",1",
                                             "12,345.6",
                                             "1.2.3",
                                             "1,234.5,6",
                                             "1234,567",
                                             "+3",
                                             "NVIDIA H200",
                                             "",
                                             std::string(62, '7'),
                                             std::string(63, '7'),
                                             std::string(64, '7'),
                                             std::string(65, '7'),
                                             "1," + std::string(60, '0'),
                                             "0." + std::string(70, '5')};
    std::size_t not_numbers = 0;
    for (int round = 0; round < 4000; ++round) {
        std::vector<std::string> cells;
        const int count = 1 + static_cast<int>(random() % 12);
        for (int c = 0; c < count; ++c) {
            std::string cell;
            if (random() % 2 == 0) {
                cell = pieces[random() % pieces.size()];
            } else {
                const std::size_t n = random() % 12;
                for (std::size_t i = 0; i < n; ++i) {
                    // Mostly digits, the rest the bytes that make a number wrong.
                    cell += random() % 3 != 0 ? static_cast<char>('0' + random() % 10)
                                              : alphabet[10 + random() % (alphabet.size() - 11)];
                }
            }
            cells.push_back(cell);
        }
        const SuspectRun r = run_suspects(cells, random() % 64);
        for (std::size_t c = 0; c < cells.size(); ++c) {
            if (!cells[c].empty() && !is_ncu_number(cells[c])) {
                ++not_numbers;
                EXPECT_TRUE(r.reported[c]) << "cell " << c << " '" << cells[c] << "' of " << r.span;
            }
        }
    }
    EXPECT_GT(not_numbers, 4000u);
}

// Rows of the numbers a raw page holds are not looked at one by one.
TEST(NumberSuspects, PointsAtNothingInARowOfPlainNumbers) {
    const std::vector<std::string> numbers = {"1,980,000",
                                              "2,230",
                                              "52.88",
                                              "0",
                                              "384",
                                              "",
                                              "590,680,286",
                                              "100",
                                              "0.01",
                                              "123,456.75",
                                              std::string(31, '9')};
    for (std::size_t lead = 0; lead < 64; ++lead) {
        std::vector<std::string> cells;
        for (std::size_t i = 0; i < 200; ++i) {
            cells.push_back(numbers[(i * 7 + lead) % numbers.size()]);
        }
        const SuspectRun r = run_suspects(cells, lead);
        EXPECT_EQ(std::count(r.reported.begin(), r.reported.end(), true), 0) << lead;
    }
}

// The block check itself: plain_cell_ends marks exactly the cells a one-quote-at-a-time reading
// takes (the next quote after each opening one, a comma and a quote after it), at every
// alignment of a run of short cells, up to the first quote it cannot place.
TEST(PlainCellEnds, MarksTheCellsAQuoteByQuoteReadingTakes) {
    std::mt19937 random(5);
    const std::string alphabet = "\"\",,ab";
    for (int round = 0; round < 20000; ++round) {
        std::string block = "\"";
        while (block.size() < 80) {
            block +=
                random() % 5 == 0 ? alphabet[random() % alphabet.size()] : "a\",\""[random() % 4];
        }
        std::uint64_t expected = 0;
        for (std::size_t open = 0;;) {
            const std::size_t close = block.find('"', open + 1);
            if (close >= 64 || block[close + 1] != ',' || block[close + 2] != '"') {
                break;
            }
            expected |= std::uint64_t{1} << close;
            open = close + 2;
            if (open < 64 && (expected & (std::uint64_t{1} << (open - 2))) != 0 &&
                block.compare(open, 3, "\",\"") == 0) {
                break;  // `",","`: the block check stops before it, the quote-by-quote reading not
            }
        }
        const std::uint64_t got = byte_scan::plain_cell_ends(block.data());
        // What the block check marks is a prefix of what the reading takes, and all of it up to
        // a `",","`.
        EXPECT_EQ(got & ~expected, 0U) << block;
        if (block.substr(0, 66).find("\",\",\"") == std::string::npos) {
            EXPECT_EQ(got, expected) << block;
        }
    }
}

}  // namespace
}  // namespace cko::profile::ncu
