// The tokenizer: quoting, escapes, line endings and the lines it sets aside.
#include "cko/profile/ncu/csv_tokenizer.hpp"

#include "cko/util/error.hpp"

#include <gtest/gtest.h>

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
    try {
        (void)rows_of("\"a\",\"b\n");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::truncated_input);
        EXPECT_EQ(e.details()["line"], 1);
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

}  // namespace
}  // namespace cko::profile::ncu
