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

ExecutionMap compute_execution_map(const Timeline& timeline, const MapOptions& options) {
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
    ExecutionMap map;
    map.options = options;
    const auto& lanes = timeline.lanes();
    const auto& all = timeline.intervals();

    // Parts: (source, device), devices from the GPU lanes of the source.
    std::map<std::pair<SourceId, std::int64_t>, PartMap> parts;
    std::vector<std::set<std::int64_t>> devices(timeline.sources().size());
    std::vector<std::int64_t> cpu_threads(timeline.sources().size(), 0);
    std::vector<std::pair<std::int64_t, std::int64_t>> span(
        timeline.sources().size(),
        {std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()});
    for (const Interval& iv : all) {
        auto& [lo, hi] = span[lanes[iv.lane].source];
        lo = std::min(lo, iv.start_ns);
        hi = std::max(hi, iv.end_ns);
    }
    for (const Lane& lane : lanes) {
        if (lane.key.kind == LaneKind::gpu_stream) {
            devices[lane.source].insert(lane.key.owner);
        } else {
            ++cpu_threads[lane.source];
        }
    }
    bool rank_found = !options.rank.has_value();
    bool device_found = !options.device.has_value();
    WindowSweep sweep(timeline, options);
    for (SourceId s = 0; s < timeline.sources().size(); ++s) {
        const Source& source = timeline.sources()[s];
        if (options.rank && source.rank != options.rank) {
            continue;
        }
        rank_found = true;
        std::vector<std::optional<std::int64_t>> part_devices;
        for (const std::int64_t d : devices[s]) {
            part_devices.emplace_back(d);
        }
        if (part_devices.empty()) {
            part_devices.emplace_back(std::nullopt);
        }
        // Launch correlation ids of this source's CPU API calls, for linked_launches: a sorted
        // vector (8 bytes an id; a hash set took about 40).
        std::vector<std::int64_t> launches;
        for (const Interval& iv : all) {
            if (lanes[iv.lane].source == s && iv.correlation >= 0 &&
                (iv.category == Category::cuda_runtime || iv.category == Category::cuda_driver ||
                 iv.category == Category::sync)) {
                launches.push_back(iv.correlation);
            }
        }
        std::sort(launches.begin(), launches.end());
        launches.erase(std::unique(launches.begin(), launches.end()), launches.end());
        for (const auto& device : part_devices) {
            if (options.device && device != options.device) {
                continue;
            }
            device_found = true;
            PartMap part;
            part.source = s;
            part.label = source.label;
            part.rank = source.rank;
            part.device = device;
            part.cpu_threads = cpu_threads[s];
            for (const Lane& lane : lanes) {
                part.gpu_streams += lane.source == s && lane.key.kind == LaneKind::gpu_stream &&
                                    device && lane.key.owner == *device;
            }
            PartInput in;
            std::vector<std::uint32_t> windows;
            for (std::uint32_t i = 0; i < all.size(); ++i) {
                const Interval& iv = all[i];
                const Lane& lane = lanes[iv.lane];
                if (lane.source != s) {
                    continue;
                }
                const bool gpu = lane.key.kind == LaneKind::gpu_stream;
                const bool keep =
                    gpu ? (is_gpu_work(iv.category) && device && lane.key.owner == *device)
                        : !is_gpu_work(iv.category);
                if (!keep) {
                    continue;
                }
                in.work.push_back(i);
                in.max_duration = std::max(in.max_duration, iv.end_ns - iv.start_ns);
                if (gpu && iv.correlation >= 0 &&
                    std::binary_search(launches.begin(), launches.end(), iv.correlation)) {
                    ++part.linked_launches;
                }
                if (!gpu && iv.category == Category::annotation && !options.window.empty() &&
                    window_name_matches(options.window, timeline.name_text(iv.name))) {
                    windows.push_back(i);
                }
            }
            if (in.work.empty()) {
                continue;
            }
            std::sort(in.work.begin(), in.work.end(), [&](std::uint32_t a, std::uint32_t b) {
                return all[a].start_ns != all[b].start_ns ? all[a].start_ns < all[b].start_ns
                                                          : a < b;
            });
            if (options.window.empty()) {
                // The whole trace: the span of every interval of the source, so that the parts
                // of one source (its devices) share one window.
                sweep.set_gantt(options.gantt_windows > 0);
                WindowMap w = sweep.run(in, span[s].first, span[s].second);
                w.name = kWholeTrace;
                part.windows.push_back(std::move(w));
            } else {
                std::sort(windows.begin(), windows.end(), [&](std::uint32_t a, std::uint32_t b) {
                    return all[a].start_ns != all[b].start_ns ? all[a].start_ns < all[b].start_ns
                                                              : a < b;
                });
                for (std::size_t n = 0; n < windows.size(); ++n) {
                    const Interval& a = all[windows[n]];
                    sweep.set_gantt(n < options.gantt_windows);
                    WindowMap w = sweep.run(in, a.start_ns, a.end_ns);
                    w.name = timeline.name_text(a.name);
                    w.occurrence = n;
                    part.windows.push_back(std::move(w));
                }
            }
            parts.emplace(std::pair{s, device.value_or(-1)}, std::move(part));
        }
    }
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
    std::size_t occurrences = 0;
    for (auto& [key, part] : parts) {
        occurrences += part.windows.size();
        map.parts.push_back(std::move(part));
    }
    if (!options.window.empty() && occurrences == 0) {
        throw Error(ErrorCode::not_found,
                    "no annotation named '" + options.window +
                        "' on a CPU lane: pass --window with one of " +
                        list_annotation_names(timeline) + " (a trailing * matches by prefix)",
                    {{"field", "window"}, {"window", options.window}});
    }
    return map;
}

std::string gantt_legend() {
    return "K compute kernel, C communication kernel, M memcpy, s memset, r CUDA runtime call, "
           "d CUDA driver call, W sync, o CPU op; blank: nothing recorded";
}

}  // namespace cko::timeline
