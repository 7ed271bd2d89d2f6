// cuda_gpu_kern_sum, cuda_gpu_mem_time_sum, cuda_api_sum, nvtx_sum (and a sync summary).
#include "cko/profile/nsys/stats_reports.hpp"

#include "cko/util/error.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace cko::profile::nsys {
namespace {

using Durations = std::vector<std::int64_t>;

// The columns every summary shares; reports rename the count and name columns.
const std::vector<std::string>& sum_header() {
    static const std::vector<std::string> header = {"Time (%)", "Total Time (ns)", "Instances",
                                                    "Avg (ns)", "Med (ns)",        "Min (ns)",
                                                    "Max (ns)", "StdDev (ns)",     "Name"};
    return header;
}

std::vector<std::string> header_with(std::string count_column, std::string name_column) {
    std::vector<std::string> h = sum_header();
    h[2] = std::move(count_column);
    h.back() = std::move(name_column);
    return h;
}

std::string csv_field(const std::string& text) {
    // Python's csv module (QUOTE_MINIMAL), which nsys uses: quote only when needed.
    if (text.find_first_of(",\"\r\n") == std::string::npos) {
        return text;
    }
    std::string out = "\"";
    for (const char c : text) {
        out += c;
        if (c == '"') {
            out += '"';
        }
    }
    return out + "\"";
}

[[noreturn]] void dangling(const NsysDatabase& db, std::string_view table, std::int64_t id) {
    throw Error(ErrorCode::malformed_input,
                db.path().string() + ": " + std::string(table) + " names StringIds id " +
                    std::to_string(id) + ", which does not exist",
                {{"path", db.path().string()}, {"table", std::string(table)}, {"string_id", id}});
}

// Rows from groups of durations keyed by display name, with Time (%) filled in.
std::vector<StatsRow> rows_from(std::map<std::string, Durations>& groups) {
    std::vector<StatsRow> rows;
    rows.reserve(groups.size());
    for (auto& [name, durations] : groups) {
        rows.push_back(summarize_durations(name, durations));
    }
    fill_time_percent(rows);
    return rows;
}

// ORDER BY total DESC; nsys leaves ties to SQLite, cko breaks them by count then name.
void order_by_total(std::vector<StatsRow>& rows) {
    std::stable_sort(rows.begin(), rows.end(), [](const StatsRow& a, const StatsRow& b) {
        if (a.total_ns != b.total_ns) {
            return a.total_ns > b.total_ns;
        }
        if (a.count != b.count) {
            return a.count < b.count;
        }
        return a.name < b.name;
    });
}

// Groups `SELECT key, duration` rows by integer key.
std::unordered_map<std::int64_t, Durations> group_by_id(const NsysDatabase& db,
                                                        const std::string& sql) {
    std::unordered_map<std::int64_t, Durations> groups;
    Statement s = db.prepare(sql);
    while (s.step()) {
        groups[s.is_null(0) ? -1 : s.int64(0)].push_back(s.int64(1));
    }
    return groups;
}

// CUDA API names carry a version suffix ("cudaMalloc_v3020"); nsys drops the last six
// characters when the sixth- and fifth-last are "_v".
std::string without_version_suffix(const std::string& name) {
    if (name.size() >= 6 && name.compare(name.size() - 6, 2, "_v") == 0) {
        return name.substr(0, name.size() - 6);
    }
    return name;
}

}  // namespace

std::string StatsReport::to_csv() const {
    std::string out;
    for (std::size_t i = 0; i < header.size(); ++i) {
        out += (i ? "," : "") + csv_field(header[i]);
    }
    out += "\n";
    const bool nvtx = header.size() == 10;
    for (const auto& r : rows) {
        out += (r.time_percent_tenths ? format_tenths(*r.time_percent_tenths) : "") + "," +
               std::to_string(r.total_ns) + "," + std::to_string(r.count) + "," +
               format_tenths(r.avg_tenths) + "," + format_tenths(r.med_tenths) + "," +
               std::to_string(r.min_ns) + "," + std::to_string(r.max_ns) + "," +
               format_tenths(r.stddev_tenths) + "," + (nvtx ? csv_field(r.style) + "," : "") +
               csv_field(r.name) + "\n";
    }
    return out;
}

Json StatsReport::to_json() const {
    Json j{{"report", name}, {"columns", header}, {"rows", Json::array()}};
    for (const auto& r : rows) {
        j["rows"].push_back(r.to_json());
    }
    if (!skipped.empty()) {
        j["skipped"] = skipped;
    }
    return j;
}

StatsReport cuda_gpu_kern_sum(const NsysDatabase& db, KernelNaming naming) {
    const std::string table = "CUPTI_ACTIVITY_KIND_KERNEL";
    StatsReport report{"cuda_gpu_kern_sum", sum_header(), {}, {}};
    if (!db.has_table(table)) {
        report.skipped =
            db.path().string() + " does not contain CUDA kernel data (no " + table + " table)";
        return report;
    }
    db.require_columns("StringIds", {"id", "value"});
    db.require_columns(table, {"start", "end", "demangledName", "shortName"});
    std::string column = naming == KernelNaming::base ? "shortName" : "demangledName";
    if (naming == KernelNaming::mangled && db.has_column(table, "mangledName")) {
        column = "coalesce(mangledName, demangledName)";  // as nsys: fall back when absent
    }
    auto by_id = group_by_id(db, "SELECT " + column + ", end - start FROM " + table);
    std::map<std::string, Durations> by_name;
    for (auto& [id, durations] : by_id) {
        const auto name = db.string_id(id);
        if (!name) {
            dangling(db, table, id);
        }
        Durations& into = by_name[*name];
        into.insert(into.end(), durations.begin(), durations.end());
    }
    report.rows = rows_from(by_name);
    order_by_total(report.rows);  // nsys: ORDER BY 2 DESC, 3, "Name"
    return report;
}

StatsReport cuda_gpu_mem_time_sum(const NsysDatabase& db) {
    const std::string memcpy_table = "CUPTI_ACTIVITY_KIND_MEMCPY";
    const std::string memset_table = "CUPTI_ACTIVITY_KIND_MEMSET";
    StatsReport report{"cuda_gpu_mem_time_sum", header_with("Count", "Operation"), {}, {}};
    if (!db.has_table(memcpy_table) && !db.has_table(memset_table)) {
        report.skipped = db.path().string() + " does not contain GPU memory data";
        return report;
    }
    std::map<std::string, Durations> groups;
    if (db.has_table(memcpy_table)) {
        db.require_columns(memcpy_table, {"start", "end", "copyKind"});
        db.require_columns("ENUM_CUDA_MEMCPY_OPER", {"id", "label"});
        std::unordered_map<std::int64_t, std::string> labels;
        Statement enum_rows = db.prepare("SELECT id, label FROM ENUM_CUDA_MEMCPY_OPER");
        while (enum_rows.step()) {
            labels[enum_rows.int64(0)] = enum_rows.text(1);
        }
        for (auto& [kind, durations] :
             group_by_id(db, "SELECT copyKind, end - start FROM " + memcpy_table)) {
            const auto label = labels.find(kind);
            if (label == labels.end()) {
                continue;  // nsys joins INNER: a copy kind without a label is not listed
            }
            Durations& into = groups["[CUDA memcpy " + label->second + "]"];
            into.insert(into.end(), durations.begin(), durations.end());
        }
    }
    if (db.has_table(memset_table)) {
        db.require_columns(memset_table, {"start", "end"});
        Statement s = db.prepare("SELECT end - start FROM " + memset_table);
        Durations& into = groups["[CUDA memset]"];
        while (s.step()) {
            into.push_back(s.int64(0));
        }
        if (into.empty()) {
            groups.erase("[CUDA memset]");
        }
    }
    report.rows = rows_from(groups);
    order_by_total(report.rows);
    return report;
}

StatsReport cuda_api_sum(const NsysDatabase& db) {
    const std::string table = "CUPTI_ACTIVITY_KIND_RUNTIME";
    StatsReport report{"cuda_api_sum", header_with("Num Calls", "Name"), {}, {}};
    if (!db.has_table(table)) {
        report.skipped =
            db.path().string() + " does not contain CUDA API data (no " + table + " table)";
        return report;
    }
    db.require_columns("StringIds", {"id", "value"});
    db.require_columns(table, {"start", "end", "nameId"});
    // Grouped by nameId as nsys does: two ids whose names differ only in the suffix stay apart.
    std::vector<StatsRow> rows;
    for (auto& [id, durations] : group_by_id(db, "SELECT nameId, end - start FROM " + table)) {
        const auto name = db.string_id(id);
        if (!name) {
            dangling(db, table, id);
        }
        rows.push_back(summarize_durations(without_version_suffix(*name), durations));
    }
    fill_time_percent(rows);
    order_by_total(rows);
    report.rows = std::move(rows);
    return report;
}

StatsReport nvtx_sum(const NsysDatabase& db) {
    const std::string table = "NVTX_EVENTS";
    std::vector<std::string> header = header_with("Instances", "Range");
    header.insert(header.end() - 1, "Style");
    StatsReport report{"nvtx_sum", header, {}, {}};
    if (!db.has_table(table)) {
        report.skipped =
            db.path().string() + " does not contain NVTX data (no " + table + " table)";
        return report;
    }
    db.require_columns("StringIds", {"id", "value"});
    db.require_columns(table,
                       {"start", "end", "eventType", "text", "textId", "domainId", "globalTid"});
    // Domain names come from the domain-create events (eventType 75) of the same process.
    const std::string text = "coalesce(sid.value, ne.text, '')";
    std::map<std::pair<std::int64_t, std::int64_t>, std::string> domains;
    Statement d = db.prepare("SELECT ne.domainId, (ne.globalTid >> 24) & 16777215, " + text +
                             " FROM NVTX_EVENTS AS ne LEFT JOIN StringIds AS sid ON ne.textId = "
                             "sid.id WHERE ne.eventType = 75 ORDER BY ne.start");
    while (d.step()) {
        domains.emplace(std::pair{d.int64(0), d.int64(1)}, d.text(2));
    }
    // An unterminated range lasts until the last timestamp of the table (as nvtx reports do).
    Statement s = db.prepare(
        "SELECT ne.eventType, ne.domainId, (ne.globalTid >> 24) & 16777215, " + text +
        ", coalesce(ne.end, (SELECT max(max(start), max(coalesce(end, start))) FROM NVTX_EVENTS))"
        " - ne.start FROM NVTX_EVENTS AS ne LEFT JOIN StringIds AS sid ON ne.textId = sid.id "
        "WHERE ne.eventType IN (59, 60, 70, 71)");
    std::map<std::pair<std::string, std::string>, Durations> groups;  // (style, range)
    while (s.step()) {
        const std::int64_t type = s.int64(0);
        const std::string style = (type == 59 || type == 70) ? "PushPop" : "StartEnd";
        std::string range = s.text(3);
        if (const auto it = domains.find({s.int64(1), s.int64(2)});
            s.int64(1) != 0 && it != domains.end()) {
            range.insert(0, it->second + ":");
        }
        groups[{style, range}].push_back(s.int64(4));
    }
    for (auto& [key, durations] : groups) {
        StatsRow row = summarize_durations(key.second, durations);
        row.style = key.first;
        report.rows.push_back(std::move(row));
    }
    fill_time_percent(report.rows);
    order_by_total(report.rows);
    return report;
}

StatsReport cuda_sync_sum(const NsysDatabase& db) {
    const std::string table = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
    StatsReport report{"cuda_sync_sum", header_with("Instances", "Name"), {}, {}};
    if (!db.has_table(table)) {
        report.skipped = db.path().string() + " has no " + table + " table";
        return report;
    }
    db.require_columns(table, {"start", "end", "syncType"});
    std::unordered_map<std::int64_t, std::string> labels;
    if (db.has_column("ENUM_CUPTI_SYNC_TYPE", "label")) {
        Statement e = db.prepare("SELECT id, label FROM ENUM_CUPTI_SYNC_TYPE");
        while (e.step()) {
            labels[e.int64(0)] = e.text(1);
        }
    }
    std::map<std::string, Durations> groups;
    for (auto& [type, durations] : group_by_id(db, "SELECT syncType, end - start FROM " + table)) {
        const auto it = labels.find(type);
        groups[it != labels.end() ? it->second : "syncType " + std::to_string(type)] =
            std::move(durations);
    }
    report.rows = rows_from(groups);
    order_by_total(report.rows);
    return report;
}

const std::vector<std::string>& stats_report_names() {
    static const std::vector<std::string> names = {"cuda_gpu_kern_sum", "cuda_gpu_mem_time_sum",
                                                   "cuda_api_sum", "nvtx_sum", "cuda_sync_sum"};
    return names;
}

StatsReport run_stats_report(const NsysDatabase& db, const std::string& name) {
    if (name == "cuda_gpu_kern_sum") {
        return cuda_gpu_kern_sum(db);
    }
    if (name == "cuda_gpu_kern_sum:base") {
        return cuda_gpu_kern_sum(db, KernelNaming::base);
    }
    if (name == "cuda_gpu_kern_sum:mangled") {
        return cuda_gpu_kern_sum(db, KernelNaming::mangled);
    }
    if (name == "cuda_gpu_mem_time_sum") {
        return cuda_gpu_mem_time_sum(db);
    }
    if (name == "cuda_api_sum") {
        return cuda_api_sum(db);
    }
    if (name == "nvtx_sum") {
        return nvtx_sum(db);
    }
    if (name == "cuda_sync_sum") {
        return cuda_sync_sum(db);
    }
    throw Error(ErrorCode::invalid_argument, "unknown report '" + name + "'",
                {{"report", name}, {"known", stats_report_names()}});
}

}  // namespace cko::profile::nsys
