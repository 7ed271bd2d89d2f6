// A hand-written CSV tokenizer: cells are views into the buffer, so a row costs no allocation.
// bench/ncu_bench.cpp shows why: per-cell strings halve the throughput on a details export.
#include "cko/profile/ncu/csv_tokenizer.hpp"

#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace cko::profile::ncu {

CsvTokenizer::CsvTokenizer(std::string_view text, CsvLimits limits) : text_(text), limits_(limits) {
    cells_.reserve(64);
}

std::size_t CsvTokenizer::line_of(std::size_t offset) const noexcept {
    const std::size_t end = std::min(offset, text_.size());
    return 1 + static_cast<std::size_t>(std::count(text_.begin(), text_.begin() + end, '\n'));
}

void CsvTokenizer::check_length(std::size_t length, std::size_t row_offset) const {
    if (length > limits_.max_field_bytes) {
        throw Error(
            ErrorCode::field_too_long,
            fmt::format("a cell on line {} is {} bytes long; the limit is {} bytes",
                        line_of(row_offset), length, limits_.max_field_bytes),
            {{"line", line_of(row_offset)}, {"bytes", length}, {"limit", limits_.max_field_bytes}});
    }
}

std::string_view CsvTokenizer::quoted_cell(std::size_t row_offset) {
    const char* data = text_.data();
    const std::size_t size = text_.size();
    const std::size_t start = ++pos_;  // past the opening quote
    std::string* scratch = nullptr;
    std::size_t piece = start;
    for (;;) {
        const void* hit = std::memchr(data + pos_, '"', size - pos_);
        if (hit == nullptr) {
            throw Error(ErrorCode::truncated_input,
                        fmt::format("the text ends inside a quoted cell that starts on line {}",
                                    line_of(row_offset)),
                        {{"line", line_of(row_offset)}});
        }
        const std::size_t quote = static_cast<std::size_t>(static_cast<const char*>(hit) - data);
        if (quote + 1 < size && data[quote + 1] == '"') {  // "" inside a quoted cell: one quote
            if (scratch == nullptr) {
                scratch = &unescaped_.emplace_back();
            }
            scratch->append(data + piece, quote + 1 - piece);
            pos_ = quote + 2;
            piece = pos_;
            check_length(scratch->size(), row_offset);
            continue;
        }
        pos_ = quote + 1;
        if (scratch == nullptr) {
            check_length(quote - start, row_offset);
            return {data + start, quote - start};
        }
        scratch->append(data + piece, quote - piece);
        check_length(scratch->size(), row_offset);
        return *scratch;
    }
}

std::string_view CsvTokenizer::unquoted_cell() {
    const std::size_t start = pos_;
    const char* data = text_.data();
    while (pos_ < text_.size() && data[pos_] != ',' && data[pos_] != '\n' && data[pos_] != '\r') {
        ++pos_;
    }
    return {data + start, pos_ - start};
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
        const std::size_t row_offset = pos_;
        cells_.clear();
        unescaped_.clear();
        for (;;) {
            if (pos_ < size && data[pos_] == '"') {
                cells_.push_back(quoted_cell(row_offset));
            } else {
                const std::string_view cell = unquoted_cell();
                check_length(cell.size(), row_offset);
                cells_.push_back(cell);
            }
            if (pos_ >= size) {
                row_terminated_ = false;
                break;
            }
            const char c = data[pos_];
            if (c == ',') {
                ++pos_;
                continue;
            }
            if (c == '\n' || (c == '\r' && pos_ + 1 < size && data[pos_ + 1] == '\n')) {
                pos_ += c == '\n' ? 1 : 2;
                row_terminated_ = true;
                break;
            }
            throw Error(ErrorCode::malformed_input,
                        fmt::format("line {}: unexpected character after cell {} (a quoted cell "
                                    "must be followed by ',' or a line break)",
                                    line_of(pos_), cells_.size()),
                        {{"line", line_of(pos_)}, {"cell", cells_.size()}});
        }
        row.cells = cells_;
        row.offset = row_offset;
        return true;
    }
    return false;
}

namespace {

bool allowed_in_text(unsigned char c) {
    return c >= 0x20 || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == 0x1b;
}

// Eight bytes at a time: a word is looked at closely only when one of its bytes is below 0x20
// (true for one word per line or so), which keeps this pass far faster than the tokenizer.
std::size_t first_binary_byte(std::string_view text) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
    std::size_t i = 0;
    for (; i + 8 <= text.size(); i += 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, text.data() + i, 8);
        if (((word - kOnes * 0x20) & ~word & kHigh) == 0) {
            continue;
        }
        for (std::size_t j = i; j < i + 8; ++j) {
            if (!allowed_in_text(static_cast<unsigned char>(text[j]))) {
                return j;
            }
        }
    }
    for (; i < text.size(); ++i) {
        if (!allowed_in_text(static_cast<unsigned char>(text[i]))) {
            return i;
        }
    }
    return std::string_view::npos;
}

}  // namespace

void reject_binary(std::string_view text) {
    const std::size_t i = first_binary_byte(text);
    if (i == std::string_view::npos) {
        return;
    }
    throw Error(ErrorCode::binary_input,
                fmt::format("byte {} is the control character 0x{:02x}: this is binary data, not "
                            "an Nsight Compute CSV export (a .ncu-rep must first be exported with "
                            "`ncu --import FILE --csv --page raw`)",
                            i, static_cast<unsigned char>(text[i])),
                {{"offset", i}, {"byte", static_cast<unsigned char>(text[i])}});
}

}  // namespace cko::profile::ncu
