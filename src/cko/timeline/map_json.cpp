// The cko/map-v1 document: every window of every part, and per-part aggregates over occurrences.
#include "cko/timeline/execution_map.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace cko::timeline {
namespace {

double pct(std::int64_t part, std::int64_t whole) {
    return whole <= 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

Json optional_int(const std::optional<std::int64_t>& v) {
    return v ? Json(*v) : Json();
}

// median (mean of the two middle values for an even count), min, max.
Json spread(std::vector<std::int64_t> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    const double median =
        n % 2 == 1
            ? static_cast<double>(values[n / 2])
            : (static_cast<double>(values[n / 2 - 1]) + static_cast<double>(values[n / 2])) / 2.0;
    return Json{{"median", median}, {"min", values.front()}, {"max", values.back()}};
}

Json item_json(const ItemTime& item, const WindowMap& w, std::int64_t gpu_work_total,
               const std::optional<double>& speedup) {
    const std::int64_t window = w.duration_ns();
    Json j{{"kind", item_kind_name(item.kind)},
           {"name", item.name},
           {"count", item.count},
           {"total_ns", item.total_ns},
           {"union_ns", item.union_ns},
           {"exposed_ns", item.exposed_ns},
           {"removable_pct",
            amdahl_gain_pct(item.exposed_ns, window, std::numeric_limits<double>::infinity())}};
    if (item.kind != ItemKind::annotation) {
        j["category"] = category_name(item.category);
    }
    j["gpu_time_share_pct"] = is_gpu_work(item.category) && item.kind != ItemKind::annotation
                                  ? Json(pct(item.total_ns, gpu_work_total))
                                  : Json();
    if (speedup) {
        const double gain = amdahl_gain_pct(item.exposed_ns, window, *speedup);
        j["amdahl_gain_pct"] = gain;
        j["amdahl_speedup"] = gain >= 100.0 ? Json() : Json(100.0 / (100.0 - gain));
    }
    return j;
}

Json window_json(const WindowMap& w, const std::optional<double>& speedup) {
    std::int64_t gpu_work_total = 0;
    for (const ItemTime& item : w.items) {
        if (item.kind == ItemKind::kernel) {
            gpu_work_total += item.total_ns;
        }
    }
    const std::int64_t d = w.duration_ns();
    Json gaps = Json::array();
    for (const Gap& g : w.longest_gaps) {
        gaps.push_back(Json{{"start_ns", g.start_ns},
                            {"end_ns", g.end_ns},
                            {"duration_ns", g.end_ns - g.start_ns}});
    }
    Json items = Json::array();
    for (const ItemTime& item : w.items) {
        items.push_back(item_json(item, w, gpu_work_total, speedup));
    }
    Json concurrency = Json::array();
    for (std::size_t k = 0; k < w.concurrency_ns.size(); ++k) {
        concurrency.push_back(Json{{"running", k}, {"ns", w.concurrency_ns[k]}});
    }
    Json gantt = Json::array();
    for (const GanttRow& row : w.gantt) {
        gantt.push_back(Json{{"lane", row.lane}, {"cells", row.cells}});
    }
    return Json{
        {"name", w.name},
        {"occurrence", w.occurrence},
        {"start_ns", w.start_ns},
        {"end_ns", w.end_ns},
        {"duration_ns", d},
        {"gpu", Json{{"busy_ns", w.gpu_busy_ns},
                     {"idle_ns", w.gpu_idle_ns},
                     {"busy_pct", pct(w.gpu_busy_ns, d)},
                     {"idle_attribution", Json{{"cpu_sync_ns", w.idle.cpu_sync_ns},
                                               {"cpu_launch_ns", w.idle.cpu_launch_ns},
                                               {"cpu_other_ns", w.idle.cpu_other_ns},
                                               {"unrecorded_ns", w.idle.unrecorded_ns}}},
                     {"idle_gaps", w.idle_gaps},
                     {"longest_gaps", gaps},
                     {"concurrency", concurrency},
                     {"overlap",
                      Json{{"compute_ns", w.compute_ns},
                           {"memory_ns", w.memory_ns},
                           {"communication_ns", w.communication_ns},
                           {"compute_memory_ns", w.compute_memory_overlap_ns},
                           {"compute_communication_ns", w.compute_communication_overlap_ns},
                           {"memory_overlap_pct",
                            w.memory_ns > 0 ? Json(pct(w.compute_memory_overlap_ns, w.memory_ns))
                                            : Json()},
                           {"communication_overlap_pct",
                            w.communication_ns > 0
                                ? Json(pct(w.compute_communication_overlap_ns, w.communication_ns))
                                : Json()}}}}},
        {"coverage", Json{{"recorded_ns", w.recorded_ns},
                          {"unobserved_ns", d - w.recorded_ns},
                          {"recorded_pct", pct(w.recorded_ns, d)}}},
        {"items", items},
        {"gantt", gantt}};
}

Json aggregate_json(const PartMap& part) {
    const auto over = [&](auto field) {
        std::vector<std::int64_t> v;
        for (const WindowMap& w : part.windows) {
            v.push_back(field(w));
        }
        return spread(std::move(v));
    };
    Json j{{"occurrences", part.windows.size()},
           {"duration_ns", over([](const WindowMap& w) { return w.duration_ns(); })},
           {"gpu_busy_ns", over([](const WindowMap& w) { return w.gpu_busy_ns; })},
           {"gpu_idle_ns", over([](const WindowMap& w) { return w.gpu_idle_ns; })},
           {"idle_cpu_sync_ns", over([](const WindowMap& w) { return w.idle.cpu_sync_ns; })},
           {"idle_cpu_launch_ns", over([](const WindowMap& w) { return w.idle.cpu_launch_ns; })},
           {"idle_cpu_other_ns", over([](const WindowMap& w) { return w.idle.cpu_other_ns; })},
           {"idle_unrecorded_ns", over([](const WindowMap& w) { return w.idle.unrecorded_ns; })},
           {"unobserved_ns",
            over([](const WindowMap& w) { return w.duration_ns() - w.recorded_ns; })}};
    // Items by (kind, name); an item absent from an occurrence counts 0 there.
    std::map<std::pair<ItemKind, std::string>, std::vector<const ItemTime*>> items;
    for (const WindowMap& w : part.windows) {
        for (const ItemTime& item : w.items) {
            items[{item.kind, item.name}];
        }
    }
    Json rows = Json::array();
    for (const auto& entry : items) {
        const auto& key = entry.first;  // not a structured binding: clang 14 cannot capture one
        std::vector<std::int64_t> exposed;
        std::vector<std::int64_t> total;
        for (const WindowMap& w : part.windows) {
            const auto it = std::find_if(w.items.begin(), w.items.end(), [&](const ItemTime& i) {
                return i.kind == key.first && i.name == key.second;
            });
            exposed.push_back(it == w.items.end() ? 0 : it->exposed_ns);
            total.push_back(it == w.items.end() ? 0 : it->total_ns);
        }
        rows.push_back(Json{{"kind", item_kind_name(key.first)},
                            {"name", key.second},
                            {"exposed_ns", spread(exposed)},
                            {"total_ns", spread(total)}});
    }
    std::stable_sort(rows.begin(), rows.end(), [](const Json& a, const Json& b) {
        return a["exposed_ns"]["median"].get<double>() > b["exposed_ns"]["median"].get<double>();
    });
    j["items"] = rows;
    return j;
}

}  // namespace

Json execution_map_to_json(const ExecutionMap& map) {
    const MapOptions& o = map.options;
    Json parts = Json::array();
    for (const PartMap& part : map.parts) {
        Json windows = Json::array();
        for (const WindowMap& w : part.windows) {
            windows.push_back(window_json(w, o.speedup));
        }
        parts.push_back(Json{{"source", part.label},
                             {"rank", optional_int(part.rank)},
                             {"device", optional_int(part.device)},
                             {"gpu_streams", part.gpu_streams},
                             {"cpu_threads", part.cpu_threads},
                             {"linked_launches", part.linked_launches},
                             {"windows", windows},
                             {"aggregate", aggregate_json(part)}});
    }
    return Json{{"format_version", kMapFormat},
                {"options", Json{{"window", o.window.empty() ? Json() : Json(o.window)},
                                 {"speedup", o.speedup ? Json(*o.speedup) : Json()},
                                 {"device", optional_int(o.device)},
                                 {"rank", optional_int(o.rank)}}},
                {"parts", parts},
                {"notes", map.notes}};
}

}  // namespace cko::timeline
