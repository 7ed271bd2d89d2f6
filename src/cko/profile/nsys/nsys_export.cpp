// Nsight Systems export import: source identity, target GPU info, summaries and kernel facts.
#include "cko/profile/nsys/nsys_export.hpp"

#include "cko/util/error.hpp"
#include "cko/util/sha256.hpp"

#include <set>

namespace cko::profile::nsys {
namespace {

// Rows of a TARGET_INFO_* table as JSON objects with the wanted columns that exist.
Json table_rows(const NsysDatabase& db, const std::string& table,
                const std::vector<std::string>& wanted) {
    Json rows = Json::array();
    if (!db.has_table(table)) {
        return rows;
    }
    const std::set<std::string> present = db.columns(table);
    std::vector<std::string> cols;
    std::string sql;
    for (const auto& c : wanted) {
        if (present.count(c) != 0) {
            cols.push_back(c);
            sql += sql.empty() ? "" : ", ";
            sql += "typeof(\"" + c + "\"), \"" + c + "\"";
        }
    }
    if (cols.empty()) {
        return rows;
    }
    Statement s = db.prepare("SELECT " + sql + " FROM " + table);
    while (s.step()) {
        Json row = Json::object();
        for (std::size_t i = 0; i < cols.size(); ++i) {
            const int type_col = static_cast<int>(2 * i);
            const std::string type = s.text(type_col);
            if (type == "integer") {
                row[cols[i]] = s.int64(type_col + 1);
            } else if (type == "null") {
                row[cols[i]] = nullptr;
            } else {
                row[cols[i]] = s.text(type_col + 1);
            }
        }
        rows.push_back(row);
    }
    return rows;
}

bool is_read_table(const std::string& table) {
    static const std::set<std::string> tables = {
        "META_DATA_EXPORT",
        "EXPORT_META_DATA",
        "StringIds",
        "CUPTI_ACTIVITY_KIND_KERNEL",
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        "CUPTI_ACTIVITY_KIND_MEMSET",
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
        "NVTX_EVENTS",
        "TARGET_INFO_GPU",
        "TARGET_INFO_CUDA_DEVICE",
        "ENUM_CUDA_MEMCPY_OPER",
        "ENUM_CUPTI_SYNC_TYPE",
    };
    return tables.count(table) != 0;
}

}  // namespace

const StatsReport& NsysExport::report(const std::string& name) const {
    for (const auto& r : reports) {
        if (r.name == name) {
            return r;
        }
    }
    throw Error(ErrorCode::invalid_argument, "unknown report '" + name + "'",
                {{"report", name}, {"known", stats_report_names()}});
}

std::vector<Fact> NsysExport::kernel_facts() const {
    std::vector<Fact> facts;
    for (const StatsRow& row : report("cuda_gpu_kern_sum").rows) {
        Scope scope;
        scope.kernel = row.name;
        const auto ns = [&](const char* id, double v) {
            facts.push_back(Fact{id, v, BaseUnit::ns, scope, "nsys:cuda_gpu_kern_sum"});
        };
        facts.push_back(Fact{"kernel.instances", static_cast<double>(row.count), BaseUnit::count,
                             scope, "nsys:cuda_gpu_kern_sum"});
        ns("kernel.duration.total", static_cast<double>(row.total_ns));
        ns("kernel.duration.mean", static_cast<double>(row.avg_tenths) / 10.0);
        ns("kernel.duration.median", static_cast<double>(row.med_tenths) / 10.0);
        ns("kernel.duration.min", static_cast<double>(row.min_ns));
        ns("kernel.duration.max", static_cast<double>(row.max_ns));
    }
    return facts;
}

Json NsysExport::to_json() const {
    Json reports_json = Json::object();
    for (const auto& r : reports) {
        reports_json[r.name] = r.to_json();
    }
    Json facts = Json::array();
    for (const Fact& f : kernel_facts()) {
        facts.push_back(fact_to_json(f));
    }
    return Json{{"format_version", "cko/profile-nsys-v1"},
                {"path", path},
                {"source", source_to_json(source)},
                {"schema_version", schema_version},
                {"gpus", gpus},
                {"cuda_devices", cuda_devices},
                {"reports", reports_json},
                {"facts", facts},
                {"unmodeled_tables", unmodeled_tables},
                {"notes", notes}};
}

NsysExport import_nsys_export(const std::filesystem::path& path) {
    const NsysDatabase db(path);
    NsysExport out;
    out.path = path.string();
    out.schema_version = db.schema_version();
    out.source = Source{sha256_file_hex(path), "nsys", db.metadata("EXPORT_PRODUCT_VERSION"),
                        "nsys-sqlite-" + db.schema_version(), kParserVersion};
    out.gpus =
        table_rows(db, "TARGET_INFO_GPU",
                   {"id", "name", "chipName", "busLocation", "uuid", "totalMemory", "smCount",
                    "clockRate", "memoryBandwidth", "computeMajor", "computeMinor", "l2CacheSize"});
    out.cuda_devices = table_rows(db, "TARGET_INFO_CUDA_DEVICE", {"gpuId", "cudaId", "pid"});
    for (const auto& name : stats_report_names()) {
        out.reports.push_back(run_stats_report(db, name));
    }
    Statement tables = db.prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' "
        "ORDER BY name");
    while (tables.step()) {
        std::string t = tables.text(0);
        if (!is_read_table(t) && !t.starts_with("sqlite_")) {
            out.unmodeled_tables.push_back(std::move(t));
        }
    }
    if (const auto unmodeled = db.unmodeled_gpu_rows(); !unmodeled.empty()) {
        std::string list;
        for (const auto& [table, n] : unmodeled) {
            list += (list.empty() ? "" : ", ") + table + ": " + std::to_string(n);
        }
        out.notes.push_back("GPU work in tables cko does not read, not in the summaries (" + list +
                            "); a graph traced as a whole (--cuda-graph-trace=graph) has no "
                            "kernel rows: trace with --cuda-graph-trace=node to see them");
    }
    if (db.metadata_table() != "META_DATA_EXPORT") {
        out.notes.push_back("metadata read from " + db.metadata_table() +
                            " (the table's name in exports of Nsight Systems 2023.2, schema " +
                            "3.1.7; newer ones call it META_DATA_EXPORT)");
    }
    if (const std::string note = db.repairs().note(); !note.empty()) {
        out.notes.push_back(note);
    }
    return out;
}

}  // namespace cko::profile::nsys
