// `cko profile torch`, `cko profile nsys`: trace summaries as aligned tables or one JSON document.
#include "cko/profile/fact.hpp"
#include "cko/profile/kineto/kineto_trace.hpp"
#include "cko/profile/nsys/nsys_export.hpp"
#include "cko/util/error.hpp"
#include "cko/util/text_table.hpp"
#include "cko/verbs/evidence.hpp"
#include "cko/verbs/verb.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace cko::verbs {
namespace {

namespace kineto = profile::kineto;
namespace nsys = profile::nsys;

// A trace's table (util/text_table.hpp): widths fitted to the cells, a rule under the header; the
// first `left` columns left-aligned, the others right-aligned but the last, a name: left-aligned,
// never padded, cut at 90 bytes.
class TraceTable {
public:
    TraceTable(const std::vector<std::string>& header, std::size_t left)
        : table_(columns(header.size(), left), " ") {
        table_.fit();
        add(header);
        table_.add_rule();
    }
    void add(std::vector<std::string> row) {
        constexpr std::size_t kMaxName = 90;
        if (!row.empty() && row.back().size() > kMaxName) {
            row.back() = row.back().substr(0, kMaxName - 3) + "...";
        }
        table_.add(std::move(row));
    }
    [[nodiscard]] std::string render() const { return table_.render(); }

private:
    static std::vector<TextColumn> columns(std::size_t count, std::size_t left) {
        std::vector<TextColumn> out;
        for (std::size_t c = 0; c < count; ++c) {
            const bool left_aligned = c < left || c + 1 == count;
            out.push_back(TextColumn{0, left_aligned ? Align::left : Align::right, "  "});
        }
        return out;
    }
    TextTable table_;
};

std::string ns_text(double ns) {
    return fmt::format("{:.1f}", ns);
}

std::string kineto_text(const kineto::KinetoTrace& t, std::size_t top) {
    const kineto::TraceSummary& s = t.summary;
    std::string out = fmt::format("{}  ({} bytes{}, sha256 {})\n", t.path, t.file_bytes,
                                  t.gzip ? ", gzip" : "", t.source.report_sha256.substr(0, 16));
    const auto& dev = t.identity.device_properties;
    out += fmt::format(
        "  rank {}  device {}  CUDA runtime {}  CUPTI {}\n",
        t.identity.rank ? std::to_string(*t.identity.rank) : "-",
        dev.is_array() && !dev.empty() ? dev[0].value("name", "?") : "-",
        t.identity.cuda_runtime_version ? std::to_string(*t.identity.cuda_runtime_version) : "-",
        t.identity.cupti_version ? std::to_string(*t.identity.cupti_version) : "-");
    out += fmt::format("  {} events, {} complete; kernel time {} ns\n", s.events, s.complete_events,
                       s.kernel_time_ns);
    for (const auto& note : t.notes) {
        out += "  note: " + note + "\n";
    }
    out += "\n";

    std::vector<std::pair<std::string, kineto::DurationStats>> kernels(s.kernels.begin(),
                                                                       s.kernels.end());
    std::stable_sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) {
        return a.second.total_ns > b.second.total_ns;
    });
    TraceTable k({"GPU %", "Total (ns)", "Count", "Mean (ns)", "Min (ns)", "Max (ns)", "Kernel"},
                 0);
    for (std::size_t i = 0; i < kernels.size() && i < top; ++i) {
        const auto& [name, st] = kernels[i];
        const double share = s.kernel_time_ns == 0 ? 0.0
                                                   : 100.0 * static_cast<double>(st.total_ns) /
                                                         static_cast<double>(s.kernel_time_ns);
        k.add({fmt::format("{:.1f}", share), std::to_string(st.total_ns), std::to_string(st.count),
               ns_text(st.mean_ns()), std::to_string(st.min_ns), std::to_string(st.max_ns), name});
    }
    out += "Kernels" +
           (kernels.size() > top ? fmt::format(" (top {} of {})", top, kernels.size())
                                 : std::string()) +
           "\n" + k.render() + "\n";

    TraceTable streams({"Device", "Stream", "Kernels", "Memcpy", "Memset", "Busy (ns)"}, 0);
    for (const auto& [key, st] : s.streams) {
        streams.add(
            {std::to_string(key.first), std::to_string(key.second),
             std::to_string(st.kernels.count), std::to_string(st.memcpy.count),
             std::to_string(st.memset.count),
             std::to_string(st.kernels.total_ns + st.memcpy.total_ns + st.memset.total_ns)});
    }
    out += "Streams\n" + streams.render() + "\n";

    TraceTable mem({"Op", "Count", "Total (ns)", "Bytes", "Name"}, 1);
    for (const auto* group : {&s.memcpy, &s.memset}) {
        for (const auto& [name, st] : *group) {
            mem.add({group == &s.memcpy ? "memcpy" : "memset", std::to_string(st.time.count),
                     std::to_string(st.time.total_ns), std::to_string(st.bytes), name});
        }
    }
    out += "Memory operations\n" + mem.render() + "\n";

    const auto& f = s.flows;
    const auto& l = f.launch_to_gpu;
    out += fmt::format(
        "Launch -> GPU start (launch flows): {} linked, {} launches without GPU work, {} GPU rows "
        "without launch\n  min {}  p50 {}  p90 {}  p99 {}  max {} ns\n\n",
        f.linked, f.unmatched_starts, f.unmatched_finishes, l.min_ns, l.p50_ns, l.p90_ns, l.p99_ns,
        l.max_ns);

    TraceTable ann({"Category", "Count", "Total (ns)", "Window (ns)", "Name"}, 1);
    for (const auto& [key, a] : s.annotations) {
        ann.add({key.first, std::to_string(a.time.count), std::to_string(a.time.total_ns),
                 std::to_string(a.last_end_ns - a.first_start_ns), key.second});
    }
    out += "Annotations\n" + ann.render();
    return out;
}

std::string nsys_text(const nsys::NsysExport& e, std::size_t top) {
    std::string out = fmt::format(
        "{}  (Nsight Systems {}, export schema {}, sha256 {})\n", e.path,
        e.source.tool_version.empty() ? std::string("version not stated") : e.source.tool_version,
        e.schema_version, e.source.report_sha256.substr(0, 16));
    for (const auto& note : e.notes) {
        out += "  note: " + note + "\n";
    }
    for (const auto& gpu : e.gpus) {
        out += fmt::format("  GPU {}: {} ({} SMs)\n", gpu.value("id", Json(-1)).dump(),
                           gpu.value("name", "?"), gpu.value("smCount", Json()).dump());
    }
    for (const auto& report : e.reports) {
        out += "\n" + report.name + "\n";
        if (!report.skipped.empty()) {
            out += "  SKIPPED: " + report.skipped + "\n";
            continue;
        }
        const bool nvtx = report.header.size() == 10;
        TraceTable t(report.header, 0);
        for (std::size_t i = 0; i < report.rows.size() && i < top; ++i) {
            const auto& r = report.rows[i];
            std::vector<std::string> row = {
                r.time_percent_tenths ? nsys::format_tenths(*r.time_percent_tenths) : "",
                std::to_string(r.total_ns),
                std::to_string(r.count),
                nsys::format_tenths(r.avg_tenths),
                nsys::format_tenths(r.med_tenths),
                std::to_string(r.min_ns),
                std::to_string(r.max_ns),
                nsys::format_tenths(r.stddev_tenths)};
            if (nvtx) {
                row.push_back(r.style);
            }
            row.push_back(r.name);
            t.add(std::move(row));
        }
        out += t.render();
        if (report.rows.size() > top) {
            out += fmt::format("  ({} more rows; --top or --json)\n", report.rows.size() - top);
        }
    }
    return out;
}

Outcome torch(const Request& r, Context& /*context*/) {
    const std::vector<std::string> files = r.list("files");
    const std::vector<std::filesystem::path> paths(files.begin(), files.end());
    auto traces = kineto::import_kineto_traces(paths, r.text("tool_version"));
    for (auto& t : traces) {
        add_version_notes(t.notes, t.source);
    }
    std::string text;
    for (const auto& t : traces) {
        if (!text.empty()) {
            text += '\n';
        }
        text += kineto_text(t, static_cast<std::size_t>(r.integer("top")));
    }
    Outcome out{text, kineto::kineto_traces_to_json(traces), 0, {}};
    Json sources = Json::array();
    for (const auto& t : traces) {
        Json s = profile::source_to_json(t.source);
        s["path"] = t.path;
        sources.push_back(s);
    }
    store_if_asked(r, "torch", sources, out);
    return out;
}

Outcome nsys_summary(const Request& r, Context& /*context*/) {
    const std::string file = r.text("file");
    const std::string csv = r.text("csv");
    if (!csv.empty()) {
        // Exactly the CSV `nsys stats --report NAME --format csv` prints.
        const nsys::NsysDatabase db(file);
        const nsys::StatsReport report = nsys::run_stats_report(db, csv);
        if (!report.skipped.empty()) {
            throw Error(ErrorCode::missing_field, report.skipped, {{"report", report.name}});
        }
        return Outcome{report.to_csv(), report.to_json(), 0, {}};
    }
    nsys::NsysExport e = nsys::import_nsys_export(file);
    take_stated_version(e.source, r.text("tool_version"), e.path);
    add_version_notes(e.notes, e.source);
    Outcome out{nsys_text(e, static_cast<std::size_t>(r.integer("top"))), e.to_json(), 0, {}};
    Json source = profile::source_to_json(e.source);
    source["path"] = e.path;
    store_if_asked(r, "nsys", Json::array({source}), out);
    return out;
}

Outcome collect_nsys(const Request& r, Context& context) {
    const auto top = static_cast<std::size_t>(r.integer("top"));
    eval::ProfileImport importer;
    importer.import = [top](const eval::CollectedRun& run) {
        const nsys::NsysExport e = nsys::import_nsys_export(run.output);
        Json source = profile::source_to_json(e.source);
        source["path"] = e.path;
        return eval::ImportedProfile{e.to_json(), Json::array({source}), nsys_text(e, top)};
    };
    return collect_into_store(r, context, eval::ProfileTool::nsys, importer);
}

Outcome collect_torch(const Request& r, Context& context) {
    const auto top = static_cast<std::size_t>(r.integer("top"));
    eval::ProfileImport importer;
    importer.import = [top](const eval::CollectedRun& run) {
        const auto traces = kineto::import_kineto_traces({run.output}, run.tool_version);
        Json sources = Json::array();
        std::string text;
        for (const auto& t : traces) {
            Json s = profile::source_to_json(t.source);
            s["path"] = t.path;
            sources.push_back(s);
            text += kineto_text(t, top);
        }
        return eval::ImportedProfile{kineto::kineto_traces_to_json(traces), sources, text};
    };
    return collect_into_store(r, context, eval::ProfileTool::torch, importer);
}

}  // namespace

void add_profile_trace_verbs(std::vector<Verb>& table) {
    Param top = integer_param("top", "Kernel rows to print (default 20)", 20);
    top.minimum = 0;
    table.push_back(
        Verb{{"profile", "torch"},
             "Summarise PyTorch profiler (Kineto) traces, .json or .json.gz",
             RequestDef{with_evidence_params(
                 {required(positional(list_param("files", "Trace files (one per rank)"))),
                  string_param("tool_version",
                               "torch version that wrote the traces (they do not record it)"),
                  top})},
             &torch,
             false});  // with --root it writes a profile record
    Param nsys_top = integer_param("top", "Rows per report to print (default 20)", 20);
    nsys_top.minimum = 0;
    table.push_back(Verb{
        {"profile", "nsys"},
        "Summarise an Nsight Systems SQLite export like `nsys stats`",
        RequestDef{with_evidence_params(
            {required(positional(
                 string_param("file", "The .sqlite export (nsys export --type sqlite)"))),
             string_param("csv",
                          "Print one report as nsys stats CSV: cuda_gpu_kern_sum[:base|:mangled], "
                          "cuda_gpu_mem_time_sum, cuda_api_sum, nvtx_sum, cuda_sync_sum"),
             string_param("tool_version",
                          "The Nsight Systems version, when the export does not state "
                          "EXPORT_PRODUCT_VERSION"),
             nsys_top})},
        &nsys_summary,
        false});  // with --root it writes a profile record

    std::vector<Param> nsys_collect{
        root_param(), string_param("nsys", "The nsys executable (default: nsys on PATH)", "nsys"),
        list_param("nsys_arg",
                   "An nsys profile option (repeat): --trace, --sample, --cpuctxsw, "
                   "--backtrace, --cuda-memory-usage, --capture-range, --delay, --duration, ..."),
        nsys_top};
    std::vector<Param> torch_collect{root_param(), top};
    for (Param& p : collect_params()) {
        nsys_collect.push_back(p);
        torch_collect.push_back(std::move(p));
    }
    Verb collect_nsys_verb{{"profile", "collect", "nsys"},
                           "Run nsys around one driver call of a subject and keep its export",
                           RequestDef{nsys_collect},
                           &collect_nsys};
    collect_nsys_verb.cancellable = true;
    table.push_back(std::move(collect_nsys_verb));
    Verb collect_torch_verb{
        {"profile", "collect", "torch"},
        "Ask the driver for a torch.profiler trace of one call of a subject and keep it",
        RequestDef{torch_collect},
        &collect_torch};
    collect_torch_verb.cancellable = true;
    table.push_back(std::move(collect_torch_verb));
}

}  // namespace cko::verbs
