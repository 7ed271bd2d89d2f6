// Text tables: the padding of fmt's "{:<N}" / "{:>N}", fitted widths, rules, free last cells.
#include "cko/util/text_table.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace cko {
namespace {

TEST(TextTable, ARowIsPaddedAsFmtPadsIt) {
    const TextTable t({{24}, {12}, {10}, {}}, "  ");
    EXPECT_EQ(
        t.row({"inv-1", "confirm", "succeeded", "improved"}),
        fmt::format("  {:<24} {:<12} {:<10} {}", "inv-1", "confirm", "succeeded", "improved"));
    // A wider cell is written whole and pushes the rest right, as fmt does.
    EXPECT_EQ(t.row({"a", "a-kind-longer-than-12", "x", ""}),
              fmt::format("  {:<24} {:<12} {:<10} {}", "a", "a-kind-longer-than-12", "x", ""));
}

TEST(TextTable, RightAlignedCellsAndGapsAreTheColumns) {
    const TextTable t({{28}, {8}, {6, Align::right}, {0, Align::left, "  "}});
    EXPECT_EQ(t.row({"kernel", "arch", "insts", "signatures"}),
              fmt::format("{:<28} {:<8} {:>6}  {}", "kernel", "arch", "insts", "signatures"));
    // A right-aligned last cell is padded; a left-aligned one never is.
    const TextTable numbers({{4}, {5, Align::right}});
    EXPECT_EQ(numbers.row({"a", "7"}), "a        7");
    EXPECT_EQ(numbers.row({"a"}), "a");
}

TEST(TextTable, AFittedTableIsAsWideAsItsWidestCellsWithARuleUnderTheHeader) {
    TextTable t({{0, Align::right, "  "}, {0, Align::right, "  "}, {0, Align::left, "  "}}, " ");
    t.fit();
    t.add({"Count", "Total (ns)", "Kernel"});
    t.add_rule();
    t.add({"3", "1234567890123", "gemm"});
    t.add({"12", "5", "a kernel name longer than its header"});
    EXPECT_EQ(t.render(),
              " Count     Total (ns)  Kernel\n"
              " -----  -------------  ------------------------------------\n"
              "     3  1234567890123  gemm\n"
              "    12              5  a kernel name longer than its header\n");
}

TEST(TextTable, AnEmptyTableRendersNothing) {
    EXPECT_EQ(TextTable(std::vector<TextColumn>{{4}}).render(), "");
}

}  // namespace
}  // namespace cko
