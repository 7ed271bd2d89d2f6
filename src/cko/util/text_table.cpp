// Aligned text columns: the padding fmt gives "{:<N}" and "{:>N}", in one place.
#include "cko/util/text_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace cko {

TextTable::TextTable(std::vector<TextColumn> columns, std::string indent)
    : columns_(std::move(columns)), indent_(std::move(indent)) {}

TextTable& TextTable::fit() {
    fit_ = true;
    return *this;
}

void TextTable::add(std::vector<std::string> cells) {
    rows_.push_back(Row{std::move(cells), false});
}

void TextTable::add_rule() {
    rows_.push_back(Row{{}, true});
}

std::string TextTable::line(const std::vector<std::string>& cells,
                            const std::vector<std::size_t>& widths) const {
    std::string out = indent_;
    for (std::size_t c = 0; c < cells.size(); ++c) {
        const TextColumn* column = c < columns_.size() ? &columns_[c] : nullptr;
        const std::size_t width = c < widths.size() ? widths[c] : 0;
        const Align align = column != nullptr ? column->align : Align::left;
        if (c > 0) {
            out += column != nullptr ? column->gap : " ";
        }
        if (c + 1 == cells.size() && align == Align::left) {
            out += cells[c];  // the row's last cell: no trailing blanks
        } else if (align == Align::left) {
            out += fmt::format("{:<{}}", cells[c], width);
        } else {
            out += fmt::format("{:>{}}", cells[c], width);
        }
    }
    return out;
}

std::vector<std::size_t> TextTable::own_widths() const {
    std::vector<std::size_t> widths;
    for (const TextColumn& column : columns_) {
        widths.push_back(column.width);
    }
    return widths;
}

std::string TextTable::row(const std::vector<std::string>& cells) const {
    return line(cells, own_widths());
}

std::string TextTable::render() const {
    std::vector<std::size_t> widths = own_widths();
    if (fit_) {
        for (const Row& r : rows_) {
            for (std::size_t c = 0; c < r.cells.size() && c < widths.size(); ++c) {
                widths[c] = std::max(widths[c], r.cells[c].size());
            }
        }
    }
    std::string out;
    for (const Row& r : rows_) {
        if (r.rule) {
            std::vector<std::string> dashes;
            for (const std::size_t w : widths) {
                dashes.emplace_back(w, '-');
            }
            out += line(dashes, widths) + "\n";
        } else {
            out += line(r.cells, widths) + "\n";
        }
    }
    return out;
}

}  // namespace cko
