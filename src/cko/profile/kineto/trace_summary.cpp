// Accumulates Kineto events into per-kernel, per-stream, memory, API, flow and annotation tables.
#include "cko/profile/kineto/trace_summary.hpp"

#include "cko/profile/kineto/event_category.hpp"
#include "cko/util/error.hpp"

#include <algorithm>

namespace cko::profile::kineto {
namespace {

template <typename Map>
auto& slot(Map& map, std::string_view key) {
    auto it = map.find(key);
    if (it == map.end()) {
        it = map.emplace(std::string(key), typename Map::mapped_type{}).first;
    }
    return it->second;
}

// Rows sorted by total time, largest first, then by name: the order a reader wants.
template <typename Map, typename Row>
Json sorted_rows(const Map& map, Row row) {
    std::vector<typename Map::const_iterator> order;
    for (auto it = map.begin(); it != map.end(); ++it) {
        order.push_back(it);
    }
    std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
        const auto& sa = a->second;
        const auto& sb = b->second;
        if constexpr (requires { sa.time; }) {
            return sa.time.total_ns > sb.time.total_ns;
        } else {
            return sa.total_ns > sb.total_ns;
        }
    });
    Json rows = Json::array();
    for (const auto& it : order) {
        rows.push_back(row(it->first, it->second));
    }
    return rows;
}

std::int64_t nearest_rank(const std::vector<std::int64_t>& sorted, int percent) {
    // Smallest value with at least percent% of the values at or below it.
    const std::size_t n = sorted.size();
    std::size_t rank = (n * static_cast<std::size_t>(percent) + 99) / 100;
    rank = std::clamp<std::size_t>(rank, 1, n);
    return sorted[rank - 1];
}

// summary.streams: one row per (device, stream), its busy time the sum of its three kinds.
Json streams_json(const std::map<std::pair<std::int64_t, std::int64_t>, StreamStats>& streams) {
    Json rows = Json::array();
    for (const auto& [key, s] : streams) {
        rows.push_back(
            Json{{"device", key.first},
                 {"stream", key.second},
                 {"kernels", s.kernels.to_json()},
                 {"memcpy", s.memcpy.to_json()},
                 {"memset", s.memset.to_json()},
                 {"busy_ns", s.kernels.total_ns + s.memcpy.total_ns + s.memset.total_ns}});
    }
    return rows;
}

// summary.annotations: one row per (category, name), with the window it spans.
Json annotations_json(
    const std::map<std::pair<std::string, std::string>, AnnotationStats>& annotations) {
    Json rows = Json::array();
    for (const auto& [key, a] : annotations) {
        Json row = a.time.to_json();
        row["category"] = key.first;
        row["name"] = key.second;
        row["first_start_ns"] = a.first_start_ns;
        row["last_end_ns"] = a.last_end_ns;
        row["window_ns"] = a.last_end_ns - a.first_start_ns;
        rows.push_back(row);
    }
    return rows;
}

// summary.profiler_ranges: the range profiler's rows by name, the most frequent first (ties in
// name order).
Json profiler_ranges_json(const std::map<std::string, std::int64_t, std::less<>>& counts) {
    std::vector<std::pair<std::string, std::int64_t>> ranges(counts.begin(), counts.end());
    std::stable_sort(ranges.begin(), ranges.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    Json rows = Json::array();
    for (const auto& [name, n] : ranges) {
        rows.push_back(Json{{"name", name}, {"count", n}});
    }
    return rows;
}

// A count per name, as one JSON object.
Json counts_json(const std::map<std::string, std::int64_t, std::less<>>& counts) {
    Json out = Json::object();
    for (const auto& [name, n] : counts) {
        out[name] = n;
    }
    return out;
}

}  // namespace

Json DurationStats::to_json() const {
    if (count == 0) {
        return Json{{"count", 0}, {"total_ns", 0}};
    }
    return Json{{"count", count},
                {"total_ns", total_ns},
                {"mean_ns", mean_ns()},
                {"min_ns", min_ns},
                {"max_ns", max_ns}};
}

Json LatencyStats::to_json() const {
    return Json{{"count", count},   {"min_ns", min_ns}, {"p50_ns", p50_ns},  {"p90_ns", p90_ns},
                {"p99_ns", p99_ns}, {"max_ns", max_ns}, {"mean_ns", mean_ns}};
}

Json FlowStats::to_json() const {
    return Json{{"starts", starts},
                {"finishes", finishes},
                {"linked", linked},
                {"unmatched_starts", unmatched_starts},
                {"unmatched_finishes", unmatched_finishes},
                {"other_flows", other_flows},
                {"launch_to_gpu_start", launch_to_gpu.to_json()}};
}

void TraceSummaryBuilder::add(const TraceEvent& event, std::uint64_t index) {
    summary_.rounded_timestamps += event.rounded_timestamps;
    ++summary_.events;
    if (event.ph == "X") {
        add_complete(event, index);
    } else if (event.ph == "s" || event.ph == "f" || event.ph == "t") {
        add_flow(event);
    } else {
        ++slot(summary_.unmodeled_phases, event.ph.empty() ? std::string_view("(none)") : event.ph);
    }
}

void TraceSummaryBuilder::add_flow(const TraceEvent& event) {
    if (!is_launch_flow(event) || !event.id || !event.ts_ns || event.ph == "t") {
        ++summary_.flows.other_flows;
        return;
    }
    const std::int64_t id = *event.id;
    const std::int64_t ts = *event.ts_ns;
    if (event.ph == "s") {
        ++summary_.flows.starts;
        if (auto it = pending_finishes_.find(id); it != pending_finishes_.end()) {
            latencies_.push_back(it->second - ts);
            pending_finishes_.erase(it);
        } else {
            pending_starts_[id] = ts;
        }
    } else {
        ++summary_.flows.finishes;
        if (auto it = pending_starts_.find(id); it != pending_starts_.end()) {
            latencies_.push_back(ts - it->second);
            pending_starts_.erase(it);
        } else {
            pending_finishes_[id] = ts;
        }
    }
}

void TraceSummaryBuilder::add_complete(const TraceEvent& event, std::uint64_t index) {
    if (!event.ts_ns || !event.dur_ns) {
        throw Error(ErrorCode::missing_field,
                    "complete event #" + std::to_string(index) + " ('" + std::string(event.name) +
                        "') lacks ts or dur",
                    {{"event_index", index}, {"field", !event.ts_ns ? "ts" : "dur"}});
    }
    ++summary_.complete_events;
    const std::int64_t ts = *event.ts_ns;
    const std::int64_t dur = *event.dur_ns;
    if (dur < 0) {
        ++summary_.negative_durations;
        return;
    }
    if (!event.pid || !event.tid) {
        ++summary_.non_integer_scope_events;
    }
    summary_.first_ts_ns = std::min(summary_.first_ts_ns, ts);
    summary_.last_end_ns = std::max(summary_.last_end_ns, ts + dur);
    slot(summary_.categories, event.cat).add(dur);

    const CategoryMeaning meaning = category_meaning(event.cat);
    if (meaning.spelling == CategorySpelling::camel_case) {
        ++summary_.camel_case_events;
    }
    const EventCategory category = meaning.category;
    add_by_category(event, category, ts, dur);
    if (category == EventCategory::kernel || category == EventCategory::gpu_memcpy ||
        category == EventCategory::gpu_memset) {
        add_to_stream(event, category, dur);
    }
}

// The per-kind tables: kernels, memory operations, CUDA calls, annotations, the range profiler's
// rows, and GPU-like rows of categories cko does not model.
void TraceSummaryBuilder::add_by_category(const TraceEvent& event, EventCategory category,
                                          std::int64_t ts, std::int64_t dur) {
    switch (category) {
    case EventCategory::kernel:
        slot(summary_.kernels, event.name).add(dur);
        summary_.kernel_time_ns += dur;
        break;
    case EventCategory::gpu_memcpy:
    case EventCategory::gpu_memset: {
        auto& op = slot(category == EventCategory::gpu_memcpy ? summary_.memcpy : summary_.memset,
                        event.name);
        op.time.add(dur);
        op.bytes += event.bytes.value_or(0);
        break;
    }
    case EventCategory::cuda_runtime:
        slot(summary_.runtime_calls, event.name).add(dur);
        break;
    case EventCategory::cuda_driver:
        slot(summary_.driver_calls, event.name).add(dur);
        break;
    case EventCategory::user_annotation:
    case EventCategory::gpu_user_annotation: {
        // Keyed by the current spelling, so both generations' annotations land together.
        auto& a =
            summary_.annotations[{std::string(category_name(category)), std::string(event.name)}];
        a.time.add(dur);
        a.first_start_ns = std::min(a.first_start_ns, ts);
        a.last_end_ns = std::max(a.last_end_ns, ts + dur);
        break;
    }
    case EventCategory::cpu_op:
        break;
    case EventCategory::cuda_profiler_range:
        ++slot(summary_.profiler_ranges, event.name);
        ++summary_.profiler_range_rows;
        break;
    case EventCategory::other:
        // GPU-like rows under a category cko does not know: counted so they are never lost.
        if (looks_like_gpu_activity(event)) {
            ++slot(summary_.unmodeled_gpu_categories, event.cat);
            ++summary_.gpu_activity_rows;
        } else if (category_names_gpu(event.cat)) {
            ++slot(summary_.unmodeled_gpu_categories, event.cat);
        }
        break;
    }
}

// A GPU row's time on its (device, stream): Kineto gives them in args and mirrors them as pid/tid.
void TraceSummaryBuilder::add_to_stream(const TraceEvent& event, EventCategory category,
                                        std::int64_t dur) {
    const std::int64_t device = event.device.value_or(event.pid.value_or(-1));
    const std::int64_t stream = event.stream.value_or(event.tid.value_or(-1));
    auto& s = summary_.streams[{device, stream}];
    (category == EventCategory::kernel       ? s.kernels
     : category == EventCategory::gpu_memcpy ? s.memcpy
                                             : s.memset)
        .add(dur);
}

TraceSummary TraceSummaryBuilder::finish() {
    FlowStats& flows = summary_.flows;
    flows.linked = static_cast<std::int64_t>(latencies_.size());
    flows.unmatched_starts = static_cast<std::int64_t>(pending_starts_.size());
    flows.unmatched_finishes = static_cast<std::int64_t>(pending_finishes_.size());
    if (!latencies_.empty()) {
        std::sort(latencies_.begin(), latencies_.end());
        LatencyStats& l = flows.launch_to_gpu;
        l.count = static_cast<std::int64_t>(latencies_.size());
        l.min_ns = latencies_.front();
        l.max_ns = latencies_.back();
        l.p50_ns = nearest_rank(latencies_, 50);
        l.p90_ns = nearest_rank(latencies_, 90);
        l.p99_ns = nearest_rank(latencies_, 99);
        long double sum = 0;
        for (const std::int64_t v : latencies_) {
            sum += static_cast<long double>(v);
        }
        l.mean_ns = static_cast<double>(sum / static_cast<long double>(latencies_.size()));
    }
    return std::move(summary_);
}

Json TraceSummary::to_json() const {
    const auto share = [this](std::int64_t total) {
        return kernel_time_ns == 0
                   ? 0.0
                   : 100.0 * static_cast<double>(total) / static_cast<double>(kernel_time_ns);
    };
    Json j;
    j["events"] = events;
    j["complete_events"] = complete_events;
    j["span_ns"] = complete_events > negative_durations && last_end_ns >= first_ts_ns
                       ? Json(last_end_ns - first_ts_ns)
                       : Json(nullptr);
    j["kernel_time_ns"] = kernel_time_ns;
    j["kernels"] = sorted_rows(kernels, [&](const std::string& name, const DurationStats& s) {
        Json row = s.to_json();
        row["name"] = name;
        row["gpu_time_percent"] = share(s.total_ns);
        return row;
    });
    j["streams"] = streams_json(streams);
    const auto memory_row = [](const std::string& name, const MemoryOpStats& s) {
        Json row = s.time.to_json();
        row["name"] = name;
        row["bytes"] = s.bytes;
        return row;
    };
    j["memcpy"] = sorted_rows(memcpy, memory_row);
    j["memset"] = sorted_rows(memset, memory_row);
    const auto named_row = [](const std::string& name, const DurationStats& s) {
        Json row = s.to_json();
        row["name"] = name;
        return row;
    };
    j["cuda_runtime"] = sorted_rows(runtime_calls, named_row);
    j["cuda_driver"] = sorted_rows(driver_calls, named_row);
    j["categories"] = sorted_rows(categories, named_row);
    j["annotations"] = annotations_json(annotations);
    j["profiler_ranges"] = profiler_ranges_json(profiler_ranges);
    j["flows"] = flows.to_json();
    j["unmodeled"] = Json{{"phases", counts_json(unmodeled_phases)},
                          {"gpu_like_categories", counts_json(unmodeled_gpu_categories)},
                          {"rounded_timestamps", rounded_timestamps},
                          {"non_integer_scope_events", non_integer_scope_events},
                          {"negative_durations", negative_durations}};
    return j;
}

}  // namespace cko::profile::kineto
