// The execution map: the parts (device, rank) and windows of a timeline, each window swept by
// window_sweep.hpp (busy union, idle attribution, overlap, exposed time).
#include "cko/timeline/execution_map.hpp"

#include "cko/timeline/window_sweep.hpp"
#include "cko/util/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace cko::timeline {
using sweep_detail::PartInput;
using sweep_detail::WindowSweep;
namespace {

constexpr const char* kWholeTrace = "(whole trace)";

bool window_name_matches(const std::string& pattern, const std::string& name) {
    if (!pattern.empty() && pattern.back() == '*') {
        return name.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
    }
    return name == pattern;
}

std::string list_annotation_names(const Timeline& t) {
    std::set<std::string> names;
    for (const Interval& iv : t.intervals()) {
        if (iv.category == Category::annotation && names.size() < 20) {
            names.insert(t.name_text(iv.name));
        }
    }
    std::string out;
    for (const auto& n : names) {
        out += (out.empty() ? "'" : ", '") + n + "'";
    }
    return out.empty() ? "none" : out;
}

}  // namespace

double amdahl_gain_pct(std::int64_t exposed_ns, std::int64_t window_ns, double k) {
    if (window_ns <= 0) {
        return 0.0;
    }
    const double saved = static_cast<double>(exposed_ns) * (std::isinf(k) ? 1.0 : 1.0 - 1.0 / k);
    return 100.0 * saved / static_cast<double>(window_ns);
}

namespace {

void require_mappable(const Timeline& timeline, const MapOptions& options) {
    if (options.speedup && !(*options.speedup > 1.0 && std::isfinite(*options.speedup))) {
        throw Error(ErrorCode::invalid_argument,
                    "--speedup must be a finite number greater than 1 (the item becoming K× "
                    "faster)",
                    {{"field", "speedup"}});
    }
    if (timeline.intervals().empty()) {
        throw Error(ErrorCode::empty_input, "the trace holds no interval cko maps",
                    {{"field", "intervals"}});
    }
}

// Per source: the devices of its GPU lanes, its CPU lanes and the span of all its intervals.
struct SourceFacts {
    std::vector<std::set<std::int64_t>> devices;
    std::vector<std::int64_t> cpu_threads;
    std::vector<std::pair<std::int64_t, std::int64_t>> span;
};

SourceFacts source_facts(const Timeline& timeline) {
    const std::size_t n = timeline.sources().size();
    SourceFacts f{std::vector<std::set<std::int64_t>>(n), std::vector<std::int64_t>(n, 0),
                  std::vector<std::pair<std::int64_t, std::int64_t>>(
                      n, {std::numeric_limits<std::int64_t>::max(),
                          std::numeric_limits<std::int64_t>::min()})};
    const auto& lanes = timeline.lanes();
    for (const Interval& iv : timeline.intervals()) {
        auto& [lo, hi] = f.span[lanes[iv.lane].source];
        lo = std::min(lo, iv.start_ns);
        hi = std::max(hi, iv.end_ns);
    }
    for (const Lane& lane : lanes) {
        if (lane.key.kind == LaneKind::gpu_stream) {
            f.devices[lane.source].insert(lane.key.owner);
        } else {
            ++f.cpu_threads[lane.source];
        }
    }
    return f;
}

// Launch correlation ids of source s's CPU API calls, for linked_launches: a sorted vector (8
// bytes an id; a hash set took about 40).
std::vector<std::int64_t> launch_correlations(const Timeline& timeline, SourceId s) {
    std::vector<std::int64_t> launches;
    const auto& lanes = timeline.lanes();
    for (const Interval& iv : timeline.intervals()) {
        if (lanes[iv.lane].source == s && iv.correlation >= 0 &&
            (iv.category == Category::cuda_runtime || iv.category == Category::cuda_driver ||
             iv.category == Category::sync)) {
            launches.push_back(iv.correlation);
        }
    }
    std::sort(launches.begin(), launches.end());
    launches.erase(std::unique(launches.begin(), launches.end()), launches.end());
    return launches;
}

// By start time, then by index: the order the sweep reads intervals in.
void sort_by_start(const std::vector<Interval>& all, std::vector<std::uint32_t>& ids) {
    std::sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) {
        return all[a].start_ns != all[b].start_ns ? all[a].start_ns < all[b].start_ns : a < b;
    });
}

// What one part (source s, device) sweeps: its work (the device's GPU work and the source's CPU
// lanes), sorted by start, and the annotations that name its windows (--window). Counts the part's
// GPU intervals launched by one of `launches`.
struct PartWork {
    PartInput in;
    std::vector<std::uint32_t> windows;
};

PartWork part_work(const Timeline& timeline, const MapOptions& options, SourceId s,
                   const std::optional<std::int64_t>& device,
                   const std::vector<std::int64_t>& launches, PartMap& part) {
    PartWork pw;
    const auto& lanes = timeline.lanes();
    const auto& all = timeline.intervals();
    for (std::uint32_t i = 0; i < all.size(); ++i) {
        const Interval& iv = all[i];
        const Lane& lane = lanes[iv.lane];
        if (lane.source != s) {
            continue;
        }
        const bool gpu = lane.key.kind == LaneKind::gpu_stream;
        const bool keep = gpu ? (is_gpu_work(iv.category) && device && lane.key.owner == *device)
                              : !is_gpu_work(iv.category);
        if (!keep) {
            continue;
        }
        pw.in.work.push_back(i);
        pw.in.max_duration = std::max(pw.in.max_duration, iv.end_ns - iv.start_ns);
        if (gpu && iv.correlation >= 0 &&
            std::binary_search(launches.begin(), launches.end(), iv.correlation)) {
            ++part.linked_launches;
        }
        if (!gpu && iv.category == Category::annotation && !options.window.empty() &&
            window_name_matches(options.window, timeline.name_text(iv.name))) {
            pw.windows.push_back(i);
        }
    }
    sort_by_start(all, pw.in.work);
    sort_by_start(all, pw.windows);
    return pw;
}

// The part's windows swept: the whole trace (the span of every interval of the source, so that the
// parts of one source share one window), or each occurrence of the --window annotation.
void sweep_part(WindowSweep& sweep, const Timeline& timeline, const MapOptions& options,
                const PartWork& pw, std::pair<std::int64_t, std::int64_t> span, PartMap& part) {
    if (options.window.empty()) {
        sweep.set_gantt(options.gantt_windows > 0);
        WindowMap w = sweep.run(pw.in, span.first, span.second);
        w.name = kWholeTrace;
        part.windows.push_back(std::move(w));
        return;
    }
    for (std::size_t n = 0; n < pw.windows.size(); ++n) {
        const Interval& a = timeline.intervals()[pw.windows[n]];
        sweep.set_gantt(n < options.gantt_windows);
        WindowMap w = sweep.run(pw.in, a.start_ns, a.end_ns);
        w.name = timeline.name_text(a.name);
        w.occurrence = n;
        part.windows.push_back(std::move(w));
    }
}

// A part (source s on a device, or its CPU alone) with its counts and labels, no windows yet.
PartMap new_part(const Timeline& timeline, const SourceFacts& facts, SourceId s,
                 const std::optional<std::int64_t>& device) {
    const Source& source = timeline.sources()[s];
    PartMap part;
    part.source = s;
    part.label = source.label;
    part.rank = source.rank;
    part.device = device;
    part.cpu_threads = facts.cpu_threads[s];
    for (const Lane& lane : timeline.lanes()) {
        part.gpu_streams += lane.source == s && lane.key.kind == LaneKind::gpu_stream && device &&
                            lane.key.owner == *device;
    }
    return part;
}

void require_selection_found(const Timeline& timeline, const MapOptions& options, bool rank_found,
                             bool device_found, std::size_t occurrences) {
    if (!rank_found) {
        throw Error(ErrorCode::invalid_argument,
                    "no trace is of rank " + std::to_string(*options.rank) +
                        " (the rank comes from distributedInfo.rank)",
                    {{"field", "rank"}});
    }
    if (!device_found) {
        throw Error(ErrorCode::invalid_argument,
                    "no GPU lane is on device " + std::to_string(*options.device),
                    {{"field", "device"}});
    }
    if (!options.window.empty() && occurrences == 0) {
        throw Error(ErrorCode::not_found,
                    "no annotation named '" + options.window +
                        "' on a CPU lane: pass --window with one of " +
                        list_annotation_names(timeline) + " (a trailing * matches by prefix)",
                    {{"field", "window"}, {"window", options.window}});
    }
}

}  // namespace

ExecutionMap compute_execution_map(const Timeline& timeline, const MapOptions& options) {
    require_mappable(timeline, options);
    ExecutionMap map;
    map.options = options;
    const SourceFacts facts = source_facts(timeline);
    // Parts: (source, device), devices from the GPU lanes of the source.
    std::map<std::pair<SourceId, std::int64_t>, PartMap> parts;
    bool rank_found = !options.rank.has_value();
    bool device_found = !options.device.has_value();
    WindowSweep sweep(timeline, options);
    for (SourceId s = 0; s < timeline.sources().size(); ++s) {
        if (options.rank && timeline.sources()[s].rank != options.rank) {
            continue;
        }
        rank_found = true;
        std::vector<std::optional<std::int64_t>> part_devices(facts.devices[s].begin(),
                                                              facts.devices[s].end());
        if (part_devices.empty()) {
            part_devices.emplace_back(std::nullopt);
        }
        const std::vector<std::int64_t> launches = launch_correlations(timeline, s);
        for (const auto& device : part_devices) {
            if (options.device && device != options.device) {
                continue;
            }
            device_found = true;
            PartMap part = new_part(timeline, facts, s, device);
            const PartWork pw = part_work(timeline, options, s, device, launches, part);
            if (pw.in.work.empty()) {
                continue;
            }
            sweep_part(sweep, timeline, options, pw, facts.span[s], part);
            parts.emplace(std::pair{s, device.value_or(-1)}, std::move(part));
        }
    }
    std::size_t occurrences = 0;
    for (auto& [key, part] : parts) {
        occurrences += part.windows.size();
        map.parts.push_back(std::move(part));
    }
    require_selection_found(timeline, options, rank_found, device_found, occurrences);
    return map;
}

std::string gantt_legend() {
    return "K compute kernel, C communication kernel, M memcpy, s memset, r CUDA runtime call, "
           "d CUDA driver call, W sync, o CPU op; blank: nothing recorded";
}

}  // namespace cko::timeline
