// Bytes → CSV rows for Nsight Compute exports: RFC-4180 quoting, non-CSV lines set aside.
#pragma once

#include "cko/profile/ncu/byte_scan.hpp"

#include <cstddef>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cko::profile::ncu {

struct CsvLimits {
    // A kernel name of a heavily templated C++ kernel runs to tens of KiB; a cell far beyond that
    // is damage, not a name.
    std::size_t max_field_bytes = std::size_t{256} << 10;
};

// One CSV row. The cells view the input buffer (or, for quoted cells holding "" escapes, the
// tokenizer's scratch) and stay valid until the next call to next().
struct CsvRow {
    std::span<const std::string_view> cells;
    std::size_t offset = 0;  // byte offset of the row's first character
    // Every cell was quoted and none held "" escapes: the row is `"c","c",...,"c"`, each cell
    // viewing the text between its quotes.
    bool plain = true;
};

// Splits text into CSV rows. NCU quotes every cell, so a line that does not start with '"' is not
// CSV: program output, `==PROF==` / `==WARNING==` / `==ERROR==` lines, a version banner. Those
// lines are skipped and kept as tool lines for the parser to read (version, ERR_NVGPUCTRPERM).
// Throws cko::Error: truncated_input (the text ends inside a quoted cell), field_too_long,
// malformed_input (text after a closing quote).
class CsvTokenizer {
public:
    explicit CsvTokenizer(std::string_view text, CsvLimits limits = {});

    // Advances to the next CSV row; false at the end of the text.
    bool next(CsvRow& row);
    // Continues from a byte offset (a row's start returned earlier): re-reading one row.
    void seek(std::size_t offset) noexcept {
        pos_ = offset;
        quotes_.seek(offset);
        row_terminated_ = true;
    }

    // Where the next row (or line) starts: the end of the row just returned.
    [[nodiscard]] std::size_t position() const noexcept { return pos_; }
    [[nodiscard]] std::size_t size() const noexcept { return text_.size(); }

    // Lines that were not CSV, in order.
    [[nodiscard]] const std::vector<std::string_view>& other_lines() const noexcept {
        return other_lines_;
    }
    // Whether the row just returned ended with a line break (false: the text stopped mid-line).
    [[nodiscard]] bool row_terminated() const noexcept { return row_terminated_; }
    // 1-based line number of a byte offset (computed on demand: only error messages need it).
    [[nodiscard]] std::size_t line_of(std::size_t offset) const noexcept;

private:
    void read_row(CsvRow& row);
    std::string_view escaped_cell(byte_scan::QuoteCursor& quotes, std::size_t start,
                                  std::size_t quote, std::size_t row_offset, std::size_t& pos);
    void check_length(std::size_t length, std::size_t row_offset) const {
        if (length > limits_.max_field_bytes) [[unlikely]] {
            refuse_long_cell(length, row_offset);
        }
    }
    [[noreturn]] void refuse_long_cell(std::size_t length, std::size_t row_offset) const;
    [[noreturn]] void refuse_open_quote(std::size_t row_offset) const;

    std::string_view text_;
    CsvLimits limits_;
    byte_scan::QuoteCursor quotes_;
    std::size_t pos_ = 0;
    bool row_terminated_ = true;
    std::vector<std::string_view> cells_;  // grown, never shrunk: a row's cells are its prefix
    std::deque<std::string> unescaped_;    // deque: growing it never moves the strings cells view
    std::vector<std::string_view> other_lines_;
};

// One pass over the text: where the first byte no text export holds is (a control byte other
// than tab, line breaks, form feed and ESC), and the first byte above 0x7f (npos: none).
struct TextScan {
    std::size_t binary = std::string_view::npos;
    std::size_t non_ascii = std::string_view::npos;
};
[[nodiscard]] TextScan scan_text(std::string_view text);
// The binary_input error for the byte at `offset`.
[[noreturn]] void refuse_binary(std::string_view text, std::size_t offset);

// Throws binary_input when text holds a NUL byte or another control character that no text
// export contains (tab, line breaks, form feed and ESC are allowed), naming the byte offset.
void reject_binary(std::string_view text);
// The same check, in the same pass also finding the first byte above 0x7f (npos: the text is
// ASCII, so valid UTF-8): UTF-8 validation need only start there.
[[nodiscard]] std::size_t first_non_ascii_of_text(std::string_view text);

}  // namespace cko::profile::ncu
