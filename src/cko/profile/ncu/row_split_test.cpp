// A raw page's rows read by two threads give the document, and the error, of one thread.
#include "cko/profile/ncu/row_split.hpp"

#include "cko/profile/ncu/ncu_csv.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace cko::profile::ncu {
namespace {

// 40 launches of a raw page with what a tail can hold: tool lines between rows, a cell with ""
// escapes, an unquoted cell, metrics whose first text value comes early, late, or both, and a
// kernel name holding a line break followed by a quote (where a tail cannot start), and two
// launches with no duration.
std::string raw_page(int bad_row = -1) {
    std::string text =
        "==PROF== Connected to process 1\n"
        "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes.sum\",\"early\","
        "\"late\",\"both\"\n"
        "\"\",\"\",\"nsecond\",\"byte\",\"\",\"\",\"\"\n";
    for (int row = 0; row < 40; ++row) {
        if (row % 9 == 4) {
            text += fmt::format("==WARNING== line {}\n", row);
        }
        std::string kernel = fmt::format("k{}", row % 3);
        if (row == 12) {
            kernel = "k\n\"\"x\"\"";  // k, line break, "x"
        } else if (row == 17) {
            kernel = "a \"\"quoted\"\" name";
        }
        const std::string early = row == 1 ? "n/a-ish" : std::to_string(row);
        const std::string late = row == 30 ? "late text" : std::to_string(row * 2);
        const std::string both = row == 3 || row == 33 ? fmt::format("text {}", row) : "7";
        if (row == bad_row) {
            text += "\"99\",\"k\",\"1\",\"2\",\"3\",\"4\",\"5\",\"6\"\n";  // a cell too many
            continue;
        }
        if (row == 21) {  // an unquoted duration
            text += fmt::format("\"{}\",\"{}\",{}.5,\"{}\",\"{}\",\"{}\",\"{}\"\n", row, kernel,
                                1000 + row, 4096 * row, early, late, both);
            continue;
        }
        // Rows 7 and 25 have no duration: the note counts them on both threads.
        const std::string duration =
            row == 7 || row == 25 ? std::string("n/a") : fmt::format("{}.5", 1000 + row);
        text += fmt::format("\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\"\n", row, kernel,
                            duration, 4096 * row, early, late, both);
    }
    text += "==PROF== Disconnected from process 1\n";
    return text;
}

std::string document_of(const NcuReport& report) {
    std::ostringstream out;
    write_report_json(report, out);
    return out.str();
}

// The page parsed with its tail starting at `at`, picked and read on a second thread.
NcuReport parse_split_at(const std::string& text, std::size_t at) {
    RowSplit split(/*wait_for_pick=*/true);
    std::thread tail([&] {
        split.wait_until_open_or_closed();
        split.pick_at(at);
        read_raw_tail(text, {}, split);
    });
    NcuReport report;
    try {
        report = parse_ncu_text_split(text, nullptr, {}, split);
    } catch (...) {
        tail.join();
        throw;
    }
    tail.join();
    return report;
}

// Every row start after the units row, and the end of the text.
std::vector<std::size_t> row_starts(const std::string& text) {
    std::vector<std::size_t> out;
    const std::size_t units = text.find("\"\",\"\",\"nsecond\"");
    for (std::size_t at = text.find('\n', units) + 1; at < text.size();
         at = text.find('\n', at) + 1) {
        if (text[at] == '"') {
            out.push_back(at);
        }
    }
    out.push_back(text.size());
    return out;
}

TEST(RowSplit, ATailAtEveryRowGivesTheOneThreadDocument) {
    const std::string text = raw_page();
    const std::string one = document_of(parse_ncu_csv(text));
    const NcuReport reference = parse_ncu_csv(text);
    ASSERT_EQ(reference.launches.size(), 40u);
    ASSERT_EQ(reference.unmodeled.size(), 3u);  // early, late, both: once each
    ASSERT_EQ(reference.notes.size(), 1u);
    ASSERT_TRUE(reference.notes[0].starts_with("2 of 40 launches have no duration"));
    const std::size_t inside = text.find("k\n\"\"x") + 2;  // the next test's
    std::size_t merged = 0;
    for (const std::size_t at : row_starts(text)) {
        if (at == inside) {
            continue;
        }
        SCOPED_TRACE(fmt::format("tail at byte {}", at));
        const NcuReport split = parse_split_at(text, at);
        // Not taken: a tail at the end of the text (no row starts there).
        merged += split.kept.empty() ? 0 : 1;
        EXPECT_EQ(document_of(split), one);
        EXPECT_EQ(split.other_lines, reference.other_lines);
        EXPECT_EQ(split.tool_messages, reference.tool_messages);
    }
    EXPECT_EQ(merged, 40u);  // at every row: the tail was taken, not just dropped
}

TEST(RowSplit, ATailWhereNoRowStartsIsDropped) {
    const std::string text = raw_page();
    const std::size_t inside = text.find("k\n\"\"x") + 2;  // after a line break, at a quote
    ASSERT_EQ(text[inside], '"');
    const NcuReport split = parse_split_at(text, inside);
    EXPECT_TRUE(split.kept.empty());
    EXPECT_EQ(document_of(split), document_of(parse_ncu_csv(text)));
    EXPECT_EQ(split.launches[12].scope.kernel, "k\n\"x\"");
}

TEST(RowSplit, AnErrorInTheTailIsTheOneThreadError) {
    const std::string text = raw_page(/*bad_row=*/30);
    std::string expected;
    try {
        (void)parse_ncu_csv(text);
        FAIL() << "the row with a cell too many was read";
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::malformed_input);
        expected = e.what();
    }
    const std::size_t bad = text.find("\"99\",");
    for (const std::size_t at : {text.find("\"20\","), bad, text.find("\"35\",")}) {
        SCOPED_TRACE(fmt::format("tail at byte {} (the bad row at {})", at, bad));
        try {
            (void)parse_split_at(text, at);
            FAIL() << "the row with a cell too many was read";
        } catch (const Error& e) {
            EXPECT_EQ(e.code(), ErrorCode::malformed_input);
            EXPECT_EQ(std::string(e.what()), expected);
        }
    }
}

TEST(RowSplit, APickTakesARowStartHalfwayThroughWhatIsLeft) {
    const std::string text = raw_page();
    RowSplit split;
    EXPECT_FALSE(split.pick(text, 0).has_value());  // not open yet
    const std::size_t first = text.find("\"0\",");
    split.open(text.find("\"ID\""), text.find("\"\",\"\""), first);
    const std::optional<std::size_t> at = split.pick(text, 0);
    ASSERT_TRUE(at.has_value());
    EXPECT_GE(*at, first + (text.size() - first) / 2);
    EXPECT_EQ(text[*at - 1], '\n');
    EXPECT_EQ(text[*at], '"');
    EXPECT_EQ(split.split(), *at);
    EXPECT_EQ(split.reached(*at - 5), RowSplit::Reached::not_yet);
    EXPECT_EQ(split.reached(*at), RowSplit::Reached::here);
    EXPECT_FALSE(split.cancelled());
    EXPECT_EQ(split.reached(*at + 1), RowSplit::Reached::passed);
    EXPECT_TRUE(split.cancelled());

    RowSplit small;
    small.open(0, RowSplit::kNone, first);
    EXPECT_FALSE(small.pick(text, text.size()).has_value());  // less left than asked
    small.close();
    EXPECT_FALSE(small.pick(text, 0).has_value());  // closed
}

TEST(RowSplit, ATailPickedAfterTheMainThreadIsDoneReadsNothing) {
    // The main thread failed before its header (or finished) and closed the split: a tail the
    // second thread would read then is delivered empty, not an error about a header it never saw.
    const std::string text = raw_page();
    RowSplit split;
    split.close();
    split.pick_at(text.find("\"5\","));
    read_raw_tail(text, {}, split);
    const RawTail tail = split.wait_tail();
    EXPECT_TRUE(tail.cancelled);
    EXPECT_TRUE(tail.report.launches.empty());
}

TEST(RowSplit, AReadFileOfManyRowsIsTheTextsReport) {
    // Big enough for the second thread to take a tail if it is done in time (4 MiB left): the
    // report is the same either way.
    std::string text = raw_page();
    text.resize(text.rfind("==PROF== Disconnected"));
    // Templated kernels' long names: 10 MB in 40,000 rows.
    const std::string args(220, 'T');
    for (int row = 40; row < 40'000; ++row) {
        text +=
            fmt::format("\"{}\",\"k{}<{}>\",\"{}.5\",\"{}\",\"{}\",\"{}\",\"7\"\n", row, row % 5,
                        args, 1000 + row, 4096 * row, row, row == 30'000 ? "at last" : "2");
        if (row % 10'000 == 0) {
            text += fmt::format("==WARNING== line {}\n", row);
        }
    }
    const std::filesystem::path path =
        std::filesystem::temp_directory_path() / fmt::format("row_split_{}.csv", ::getpid());
    std::ofstream(path, std::ios::binary) << text;
    const NcuReport read = read_ncu_report(path);
    std::filesystem::remove(path);
    NcuReport parsed = parse_ncu_csv(text);
    ASSERT_EQ(parsed.launches.size(), 40'000u);
    ASSERT_GT(text.size(), std::size_t{9} << 20);
    EXPECT_EQ(read.source.report_sha256, sha256_hex(text));
    parsed.source.report_sha256 = read.source.report_sha256;
    EXPECT_EQ(document_of(read), document_of(parsed));
    RecordProperty("tail_taken", read.kept.empty() ? "no" : "yes");
}

}  // namespace
}  // namespace cko::profile::ncu
