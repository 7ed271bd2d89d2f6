// Summaries of one Kineto trace: kernels, streams, memory ops, API calls, flows, annotations.
#pragma once

#include "cko/profile/kineto/event_category.hpp"
#include "cko/profile/kineto/trace_event.hpp"
#include "cko/util/json.hpp"

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cko::profile::kineto {

// count / total / min / max of integer-ns durations; the mean is derived.
struct DurationStats {
    std::int64_t count = 0;
    std::int64_t total_ns = 0;
    std::int64_t min_ns = std::numeric_limits<std::int64_t>::max();
    std::int64_t max_ns = std::numeric_limits<std::int64_t>::min();

    void add(std::int64_t dur_ns) {
        ++count;
        total_ns += dur_ns;
        min_ns = dur_ns < min_ns ? dur_ns : min_ns;
        max_ns = dur_ns > max_ns ? dur_ns : max_ns;
    }
    [[nodiscard]] double mean_ns() const {
        return count == 0 ? 0.0 : static_cast<double>(total_ns) / static_cast<double>(count);
    }
    [[nodiscard]] Json to_json() const;
};

struct MemoryOpStats {
    DurationStats time;
    std::int64_t bytes = 0;
};

struct StreamStats {
    DurationStats kernels;
    DurationStats memcpy;
    DurationStats memset;
};

struct AnnotationStats {
    DurationStats time;
    std::int64_t first_start_ns = std::numeric_limits<std::int64_t>::max();
    std::int64_t last_end_ns = std::numeric_limits<std::int64_t>::min();
};

// Launch → GPU start latency over ac2g flow pairs (f.ts − s.ts), nearest-rank percentiles.
struct LatencyStats {
    std::int64_t count = 0;
    std::int64_t min_ns = 0;
    std::int64_t p50_ns = 0;
    std::int64_t p90_ns = 0;
    std::int64_t p99_ns = 0;
    std::int64_t max_ns = 0;
    double mean_ns = 0;
    [[nodiscard]] Json to_json() const;
};

struct FlowStats {
    std::int64_t starts = 0;            // ph "s" of a launch flow (ac2g, or async/launch)
    std::int64_t finishes = 0;          // ph "f" with cat ac2g
    std::int64_t linked = 0;            // ids seen with both
    std::int64_t unmatched_starts = 0;  // launches with no GPU activity in the trace
    std::int64_t unmatched_finishes = 0;
    std::int64_t other_flows = 0;  // flow events of other categories
    LatencyStats launch_to_gpu;
    [[nodiscard]] Json to_json() const;
};

using NamedStats = std::map<std::string, DurationStats, std::less<>>;

struct TraceSummary {
    std::int64_t events = 0;
    std::int64_t complete_events = 0;
    std::map<std::string, DurationStats, std::less<>> categories;  // every X event
    NamedStats kernels;
    std::int64_t kernel_time_ns = 0;
    std::map<std::pair<std::int64_t, std::int64_t>, StreamStats> streams;  // (device, stream)
    std::map<std::string, MemoryOpStats, std::less<>> memcpy;              // by Kineto name (kind)
    std::map<std::string, MemoryOpStats, std::less<>> memset;
    NamedStats runtime_calls;                                                    // cuda_runtime
    NamedStats driver_calls;                                                     // cuda_driver
    std::map<std::pair<std::string, std::string>, AnnotationStats> annotations;  // (cat, name)
    FlowStats flows;
    std::map<std::string, std::int64_t, std::less<>> unmodeled_phases;  // M, i, C, ...
    // Complete events under an unknown category that carry GPU-activity args (correlation with
    // device or stream) or whose category names the GPU, by category: GPU-like rows this summary
    // does not model. `gpu_activity_rows` counts those of the first kind (they refuse a trace
    // with no GPU table, see import_kineto_trace).
    std::map<std::string, std::int64_t, std::less<>> unmodeled_gpu_categories;
    std::int64_t gpu_activity_rows = 0;
    // CUPTI range-profiler rows (cat "cuda_profiler_range") by name (the kernel's, in per-kernel
    // ranges): counted only, because libkineto writes the profiling span split evenly among the
    // ranges as their ts/dur, not a time the GPU spent.
    std::map<std::string, std::int64_t, std::less<>> profiler_ranges;
    std::int64_t profiler_range_rows = 0;
    std::int64_t camel_case_events = 0;
    std::int64_t rounded_timestamps = 0;  // ts/dur values rounded to the nanosecond  // events
                                          // under a torch 1.8-1.9 category spelling
    std::int64_t non_integer_scope_events = 0;  // X events with string pid/tid ("Spans")
    std::int64_t negative_durations = 0;        // skipped from every statistic
    std::int64_t first_ts_ns = std::numeric_limits<std::int64_t>::max();
    std::int64_t last_end_ns = std::numeric_limits<std::int64_t>::min();

    [[nodiscard]] Json to_json() const;
};

// Feeds events one at a time; finish() computes the flow latency distribution.
class TraceSummaryBuilder {
public:
    void add(const TraceEvent& event, std::uint64_t index);
    [[nodiscard]] TraceSummary finish();

private:
    void add_complete(const TraceEvent& event, std::uint64_t index);
    void add_by_category(const TraceEvent& event, EventCategory category, std::int64_t ts,
                         std::int64_t dur);
    void add_to_stream(const TraceEvent& event, EventCategory category, std::int64_t dur);
    void add_flow(const TraceEvent& event);

    TraceSummary summary_;
    std::unordered_map<std::int64_t, std::int64_t> pending_starts_;    // id → ts of "s"
    std::unordered_map<std::int64_t, std::int64_t> pending_finishes_;  // id → ts of "f"
    std::vector<std::int64_t> latencies_;
};

}  // namespace cko::profile::kineto
