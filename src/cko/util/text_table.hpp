// Text tables as cko prints them for people: aligned columns, one row a line.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace cko {

enum class Align { left, right };

struct TextColumn {
    std::size_t width = 0;  // the least width; a fitted table widens it to its widest cell
    Align align = Align::left;
    std::string gap = " ";  // written before the column (the table's indent before the first)
};

// Columns of text. A cell is padded to its column's width as fmt pads it ("{:<N}" / "{:>N}", by
// display width); a wider cell is written whole and pushes the rest of its row right. The last cell
// of a row is not padded when it is left-aligned (no trailing blanks), so a row may end early in a
// free-text cell. Example: `cko ls`'s invocations, the compiler verbs' tables, a trace's kernels.
class TextTable {
public:
    explicit TextTable(std::vector<TextColumn> columns, std::string indent = "");

    // Widens each column, when rendered, to its widest cell in bytes (the cells fitted are numbers
    // and words; a name, which may hold other characters, goes last, where it is not padded).
    TextTable& fit();

    void add(std::vector<std::string> cells);
    // A row of dashes as wide as each column (its width when rendered).
    void add_rule();

    // Every row added, each ending in "\n".
    [[nodiscard]] std::string render() const;

    // One row at the columns' own widths (never fitted), without "\n": for a table written row by
    // row among other lines.
    [[nodiscard]] std::string row(const std::vector<std::string>& cells) const;

private:
    [[nodiscard]] std::vector<std::size_t> own_widths() const;
    [[nodiscard]] std::string line(const std::vector<std::string>& cells,
                                   const std::vector<std::size_t>& widths) const;

    std::vector<TextColumn> columns_;
    std::string indent_;
    bool fit_ = false;
    struct Row {
        std::vector<std::string> cells;
        bool rule = false;  // dashes, drawn at render time
    };
    std::vector<Row> rows_;
};

}  // namespace cko
