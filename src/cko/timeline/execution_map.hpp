// The execution map: where the time of a window goes, computed from a Timeline (DESIGN.md §9).
#pragma once

#include "cko/timeline/timeline.hpp"
#include "cko/util/closed_enum.hpp"
#include "cko/util/json.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cko::timeline {

inline constexpr const char* kMapFormat = "cko/map-v1";

struct MapOptions {
    // Empty: the whole trace is one window. Otherwise the name of an annotation (NVTX range,
    // record_function): each occurrence on a CPU lane is a window. A trailing '*' matches by prefix
    // ("ProfilerStep#*").
    std::string window;
    std::optional<double> speedup;       // K > 1: the Amdahl bound if an item became K× faster
    std::optional<std::int64_t> device;  // only this GPU
    std::optional<std::int64_t> rank;    // only this rank
    std::size_t gantt_columns = 80;      // 0: no Gantt
    std::size_t gantt_windows = 8;       // Gantt for the first N windows of each part
    std::size_t longest_gaps = 5;
};

#define CKO_MAP_ITEM_KINDS(X) \
    X(kernel)                 \
    X(category)               \
    X(annotation)
CKO_CLOSED_ENUM(ItemKind, CKO_MAP_ITEM_KINDS, item_kind_name, item_kind_from_name)
#undef CKO_MAP_ITEM_KINDS

// One item of a window: a GPU work name ("kernel", copies and memsets included), a category, or
// an annotation name. Exposed time is defined in docs/map.md.
struct ItemTime {
    ItemKind kind = ItemKind::kernel;
    std::string name;
    Category category = Category::compute_kernel;  // of a kernel item: its category
    std::int64_t count = 0;
    std::int64_t total_ns = 0;  // Σ durations clipped to the window
    std::int64_t union_ns = 0;  // length of the union of its intervals
    std::int64_t exposed_ns = 0;
};

// Where idle GPU time went, instant by instant, first match wins.
struct IdleAttribution {
    std::int64_t cpu_sync_ns = 0;    // some CPU thread is in a sync call
    std::int64_t cpu_launch_ns = 0;  // else: in a CUDA runtime/driver call
    std::int64_t cpu_other_ns = 0;   // else: in a CPU operator
    std::int64_t unrecorded_ns = 0;  // else: no lane records anything
};

struct Gap {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

struct GanttRow {
    std::string lane;   // "GPU 0 stream 7", "CPU 968/968"
    std::string cells;  // one character per column, see gantt_legend()
};

struct WindowMap {
    std::string name;  // annotation name, or "(whole trace)"
    std::size_t occurrence = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t gpu_busy_ns = 0;  // union of GPU work on the device
    std::int64_t gpu_idle_ns = 0;  // window − busy
    IdleAttribution idle;
    std::int64_t idle_gaps = 0;  // maximal idle stretches (leading and trailing ones included)
    std::vector<Gap> longest_gaps;
    std::int64_t compute_ns = 0;        // union of compute kernels
    std::int64_t memory_ns = 0;         // union of memcpy + memset
    std::int64_t communication_ns = 0;  // union of communication kernels
    std::int64_t compute_memory_overlap_ns = 0;
    std::int64_t compute_communication_overlap_ns = 0;
    std::vector<std::int64_t> concurrency_ns;  // [k]: time with exactly k GPU intervals running
    std::int64_t recorded_ns = 0;              // union of every work interval (GPU + CPU)
    std::vector<ItemTime> items;
    std::vector<GanttRow> gantt;

    [[nodiscard]] std::int64_t duration_ns() const { return end_ns - start_ns; }
};

struct PartMap {
    SourceId source = 0;
    std::string label;
    std::optional<std::int64_t> rank;
    std::optional<std::int64_t> device;  // nullopt: the source has no GPU lanes
    std::int64_t gpu_streams = 0;
    std::int64_t cpu_threads = 0;
    std::int64_t linked_launches = 0;  // GPU intervals whose correlation id names a CPU API call
    std::vector<WindowMap> windows;
};

struct ExecutionMap {
    MapOptions options;
    std::vector<PartMap> parts;
    std::vector<std::string> notes;
};

// Computes the map of every (source, device) the options select. Throws cko::Error:
// invalid_argument (speedup ≤ 1; a device or rank no source has), not_found (no occurrence of the
// window annotation; the message lists annotation names that exist), empty_input (no interval).
[[nodiscard]] ExecutionMap compute_execution_map(const Timeline& timeline,
                                                 const MapOptions& options);

// Amdahl: the end-to-end gain (% of the window) if `exposed_ns` of a `window_ns` window ran K×
// faster (K = infinity: removed) while everything else kept its place.
[[nodiscard]] double amdahl_gain_pct(std::int64_t exposed_ns, std::int64_t window_ns, double k);

[[nodiscard]] Json execution_map_to_json(const ExecutionMap& map);
[[nodiscard]] std::string gantt_legend();

}  // namespace cko::timeline

namespace cko::timeline {
// The human printer: per part and window the GPU summary, idle attribution, overlap, coverage,
// the top items and the text Gantt; with several windows the aggregate first.
[[nodiscard]] std::string execution_map_text(const ExecutionMap& map, std::size_t top_items = 15);
}  // namespace cko::timeline
