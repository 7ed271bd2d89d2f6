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

}  // namespace
}  // namespace cko::profile::ncu
