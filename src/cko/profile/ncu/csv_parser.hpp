// The parser behind parse_ncu_text and read_ncu_report (internal to profile/ncu): ncu_csv.cpp reads
// the header, a details page and the lines that are not CSV; ncu_csv_raw.cpp a raw page's rows,
// alone or with a second thread reading their tail (row_split.hpp).
#pragma once

#include "cko/profile/ncu/csv_tokenizer.hpp"
#include "cko/profile/ncu/ncu_csv.hpp"
#include "cko/profile/ncu/ncu_report.hpp"
#include "cko/profile/ncu/report_builder.hpp"
#include "cko/profile/ncu/row_split.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cko::profile::ncu::csv_parse {

inline constexpr std::size_t kNone = static_cast<std::size_t>(-1);

// Header columns by name; kNone where the header lacks one.
struct Columns {
    std::size_t id = kNone, process_id = kNone, process_name = kNone, host = kNone, kernel = kNone,
                context = kNone, stream = kNone, block = kNone, grid = kNone, device = kNone,
                cc = kNone, section = kNone, metric_name = kNone, metric_unit = kNone,
                metric_value = kNone, rule_name = kNone, rule_type = kNone,
                rule_description = kNone, speedup_type = kNone, speedup = kNone;
};

struct NamedColumn {
    std::string_view name;
    std::size_t Columns::*field;
    bool identity;  // a column of the launch's identity, not a metric
};

inline constexpr std::array kKnownColumns = {
    NamedColumn{"ID", &Columns::id, true},
    NamedColumn{"Process ID", &Columns::process_id, true},
    NamedColumn{"Process Name", &Columns::process_name, true},
    NamedColumn{"Host Name", &Columns::host, true},
    NamedColumn{"Kernel Name", &Columns::kernel, true},
    NamedColumn{"Context", &Columns::context, true},
    NamedColumn{"Stream", &Columns::stream, true},
    NamedColumn{"Block Size", &Columns::block, true},
    NamedColumn{"Grid Size", &Columns::grid, true},
    NamedColumn{"Device", &Columns::device, true},
    NamedColumn{"CC", &Columns::cc, true},
    NamedColumn{"Section Name", &Columns::section, false},
    NamedColumn{"Metric Name", &Columns::metric_name, false},
    NamedColumn{"Metric Unit", &Columns::metric_unit, false},
    NamedColumn{"Metric Value", &Columns::metric_value, false},
    NamedColumn{"Rule Name", &Columns::rule_name, false},
    NamedColumn{"Rule Type", &Columns::rule_type, false},
    NamedColumn{"Rule Description", &Columns::rule_description, false},
    NamedColumn{"Estimated Speedup Type", &Columns::speedup_type, false},
    NamedColumn{"Estimated Speedup", &Columns::speedup, false},
};

inline std::string_view cell(std::span<const std::string_view> cells, std::size_t index) {
    return index < cells.size() ? cells[index] : std::string_view();
}

// A launch's identity (kernel, IDs, grid, block, process, device) from its row's cells.
NcuLaunch launch_identity(std::span<const std::string_view> cells, const Columns& c);

// One export read into an NcuReport: the header row picks the layout (details or raw), then
// the rows, then the lines that were not CSV.
class CsvParser {
public:
    // `split`: a raw page's rows shared with a second thread (row_split.hpp); none: all read
    // here.
    CsvParser(std::string_view text, std::shared_ptr<const void> owner,
              const NcuParseOptions& options, RowSplit* split = nullptr);

    NcuReport run();
    // The second thread's part: the rows from split.split() to the end, read with the columns
    // and units of the header and units rows the main thread read (ncu_csv_raw.cpp).
    RawTail read_tail(const RowSplit& split);

private:
    [[nodiscard]] std::size_t line() const { return tokenizer_.line_of(row_.offset); }
    void read_header();
    // Checks a data row's width and that it is not a second header.
    void check_row(std::size_t min_cells);

    // The raw page (ncu_csv_raw.cpp). Its metric columns: every column that is not the launch's
    // identity.
    struct RawColumns {
        std::vector<std::size_t> metric;
        bool side_by_side = false;  // consecutive: a plain row's metric cells are one span of it
    };
    RawColumns raw_columns();
    void read_raw();
    void read_units_row(const RawColumns& raw);
    void read_raw_row(const RawColumns& raw);
    // Where a plain row's metric cells lie, from the opening quote of the first to the closing
    // quote of the last (NcuLaunch::raw_values_at).
    void note_raw_values(NcuLaunch& launch, const std::vector<std::size_t>& metric_columns) const;
    // Before a raw page's row is read: the tail's rows taken in place of the rest when this row is
    // its first (true).
    bool tail_taken();
    // The tail's rows as if read here: its launches after these; its unmodeled entries for the
    // metrics not listed yet, in order; its other lines after these (read_other_lines).
    void merge_tail(RawTail& tail);

    // The details page.
    void read_details();
    void read_rule(std::size_t launch, std::string_view section);
    // Where a quoted cell that views the text starts (its opening quote), from the row's start.
    [[nodiscard]] std::uint32_t value_at(std::string_view value) const;
    // A cell as the report keeps it: the text's own bytes, or (a cell with "" escapes, unescaped
    // into the tokenizer's scratch) a copy in the report's strings.
    [[nodiscard]] std::string_view kept(std::string_view cell);

    // Room for the launches at once, not by doubling (each doubling moves them all and touches
    // fresh pages), estimated from one launch's bytes for the text left from `from`: never more
    // room than the text's own size in bytes (a fuzzed file must not ask for terabytes).
    void reserve_launches(std::size_t from, std::size_t launch_bytes);

    void read_other_lines();
    void read_other_line(std::string_view text);
    // NCU's own lines and nothing else, or an ==ERROR== / "No kernels were profiled": NCU ran and
    // profiled no kernel. Say that, in NCU's words, rather than suggest another export.
    void refuse_log_without_kernels() const;
    // What a reader must know about the facts: the old section spelling they were read from, and
    // launches that kept no duration (a dialect whose names no table row knows), never a silent 0.
    void note_dialect_and_missing_durations();
    void find_device_name();

    NcuReport report_;
    CsvTokenizer tokenizer_;
    ReportBuilder builder_;
    CsvRow row_;
    std::vector<std::string> header_;
    std::size_t header_offset_ = 0;
    Columns columns_;
    bool seen_banner_ = false;
    RowSplit* split_ = nullptr;  // while the main thread's rows may end where a tail starts
    std::vector<std::string_view> tail_other_lines_;
    std::size_t tail_without_duration_ = 0;  // the merged tail's launches with no duration
    // The most rule rows a launch has had: a launch's rules are reserved that many at its first
    // (launches of one kernel state the same rules), so the vector is not grown rule by rule.
    std::size_t most_rules_ = 0;
};

}  // namespace cko::profile::ncu::csv_parse
