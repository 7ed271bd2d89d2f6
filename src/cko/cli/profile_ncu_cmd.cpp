// `cko profile ncu`, `cko profile diff`, `cko profile collect ncu`.
#include "cko/cli/command.hpp"
#include "cko/cli/verbs.hpp"
#include "cko/profile/ncu/ncu_collect.hpp"
#include "cko/profile/ncu/ncu_csv.hpp"
#include "cko/profile/ncu/ncu_diff.hpp"
#include "cko/profile/ncu/ncu_roofline.hpp"
#include "cko/profile/roofline.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <memory>

namespace cko::cli {
namespace {

namespace fs = std::filesystem;
using profile::DevicePeaks;
using profile::Precision;
using profile::ncu::NcuLaunch;
using profile::ncu::NcuReport;

struct ReportArgs {
    std::string file;
    std::string tool_version;
    std::string device;
    std::string precision;
};

std::string short_kernel(const std::string& kernel) {
    const std::string name = kernel.substr(0, kernel.find('('));
    return name.size() > 28 ? name.substr(0, 27) + "~" : name;
}

std::string dim3_text(const std::optional<std::array<std::int64_t, 3>>& d) {
    return d ? fmt::format("({},{},{})", (*d)[0], (*d)[1], (*d)[2]) : "-";
}

std::string fact_text(const NcuLaunch& launch, std::string_view id, double scale,
                      const char* format) {
    const profile::Fact* f = launch.find(id);
    return f == nullptr ? "-" : fmt::format(fmt::runtime(format), f->value * scale);
}

std::optional<Precision> precision_option(const std::string& text) {
    if (text.empty()) {
        return std::nullopt;
    }
    const auto p = profile::precision_from_name(text);
    if (!p) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("--precision '{}': expected fp64, fp32, fp16 or bf16", text));
    }
    return p;
}

std::vector<std::string> device_keys() {
    std::vector<std::string> keys;
    for (const DevicePeaks& d : profile::device_peak_table()) {
        keys.emplace_back(d.key);
    }
    return keys;
}

// The report as JSON, with a roofline placement per launch when the device is known.
Json report_json(const NcuReport& report, const ReportArgs& args) {
    Json out = profile::ncu::report_to_json(report);
    const std::string device_name = args.device.empty() ? report.device_name : args.device;
    const DevicePeaks* device = profile::find_device_peaks(device_name);
    if (device == nullptr && !args.device.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("--device '{}' is not in the peak table; known: {}", args.device,
                                fmt::join(device_keys(), ", ")),
                    {{"known", device_keys()}});
    }
    if (device == nullptr) {
        out["device"] = nullptr;
        out["roofline_note"] =
            device_name.empty()
                ? fmt::format(
                      "no roofline: the report does not name its device; pass --device "
                      "(one of {})",
                      fmt::join(device_keys(), ", "))
                : fmt::format(
                      "no roofline: the device '{}' is not in the peak table; pass "
                      "--device (one of {})",
                      device_name, fmt::join(device_keys(), ", "));
        return out;
    }
    out["device"] = profile::device_peaks_to_json(*device);
    const auto precision = precision_option(args.precision);
    for (std::size_t i = 0; i < report.launches.size(); ++i) {
        const auto in = profile::ncu::roofline_input(report.launches[i], precision);
        if (!in) {
            continue;
        }
        const profile::RooflinePlacement placement = profile::place_on_roofline(in->input, *device);
        Json roofline = profile::placement_to_json(placement, *device);
        roofline["bytes_from"] = in->bytes_from.empty() ? Json() : Json(in->bytes_from);
        roofline["facts"] = Json::array();
        for (const profile::Fact& f :
             profile::roofline_facts(placement, report.launches[i].scope)) {
            roofline["facts"].push_back(
                {{"id", f.id}, {"value", f.value}, {"unit", profile::base_unit_name(f.unit)}});
        }
        out["launches"][i]["roofline"] = std::move(roofline);
    }
    return out;
}

std::string report_text(const NcuReport& report, const Json& json) {
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
    if (!report.launches.empty()) {
        out += fmt::format("{:>4}  {:<28}  {:<14} {:<11} {:>11} {:>6} {:>6} {:>6} {:>8}\n", "id",
                           "kernel", "grid", "block", "duration", "dram%", "sm%", "occ%", "facts");
    }
    for (const NcuLaunch& l : report.launches) {
        out += fmt::format("{:>4}  {:<28}  {:<14} {:<11} {:>11} {:>6} {:>6} {:>6} {:>8}\n",
                           l.scope.launch_id ? std::to_string(*l.scope.launch_id) : "-",
                           short_kernel(l.scope.kernel), dim3_text(l.scope.grid),
                           dim3_text(l.scope.block), fact_text(l, "duration", 1e-3, "{:.2f} us"),
                           fact_text(l, "dram.throughput_pct", 1, "{:.1f}"),
                           fact_text(l, "sm.throughput_pct", 1, "{:.1f}"),
                           fact_text(l, "occupancy.achieved_pct", 1, "{:.1f}"), l.facts.size());
    }
    if (json.contains("roofline_note")) {
        out += json["roofline_note"].get<std::string>() + "\n";
    } else if (json.contains("device")) {
        out += fmt::format("roofline against {} (see --json)\n",
                           json["device"]["name"].get<std::string>());
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

CommandResult report_result(const NcuReport& report, const ReportArgs& args) {
    Json json = report_json(report, args);
    std::string text = report_text(report, json);
    // A collection without counters is an environment problem, reported, not an error.
    return CommandResult{
        std::move(text), std::move(json),
        report.counters_permitted() ? 0 : static_cast<int>(ExitClass::environment)};
}

void add_report_options(CLI::App* verb, ReportArgs& args) {
    verb->add_option("--tool-version", args.tool_version,
                     "The NCU version that made the export, when the file does not say");
    verb->add_option("--device", args.device,
                     "Device for the roofline (a peak-table key such as h200-sxm); default: the "
                     "device the report names");
    verb->add_option("--precision", args.precision,
                     "Roofline precision: fp64, fp32, fp16, bf16 (default: the most FLOP)");
}

struct DiffArgs {
    std::string a;
    std::string b;
    std::string tool_version;
};

std::string diff_text(const profile::ncu::NcuDiff& diff, const NcuReport& a, const NcuReport& b) {
    std::string out =
        fmt::format("{} launch pairs, {} unmatched\n", diff.pairs.size(), diff.unmatched.size());
    for (const auto& p : diff.pairs) {
        const profile::Fact* da = a.launches[p.a_index].find("duration");
        const profile::Fact* db = b.launches[p.b_index].find("duration");
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

struct CollectArgs {
    std::vector<std::string> command;
    std::string ncu = "ncu";
    std::vector<std::string> ncu_args;
    double timeout_s = 600;
    std::string out_dir;
    ReportArgs report;
};

fs::path make_work_dir(const std::string& requested) {
    if (!requested.empty()) {
        fs::create_directories(requested);
        return requested;
    }
    const char* env = std::getenv("TMPDIR");
    const fs::path base = env != nullptr && *env != '\0' ? fs::path(env) : fs::path("/tmp");
    std::string pattern = (base / "cko-ncu-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
        throw Error(ErrorCode::io_error,
                    fmt::format("cannot create a directory in {}; set TMPDIR or pass --out",
                                base.string()));
    }
    return pattern;
}

void require_argument(const std::string& value, const char* name, const char* usage) {
    if (value.empty()) {
        throw Error(ErrorCode::usage, fmt::format("{} is required: {}", name, usage));
    }
}

CLI::App& collect_group(CLI::App& profile) {
    // Shared with other collectors (nsys, torch): whoever registers first creates it.
    for (CLI::App* sub : profile.get_subcommands([](CLI::App*) { return true; })) {
        if (sub->get_name() == "collect") {
            return *sub;
        }
    }
    CLI::App* collect = profile.add_subcommand("collect", "Run a profiler around one command");
    collect->require_subcommand(1);
    return *collect;
}

}  // namespace

void register_profile_ncu(CLI::App& profile) {
    auto args = std::make_shared<ReportArgs>();
    CLI::App* ncu =
        add_verb(profile, "ncu", "Parse an Nsight Compute CSV export into facts", [args] {
            require_argument(args->file, "FILE", "cko profile ncu FILE");
            const NcuReport report =
                profile::ncu::read_ncu_report(args->file, parse_options(*args));
            return report_result(report, *args);
        });
    // Positionals are checked in the handlers, not with required(): --request fills them later.
    ncu->add_option("file", args->file, "CSV from ncu --csv (--page raw or --page details)");
    add_report_options(ncu, *args);

    auto diff_args = std::make_shared<DiffArgs>();
    CLI::App* diff =
        add_verb(profile, "diff", "Compare two NCU exports launch by launch", [diff_args] {
            require_argument(diff_args->a, "A", "cko profile diff A B");
            require_argument(diff_args->b, "B", "cko profile diff A B");
            ReportArgs opts;
            opts.tool_version = diff_args->tool_version;
            const NcuReport a = profile::ncu::read_ncu_report(diff_args->a, parse_options(opts));
            const NcuReport b = profile::ncu::read_ncu_report(diff_args->b, parse_options(opts));
            const auto d = profile::ncu::diff_ncu_reports(a, b);
            return CommandResult{diff_text(d, a, b), profile::ncu::diff_to_json(d, a, b), 0};
        });
    diff->add_option("a", diff_args->a, "Baseline NCU CSV export");
    diff->add_option("b", diff_args->b, "Candidate NCU CSV export");
    diff->add_option("--tool-version", diff_args->tool_version, "NCU version of both exports");

    auto collect_args = std::make_shared<CollectArgs>();
    CLI::App* collect =
        add_verb(collect_group(profile), "ncu", "Run ncu around a command and parse its raw page",
                 [collect_args] {
                     profile::ncu::NcuCollectOptions options;
                     options.command = collect_args->command;
                     options.ncu = collect_args->ncu;
                     options.ncu_args = collect_args->ncu_args;
                     options.timeout = std::chrono::milliseconds(
                         static_cast<std::int64_t>(collect_args->timeout_s * 1000));
                     options.work_dir = make_work_dir(collect_args->out_dir);
                     const auto result = profile::ncu::collect_ncu(options);
                     CommandResult out = report_result(result.report, collect_args->report);
                     out.json["collection"] = {{"argv", result.argv},
                                               {"process", result.process.to_json()},
                                               {"export", result.export_path.string()},
                                               {"stderr", result.stderr_path.string()}};
                     out.text += fmt::format("export kept at {}\n", result.export_path.string());
                     return out;
                 });
    collect->add_option("command", collect_args->command, "The command to profile, after --");
    collect->add_option("--ncu", collect_args->ncu, "The ncu executable (default: ncu on PATH)");
    collect->add_option("--ncu-arg", collect_args->ncu_args,
                        "An extra ncu argument (repeat), e.g. --ncu-arg=--set --ncu-arg=full");
    collect->add_option("--timeout", collect_args->timeout_s, "Seconds before ncu is killed")
        ->check(CLI::PositiveNumber);
    collect->add_option("--out", collect_args->out_dir,
                        "Directory for the export (default: a new one under TMPDIR)");
    add_report_options(collect, collect_args->report);
}

}  // namespace cko::cli
