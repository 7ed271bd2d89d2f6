// The two NCU CSV layouts: wide raw page (a row per launch, its rows in ncu_csv_raw.cpp) and long
// details page (a row per metric); and a file read on two threads (read_ncu_report).
#include "cko/profile/ncu/ncu_csv.hpp"

#include "cko/profile/ncu/csv_parser.hpp"
#include "cko/profile/utf8_repair.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/util/json.hpp"
#include "cko/util/sha256.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <future>
#include <set>
#include <span>
#include <unordered_map>

namespace cko::profile::ncu {
namespace csv_parse {
namespace {

bool is_header(std::span<const std::string_view> cells) {
    return std::find(cells.begin(), cells.end(), "ID") != cells.end() &&
           std::find(cells.begin(), cells.end(), "Kernel Name") != cells.end();
}

std::optional<std::int64_t> parse_integer(std::string_view text) {
    // Digits only (IDs, streams, devices: a raw page has several per row): the integer, as below.
    if (!text.empty() && text.size() <= 15 &&
        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        std::int64_t v = 0;
        for (const char c : text) {
            v = v * 10 + (c - '0');
        }
        return v;
    }
    const std::optional<double> v = parse_ncu_number(text);
    if (!v || *v != std::floor(*v) || std::fabs(*v) > 9.0e15) {
        return std::nullopt;
    }
    return static_cast<std::int64_t>(*v);
}

// "(256, 1, 1)" → {256, 1, 1}
std::optional<std::array<std::int64_t, 3>> parse_dim3(std::string_view text) {
    if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
        return std::nullopt;
    }
    text = text.substr(1, text.size() - 2);
    std::array<std::int64_t, 3> out{};
    for (std::size_t i = 0; i < 3; ++i) {
        const std::size_t comma = i < 2 ? text.find(", ") : text.size();
        if (comma == std::string_view::npos) {
            return std::nullopt;
        }
        const auto v = parse_integer(text.substr(0, comma));
        if (!v) {
            return std::nullopt;
        }
        out[i] = *v;
        text = i < 2 ? text.substr(comma + 2) : std::string_view();
    }
    return out;
}

}  // namespace

NcuLaunch launch_identity(std::span<const std::string_view> cells, const Columns& c) {
    NcuLaunch l;
    l.scope.kernel = std::string(cell(cells, c.kernel));
    l.scope.launch_id = parse_integer(cell(cells, c.id));
    l.scope.stream = parse_integer(cell(cells, c.stream));
    l.scope.context = parse_integer(cell(cells, c.context));
    l.scope.device = parse_integer(cell(cells, c.device));
    l.scope.grid = parse_dim3(cell(cells, c.grid));
    l.scope.block = parse_dim3(cell(cells, c.block));
    l.process_id = parse_integer(cell(cells, c.process_id));
    l.process_name = std::string(cell(cells, c.process_name));
    l.host = std::string(cell(cells, c.host));
    l.compute_capability = std::string(cell(cells, c.cc));
    return l;
}

CsvParser::CsvParser(std::string_view text, std::shared_ptr<const void> owner,
                     const NcuParseOptions& options, RowSplit* split)
    : tokenizer_(text, options.limits), builder_(report_, tokenizer_), split_(split) {
    report_.text = text;
    report_.text_owner = std::move(owner);
    report_.source.report_sha256 = options.report_sha256;
    report_.source.tool = "ncu";
    report_.source.tool_version = options.tool_version;
    report_.source.parser_version = std::string(kNcuParserVersion);
}

NcuReport CsvParser::run() {
    bool found = false;
    while (tokenizer_.next(row_)) {
        if (is_header(row_.cells)) {
            found = true;
            break;
        }
    }
    if (!found) {
        read_other_lines();
        if (!report_.counters_permitted()) {
            report_.source.dialect = "ncu-output";
            return std::move(report_);
        }
        refuse_log_without_kernels();
        throw Error(ErrorCode::unsupported_format,
                    fmt::format("no Nsight Compute CSV header (a quoted row with \"ID\" and "
                                "\"Kernel Name\") in {} lines; export with `ncu --csv --page "
                                "raw` or `--page details`",
                                report_.other_lines),
                    {{"lines", report_.other_lines}});
    }
    read_header();
    if (columns_.metric_name != kNone || columns_.metric_value != kNone) {
        report_.layout = NcuLayout::details;
        report_.source.dialect = "ncu-csv-details";
        read_details();
    } else {
        report_.layout = NcuLayout::raw;
        report_.source.dialect = "ncu-csv-raw";
        read_raw();
    }
    read_other_lines();
    builder_.finish();
    find_device_name();
    note_dialect_and_missing_durations();
    return std::move(report_);
}

void CsvParser::read_header() {
    header_offset_ = row_.offset;
    header_.assign(row_.cells.begin(), row_.cells.end());
    std::set<std::string_view> seen;
    for (std::size_t i = 0; i < header_.size(); ++i) {
        if (!seen.insert(header_[i]).second) {
            const auto first = std::find(header_.begin(), header_.end(), header_[i]);
            throw Error(ErrorCode::duplicate_header,
                        fmt::format("line {}: the column \"{}\" appears twice (columns {} and "
                                    "{})",
                                    line(), header_[i], first - header_.begin() + 1, i + 1),
                        {{"line", line()}, {"column", header_[i]}});
        }
        for (const NamedColumn& known : kKnownColumns) {
            if (known.name == header_[i]) {
                columns_.*known.field = i;
            }
        }
    }
}

void CsvParser::check_row(std::size_t min_cells) {
    if (cell(row_.cells, columns_.id) == "ID" && is_header(row_.cells)) {
        throw Error(ErrorCode::duplicate_header,
                    fmt::format("line {}: the header appears again (first on line {}); were "
                                "two exports concatenated?",
                                line(), tokenizer_.line_of(header_offset_)),
                    {{"line", line()}, {"first_line", tokenizer_.line_of(header_offset_)}});
    }
    if (row_.cells.size() < min_cells) {
        throw Error(ErrorCode::truncated_input,
                    fmt::format("line {}: the row has {} cells, the header {}; the row is cut "
                                "short",
                                line(), row_.cells.size(), header_.size()),
                    {{"line", line()}, {"cells", row_.cells.size()}, {"expected", min_cells}});
    }
    if (row_.cells.size() > header_.size()) {
        throw Error(ErrorCode::malformed_input,
                    fmt::format("line {}: the row has {} cells, more than the header's {}", line(),
                                row_.cells.size(), header_.size()),
                    {{"line", line()}, {"cells", row_.cells.size()}, {"header", header_.size()}});
    }
}

void CsvParser::read_details() {
    for (const auto& [field, name] :
         {std::pair{&Columns::id, "ID"}, std::pair{&Columns::kernel, "Kernel Name"},
          std::pair{&Columns::metric_name, "Metric Name"},
          std::pair{&Columns::metric_unit, "Metric Unit"},
          std::pair{&Columns::metric_value, "Metric Value"}}) {
        if (columns_.*field == kNone) {
            throw Error(ErrorCode::missing_field,
                        fmt::format("line {}: the details header lacks the column \"{}\"",
                                    tokenizer_.line_of(header_offset_), name),
                        {{"column", name}});
        }
    }
    for (const std::string_view name : header_) {
        const bool known = std::any_of(kKnownColumns.begin(), kKnownColumns.end(),
                                       [&](const NamedColumn& k) { return k.name == name; });
        if (!known) {
            report_.unmodeled.push_back(Unmodeled{"column: " + std::string(name), "", "", {}});
        }
    }
    const std::size_t min_cells = 1 + std::max({columns_.id, columns_.kernel, columns_.metric_name,
                                                columns_.metric_unit, columns_.metric_value});
    MetricLayout& layout = report_.metric_layout;
    layout.has_section = columns_.section != kNone;
    layout.section = layout.has_section ? columns_.section : 0;
    layout.name = columns_.metric_name;
    layout.unit = columns_.metric_unit;
    layout.value = columns_.metric_value;
    std::string current_key;
    std::size_t launch = kNone;
    std::unordered_map<std::string, std::size_t> launches;
    std::string launch_key;
    const std::size_t first_row = tokenizer_.position();
    while (tokenizer_.next(row_)) {
        check_row(min_cells);
        launch_key.assign(cell(row_.cells, columns_.process_id));
        launch_key.push_back('\x1f');
        launch_key.append(row_.cells[columns_.id]);
        if (launch == kNone || launch_key != current_key) {  // a launch's rows come together
            const auto [it, inserted] = launches.emplace(launch_key, report_.launches.size());
            if (inserted) {
                const std::size_t previous_size =
                    launch == kNone ? 0 : report_.launches[launch].metric_rows.size();
                if (report_.launches.size() == 1) {
                    reserve_launches(row_.offset, row_.offset - first_row);
                }
                const std::size_t index =
                    builder_.add_launch(launch_identity(row_.cells, columns_));
                report_.launches[index].metric_rows.reserve(previous_size);
                report_.launches[index].metric_keys.reserve(previous_size);
                report_.launches[index].metric_units.reserve(previous_size);
                report_.launches[index].metric_value_at.reserve(previous_size);
            }
            launch = it->second;
            current_key = launch_key;
        }
        const std::string_view metric = row_.cells[columns_.metric_name];
        const std::string_view section = cell(row_.cells, columns_.section);
        if (metric.empty()) {
            read_rule(launch, section);
            continue;
        }
        const std::uint32_t key = builder_.key(section, metric);
        const std::uint32_t unit = builder_.unit_of(key, row_.cells[columns_.metric_unit]);
        NcuLaunch& l = report_.launches[launch];
        l.metric_rows.push_back(row_.offset);
        l.metric_keys.push_back(key);
        l.metric_units.push_back(unit);
        l.metric_value_at.push_back(value_at(row_.cells[columns_.metric_value]));
        builder_.add_metric(launch, key, unit, row_.cells[columns_.metric_value], row_.offset);
    }
}

void CsvParser::reserve_launches(std::size_t from, std::size_t launch_bytes) {
    const std::size_t left = tokenizer_.size() - from;
    const std::size_t estimate = left / std::max<std::size_t>(launch_bytes, 1) * 9 / 8 + 8;
    report_.launches.reserve(report_.launches.size() +
                             std::min(estimate, left / sizeof(NcuLaunch) + 8));
    advise_huge_pages(report_.launches.data(), report_.launches.capacity() * sizeof(NcuLaunch));
}

std::uint32_t CsvParser::value_at(std::string_view value) const {
    const std::string_view text = report_.text;
    const std::less<const char*> before;  // a total order, also for the tokenizer's scratch
    if (before(value.data(), text.data() + 1) || before(text.data() + text.size(), value.data()) ||
        value.data()[-1] != '"') {
        return NcuLaunch::kValueAtUnknown;  // unescaped into scratch, or not quoted
    }
    const auto at = static_cast<std::size_t>(value.data() - 1 - text.data()) - row_.offset;
    return at < NcuLaunch::kValueAtUnknown ? static_cast<std::uint32_t>(at)
                                           : NcuLaunch::kValueAtUnknown;
}

std::string_view CsvParser::kept(std::string_view cell) {
    const std::string_view text = report_.text;
    const std::less<const char*> before;  // a total order, also for the tokenizer's scratch
    if (cell.empty() || (!before(cell.data(), text.data()) &&
                         !before(text.data() + text.size(), cell.data() + cell.size()))) {
        return cell;
    }
    return builder_.intern(cell);
}

void CsvParser::read_rule(std::size_t launch, std::string_view section) {
    const std::string_view name = cell(row_.cells, columns_.rule_name);
    if (name.empty()) {
        return;  // a section that printed nothing
    }
    RuleFinding rule;
    rule.section = kept(section);
    rule.name = kept(name);
    rule.type = kept(cell(row_.cells, columns_.rule_type));
    rule.description = kept(cell(row_.cells, columns_.rule_description));
    rule.speedup_type = kept(cell(row_.cells, columns_.speedup_type));
    const std::string_view speedup = cell(row_.cells, columns_.speedup);
    if (!speedup.empty() && !is_not_available(speedup)) {
        rule.estimated_speedup_pct = parse_ncu_number(speedup);
        if (!rule.estimated_speedup_pct) {
            throw Error(ErrorCode::malformed_input,
                        fmt::format("line {}: rule {} has the estimated speedup '{}', which is "
                                    "not a number",
                                    line(), name, speedup),
                        {{"line", line()}, {"rule", std::string(name)}});
        }
    }
    std::vector<RuleFinding>& rules = report_.launches[launch].rules;
    if (rules.empty()) {
        rules.reserve(most_rules_);
    }
    rules.push_back(std::move(rule));
    most_rules_ = std::max(most_rules_, rules.size());
}

void CsvParser::read_other_lines() {
    for (const std::string_view text : tokenizer_.other_lines()) {
        read_other_line(text);
    }
    for (const std::string_view text : tail_other_lines_) {
        read_other_line(text);
    }
}

void CsvParser::read_other_line(std::string_view text) {
    constexpr std::size_t kMaxMessages = 256;
    ++report_.other_lines;
    if (text.find("ERR_NVGPUCTRPERM") != std::string_view::npos) {
        mark_counters_not_permitted(report_);
    }
    if ((text.starts_with("==ERROR==") || text.starts_with("==WARNING==")) &&
        report_.tool_messages.size() < kMaxMessages) {
        report_.tool_messages.emplace_back(text);
    }
    // `ncu --version`: "Version 2025.3.1.0 (build ...)" after the "Nsight Compute" banner.
    const std::size_t v = text.find("Version ");
    if (report_.source.tool_version.empty() && v != std::string_view::npos &&
        (seen_banner_ || text.find("Nsight Compute") != std::string_view::npos)) {
        std::string_view rest = text.substr(v + 8);
        rest = rest.substr(0, rest.find(' '));
        if (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') {
            report_.source.tool_version = std::string(rest);
        }
    }
    seen_banner_ = seen_banner_ || text.find("Nsight Compute") != std::string_view::npos;
}

void CsvParser::refuse_log_without_kernels() const {
    std::string_view error;
    std::string_view no_kernels;
    std::size_t tool_lines = 0;
    for (const std::string_view text : tokenizer_.other_lines()) {
        if (text.starts_with("==")) {
            ++tool_lines;
        }
        if (error.empty() && text.starts_with("==ERROR==")) {
            error = text;
        }
        if (no_kernels.empty() && text.find("No kernels were profiled") != std::string_view::npos) {
            no_kernels = text;
        }
    }
    const bool only_tool_lines = tool_lines > 0 && tool_lines == report_.other_lines;
    if (error.empty() && no_kernels.empty() && !only_tool_lines) {
        return;
    }
    const std::string_view said = !error.empty() ? error : no_kernels;
    std::string message = fmt::format(
        "the NCU output holds no profiled kernel ({} lines, no CSV rows)", report_.other_lines);
    message += said.empty() ? std::string(
                                  "; NCU attached but profiled nothing: check the --kernel-name "
                                  "/ --launch-skip / --launch-count filters and that the "
                                  "program launches kernels")
                            : fmt::format("; NCU said: \"{}\"", said);
    Json details = {{"lines", report_.other_lines}};
    if (!error.empty()) {
        details["ncu_error"] = std::string(error);
    }
    if (!no_kernels.empty()) {
        details["ncu_warning"] = std::string(no_kernels);
    }
    throw Error(ErrorCode::empty_input, message, details);
}

void CsvParser::note_dialect_and_missing_durations() {
    const bool old_sol = std::any_of(report_.keys.begin(), report_.keys.end(), [](const auto& k) {
        return k.section == "GPU Speed Of Light";
    });
    if (old_sol) {
        report_.notes.emplace_back(
            "section 'GPU Speed Of Light' with the metric names of NCU 2019.5-2020.1: read "
            "Duration as duration, 'SOL FB' as dram.throughput_pct, 'SM [%]' as "
            "sm.throughput_pct, 'Memory [%]' as memory.throughput_pct, 'SOL L2' as "
            "l2.throughput_pct, 'SOL TEX' as l1.throughput_pct, 'Memory Frequency' as "
            "clock.dram");
    }
    const std::size_t without = builder_.without_duration() + tail_without_duration_;
    if (without > 0) {
        report_.notes.push_back(fmt::format(
            "{} of {} launches have no duration: no gpu__time_duration.sum and no Duration "
            "row under a Speed Of Light section cko knows (see docs/profile-ncu.md); their "
            "duration is absent, not 0. Export with `ncu --csv --page raw --metrics "
            "gpu__time_duration.sum` to have it",
            without, report_.launches.size()));
    }
}

void CsvParser::find_device_name() {
    const bool named = std::any_of(report_.keys.begin(), report_.keys.end(), [](const auto& k) {
        return k.name == "device__attribute_display_name";
    });
    if (!named || report_.launches.empty()) {
        return;
    }
    for_each_metric(report_, report_.launches.front(), [&](const MetricView& m) {
        if (report_.device_name.empty() && m.name == "device__attribute_display_name") {
            report_.device_name = std::string(m.value);
        }
    });
}

}  // namespace csv_parse

using csv_parse::CsvParser;

// The tail's rows go to the second thread only when at least this much text is left: its own
// start (the header's keys and units looked up again) costs about what 100 KB of rows do.
constexpr std::size_t kMinTailBytes = std::size_t{4} << 20;

NcuReport parse_ncu_csv(std::string_view text, const NcuParseOptions& options) {
    auto owned = std::make_shared<const std::string>(text);
    const std::string_view view = *owned;
    return parse_ncu_text(view, std::move(owned), options);
}

NcuReport parse_ncu_text(std::string_view text, std::shared_ptr<const void> owner,
                         const NcuParseOptions& options) {
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        throw Error(ErrorCode::empty_input,
                    "the NCU export is empty; did the profiled program launch any kernel?");
    }
    const std::size_t non_ascii = first_non_ascii_of_text(text);
    if (non_ascii != std::string_view::npos && !is_valid_utf8(text.substr(non_ascii))) {
        // Latin-1 kernel, process or host names: every invalid byte becomes U+FFFD before any
        // string is cut out, so names, metrics and facts are valid UTF-8 in every output mode.
        // U+FFFD holds no quote, comma or line break, so the CSV structure is unchanged.
        auto repaired = std::make_shared<std::string>();
        const std::size_t bytes = repair_utf8(text, *repaired);
        owner.reset();  // the caller's copy, if it has one, is the only one left
        const std::string_view view = *repaired;
        NcuReport report = CsvParser(view, std::move(repaired), options).run();
        report.notes.push_back(fmt::format(
            "{} byte(s) of invalid UTF-8 (e.g. Latin-1 names) replaced with U+FFFD", bytes));
        return report;
    }
    return CsvParser(text, std::move(owner), options).run();
}

NcuReport read_ncu_report(const std::filesystem::path& path, NcuParseOptions options,
                          std::uint64_t max_bytes) {
    // Mapped, not copied: the page cache's pages are the text (util/files.hpp, MappedFile).
    std::shared_ptr<const MappedFile> file = MappedFile::open(path, max_bytes);
    const std::string_view text = file->bytes();
    if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        return parse_ncu_text(text, std::move(file), options);  // empty_input
    }
    // Everything that reads every byte besides the parse runs on a second thread meanwhile: the
    // hash (the report's identity) and the text check (binary bytes, valid UTF-8). The parse
    // goes ahead on the unchecked text (the tokenizer is safe on any bytes) and its result
    // counts only once the check passes, so the answer is parse_ncu_text's: binary_input first,
    // a text that needs its UTF-8 repaired parsed again repaired, else the parse's own result or
    // error.
    // Once done, that thread reads the rows of a raw page's tail (row_split.hpp) if the text
    // passed the check and enough rows are left.
    struct Screened {
        std::string sha256;
        TextScan scan;
        bool valid_utf8 = true;
    };
    const auto split = std::make_shared<RowSplit>();
    const bool share_rows = two_cpus_available();
    auto screen = std::async(std::launch::async, [file, split, share_rows, options] {
        Screened out;
        const std::string_view bytes = file->bytes();
        file->populate();  // here, not before the parse starts (MappedFile::populate)
        out.scan = scan_text(bytes);
        out.valid_utf8 = out.scan.binary != std::string_view::npos ||
                         out.scan.non_ascii == std::string_view::npos ||
                         is_valid_utf8(bytes.substr(out.scan.non_ascii));
        out.sha256 = sha256_hex(bytes);
        if (share_rows && out.scan.binary == std::string_view::npos && out.valid_utf8 &&
            split->pick(bytes, kMinTailBytes)) {
            read_raw_tail(bytes, options, *split);
        }
        return out;
    });
    NcuReport report;
    std::exception_ptr failed;
    try {
        report = parse_ncu_text_split(text, file, options, *split);
    } catch (...) {
        failed = std::current_exception();
    }
    const Screened screened = screen.get();
    if (screened.scan.binary != std::string_view::npos) {
        refuse_binary(text, screened.scan.binary);
    }
    if (!screened.valid_utf8) {
        report = parse_ncu_text(text, std::move(file), options);  // repairs, then parses
    } else if (failed) {
        std::rethrow_exception(failed);
    }
    report.source.report_sha256 = screened.sha256;
    return report;
}

}  // namespace cko::profile::ncu
