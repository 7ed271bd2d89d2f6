// nsys SQLite → timeline: one query per activity table, names through StringIds once per id.
#include "cko/profile/nsys/timeline_feeder.hpp"

#include "cko/util/error.hpp"

#include <unordered_map>

namespace cko::profile::nsys {
namespace {

namespace tl = timeline;

tl::Category copy_kind_category(std::int64_t kind) {
    switch (kind) {
    case 1:
        return tl::Category::memcpy_h2d;
    case 2:
        return tl::Category::memcpy_d2h;
    case 8:
        return tl::Category::memcpy_d2d;
    case 10:
        return tl::Category::memcpy_p2p;
    default:
        return tl::Category::memcpy_other;
    }
}

std::string without_version_suffix(std::string name) {
    if (name.size() >= 6 && name.compare(name.size() - 6, 2, "_v") == 0) {
        name.resize(name.size() - 6);
    }
    return name;
}

class Feeder {
public:
    Feeder(const NsysDatabase& db, tl::TimelineSink& sink) : db_(db), sink_(sink) {
        source_ = sink_.begin_source(db.path().string());
    }

    void gpu_table(const std::string& table, const std::string& extra) {
        if (!db_.has_table(table)) {
            return;
        }
        std::vector<std::string> cols = {"start", "end", "deviceId", "streamId", "correlationId"};
        if (!extra.empty()) {
            cols.push_back(extra);
        }
        db_.require_columns(table, cols);
        std::string sql = "SELECT start, end, deviceId, streamId, correlationId";
        sql += extra.empty() ? "" : ", " + extra;
        Statement s = db_.prepare(sql + " FROM " + table);
        const bool kernel = extra == "demangledName";
        while (s.step()) {
            tl::Interval iv;
            iv.start_ns = s.int64(0);
            iv.end_ns = s.int64(1);
            iv.correlation = s.is_null(4) ? -1 : s.int64(4);
            iv.lane = sink_.lane(source_, {tl::LaneKind::gpu_stream, s.int64(2), s.int64(3)});
            if (kernel) {
                const auto [name, text] = string_name(table, s.int64(5));
                iv.name = name;
                iv.category = tl::kernel_category(*text);
            } else if (extra == "copyKind") {
                iv.category = copy_kind_category(s.int64(5));
                iv.name = sink_.name("[CUDA memcpy " +
                                     std::string(tl::category_name(iv.category)).substr(7) + "]");
            } else {
                iv.category = tl::Category::memset;
                iv.name = sink_.name("[CUDA memset]");
            }
            gpu_intervals_ += emit(iv) ? 1 : 0;
        }
    }

    void runtime_table() {
        const std::string table = "CUPTI_ACTIVITY_KIND_RUNTIME";
        if (!db_.has_table(table)) {
            return;
        }
        db_.require_columns(table, {"start", "end", "globalTid", "correlationId", "nameId"});
        Statement s =
            db_.prepare("SELECT start, end, globalTid, correlationId, nameId FROM " + table);
        std::unordered_map<std::int64_t, std::pair<tl::NameId, tl::Category>> names;
        while (s.step()) {
            const std::int64_t id = s.int64(4);
            auto it = names.find(id);
            if (it == names.end()) {
                const auto text = db_.string_id(id);
                if (!text) {
                    dangling(table, id);
                }
                const std::string name = without_version_suffix(*text);
                const bool driver = name.rfind("cu", 0) == 0 && name.rfind("cuda", 0) != 0;
                it = names
                         .emplace(id, std::pair{sink_.name(name),
                                                tl::api_call_category(
                                                    name, driver ? tl::Category::cuda_driver
                                                                 : tl::Category::cuda_runtime)})
                         .first;
            }
            tl::Interval iv;
            iv.start_ns = s.int64(0);
            iv.end_ns = s.int64(1);
            iv.correlation = s.is_null(3) ? -1 : s.int64(3);
            iv.lane = cpu_lane(s.int64(2));
            iv.name = it->second.first;
            iv.category = it->second.second;
            emit(iv);
        }
    }

    void nvtx_table() {
        const std::string table = "NVTX_EVENTS";
        if (!db_.has_table(table)) {
            return;
        }
        db_.require_columns(table, {"start", "end", "eventType", "text", "textId", "globalTid"});
        Statement s = db_.prepare(
            "SELECT ne.start, ne.end, ne.globalTid, coalesce(sid.value, ne.text, '') FROM "
            "NVTX_EVENTS AS ne LEFT JOIN StringIds AS sid ON ne.textId = sid.id WHERE "
            "ne.eventType IN (59, 60, 70, 71)");
        while (s.step()) {
            if (s.is_null(1)) {
                ++open_ranges_;
                continue;
            }
            tl::Interval iv;
            iv.start_ns = s.int64(0);
            iv.end_ns = s.int64(1);
            iv.lane = cpu_lane(s.is_null(2) ? 0 : s.int64(2));
            iv.name = sink_.name(s.text(3));
            iv.category = tl::Category::annotation;
            emit(iv);
        }
    }

    NsysTimelineFeed finish() {
        sink_.end_source(source_, std::nullopt);
        NsysTimelineFeed out;
        out.intervals = intervals_;
        if (open_ranges_ > 0) {
            out.notes.push_back(db_.path().string() + ": " + std::to_string(open_ranges_) +
                                " NVTX ranges without an end are not in the timeline");
        }
        if (negative_ > 0) {
            out.notes.push_back(db_.path().string() + ": " + std::to_string(negative_) +
                                " rows whose end precedes their start are not in the timeline");
        }
        if (gpu_intervals_ == 0) {
            if (const std::string note = empty_gpu_side_note(); !note.empty()) {
                out.notes.push_back(note);
            }
        }
        return out;
    }

private:
    bool emit(const tl::Interval& iv) {
        if (iv.end_ns < iv.start_ns) {
            ++negative_;
            return false;
        }
        sink_.interval(iv);
        ++intervals_;
        return true;
    }

    // Without this the map shows a GPU idle from end to end and attributes that idle time to
    // whatever the CPU did, a verdict on rows it never placed (as for Kineto's range rows).
    [[nodiscard]] std::string empty_gpu_side_note() const {
        std::int64_t total = 0;
        std::string list;
        for (const auto& [table, n] : db_.unmodeled_gpu_rows()) {
            total += n;
            list += (list.empty() ? "" : ", ") + table + ": " + std::to_string(n);
        }
        if (total == 0) {
            return "";
        }
        return db_.path().string() + ": no GPU interval (no kernel, memcpy or memset row), but " +
               std::to_string(total) + " GPU-like rows were left out (" + list +
               "): the map's GPU idle time and its attribution describe rows cko could not place "
               "on the GPU, not an idle GPU";
    }

    tl::LaneId cpu_lane(std::int64_t global_tid) {
        // globalTid packs the process and thread ids (24 bits each).
        const std::int64_t pid = (global_tid >> 24) & 0xFFFFFF;
        const std::int64_t tid = global_tid & 0xFFFFFF;
        return sink_.lane(source_, {tl::LaneKind::cpu_thread, pid, tid});
    }

    std::pair<tl::NameId, const std::string*> string_name(const std::string& table,
                                                          std::int64_t id) {
        auto it = kernel_names_.find(id);
        if (it == kernel_names_.end()) {
            const auto text = db_.string_id(id);
            if (!text) {
                dangling(table, id);
            }
            it = kernel_names_.emplace(id, std::pair{sink_.name(*text), *text}).first;
        }
        return {it->second.first, &it->second.second};
    }

    [[noreturn]] void dangling(const std::string& table, std::int64_t id) const {
        throw Error(ErrorCode::malformed_input,
                    db_.path().string() + ": " + table + " names StringIds id " +
                        std::to_string(id) + ", which does not exist",
                    {{"path", db_.path().string()}, {"table", table}, {"string_id", id}});
    }

    const NsysDatabase& db_;
    tl::TimelineSink& sink_;
    tl::SourceId source_ = 0;
    std::unordered_map<std::int64_t, std::pair<tl::NameId, std::string>> kernel_names_;
    std::int64_t intervals_ = 0;
    std::int64_t gpu_intervals_ = 0;
    std::int64_t open_ranges_ = 0;
    std::int64_t negative_ = 0;
};

}  // namespace

NsysTimelineFeed feed_nsys_timeline(const NsysDatabase& db, timeline::TimelineSink& sink) {
    Feeder f(db, sink);
    if (db.has_table("CUPTI_ACTIVITY_KIND_KERNEL")) {
        db.require_columns("StringIds", {"id", "value"});
    }
    f.gpu_table("CUPTI_ACTIVITY_KIND_KERNEL", "demangledName");
    f.gpu_table("CUPTI_ACTIVITY_KIND_MEMCPY", "copyKind");
    f.gpu_table("CUPTI_ACTIVITY_KIND_MEMSET", "");
    f.runtime_table();
    f.nvtx_table();
    return f.finish();
}

}  // namespace cko::profile::nsys
