// Damaged or unusual exports: each gives its own error code and says where, or parses as it should.
#include "cko/profile/ncu/csv_tokenizer.hpp"
#include "cko/profile/ncu/ncu_csv.hpp"
#include "cko/profile/ncu/ncu_metrics.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"
#include "cko_test_support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <random>

namespace cko::profile::ncu {
namespace {

std::string raw_text() {
    return read_file_capped("tests/fixtures/ncu/ncu_raw.csv", 1 << 20);
}
std::string details_text() {
    return read_file_capped("tests/fixtures/ncu/ncu_details.csv", 1 << 20);
}

Error error_of(std::string_view text) {
    return *EXPECT_ANY_CKO_ERROR((void)parse_ncu_csv(text));
}

void replace_once(std::string& text, std::string_view from, std::string_view to) {
    const std::size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
}

TEST(NcuMalformed, EmptyFileIsEmptyInput) {
    EXPECT_EQ(error_of("").code(), ErrorCode::empty_input);
    EXPECT_EQ(error_of(" \n\r\n").code(), ErrorCode::empty_input);
}

TEST(NcuMalformed, BinaryJunkIsBinaryInputAtItsOffset) {
    std::string text = raw_text().substr(0, 100);
    text += std::string(
        "\x7f"
        "ELF\x02\x01\x01\x00",
        8);
    const Error e = error_of(text);
    EXPECT_EQ(e.code(), ErrorCode::binary_input);
    EXPECT_EQ(e.details()["offset"], 104);  // the 0x02 after "\x7fELF"
}

TEST(NcuMalformed, RowCutShortInsideAQuotedCellIsTruncated) {
    const std::string text = raw_text();
    const Error e = error_of(text.substr(0, text.size() - 100));
    EXPECT_EQ(e.code(), ErrorCode::truncated_input);
}

TEST(NcuMalformed, RowCutShortAtACellBoundaryIsTruncatedAndNamesTheLine) {
    std::string text = raw_text();
    const std::size_t last_row = text.rfind("\"6\",\"539\"");
    text = text.substr(0, text.find("\",\"", last_row + 200) + 1) + "\n";
    const Error e = error_of(text);
    EXPECT_EQ(e.code(), ErrorCode::truncated_input);
    EXPECT_EQ(e.details()["line"], 13);
    EXPECT_NE(std::string(e.what()).find("the header 566"), std::string::npos) << e.what();
}

TEST(NcuMalformed, UnknownUnitOnDurationNamesMetricUnitAndRow) {
    std::string text = raw_text();
    // The units row: gpu__time_duration.{avg,max,min,sum} are the only columns in "ns".
    for (int i = 0; i < 4; ++i) {
        replace_once(text, "\"ns\"", "\"fortnight\"");
    }
    const Error e = error_of(text);
    EXPECT_EQ(e.code(), ErrorCode::unknown_unit);
    EXPECT_EQ(e.details()["unit"], "fortnight");
    EXPECT_EQ(e.details()["metric"], "gpu__time_duration.sum");
    EXPECT_EQ(e.details()["line"], 7);  // the first launch using it
}

TEST(NcuMalformed, UnknownUnitOnDetailsDurationNamesTheSection) {
    std::string text = details_text();
    replace_once(text, "\"Duration\",\"us\"", "\"Duration\",\"usec\"");
    const Error e = error_of(text);
    EXPECT_EQ(e.code(), ErrorCode::unknown_unit);
    EXPECT_EQ(e.details()["metric"], "GPU Speed Of Light Throughput: Duration");
    EXPECT_EQ(e.details()["line"], 7);
}

TEST(NcuMalformed, DurationInAPercentUnitIsRefusedToo) {
    std::string text = details_text();
    replace_once(text, "\"Duration\",\"us\"", "\"Duration\",\"%\"");
    EXPECT_EQ(error_of(text).code(), ErrorCode::unknown_unit);
}

TEST(NcuMalformed, UnknownUnitOnAnUnmodeledMetricIsListedNotFatal) {
    std::string text = details_text();
    replace_once(text, "\"Maximum Buffer Size\",\"Mbyte\"", "\"Maximum Buffer Size\",\"Mfoo\"");
    const NcuReport r = parse_ncu_csv(text);
    EXPECT_TRUE(std::any_of(r.unmodeled.begin(), r.unmodeled.end(), [](const Unmodeled& u) {
        return u.name == "PM Sampling: Maximum Buffer Size" && u.unit == "Mfoo";
    }));
}

TEST(NcuMalformed, ColumnNamedTwiceIsDuplicateHeader) {
    std::string text = details_text();
    replace_once(text, "\"Context\",", "\"Kernel Name\",");
    const Error e = error_of(text);
    EXPECT_EQ(e.code(), ErrorCode::duplicate_header);
    EXPECT_EQ(e.details()["column"], "Kernel Name");
}

TEST(NcuMalformed, HeaderRepeatedLaterIsDuplicateHeader) {
    const std::string text = details_text();
    const Error e = error_of(text + text);
    EXPECT_EQ(e.code(), ErrorCode::duplicate_header);
    EXPECT_EQ(e.details()["line"], 666);
    EXPECT_EQ(e.details()["first_line"], 1);
}

TEST(NcuMalformed, MillionCharacterKernelNameIsFieldTooLong) {
    std::string text = details_text();
    replace_once(text, "scale_naive(const float *, float *, float, int)",
                 std::string(1000000, 'k'));
    const Error e = error_of(text);
    EXPECT_EQ(e.code(), ErrorCode::field_too_long);
    EXPECT_EQ(e.details()["line"], 2);
    EXPECT_EQ(e.details()["bytes"], 1000000);
}

TEST(NcuMalformed, RowWiderThanTheHeaderIsMalformed) {
    std::string text = details_text();
    replace_once(text, "\"3.20\",\n", "\"3.20\",\"\",\"\",\"\",\"\",\"\",\"extra\"\n");
    const Error e = error_of(text);
    EXPECT_EQ(e.code(), ErrorCode::malformed_input);
    EXPECT_EQ(e.details()["line"], 2);
}

TEST(NcuMalformed, TextAfterAClosingQuoteIsMalformed) {
    EXPECT_EQ(error_of("\"ID\",\"Kernel Name\"x\n").code(), ErrorCode::malformed_input);
}

TEST(NcuMalformed, DetailsWithoutMetricValueColumnIsMissingField) {
    std::string text = details_text();
    replace_once(text, "\"Metric Value\"", "\"Metric Val\"");
    const Error e = error_of(text);
    EXPECT_EQ(e.code(), ErrorCode::missing_field);
    EXPECT_EQ(e.details()["column"], "Metric Value");
}

TEST(NcuMalformed, NonNumericDurationIsMalformed) {
    std::string text = details_text();
    replace_once(text, "\"Duration\",\"us\",\"203.39\"", "\"Duration\",\"us\",\"fast\"");
    const Error e = error_of(text);
    EXPECT_EQ(e.code(), ErrorCode::malformed_input);
    EXPECT_EQ(e.details()["value"], "fast");
}

TEST(NcuMalformed, NoHeaderAtAllIsUnsupportedFormat) {
    EXPECT_EQ(error_of("==PROF== Connected to process 1\nhello\n").code(),
              ErrorCode::unsupported_format);
    EXPECT_EQ(error_of("\"a\",\"b\"\n\"1\",\"2\"\n").code(), ErrorCode::unsupported_format);
}

TEST(NcuUnusual, NotAvailableValueGivesNoFactButKeepsTheRawText) {
    std::string text = details_text();
    replace_once(text, "\"Duration\",\"us\",\"203.39\"", "\"Duration\",\"us\",\"n/a\"");
    const NcuReport r = parse_ncu_csv(text);
    EXPECT_EQ(r.launches[0].find("duration"), nullptr);
    EXPECT_NE(r.launches[1].find("duration"), nullptr);
}

TEST(NcuUnusual, RawPageWithoutItsUnitsRowCannotVouchForDuration) {
    std::string text = raw_text();
    const std::size_t units = text.find("\n\"\",\"\"") + 1;
    text.erase(units, text.find('\n', units) + 1 - units);
    const Error e = error_of(text);
    EXPECT_EQ(e.code(), ErrorCode::unknown_unit);
    EXPECT_EQ(e.details()["unit"], "");
}

TEST(NcuUnusual, WindowsLineEndingsParseTheSame) {
    std::string text = details_text();
    std::string crlf;
    for (const char c : text) {
        crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    }
    const NcuReport r = parse_ncu_csv(crlf);
    ASSERT_EQ(r.launches.size(), 7u);
    EXPECT_NEAR(r.launches[1].find("duration")->value, 132800, 1e-6);
}

TEST(NcuUnusual, MetricsOutputUsesRawNamesInTheDetailsLayout) {
    const std::string text =
        "==PROF== Connected to process 7 (/app)\n"
        "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\","
        "\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\","
        "\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
        "\"0\",\"7\",\"app\",\"h\",\"k(int, int)\",\"1\",\"7\",\"(128, 1, 1)\",\"(8, 1, 1)\",\"0\","
        "\"9.0\",\"Command line profiler metrics\",\"gpu__time_duration.sum\",\"usecond\","
        "\"1.50\"\n"
        "\"0\",\"7\",\"app\",\"h\",\"k(int, int)\",\"1\",\"7\",\"(128, 1, 1)\",\"(8, 1, 1)\",\"0\","
        "\"9.0\",\"Command line profiler metrics\",\"dram__bytes_read.sum\",\"Mbyte\","
        "\"1,024.5\"\n";
    const NcuReport r = parse_ncu_csv(text);
    ASSERT_EQ(r.launches.size(), 1u);
    EXPECT_EQ(r.launches[0].scope.kernel, "k(int, int)");
    EXPECT_DOUBLE_EQ(r.launches[0].find("duration")->value, 1500);
    EXPECT_DOUBLE_EQ(r.launches[0].find("dram.bytes_read")->value, 1024.5e6);
}

TEST(NcuUnusual, CountersNotPermittedBecomesAFactWithAdvice) {
    const NcuReport r = parse_ncu_csv(
        "==PROF== Connected to process 9 (/app)\n"
        "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU "
        "Performance Counters on the target device 0.\n"
        "==PROF== Disconnected from process 9\n");
    EXPECT_FALSE(r.counters_permitted());
    ASSERT_EQ(r.report_facts.size(), 1u);
    EXPECT_EQ(r.report_facts[0].id, "collection.counters_not_permitted");
    EXPECT_NE(r.advice.find("administrator"), std::string::npos);
    EXPECT_TRUE(r.launches.empty());
    EXPECT_EQ(r.tool_messages.size(), 1u);
}

TEST(NcuUnusual, VersionBannerInThePreambleIsRecorded) {
    const NcuReport r = parse_ncu_csv(
        "NVIDIA (R) Nsight Compute Command Line Profiler\n"
        "Copyright (c) 2018-2025 NVIDIA Corporation\n"
        "Version 2025.3.1.0 (build 36398880) (public-release)\n" +
        details_text());
    EXPECT_EQ(r.source.tool_version, "2025.3.1.0");
}

// read_ncu_report parses while a second thread checks the bytes (binary, UTF-8) and hashes
// them; the answer must be the one parsing the text in order gives. Binary bytes after an earlier
// error are binary_input; a Latin-1 text is parsed repaired, errors quoting the repaired text.
TEST(NcuMalformed, ReadingAFileAnswersAsParsingItsText) {
    std::string malformed_then_binary = raw_text();
    replace_once(malformed_then_binary, "\"ns\"", "\"fortnight\"");
    malformed_then_binary += std::string("\x01junk\n");
    std::string latin1_unknown_unit =
        read_file_capped("tests/fixtures/ncu/ncu_details_latin1.csv", 1 << 20);
    replace_once(latin1_unknown_unit, "\"Duration\",\"us\"", "\"Duration\",\"\xb5s\"");
    std::string latin1_binary = latin1_unknown_unit + std::string("\x02", 1);
    const std::string latin1 =
        read_file_capped("tests/fixtures/ncu/ncu_details_latin1.csv", 1 << 20);
    const std::string cases[] = {malformed_then_binary,
                                 latin1_unknown_unit,
                                 latin1_binary,
                                 latin1,
                                 raw_text(),
                                 "no csv at all\n",
                                 "  \n"};
    // A report's document, or its error's message and details.
    const auto outcome = [](const std::function<std::string()>& read) {
        std::string document;
        const test::CaughtError e = test::error_thrown_by([&] { document = read(); });
        return e ? std::string(e->what()) + e->details().dump() : document;
    };
    const test::TempDir dir;
    const auto path = dir / "read.csv";
    for (std::size_t i = 0; i < std::size(cases); ++i) {
        SCOPED_TRACE(testing::Message() << "case " << i);
        std::filesystem::remove(path);
        write_file_create_once(path, cases[i]);
        const std::string from_file =
            outcome([&] { return report_to_json(read_ncu_report(path)).dump(); });
        const std::string from_text = outcome([&] {
            NcuReport r = parse_ncu_csv(cases[i]);
            r.source.report_sha256 = sha256_hex(cases[i]);
            return report_to_json(r).dump();
        });
        EXPECT_EQ(from_file, from_text);
    }
}

// A raw row whose cells are all quoted has its metric cells checked 64 bytes at a time
// (ReportBuilder::add_raw_row); any other row cell by cell. Both must count and list the same
// unmodeled values, in the same order: the fixture with values that are not numbers, or nearly
// are, put in the unmodelled columns, read with every cell quoted and with one identity cell
// unquoted (which sends each row the cell-by-cell way).
TEST(NcuUnusual, RowsCheckedByTheBlockAndCellByCellCountTheSameUnmodeledValues) {
    const std::string text = raw_text();
    CsvTokenizer tok(text);
    CsvRow row;
    std::vector<std::vector<std::string>> rows;
    while (tok.next(row)) {
        rows.emplace_back(row.cells.begin(), row.cells.end());
    }
    ASSERT_GT(rows.size(), 3u);
    const std::vector<std::string>& header = rows[0];
    ASSERT_EQ(header[1], "Process ID");
    const std::vector<std::string> odd = {"-1",
                                          "1e5",
                                          "1,23",
                                          "1.",
                                          ".5",
                                          "1,2345",
                                          "12,345.6",
                                          "1.2.3",
                                          "+3",
                                          "n/a",
                                          "N/A",
                                          "text, comma",
                                          ",",
                                          "1,234,567",
                                          "0x10",
                                          " 1",
                                          "1 ",
                                          "1,234,56",
                                          std::string(70, '1'),
                                          "1.5e-3",
                                          ""};
    std::mt19937 random(7);
    for (std::size_t r = 2; r < rows.size(); ++r) {  // rows[1]: the units row
        for (std::size_t c = 11; c < header.size(); ++c) {
            if (classify_metric("", header[c]).kind == MetricMeaning::Kind::none &&
                random() % 8 == 0) {
                rows[r][c] = odd[random() % odd.size()];
            }
        }
    }
    const auto write = [&](bool quote_process_id) {
        std::string out;
        for (std::size_t r = 0; r < rows.size(); ++r) {
            for (std::size_t c = 0; c < rows[r].size(); ++c) {
                out += c == 0 ? "" : ",";
                const bool quoted = quote_process_id || r < 2 || c != 1;
                out += quoted ? "\"" + rows[r][c] + "\"" : rows[r][c];
            }
            out += '\n';
        }
        return out;
    };
    const NcuReport block = parse_ncu_csv(write(true));
    const NcuReport cells = parse_ncu_csv(write(false));
    ASSERT_EQ(block.launches.size(), cells.launches.size());
    std::size_t unmodeled = 0;
    for (std::size_t i = 0; i < block.launches.size(); ++i) {
        EXPECT_EQ(block.launches[i].unmodeled, cells.launches[i].unmodeled) << i;
        unmodeled += block.launches[i].unmodeled;
    }
    EXPECT_GT(unmodeled, 7 * 30u);
    ASSERT_EQ(block.unmodeled.size(), cells.unmodeled.size());
    for (std::size_t i = 0; i < block.unmodeled.size(); ++i) {
        EXPECT_EQ(block.unmodeled[i].name, cells.unmodeled[i].name) << i;
        EXPECT_EQ(block.unmodeled[i].value, cells.unmodeled[i].value) << i;
    }
    EXPECT_EQ(report_to_json(block).dump(), report_to_json(cells).dump());
}

}  // namespace
}  // namespace cko::profile::ncu
