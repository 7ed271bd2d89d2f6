// A raw page's rows (a row per launch): read here, or read up to where a second thread's tail
// starts and the tail's rows taken in their place (row_split.hpp).
#include "cko/profile/ncu/csv_parser.hpp"

#include "cko/util/error.hpp"

#include <algorithm>
#include <exception>
#include <iterator>

namespace cko::profile::ncu {
namespace csv_parse {

CsvParser::RawColumns CsvParser::raw_columns() {
    RawColumns raw;
    MetricLayout& layout = report_.metric_layout;
    layout.keys.clear();
    for (std::size_t i = 0; i < header_.size(); ++i) {
        const bool identity =
            std::any_of(kKnownColumns.begin(), kKnownColumns.end(),
                        [&](const NamedColumn& k) { return k.identity && k.name == header_[i]; });
        if (!identity) {
            raw.metric.push_back(i);
            layout.keys.push_back(builder_.key("", header_[i]));
        }
    }
    layout.columns.assign(raw.metric.begin(), raw.metric.end());
    layout.units.assign(raw.metric.size(), builder_.unit(""));
    builder_.set_raw_layout(layout);
    raw.side_by_side = !raw.metric.empty();
    for (std::size_t m = 1; m < raw.metric.size(); ++m) {
        raw.side_by_side = raw.side_by_side && raw.metric[m] == raw.metric[0] + m;
    }
    return raw;
}

void CsvParser::read_raw() {
    const RawColumns raw = raw_columns();
    std::size_t units_offset = RowSplit::kNone;
    bool first = true;
    while (tokenizer_.next(row_)) {
        if (split_ != nullptr && !first && tail_taken()) {
            return;
        }
        check_row(header_.size());
        if (first && cell(row_.cells, columns_.id).empty()) {  // NCU's units row
            read_units_row(raw);
            units_offset = row_.offset;
        } else {
            read_raw_row(raw);
        }
        if (split_ != nullptr && first) {  // columns and units are known from here on
            split_->open(header_offset_, units_offset, tokenizer_.position());
        }
        first = false;
    }
    if (split_ != nullptr) {
        split_->close();  // the rows are all read here
    }
}

void CsvParser::read_units_row(const RawColumns& raw) {
    report_.units_row = true;
    MetricLayout& layout = report_.metric_layout;
    for (std::size_t m = 0; m < raw.metric.size(); ++m) {
        layout.units[m] = builder_.unit(row_.cells[raw.metric[m]]);
    }
    builder_.set_raw_layout(layout);
}

void CsvParser::read_raw_row(const RawColumns& raw) {
    if (report_.launches.empty()) {
        // One row per launch, rows of about one length.
        reserve_launches(row_.offset, tokenizer_.position() - row_.offset);
    }
    const std::size_t launch = builder_.add_launch(launch_identity(row_.cells, columns_));
    report_.launches[launch].metric_rows.push_back(row_.offset);
    builder_.add_raw_row(launch, row_.cells, report_.metric_layout, row_.offset, row_.plain);
    if (row_.plain && raw.side_by_side) {
        note_raw_values(report_.launches[launch], raw.metric);
    }
    builder_.finish_launch(launch);  // a raw page's launch is its one row
}

bool CsvParser::tail_taken() {
    switch (split_->reached(row_.offset)) {
    case RowSplit::Reached::not_yet:
        split_->progress(row_.offset);
        return false;
    case RowSplit::Reached::passed:  // no row starts where the tail does: read on
        split_ = nullptr;
        return false;
    case RowSplit::Reached::here:
        break;
    }
    RawTail tail = split_->wait_tail();
    split_ = nullptr;
    merge_tail(tail);
    return true;
}

void CsvParser::merge_tail(RawTail& tail) {
    NcuReport& part = tail.report;
    if (part.unmodeled.size() != tail.unmodeled_keys.size()) {
        throw Error(ErrorCode::internal, "the tail's unmodeled entries lack their keys");
    }
    builder_.finish();
    report_.launches.reserve(report_.launches.size() + part.launches.size());
    std::move(part.launches.begin(), part.launches.end(), std::back_inserter(report_.launches));
    for (std::size_t i = 0; i < part.unmodeled.size(); ++i) {
        if (!builder_.listed_unmodeled(tail.unmodeled_keys[i])) {
            report_.unmodeled.push_back(std::move(part.unmodeled[i]));
        }
    }
    tail_other_lines_ = std::move(tail.other_lines);
    tail_without_duration_ = tail.without_duration;
    report_.kept.push_back(part.strings);  // what the tail's launches and facts view
    report_.kept.push_back(part.arena);
}

RawTail CsvParser::read_tail(const RowSplit& split) {
    RawTail tail;
    tokenizer_.seek(split.header_offset());
    if (!tokenizer_.next(row_)) {
        throw Error(ErrorCode::internal, "the raw page's header row is gone");
    }
    read_header();
    report_.layout = NcuLayout::raw;
    report_.source.dialect = "ncu-csv-raw";
    const RawColumns raw = raw_columns();
    if (split.units_offset() != RowSplit::kNone) {
        tokenizer_.seek(split.units_offset());
        if (!tokenizer_.next(row_)) {
            throw Error(ErrorCode::internal, "the raw page's units row is gone");
        }
        read_units_row(raw);
    }
    tokenizer_.seek(split.split());
    const std::size_t lines_before = tokenizer_.other_lines().size();
    while (!split.cancelled() && tokenizer_.next(row_)) {
        check_row(header_.size());
        read_raw_row(raw);
    }
    tail.cancelled = split.cancelled();
    const auto& lines = tokenizer_.other_lines();
    tail.other_lines.assign(lines.begin() + static_cast<std::ptrdiff_t>(lines_before), lines.end());
    tail.unmodeled_keys = builder_.unmodeled_keys();
    tail.without_duration = builder_.without_duration();
    tail.report = std::move(report_);
    return tail;
}

void CsvParser::note_raw_values(NcuLaunch& launch,
                                const std::vector<std::size_t>& metric_columns) const {
    const char* const text = report_.text.data();
    const std::string_view first = row_.cells[metric_columns.front()];
    const std::string_view last = row_.cells[metric_columns.back()];
    const auto begin = static_cast<std::size_t>(first.data() - 1 - text);
    const auto end = static_cast<std::size_t>(last.data() + last.size() + 1 - text);
    if (end - row_.offset < NcuLaunch::kValueAtUnknown) {
        launch.raw_values_at = static_cast<std::uint32_t>(begin - row_.offset);
        launch.raw_values_size = static_cast<std::uint32_t>(end - begin);
    }
}

}  // namespace csv_parse

using csv_parse::CsvParser;

void read_raw_tail(std::string_view text, const NcuParseOptions& options,
                   RowSplit& split) noexcept {
    try {
        if (split.cancelled()) {  // the main thread is done (or never opened the split)
            RawTail none;
            none.cancelled = true;
            split.deliver(std::move(none));
            return;
        }
        split.deliver(CsvParser(text, nullptr, options).read_tail(split));
    } catch (...) {
        split.fail(std::current_exception());
    }
}

NcuReport parse_ncu_text_split(std::string_view text, std::shared_ptr<const void> owner,
                               const NcuParseOptions& options, RowSplit& split) {
    // Closed however the parse ends: a tail being read then stops, and none is picked after.
    const std::unique_ptr<RowSplit, void (*)(RowSplit*)> close(&split,
                                                               [](RowSplit* s) { s->close(); });
    return CsvParser(text, std::move(owner), options, &split).run();
}

}  // namespace cko::profile::ncu
