// `cko profile ncu`, `cko profile diff`, `cko profile collect ncu`.
#include "cko/profile/ncu/ncu_collect.hpp"
#include "cko/profile/ncu/ncu_csv.hpp"
#include "cko/profile/ncu/ncu_diff.hpp"
#include "cko/profile/ncu/ncu_roofline.hpp"
#include "cko/store/catalogue.hpp"
#include "cko/util/demangled.hpp"
#include "cko/util/error.hpp"
#include "cko/util/files.hpp"
#include "cko/verbs/evidence.hpp"
#include "cko/verbs/verb.hpp"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <ostream>
#include <span>

namespace cko::verbs {
namespace {

namespace fs = std::filesystem;
using profile::ncu::NcuLaunch;
using profile::ncu::NcuReport;
using profile::ncu::RooflineChoice;

struct ReportArgs {
    std::string file;
    std::string tool_version;
    profile::ncu::RooflineOptions roofline;
};

// The kernel's name without its parameter list, cut to 28 code points (27 and "~"): whole code
// points, so a name with multi-byte characters stays valid UTF-8.
std::string short_kernel(std::string_view kernel) {
    const std::string_view name = without_parameter_list(kernel);
    std::size_t points = 0;
    std::size_t cut = name.size();  // where the 28th code point starts
    for (std::size_t i = 0; i < name.size(); ++i) {
        if ((static_cast<unsigned char>(name[i]) & 0xc0) != 0x80 && ++points == 28) {
            cut = i;
        }
    }
    return points > 28 ? std::string(name.substr(0, cut)) + "~" : std::string(name);
}

// The launch table is written by hand: a 100 MB raw page has 25,000 launches, and fmt's parsing
// of one nine-field line per launch was a tenth of the verb's time (bench/ncu_verb_bench.cpp).
// Cells are padded as fmt pads them ({:>n} / {:<n}); only the kernel name may be non-ASCII, and
// fmt pads that one by display width.
void append_cell(std::string& out, std::string_view cell, std::size_t width, bool right) {
    const bool ascii = std::all_of(cell.begin(), cell.end(),
                                   [](char c) { return static_cast<unsigned char>(c) < 0x80; });
    if (!ascii) {
        if (right) {
            fmt::format_to(std::back_inserter(out), "{:>{}}", cell, width);
        } else {
            fmt::format_to(std::back_inserter(out), "{:<{}}", cell, width);
        }
        return;
    }
    const std::size_t pad = cell.size() < width ? width - cell.size() : 0;
    if (right) {
        out.append(pad, ' ');
    }
    out.append(cell);
    if (!right) {
        out.append(pad, ' ');
    }
}

// A number cell: at most a few dozen characters.
struct Cell {
    char text[64];
    std::size_t size = 0;
    [[nodiscard]] std::string_view view() const { return {text, size}; }
};

template <typename Format, typename... Args>
Cell make_cell(const Format& format, const Args&... args) {
    Cell c;
    c.size = std::min(fmt::format_to_n(c.text, sizeof c.text, format, args...).size, sizeof c.text);
    return c;
}

Cell dash_cell() {
    Cell c;
    c.text[c.size++] = '-';
    return c;
}

Cell dim3_cell(const std::optional<std::array<std::int64_t, 3>>& d) {
    return d ? make_cell(FMT_COMPILE("({},{},{})"), (*d)[0], (*d)[1], (*d)[2]) : dash_cell();
}

// The fact scaled, in the format of its column, or "-" when the launch lacks it.
Cell duration_cell(const NcuLaunch& launch) {
    const profile::ncu::LaunchFact* f = launch.find("duration");
    return f == nullptr ? dash_cell() : make_cell(FMT_COMPILE("{:.2f} us"), f->value * 1e-3);
}

Cell percent_cell(const NcuLaunch& launch, std::string_view id) {
    const profile::ncu::LaunchFact* f = launch.find(id);
    return f == nullptr ? dash_cell() : make_cell(FMT_COMPILE("{:.1f}"), f->value);
}

// The launch table's rows, one per launch.
void append_launch_rows(std::string& out, std::span<const NcuLaunch> launches) {
    for (const NcuLaunch& l : launches) {
        // "{:>4}  {:<28}  {:<14} {:<11} {:>11} {:>6} {:>6} {:>6} {:>8}\n", as the header.
        append_cell(
            out, l.scope.launch_id ? make_cell(FMT_COMPILE("{}"), *l.scope.launch_id).view() : "-",
            4, true);
        out += "  ";
        append_cell(out, short_kernel(l.scope.kernel), 28, false);
        out += "  ";
        append_cell(out, dim3_cell(l.scope.grid).view(), 14, false);
        out += ' ';
        append_cell(out, dim3_cell(l.scope.block).view(), 11, false);
        out += ' ';
        append_cell(out, duration_cell(l).view(), 11, true);
        for (const char* id :
             {"dram.throughput_pct", "sm.throughput_pct", "occupancy.achieved_pct"}) {
            out += ' ';
            append_cell(out, percent_cell(l, id).view(), 6, true);
        }
        out += ' ';
        append_cell(out, make_cell(FMT_COMPILE("{}"), l.facts.size()).view(), 8, true);
        out += '\n';
    }
}

// From this many launches a thread (about 1.6 us a row here), the table is written on two.
constexpr std::size_t kLaunchRowsPerThread = 2048;

std::string report_text(const NcuReport& report, const RooflineChoice& roofline) {
    std::string out = fmt::format(
        "ncu {} export: {} launches (NCU {}, sha256 {})\n", layout_name(report.layout),
        report.launches.size(),
        report.source.tool_version.empty() ? "version not stated" : report.source.tool_version,
        report.source.report_sha256.substr(0, 12));
    if (!report.counters_permitted()) {
        out += "counters not permitted: " + report.advice + "\n";
    }
    for (const auto& note : report.notes) {
        out += "note: " + note + "\n";
    }
    // One line of about 120 bytes a launch: reserved once, not grown by doubling (each doubling
    // touches fresh pages: page faults were much of the verb's time on a VM, bench_ncu_verb).
    out.reserve(out.size() + 128 * (report.launches.size() + 1));
    if (!report.launches.empty()) {
        out += fmt::format("{:>4}  {:<28}  {:<14} {:<11} {:>11} {:>6} {:>6} {:>6} {:>8}\n", "id",
                           "kernel", "grid", "block", "duration", "dram%", "sm%", "occ%", "facts");
    }
    // A long table's second half is written on a second thread meanwhile (the same bytes).
    const std::span<const NcuLaunch> launches(report.launches);
    if (launches.size() < kLaunchRowsPerThread * 2) {
        append_launch_rows(out, launches);
    } else {
        const std::size_t half = launches.size() / 2;
        auto second = std::async(std::launch::async, [launches, half] {
            std::string rows;
            rows.reserve(128 * (launches.size() - half));
            append_launch_rows(rows, launches.subspan(half));
            return rows;
        });
        append_launch_rows(out, launches.first(half));
        out += second.get();
    }
    if (roofline.device == nullptr) {
        out += roofline.note + "\n";
    } else {
        out += fmt::format("roofline against {} (see --json)\n", roofline.device->name);
    }
    out += fmt::format("{} unmodeled metrics listed; every metric is kept in --json\n",
                       report.unmodeled.size());
    return out;
}

profile::ncu::NcuParseOptions parse_options(const ReportArgs& args) {
    profile::ncu::NcuParseOptions options;
    options.tool_version = args.tool_version;
    return options;
}

// Text builds no JSON; --json streams the document (every metric of every launch) as it goes.
Outcome report_result(NcuReport report, const ReportArgs& args, const Context& context,
                      Json extra_top = Json()) {
    const RooflineChoice roofline = profile::ncu::choose_roofline(report, args.roofline);
    // A collection without counters is an environment problem, reported, not an error.
    const int exit_code =
        report.counters_permitted() ? 0 : static_cast<int>(ExitClass::environment);
    Outcome outcome{context.want_text ? report_text(report, roofline) : std::string(),
                    Json::object(),
                    exit_code,
                    {}};
    if (!context.want_document) {
        return outcome;
    }
    auto shared = std::make_shared<const NcuReport>(std::move(report));
    outcome.write_document = [shared, roofline, extra_top](std::ostream& out) {
        profile::ncu::ReportJsonExtras extras;
        profile::ncu::add_roofline(extras, roofline);
        if (extra_top.is_object()) {
            for (const auto& [k, v] : extra_top.items()) {
                extras.top[k] = v;
            }
        }
        profile::ncu::write_report_json(*shared, out, extras);
    };
    return outcome;
}

// The report options add_report_params defines; `file` is the export read (`profile ncu`'s own
// argument; a collection passes the export it made, or nothing yet).
ReportArgs report_args(const Request& r, std::string file = {}) {
    return ReportArgs{std::move(file), r.text("tool_version"),
                      profile::ncu::RooflineOptions{r.text("device"), r.text("precision")}};
}

void add_report_params(RequestDef& def) {
    def.params.push_back(string_param(
        "tool_version", "The NCU version that made the export, when the file does not say"));
    def.params.push_back(
        string_param("device",
                     "Device for the roofline (a peak-table key such as h200-sxm); default: "
                     "the device the report names"));
    def.params.push_back(string_param(
        "precision", "Roofline precision: fp64, fp32, fp16, bf16 (default: the most FLOP)"));
}

std::string diff_text(const profile::ncu::NcuDiff& diff, const NcuReport& a, const NcuReport& b) {
    std::string out =
        fmt::format("{} launch pairs, {} unmatched\n", diff.pairs.size(), diff.unmatched.size());
    for (const auto& p : diff.pairs) {
        const profile::ncu::LaunchFact* da = a.launches[p.a_index].find("duration");
        const profile::ncu::LaunchFact* db = b.launches[p.b_index].find("duration");
        std::string change = "duration -";
        for (const auto& d : p.deltas) {
            if (d.id == "duration" && d.delta_pct && da != nullptr && db != nullptr) {
                change = fmt::format("duration {:.2f} us -> {:.2f} us ({:+.1f}%)", da->value / 1e3,
                                     db->value / 1e3, *d.delta_pct);
            }
        }
        out += fmt::format("  {} #{}: {}\n", short_kernel(p.kernel), p.occurrence, change);
    }
    for (const auto& u : diff.unmatched) {
        out += fmt::format("  only in {}: {} #{}\n", u.side, short_kernel(u.kernel), u.occurrence);
    }
    return out;
}

fs::path make_work_dir(const std::string& requested) {
    if (!requested.empty()) {
        fs::create_directories(requested);
        return requested;
    }
    try {
        return make_temp_dir("cko-ncu");
    } catch (const Error& e) {
        throw Error(e.code(), fmt::format("{} (or pass --out)", e.what()), e.details());
    }
}

void require_argument(const std::string& value, const char* name, const char* usage) {
    if (value.empty()) {
        throw Error(ErrorCode::usage, fmt::format("{} is required: {}", name, usage));
    }
}

// With --root: the document is built whole (not streamed), kept as a profile record and printed
// with `stored`. An export without counters (ERR_NVGPUCTRPERM) is not kept: it holds no profile.
Outcome stored_report_result(NcuReport report, const ReportArgs& args, const Request& r,
                             const Context& context) {
    Json source = profile::source_to_json(report.source);
    source["path"] = args.file;
    const bool counters = report.counters_permitted();
    Context whole = context;
    whole.want_document = true;
    Outcome out = report_result(std::move(report), args, whole);
    out.document = out.materialized_document();
    out.write_document = nullptr;
    if (!counters) {
        out.text += "not stored: the export holds no counters (ERR_NVGPUCTRPERM)\n";
        return out;
    }
    store_if_asked(r, "ncu", Json::array({source}), out);
    return out;
}

Outcome ncu(const Request& r, Context& context) {
    const ReportArgs args = report_args(r, r.text("file"));
    require_argument(args.file, "FILE", "cko profile ncu FILE");
    NcuReport report = profile::ncu::read_ncu_report(args.file, parse_options(args));
    add_version_notes(report.notes, report.source);
    if (r.text("root").empty()) {
        Outcome none;
        store_if_asked(r, "ncu", Json::array(), none);  // --experiment/--subject alone: refused
        return report_result(std::move(report), args, context);
    }
    return stored_report_result(std::move(report), args, r, context);
}

Outcome ncu_diff(const Request& r, Context& /*context*/) {
    require_argument(r.text("a"), "A", "cko profile diff A B");
    require_argument(r.text("b"), "B", "cko profile diff A B");
    ReportArgs opts;
    opts.tool_version = r.text("tool_version");
    const NcuReport a = profile::ncu::read_ncu_report(r.text("a"), parse_options(opts));
    const NcuReport b = profile::ncu::read_ncu_report(r.text("b"), parse_options(opts));
    const auto d = profile::ncu::diff_ncu_reports(a, b);
    return Outcome{diff_text(d, a, b), profile::ncu::diff_to_json(d, a, b), 0, {}};
}

// A file of a driver call's capture, or "" (it may be missing or larger than the call's cap).
std::string call_output(const fs::path& file) {
    try {
        return read_file_capped(file, std::uint64_t{64} << 20);
    } catch (const Error&) {
        return {};
    }
}

// The store form: ncu around one driver call of the Target, its report read back as the raw page.
Outcome collect_ncu_into_store(const Request& r, Context& context) {
    if (!r.list("command").empty()) {
        throw Error(ErrorCode::invalid_argument,
                    "give either a command after -- (the diagnostic form) or --root with "
                    "--experiment and --subject (one driver call of the Target), not both",
                    {{"field", "command"}});
    }
    if (r.text("root").empty()) {
        throw Error(ErrorCode::invalid_argument,
                    "--experiment, --subject, --case and --question profile a driver call of a "
                    "Target: name its artifact root with --root",
                    {{"field", "root"}});
    }
    eval::ProfileImport importer;
    importer.refusal = [](const eval::CollectedRun& run) -> std::optional<Error> {
        for (const std::string_view stream :
             {store::layout::kStdoutFile, store::layout::kStderrFile}) {
            if (profile::ncu::says_counters_not_permitted(call_output(run.call_dir / stream))) {
                return Error(ErrorCode::tool_failed,
                             "ncu was refused the GPU performance counters (ERR_NVGPUCTRPERM): "
                             "nothing was profiled and no profile is kept. " +
                                 profile::ncu::counters_not_permitted_advice(),
                             {{"counters_not_permitted", true},
                              {"fact", "collection.counters_not_permitted"},
                              {"call_dir", run.call_dir.string()}});
            }
        }
        return std::nullopt;
    };
    const ReportArgs args = report_args(r);
    Context whole = context;
    whole.want_document = true;
    importer.import = [args, whole](const eval::CollectedRun& run) {
        profile::ncu::NcuImportOptions io;
        io.ncu = run.program;
        io.report = run.output;
        io.csv_path = run.work_dir / "ncu-raw.csv";
        io.stderr_path = run.work_dir / "ncu-import-stderr.txt";
        io.tool_version = run.tool_version;
        io.timeout = run.timeout;
        io.cancel = run.cancel;
        NcuReport report = profile::ncu::import_ncu_report(io);
        Json source = profile::source_to_json(report.source);
        source["path"] = io.csv_path.string();
        const Outcome o = report_result(std::move(report), args, whole);
        return eval::ImportedProfile{o.materialized_document(), Json::array({source}), o.text};
    };
    return collect_into_store(r, context, eval::ProfileTool::ncu, importer);
}

Outcome collect_ncu(const Request& r, Context& context) {
    if (!r.text("root").empty() || !r.text("experiment").empty() || !r.text("subject").empty() ||
        !r.text("case").empty() || !r.text("question").empty()) {
        return collect_ncu_into_store(r, context);
    }
    profile::ncu::NcuCollectOptions options;
    options.command = r.list("command");
    options.ncu = r.text("ncu");
    options.ncu_args = r.list("ncu_arg");
    options.timeout =
        std::chrono::milliseconds(static_cast<std::int64_t>(r.number("timeout") * 1000));
    options.work_dir = make_work_dir(r.text("out"));
    options.cancel = context.cancel;
    auto result = profile::ncu::collect_ncu(options);
    Json collection = {{"collection",
                        {{"argv", result.argv},
                         {"process", result.process.to_json()},
                         {"export", result.export_path.string()},
                         {"stderr", result.stderr_path.string()}}}};
    Outcome out =
        report_result(std::move(result.report), report_args(r), context, std::move(collection));
    if (context.want_text) {
        out.text += fmt::format("export kept at {}\n", result.export_path.string());
    }
    return out;
}

}  // namespace

void add_profile_ncu_verbs(std::vector<Verb>& table) {
    // Positionals are checked in run(), not marked required: the message names the usage.
    RequestDef ncu_def{
        {positional(string_param("file", "CSV from ncu --csv (--page raw or --page details)"))}};
    add_report_params(ncu_def);
    ncu_def.params = with_evidence_params(std::move(ncu_def.params));
    // Not read-only: with --root it writes a profile record.
    table.push_back(Verb{
        {"profile", "ncu"}, "Parse an Nsight Compute CSV export into facts", ncu_def, &ncu, false});
    table.push_back(Verb{{"profile", "diff"},
                         "Compare two NCU exports launch by launch",
                         RequestDef{{positional(string_param("a", "Baseline NCU CSV export")),
                                     positional(string_param("b", "Candidate NCU CSV export")),
                                     string_param("tool_version", "NCU version of both exports")}},
                         &ncu_diff,
                         true});
    Param timeout = number_param("timeout", "Seconds before ncu is killed", 600.0);
    timeout.minimum = 0;
    timeout.exclusive_minimum = true;
    RequestDef collect_def{
        {positional(list_param("command",
                               "The command to profile, after -- (the diagnostic form: outside "
                               "any store)")),
         string_param("ncu", "The ncu executable (default: ncu on PATH)", "ncu"),
         list_param("ncu_arg",
                    "An extra ncu argument (repeat), e.g. --ncu-arg=--set --ncu-arg=full; with "
                    "--root only --set, --section, --metrics, --kernel-name, --launch-skip, "
                    "--launch-count and the like"),
         timeout, string_param("out", "Directory for the export (default: a new one under TMPDIR)"),
         string_param("root",
                      "Profile one driver call of this Target instead of a command, and keep "
                      "the profile there (with --experiment and --subject)")}};
    for (Param& p : collect_params()) {
        collect_def.params.push_back(std::move(p));
    }
    add_report_params(collect_def);
    Verb collect{{"profile", "collect", "ncu"},
                 "Run ncu around one driver call of a subject (--root) or a command (--)",
                 collect_def,
                 &collect_ncu};
    collect.cancellable = true;
    table.push_back(std::move(collect));
}

void add_profile_trace_verbs(std::vector<Verb>& table);

void add_profile_verbs(std::vector<Verb>& table, std::vector<Group>& groups) {
    groups.push_back({{"profile"}, "Profiler evidence: parse reports into facts"});
    groups.push_back({{"profile", "collect"},
                      "Run a profiler around one driver call of a frozen subject and keep its "
                      "profile"});
    add_profile_ncu_verbs(table);
    add_profile_trace_verbs(table);
}

}  // namespace cko::verbs
