// The execution map as text for a terminal: summary lines, item table, and a text Gantt per window.
#include "cko/timeline/execution_map.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace cko::timeline {
namespace {

std::string fixed(double v, int digits = 1) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

double pct(std::int64_t part, std::int64_t whole) {
    return whole <= 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

std::string pad(const std::string& s, std::size_t width, bool left) {
    if (s.size() >= width) {
        return s;
    }
    return left ? s + std::string(width - s.size(), ' ') : std::string(width - s.size(), ' ') + s;
}

std::string shorten(const std::string& s, std::size_t max) {
    return s.size() <= max ? s : s.substr(0, max - 3) + "...";
}

std::string window_text(const WindowMap& w, const MapOptions& o, std::size_t top) {
    const std::int64_t d = w.duration_ns();
    std::string out = "  window '" + w.name + "' #" + std::to_string(w.occurrence) + "  [" +
                      std::to_string(w.start_ns) + ", " + std::to_string(w.end_ns) + ") " +
                      std::to_string(d) + " ns\n";
    out += "    GPU busy " + std::to_string(w.gpu_busy_ns) + " ns (" +
           fixed(pct(w.gpu_busy_ns, d)) + "%), idle " + std::to_string(w.gpu_idle_ns) + " ns in " +
           std::to_string(w.idle_gaps) + " gaps\n";
    out += "    idle while CPU: in sync " + std::to_string(w.idle.cpu_sync_ns) + " ns, launching " +
           std::to_string(w.idle.cpu_launch_ns) + " ns, other work " +
           std::to_string(w.idle.cpu_other_ns) + " ns; nothing recorded " +
           std::to_string(w.idle.unrecorded_ns) + " ns\n";
    out += "    overlap: compute " + std::to_string(w.compute_ns) + " ns, memory " +
           std::to_string(w.memory_ns) + " ns (" +
           fixed(pct(w.compute_memory_overlap_ns, w.memory_ns)) +
           "% under compute), communication " + std::to_string(w.communication_ns) + " ns (" +
           fixed(pct(w.compute_communication_overlap_ns, w.communication_ns)) +
           "% under compute)\n";
    std::string conc;
    for (std::size_t k = 0; k < w.concurrency_ns.size(); ++k) {
        conc += (conc.empty() ? "" : ", ") + std::to_string(k) + ": " +
                fixed(pct(w.concurrency_ns[k], d)) + "%";
    }
    out += "    GPU intervals running at once: " + conc + "\n";
    out += "    coverage: recorded " + std::to_string(w.recorded_ns) + " ns (" +
           fixed(pct(w.recorded_ns, d)) + "%), unobserved " + std::to_string(d - w.recorded_ns) +
           " ns\n";
    const double k = o.speedup.value_or(std::numeric_limits<double>::infinity());
    const std::string gain_head =
        o.speedup ? "gain@" + fixed(*o.speedup, 2) + "x %" : "removable %";
    out += "    " + pad("kind", 10, true) + "  " + pad("count", 7, false) + "  " +
           pad("total (ns)", 14, false) + "  " + pad("exposed (ns)", 14, false) + "  " +
           pad(gain_head, 14, false) + "  name\n";
    std::size_t shown = 0;
    for (const ItemTime& item : w.items) {
        if (shown++ >= top) {
            break;
        }
        out += "    " + pad(std::string(item_kind_name(item.kind)), 10, true) + "  " +
               pad(std::to_string(item.count), 7, false) + "  " +
               pad(std::to_string(item.total_ns), 14, false) + "  " +
               pad(std::to_string(item.exposed_ns), 14, false) + "  " +
               pad(fixed(amdahl_gain_pct(item.exposed_ns, d, k), 2), 14, false) + "  " +
               shorten(item.name, 80) + "\n";
    }
    if (w.items.size() > top) {
        out += "    (" + std::to_string(w.items.size() - top) + " more items: --top or --json)\n";
    }
    if (!w.gantt.empty()) {
        std::size_t label = 0;
        for (const GanttRow& row : w.gantt) {
            label = std::max(label, row.lane.size());
        }
        out += "    Gantt (" +
               std::to_string(d / std::max<std::size_t>(1, w.gantt[0].cells.size())) +
               " ns per column)\n";
        for (const GanttRow& row : w.gantt) {
            out += "    " + pad(row.lane, label, true) + " |" + row.cells + "|\n";
        }
    }
    return out;
}

}  // namespace

std::string execution_map_text(const ExecutionMap& map, std::size_t top_items) {
    std::string out;
    for (const PartMap& part : map.parts) {
        out += part.label + "  rank " + (part.rank ? std::to_string(*part.rank) : "-") +
               "  device " + (part.device ? std::to_string(*part.device) : "-") + "  (" +
               std::to_string(part.gpu_streams) + " GPU streams, " +
               std::to_string(part.cpu_threads) + " CPU threads, " +
               std::to_string(part.linked_launches) + " GPU intervals linked to a launch)\n";
        if (part.windows.size() > 1) {
            std::vector<std::int64_t> d;
            std::vector<std::int64_t> busy;
            for (const WindowMap& w : part.windows) {
                d.push_back(w.duration_ns());
                busy.push_back(w.gpu_busy_ns);
            }
            const auto summary = [](std::vector<std::int64_t> v) {
                std::sort(v.begin(), v.end());
                const std::size_t n = v.size();
                const double med =
                    n % 2
                        ? static_cast<double>(v[n / 2])
                        : (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2])) / 2.0;
                return "median " + fixed(med) + ", min " + std::to_string(v.front()) + ", max " +
                       std::to_string(v.back());
            };
            out += "  " + std::to_string(part.windows.size()) + " windows: duration " + summary(d) +
                   " ns; GPU busy " + summary(busy) + " ns\n";
        }
        std::size_t shown = 0;
        for (const WindowMap& w : part.windows) {
            out += window_text(w, map.options, top_items);
            if (++shown >= 8 && part.windows.size() > 8) {
                out += "  (" + std::to_string(part.windows.size() - shown) +
                       " more windows: --json)\n";
                break;
            }
        }
    }
    if (map.parts.empty()) {
        out += "no part selected\n";
    }
    out += "Gantt legend: " + gantt_legend() + "\n";
    for (const auto& note : map.notes) {
        out += "note: " + note + "\n";
    }
    return out;
}

}  // namespace cko::timeline
