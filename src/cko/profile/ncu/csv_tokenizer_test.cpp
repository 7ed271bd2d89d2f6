// The tokenizer: quoting, escapes, line endings and the lines it sets aside.
#include "cko/profile/ncu/csv_tokenizer.hpp"

#include "cko/profile/ncu/ncu_metrics.hpp"
#include "cko/util/error.hpp"
#include "cko_test_support.hpp"

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>

namespace cko::profile::ncu {
namespace {

std::vector<std::vector<std::string>> rows_of(std::string_view text) {
    CsvTokenizer tok(text);
    CsvRow row;
    std::vector<std::vector<std::string>> out;
    while (tok.next(row)) {
        out.emplace_back(row.cells.begin(), row.cells.end());
    }
    return out;
}

TEST(CsvTokenizer, QuotedCellsMayHoldCommasAndEscapedQuotes) {
    const auto rows = rows_of("\"k(const float *, int)\",\"say \"\"hi\"\"\",\"\"\n");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0], (std::vector<std::string>{"k(const float *, int)", "say \"hi\"", ""}));
}

TEST(CsvTokenizer, TrailingCommaMakesAnEmptyLastCell) {
    const auto rows = rows_of("\"a\",\"b\",\n\"c\"\r\n");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0], (std::vector<std::string>{"a", "b", ""}));
    EXPECT_EQ(rows[1], (std::vector<std::string>{"c"}));
}

TEST(CsvTokenizer, QuotedCellsMaySpanLines) {
    const auto rows = rows_of("\"one\ntwo\",\"x\"\n");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0][0], "one\ntwo");
}

TEST(CsvTokenizer, SetsAsideLinesThatAreNotCsv) {
    CsvTokenizer tok("==PROF== Connected\nprogram says hi\n\"a\"\n==ERROR== boom\r\n");
    CsvRow row;
    ASSERT_TRUE(tok.next(row));
    EXPECT_EQ(row.cells[0], "a");
    EXPECT_EQ(tok.line_of(row.offset), 3u);
    EXPECT_FALSE(tok.next(row));
    EXPECT_EQ(tok.other_lines(), (std::vector<std::string_view>{
                                     "==PROF== Connected", "program says hi", "==ERROR== boom"}));
}

TEST(CsvTokenizer, TextEndingInsideAQuoteIsTruncated) {
    if (const auto e = EXPECT_CKO_ERROR((void)rows_of("\"a\",\"b\n"), ErrorCode::truncated_input)) {
        EXPECT_EQ(e->details()["line"], 1);
    }
}

TEST(CsvTokenizer, KnowsWhetherTheLastRowEndedWithALineBreak) {
    CsvTokenizer tok("\"a\"");
    CsvRow row;
    ASSERT_TRUE(tok.next(row));
    EXPECT_FALSE(tok.row_terminated());
}

TEST(CsvTokenizer, CellAboveTheLimitIsFieldTooLong) {
    const std::string text = "\"" + std::string(100, 'x') + "\"\n";
    CsvTokenizer tok(text, CsvLimits{64});
    CsvRow row;
    EXPECT_THROW((void)tok.next(row), Error);
}

TEST(RejectBinary, AllowsTextControlsAndRefusesOthers) {
    EXPECT_NO_THROW(reject_binary("a\tb\r\n\x1b[0m\f"));
    EXPECT_THROW(reject_binary(std::string("0123456789\0", 11)), Error);
    EXPECT_THROW(reject_binary("\x01"), Error);
}

TEST(RejectBinary, FindsTheFirstNonAsciiByteInTheSamePass) {
    EXPECT_EQ(first_non_ascii_of_text("\"plain\",\"ascii\"\n"), std::string_view::npos);
    const std::string latin1 = std::string(19, 'a') + "\xe9" + std::string(20, 'b') + "\xc3\xa9";
    EXPECT_EQ(first_non_ascii_of_text(latin1), 19u);
    // A control byte after the first non-ASCII byte is still refused, with its offset.
    if (const auto e =
            EXPECT_CKO_ERROR((void)first_non_ascii_of_text(latin1 + std::string(9, 'c') + "\x02"),
                             ErrorCode::binary_input)) {
        EXPECT_EQ(e->details()["offset"], latin1.size() + 9);
    }
}

// The block-wide check gives the byte-by-byte answer for every byte value at every offset of
// several 64-byte blocks full of line breaks, tabs, ESC and form feeds.
TEST(RejectBinary, BlockScanAgreesWithTheBytewiseCheckAtEveryOffset) {
    const std::string_view pattern = "\"12.5\",\t\x1b[0m\f\r\n";
    std::string base;
    while (base.size() < 200) {
        base += pattern[base.size() % pattern.size()];
    }
    for (int byte = 0; byte < 256; ++byte) {
        const auto c = static_cast<unsigned char>(byte);
        const bool allowed =
            c >= 0x20 || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == 0x1b;
        for (const std::size_t at : {0UL, 5UL, 63UL, 64UL, 100UL, 127UL, 128UL, 191UL, 199UL}) {
            std::string text = base;
            text[at] = static_cast<char>(c);
            SCOPED_TRACE(testing::Message() << "byte " << byte << " at " << at);
            if (allowed) {
                EXPECT_EQ(first_non_ascii_of_text(text), c >= 0x80 ? at : std::string::npos);
                // An earlier non-ASCII byte is the first one.
                text[at / 2] = static_cast<char>(0xe9);
                if (at / 2 != at) {
                    EXPECT_EQ(first_non_ascii_of_text(text), at / 2);
                }
                continue;
            }
            if (const auto e = EXPECT_ANY_CKO_ERROR((void)first_non_ascii_of_text(text))) {
                EXPECT_EQ(e->details()["offset"], at);
            }
            text[at / 3] = static_cast<char>(0xe9);  // control bytes after one are still refused
            if (at / 3 != at) {
                SCOPED_TRACE("after a non-ASCII byte");
                if (const auto e = EXPECT_ANY_CKO_ERROR((void)first_non_ascii_of_text(text))) {
                    EXPECT_EQ(e->details()["offset"], at);
                }
            }
        }
    }
}

// Quotes on both sides of 64-byte block boundaries, "" escapes split across blocks, quotes in
// lines set aside and in unquoted cells: the bitmap cursor must give the cells a plain scan gives.
TEST(CsvTokenizer, CellsAcrossBlockBoundariesMatchAPlainSplit) {
    for (std::size_t width = 1; width < 140; width += 7) {
        std::string text = "program says \"hi\"\n";
        std::vector<std::vector<std::string>> want;
        for (int r = 0; r < 5; ++r) {
            std::vector<std::string> row;
            for (int c = 0; c < 6; ++c) {
                std::string cell(width + static_cast<std::size_t>(r + c) % 5, 'a' + c);
                if ((r + c) % 4 == 0) {
                    cell[cell.size() / 2] = '"';  // written as "" inside the quotes
                }
                row.push_back(cell);
                std::string quoted;
                for (const char ch : cell) {
                    quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
                }
                text += (c == 0 ? "\"" : ",\"") + quoted + "\"";
            }
            text += ",un\"quoted\n";
            row.emplace_back("un\"quoted");
            want.push_back(row);
        }
        EXPECT_EQ(rows_of(text), want) << "cell width " << width;
    }
}

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
// whatever its length and wherever the byte is, and never writes past the span.
TEST(CopyJsonPlain, CopiesExactlyTheSpansWithoutBackslashesOrControlBytes) {
    for (std::size_t n = 0; n <= 40; ++n) {
        for (std::size_t at = 0; at <= n; ++at) {  // at == n: no special byte
            for (const char special : {'\\', '\n', '\t', '\x01', '\x1f'}) {
                std::string text(n, 'a');
                for (std::size_t i = 0; i < n; ++i) {
                    text[i] = "\",0123456789,\"xy"[i % 16];
                }
                if (at < n) {
                    text[at] = special;
                }
                for (const bool vector : {false, true}) {
                    std::string out(n + 8, '#');
                    const bool copied =
                        vector ? byte_scan::copy_json_plain(text.data(), n, out.data())
                               : byte_scan::copy_json_plain_swar(text.data(), n, out.data());
                    EXPECT_EQ(copied, at == n) << n << " " << at << " " << vector;
                    if (copied) {
                        EXPECT_EQ(out.substr(0, n), text);
                    }
                    EXPECT_EQ(out.substr(n), std::string(8, '#')) << n << " " << vector;
                }
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

// The tokenizer's rules written plainly, a byte at a time: rows, lines set aside, or the error.
std::string tokenize_plainly(std::string_view text, std::size_t limit) {
    std::string out;
    std::size_t pos = 0;
    const std::size_t size = text.size();
    const auto check = [&](std::size_t n) {
        if (n > limit) {
            throw Error(ErrorCode::field_too_long, "long");
        }
    };
    while (pos < size) {
        if (text[pos] != '"') {
            std::size_t end = text.find('\n', pos);
            end = end == std::string_view::npos ? size : end;
            std::string_view line = text.substr(pos, end - pos);
            if (!line.empty() && line.back() == '\r') {
                line.remove_suffix(1);
            }
            if (!line.empty()) {
                out.append("line[").append(line).append("]\n");
            }
            pos = end == size ? size : end + 1;
            continue;
        }
        out += "row:";
        for (;;) {
            std::string cell;
            if (pos < size && text[pos] == '"') {
                const std::size_t start = pos + 1;
                std::size_t q = text.find('"', start);
                if (q == std::string_view::npos) {
                    throw Error(ErrorCode::truncated_input, "open");
                }
                std::size_t piece = start;
                while (q + 1 < size && text[q + 1] == '"') {
                    cell.append(text.substr(piece, q + 1 - piece));
                    piece = q + 2;
                    check(cell.size());
                    q = text.find('"', q + 2);
                    if (q == std::string_view::npos) {
                        throw Error(ErrorCode::truncated_input, "open");
                    }
                }
                cell.append(text.substr(piece, q - piece));
                check(cell.size());
                pos = q + 1;
            } else {
                const std::size_t start = pos;
                while (pos < size && text[pos] != ',' && text[pos] != '\n' && text[pos] != '\r') {
                    ++pos;
                }
                cell = std::string(text.substr(start, pos - start));
                check(cell.size());
            }
            out.append("[").append(cell).append("]");
            if (pos >= size) {
                break;
            }
            if (text[pos] == ',') {
                ++pos;
                continue;
            }
            if (text[pos] == '\n' ||
                (text[pos] == '\r' && pos + 1 < size && text[pos + 1] == '\n')) {
                pos += text[pos] == '\n' ? 1 : 2;
                break;
            }
            throw Error(ErrorCode::malformed_input, "after");
        }
        out += "\n";
    }
    return out;
}

std::string tokenize_fast(std::string_view text, std::size_t limit) {
    CsvTokenizer tok(text, CsvLimits{limit});
    CsvRow row;
    std::string out;
    std::size_t lines = 0;
    while (tok.next(row)) {
        // Lines set aside come in order: print those met before this row first.
        for (; lines < tok.other_lines().size(); ++lines) {
            out.append("line[").append(tok.other_lines()[lines]).append("]\n");
        }
        out += "row:";
        for (const std::string_view c : row.cells) {
            out.append("[").append(c).append("]");
        }
        out += "\n";
    }
    for (; lines < tok.other_lines().size(); ++lines) {
        out.append("line[").append(tok.other_lines()[lines]).append("]\n");
    }
    return out;
}

// Random texts of quotes, commas, line breaks and letters, rows long enough to need more room
// than the first 64 cells: the tokenizer answers as the plain rules do, rows or error.
TEST(CsvTokenizer, AgreesWithTheRulesReadPlainlyOnRandomText) {
    std::mt19937 random(11);
    const std::string alphabet = "\"\"\"\",,,,a\n\rb";
    for (int round = 0; round < 20000; ++round) {
        std::string text;
        const std::size_t n = random() % (round % 10 == 0 ? 600 : 90);
        for (std::size_t i = 0; i < n; ++i) {
            text += random() % 4 == 0 ? alphabet[random() % alphabet.size()] : "\",\""[i % 3];
        }
        const std::size_t limit = round % 3 == 0 ? 3 : 1000;
        const auto answer = [&](auto tokenize) {
            std::string rows;
            const test::CaughtError e =
                test::error_thrown_by([&] { rows = tokenize(text, limit); });
            return e ? std::string("error ") + std::string(error_code_name(e->code())) : rows;
        };
        ASSERT_EQ(answer(tokenize_fast), answer(tokenize_plainly)) << text;
    }
}

// Wide rows (a raw page's: hundreds of cells, read 64 bytes at a time from the 24th cell on,
// byte_scan::plain_cell_ends) of every kind of cell at every alignment: numbers, empty cells,
// a cell that is just "," (the last one too), "" escapes, quoted line breaks, cells longer than a
// block, an unquoted cell, a stray quote; the tokenizer answers as the plain rules do.
TEST(CsvTokenizer, WideRowsAgreeWithTheRulesReadPlainly) {
    std::mt19937 random(29);
    const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(random() % n); };
    const auto quoted = [](const std::string& inside) {
        std::string out(1, '"');
        out += inside;
        out += '"';
        return out;
    };
    const auto cell = [&](std::size_t odds) -> std::string {
        switch (pick(odds)) {
        case 0:
            return "\"\"";
        case 1:
            return "\",\"";
        case 2:
            return "\"a\"\"b\"";
        case 3:
            return "\"x\ny\"";
        case 4:
            return quoted(std::string(60 + pick(80), 'k'));
        case 5:
            return "7";
        case 6:
            return "\"a\"b\"";
        case 7:
            return "\",\",\"\"";
        case 8:
            return "\",\"\"x\"";  // ,"x: a comma and an escaped quote first
        default: {
            const unsigned long value = random() % 100000;
            // Now and then with NCU's thousands separator: "12,345".
            return quoted(pick(3) == 0 && value >= 1000
                              ? fmt::format("{},{:03}", value / 1000, value % 1000)
                              : std::to_string(value));
        }
        }
    };
    for (int round = 0; round < 4000; ++round) {
        std::string text = pick(4) == 0 ? "==PROF== line\n" : "";
        const std::size_t rows = 1 + pick(3);
        for (std::size_t r = 0; r < rows; ++r) {
            const std::size_t cells = 1 + pick(round % 2 == 0 ? 400 : 60);
            for (std::size_t c = 0; c < cells; ++c) {
                text += c == 0 ? "" : ",";
                // Rare odd cells, frequent ones (so that one starts a block), or numbers only.
                text += round % 3 == 2 ? quoted(std::to_string(random() % 1000))
                                       : cell(round % 3 == 0 ? 40 : 9);
            }
            if (r + 1 < rows || pick(2) == 0) {
                text += pick(3) == 0 ? "\r\n" : "\n";
            }
        }
        const std::size_t limit = round % 7 == 0 ? 3 : (round % 7 == 1 ? 100 : 1000);
        const auto answer = [&](auto tokenize) {
            std::string out;
            const test::CaughtError e = test::error_thrown_by([&] { out = tokenize(text, limit); });
            return e ? std::string("error ") + std::string(error_code_name(e->code())) : out;
        };
        ASSERT_EQ(answer(tokenize_fast), answer(tokenize_plainly)) << round << ": " << text;
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
