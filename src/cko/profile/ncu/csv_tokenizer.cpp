// A hand-written CSV tokenizer: cells are views into the buffer, so a row costs no allocation.
// bench/ncu_bench.cpp shows why: per-cell strings halve the throughput on a details export.
#include "cko/profile/ncu/csv_tokenizer.hpp"

#include "cko/profile/ncu/byte_scan.hpp"

#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

namespace cko::profile::ncu {

CsvTokenizer::CsvTokenizer(std::string_view text, CsvLimits limits)
    : text_(text), limits_(limits), quotes_(text) {
    cells_.reserve(64);
}

std::size_t CsvTokenizer::line_of(std::size_t offset) const noexcept {
    const std::size_t end = std::min(offset, text_.size());
    return 1 + static_cast<std::size_t>(std::count(text_.begin(), text_.begin() + end, '\n'));
}

void CsvTokenizer::refuse_long_cell(std::size_t length, std::size_t row_offset) const {
    throw Error(
        ErrorCode::field_too_long,
        fmt::format("a cell on line {} is {} bytes long; the limit is {} bytes",
                    line_of(row_offset), length, limits_.max_field_bytes),
        {{"line", line_of(row_offset)}, {"bytes", length}, {"limit", limits_.max_field_bytes}});
}

void CsvTokenizer::refuse_open_quote(std::size_t row_offset) const {
    throw Error(ErrorCode::truncated_input,
                fmt::format("the text ends inside a quoted cell that starts on line {}",
                            line_of(row_offset)),
                {{"line", line_of(row_offset)}});
}

// A quoted cell holding "" escapes: unescaped into scratch that lives until the next row.
std::string_view CsvTokenizer::escaped_cell(byte_scan::QuoteCursor& quotes, std::size_t start,
                                            std::size_t quote, std::size_t row_offset,
                                            std::size_t& pos) {
    const char* data = text_.data();
    const std::size_t size = text_.size();
    std::string& scratch = unescaped_.emplace_back();
    std::size_t piece = start;
    while (quote + 1 < size && data[quote + 1] == '"') {  // "" inside a quoted cell: one quote
        scratch.append(data + piece, quote + 1 - piece);
        (void)quotes.pop();  // the second quote of the pair
        piece = quote + 2;
        check_length(scratch.size(), row_offset);
        quote = quotes.pop();
        if (quote == size) {
            refuse_open_quote(row_offset);
        }
    }
    pos = quote + 1;
    scratch.append(data + piece, quote - piece);
    check_length(scratch.size(), row_offset);
    return scratch;
}

bool CsvTokenizer::next(CsvRow& row) {
    const char* data = text_.data();
    const std::size_t size = text_.size();
    while (pos_ < size) {
        if (data[pos_] != '"') {  // not CSV: keep the line aside and move on
            const void* nl = std::memchr(data + pos_, '\n', size - pos_);
            const std::size_t end =
                nl == nullptr ? size
                              : static_cast<std::size_t>(static_cast<const char*>(nl) - data);
            std::string_view line(data + pos_, end - pos_);
            if (!line.empty() && line.back() == '\r') {
                line.remove_suffix(1);
            }
            if (!line.empty()) {
                other_lines_.push_back(line);
            }
            pos_ = nl == nullptr ? size : end + 1;
            continue;
        }
        read_row(row);
        return true;
    }
    return false;
}

namespace {

// The most cells 64 bytes hold (`","` and an empty cell: one every 3 bytes), and room to spare.
constexpr std::size_t kCellsPerBlock = 24;

// Common cells from the opening quote at pos, a block of 64 bytes at a time, while a block holds
// one and room and text last: the position reached (the next cell's opening quote; pos itself
// when none was taken), the cells appended at cells[count...].
std::size_t block_run(const char* data, std::size_t size, std::size_t pos, std::string_view* cells,
                      std::size_t& count, std::size_t room) {
    while (room - count >= kCellsPerBlock && pos + 66 <= size) {
        std::uint64_t ends = byte_scan::plain_cell_ends(data + pos);
        if (ends == 0) {
            break;
        }
        std::size_t start = pos + 1;
        for (; ends != 0; ends &= ends - 1) {
            const std::size_t end = pos + static_cast<std::size_t>(std::countr_zero(ends));
            cells[count++] = std::string_view(data + start, end - start);
            start = end + 3;
        }
        pos = start - 1;
    }
    return pos;
}

}  // namespace

// The hot loop of every import: a raw page is a few long rows of short quoted cells. Position,
// quote bitmap and cell count live in locals (registers) for the whole row; the common cell
// costs a few bit operations, two byte compares and one store.
void CsvTokenizer::read_row(CsvRow& row) {
    const char* const data = text_.data();
    const std::size_t size = text_.size();
    const std::size_t row_offset = pos_;
    unescaped_.clear();
    byte_scan::QuoteCursor quotes = quotes_;
    std::size_t pos = pos_;
    if (quotes.peek() < pos) {  // quotes in lines set aside before this row
        quotes.seek(pos);
    }
    std::size_t count = 0;
    bool plain = true;
    // Rows of a few dozen cells (a details page's) are read cell by cell; a wide row (a raw
    // page's, hundreds of metric cells) goes by blocks from its 24th cell on. Never for a cell
    // limit below 64 bytes: a block's cells are shorter than that and never checked.
    std::size_t next_block_run = limits_.max_field_bytes >= 64 ? 24 : static_cast<std::size_t>(-1);
    if (cells_.size() < 64) {
        cells_.resize(64);
    }
    std::string_view* cells = cells_.data();
    std::size_t room = cells_.size();
    for (;;) {
        if (count == room) {
            room *= 2;
            cells_.resize(room);
            cells = cells_.data();
        }
        // The common cell first: quoted, no "" inside, a comma after. Nothing is taken until
        // the cell is known to be one, so anything else (an escape, the row's last cell, an
        // open quote, a long cell) is read below from the same place, as it was.
        while (count != room && pos < size && data[pos] == '"') {
            if (count >= next_block_run) {
                // A wide row's run of common cells, 64 bytes at a time (plain_cell_ends): the
                // same cells, without the two quote lookups each.
                const std::size_t from = pos;
                pos = block_run(data, size, pos, cells, count, room);
                if (pos != from) {
                    quotes.seek(pos);
                }
                next_block_run = count + 8;  // it stopped: a few cells one by one first
                continue;
            }
            byte_scan::QuoteCursor ahead = quotes;
            (void)ahead.pop();  // the opening quote, at pos
            const std::size_t quote = ahead.pop();
            if (quote + 1 >= size || data[quote + 1] != ',' ||
                quote - pos > limits_.max_field_bytes) {
                break;
            }
            cells[count++] = std::string_view(data + pos + 1, quote - pos - 1);
            quotes = ahead;
            pos = quote + 2;
        }
        if (count == room) {
            continue;
        }
        if (pos < size && data[pos] == '"') {
            const std::size_t start = pos + 1;
            (void)quotes.pop();  // the opening quote, at pos
            const std::size_t quote = quotes.pop();
            if (quote == size) {
                refuse_open_quote(row_offset);
            }
            if (quote + 1 < size && data[quote + 1] == '"') [[unlikely]] {
                // Copies in and out: a local whose address escapes to a call would live in
                // memory for the whole loop, not in registers.
                byte_scan::QuoteCursor cursor = quotes;
                std::size_t end = 0;
                cells[count++] = escaped_cell(cursor, start, quote, row_offset, end);
                quotes = cursor;
                pos = end;
                plain = false;
            } else {
                check_length(quote - start, row_offset);
                cells[count++] = std::string_view(data + start, quote - start);
                pos = quote + 1;
            }
        } else {
            plain = false;
            const std::size_t start = pos;
            while (pos < size && data[pos] != ',' && data[pos] != '\n' && data[pos] != '\r') {
                ++pos;
            }
            check_length(pos - start, row_offset);
            cells[count++] = std::string_view(data + start, pos - start);
            if (pos != start) {
                quotes.seek(pos);  // a quote inside an unquoted cell is part of it
            }
        }
        if (pos >= size) {
            row_terminated_ = false;
            break;
        }
        const char c = data[pos];
        if (c == ',') {
            ++pos;
            continue;
        }
        if (c == '\n' || (c == '\r' && pos + 1 < size && data[pos + 1] == '\n')) {
            pos += c == '\n' ? 1 : 2;
            row_terminated_ = true;
            break;
        }
        throw Error(ErrorCode::malformed_input,
                    fmt::format("line {}: unexpected character after cell {} (a quoted cell "
                                "must be followed by ',' or a line break)",
                                line_of(pos), count),
                    {{"line", line_of(pos)}, {"cell", count}});
    }
    pos_ = pos;
    quotes_ = quotes;
    row.cells = std::span<const std::string_view>(cells, count);
    row.offset = row_offset;
    row.plain = plain;
}

namespace {

bool allowed_in_text(unsigned char c) {
    return c >= 0x20 || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == 0x1b;
}

}  // namespace

// A 64-byte block at a time: a block is looked at closely only when it holds a control byte no
// export has or, until the first is found, a byte above 0x7f (byte_scan::unusual_text_bits), so
// the binary check and the search for where UTF-8 validation must start are one pass at memory
// speed (about 5 GB/s word by word before: a tenth of a details page's import).
TextScan scan_text(std::string_view text) {
    TextScan out;
    const auto look = [&](std::size_t from, std::size_t to) {
        for (std::size_t j = from; j < to; ++j) {
            const auto c = static_cast<unsigned char>(text[j]);
            if (c >= 0x80 && out.non_ascii == std::string_view::npos) {
                out.non_ascii = j;
            }
            if (!allowed_in_text(c)) {
                out.binary = j;
                return true;
            }
        }
        return false;
    };
    // Blocks with nothing unusual are passed over 64 bytes at a time (with AVX-512BW where the CPU
    // has it); a block with something is looked at byte by byte.
    std::size_t i = 0;
    for (;;) {
        i = byte_scan::skip_usual_blocks(text.data(), i, text.size(),
                                         out.non_ascii == std::string_view::npos);
        if (i + 64 > text.size()) {
            break;
        }
        if (look(i, i + 64)) {
            return out;
        }
        i += 64;
    }
    look(i, text.size());
    return out;
}

void refuse_binary(std::string_view text, std::size_t i) {
    throw Error(ErrorCode::binary_input,
                fmt::format("byte {} is the control character 0x{:02x}: this is binary data, not "
                            "an Nsight Compute CSV export (a .ncu-rep must first be exported with "
                            "`ncu --import FILE --csv --page raw`)",
                            i, static_cast<unsigned char>(text[i])),
                {{"offset", i}, {"byte", static_cast<unsigned char>(text[i])}});
}

void reject_binary(std::string_view text) {
    (void)first_non_ascii_of_text(text);
}

std::size_t first_non_ascii_of_text(std::string_view text) {
    const TextScan scan = scan_text(text);
    if (scan.binary != std::string_view::npos) {
        refuse_binary(text, scan.binary);
    }
    return scan.non_ascii;
}

}  // namespace cko::profile::ncu
