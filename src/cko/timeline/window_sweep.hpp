// One window's sweep (execution_map.cpp cuts the windows): the busy union, idle attribution,
// overlap, exposed time per item and the Gantt rows, from a part's intervals sorted by start.
// The sweep streams: intervals are taken in start order and their ends come from a heap of the
// open ones, so it holds only what is open at an instant (no per-interval copies, no sort).
#pragma once

#include "cko/timeline/execution_map.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace cko::timeline::sweep_detail {

__extension__ typedef __int128 i128;  // column arithmetic: span × columns can pass 2^63

// Open-count and union/exposed accumulators of one item.
struct ItemAcc {
    std::int32_t active = 0;
    std::int64_t open_since = 0;
    std::int64_t count = 0;
    std::int64_t total_ns = 0;
    std::int64_t union_ns = 0;
    std::int64_t exposed_ns = 0;
    Category category = Category::compute_kernel;
    bool touched = false;
};

// Items of one family (GPU names, categories, annotation names) with the "which one alone"
// trick: while exactly one item is open, the sum of open ids is that item's id.
class Family {
public:
    explicit Family(std::size_t size) : acc_(size) {}

    ItemAcc& at(std::size_t id) {
        ItemAcc& a = acc_[id];
        if (!a.touched) {
            a.touched = true;
            touched_.push_back(id);
        }
        return a;
    }
    void open(std::size_t id, std::int64_t t) {
        ItemAcc& a = at(id);
        if (a.active++ == 0) {
            a.open_since = t;
            ++distinct_;
            id_sum_ += id;
        }
    }
    void close(std::size_t id, std::int64_t t) {
        ItemAcc& a = acc_[id];
        if (--a.active == 0) {
            a.union_ns += t - a.open_since;
            --distinct_;
            id_sum_ -= id;
        }
    }
    // Credits `w` of exposed time to the one open item, when exactly one is open.
    void expose_alone(std::int64_t w) {
        if (distinct_ == 1) {
            acc_[id_sum_].exposed_ns += w;
        }
    }
    [[nodiscard]] int distinct() const { return distinct_; }
    [[nodiscard]] const std::vector<std::size_t>& touched() const { return touched_; }
    [[nodiscard]] const ItemAcc& acc(std::size_t id) const { return acc_[id]; }
    void reset() {
        for (const std::size_t id : touched_) {
            acc_[id] = ItemAcc{};
        }
        touched_.clear();
        distinct_ = 0;
        id_sum_ = 0;
    }

private:
    std::vector<ItemAcc> acc_;
    std::vector<std::size_t> touched_;
    int distinct_ = 0;
    std::size_t id_sum_ = 0;
};

inline char gantt_char(Category c) {
    switch (c) {
    case Category::compute_kernel:
        return 'K';
    case Category::communication_kernel:
        return 'C';
    case Category::memset:
        return 's';
    case Category::cuda_runtime:
        return 'r';
    case Category::cuda_driver:
        return 'd';
    case Category::sync:
        return 'W';
    case Category::cpu_op:
        return 'o';
    case Category::annotation:
        return '.';
    default:
        return 'M';  // every memcpy kind
    }
}

// The intervals of one part, sorted by start, and what the windows are cut from.
struct PartInput {
    std::vector<std::uint32_t> work;  // GPU work on the device + CPU work and annotations
    std::int64_t max_duration = 0;
};

class WindowSweep {
public:
    WindowSweep(const Timeline& t, const MapOptions& options)
        : t_(t),
          options_(options),
          gpu_names_(t.name_count()),
          annotations_(t.name_count()),
          categories_(kCategoryCount) {}

    WindowMap run(const PartInput& in, std::int64_t ws, std::int64_t we) {
        WindowMap m;
        m.start_ns = ws;
        m.end_ns = we;
        sweep(m, in, ws, we);
        report_items(m);
        if (gantt_) {
            gantt(m, in, ws, we);
        }
        gpu_names_.reset();
        annotations_.reset();
        categories_.reset();
        return m;
    }
    void set_gantt(bool on) { gantt_ = on; }

private:
    struct Clipped {
        std::int64_t start;
        std::int64_t end;
        std::uint32_t index;
    };

    // The part's intervals that meet [ws, we], in start order, clipped to it: a zero-length
    // interval belongs to the window it lies in (its end point included).
    class Candidates {
    public:
        Candidates(const Timeline& t, const PartInput& in, std::int64_t ws, std::int64_t we)
            : all_(t.intervals()), end_(in.work.end()), ws_(ws), we_(we) {
            // Candidates start no earlier than ws − the longest interval of the part.
            const std::int64_t from = ws - in.max_duration;
            it_ = std::lower_bound(
                in.work.begin(), in.work.end(), from,
                [&](std::uint32_t i, std::int64_t v) { return all_[i].start_ns < v; });
            advance();
        }
        [[nodiscard]] bool done() const { return done_; }
        [[nodiscard]] const Clipped& current() const { return current_; }
        void next() {
            ++it_;
            advance();
        }

    private:
        void advance() {
            for (; it_ != end_ && all_[*it_].start_ns <= we_; ++it_) {
                const Interval& iv = all_[*it_];
                const bool zero = iv.start_ns == iv.end_ns;
                const bool inside = zero ? (iv.start_ns >= ws_ && iv.start_ns <= we_)
                                         : (iv.start_ns < we_ && iv.end_ns > ws_);
                if (inside) {
                    current_ = Clipped{std::max(iv.start_ns, ws_), std::min(iv.end_ns, we_), *it_};
                    return;
                }
            }
            done_ = true;
        }

        const std::vector<Interval>& all_;
        std::vector<std::uint32_t>::const_iterator it_;
        std::vector<std::uint32_t>::const_iterator end_;
        std::int64_t ws_;
        std::int64_t we_;
        Clipped current_{};
        bool done_ = false;
    };

    void apply(std::uint32_t index, bool open, std::int64_t at) {
        const Interval& iv = t_.intervals()[index];
        const Category cat = iv.category;
        const int d = open ? 1 : -1;
        const auto step = [&](Family& f, std::size_t id) {
            if (open) {
                f.open(id, at);
            } else {
                f.close(id, at);
            }
        };
        if (is_gpu_work(cat)) {
            gpu_active_ += d;
            compute_active_ += cat == Category::compute_kernel ? d : 0;
            comm_active_ += cat == Category::communication_kernel ? d : 0;
            memory_active_ += is_memory_op(cat) ? d : 0;
            step(gpu_names_, iv.name);
            step(categories_, static_cast<std::size_t>(cat));
            gpu_categories_open_ +=
                open && categories_.acc(static_cast<std::size_t>(cat)).active == 1;
            gpu_categories_open_ -=
                !open && categories_.acc(static_cast<std::size_t>(cat)).active == 0;
        } else if (is_cpu_work(cat)) {
            cpu_work_active_ += d;
            sync_active_ += cat == Category::sync ? d : 0;
            api_active_ += (cat == Category::cuda_runtime || cat == Category::cuda_driver) ? d : 0;
            step(categories_, static_cast<std::size_t>(cat));
        } else {
            step(annotations_, iv.name);
        }
    }

    void measure(WindowMap& m, std::int64_t from, std::int64_t to) {
        const std::int64_t w = to - from;
        if (w <= 0) {
            return;
        }
        if (gpu_active_ + cpu_work_active_ > 0) {
            m.recorded_ns += w;
        }
        const auto k = static_cast<std::size_t>(gpu_active_);
        if (m.concurrency_ns.size() <= k) {
            m.concurrency_ns.resize(k + 1, 0);
        }
        m.concurrency_ns[k] += w;
        if (gpu_active_ > 0) {
            if (in_gap_) {
                close_gap(m, from);
            }
            m.gpu_busy_ns += w;
            gpu_names_.expose_alone(w);
            // Categories family holds GPU and CPU categories: a GPU category is exposed when it
            // is the only GPU category open, whatever the CPU does.
            if (gpu_categories_open_ == 1) {
                for (const std::size_t id : categories_.touched()) {
                    const auto c = static_cast<Category>(id);
                    if (is_gpu_work(c) && categories_.acc(id).active > 0) {
                        category_exposed_[id] += w;
                        break;
                    }
                }
            }
            m.compute_ns += compute_active_ > 0 ? w : 0;
            m.memory_ns += memory_active_ > 0 ? w : 0;
            m.communication_ns += comm_active_ > 0 ? w : 0;
            m.compute_memory_overlap_ns += compute_active_ > 0 && memory_active_ > 0 ? w : 0;
            m.compute_communication_overlap_ns += compute_active_ > 0 && comm_active_ > 0 ? w : 0;
            return;
        }
        if (!in_gap_) {
            in_gap_ = true;
            gap_start_ = from;
        }
        m.gpu_idle_ns += w;
        (sync_active_ > 0       ? m.idle.cpu_sync_ns
         : api_active_ > 0      ? m.idle.cpu_launch_ns
         : cpu_work_active_ > 0 ? m.idle.cpu_other_ns
                                : m.idle.unrecorded_ns) += w;
        // CPU categories: exposed while the GPU idles and exactly one CPU category is open.
        if (categories_.distinct() == 1) {
            for (const std::size_t id : categories_.touched()) {
                if (categories_.acc(id).active > 0) {
                    category_exposed_[id] += w;
                    break;
                }
            }
        }
        annotations_.expose_alone(w);
    }

    void close_gap(WindowMap& m, std::int64_t end) {
        in_gap_ = false;
        ++m.idle_gaps;
        const Gap g{gap_start_, end};
        auto& top = m.longest_gaps;
        const auto longer = [](const Gap& a, const Gap& b) {
            return a.end_ns - a.start_ns > b.end_ns - b.start_ns;
        };
        top.insert(std::upper_bound(top.begin(), top.end(), g, longer), g);
        if (top.size() > options_.longest_gaps) {
            top.pop_back();
        }
    }

    // Counts and totals of one interval (they do not depend on the sweep order).
    void count(const Clipped& c) {
        const Interval& iv = t_.intervals()[c.index];
        const std::int64_t len = c.end - c.start;
        Family& f = is_gpu_work(iv.category)   ? gpu_names_
                    : is_cpu_work(iv.category) ? categories_
                                               : annotations_;
        const std::size_t id =
            is_cpu_work(iv.category) ? static_cast<std::size_t>(iv.category) : iv.name;
        ItemAcc& a = f.at(id);
        ++a.count;
        a.total_ns += len;
        if (is_gpu_work(iv.category)) {
            a.category = iv.category;
            ItemAcc& cat = categories_.at(static_cast<std::size_t>(iv.category));
            ++cat.count;
            cat.total_ns += len;
        }
    }

    // Instant by instant: at each time, first the intervals that end there (touching intervals
    // do not overlap), then those that start there. A zero-length interval opens and closes at
    // one instant with no time between, so it changes nothing but its counts.
    void sweep(WindowMap& m, const PartInput& in, std::int64_t ws, std::int64_t we) {
        category_exposed_.assign(kCategoryCount, 0);
        gpu_active_ = compute_active_ = comm_active_ = memory_active_ = 0;
        cpu_work_active_ = sync_active_ = api_active_ = gpu_categories_open_ = 0;
        in_gap_ = false;
        open_ = {};
        constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
        Candidates next(t_, in, ws, we);
        std::int64_t at = ws;
        while (true) {
            const std::int64_t start = next.done() ? kNever : next.current().start;
            const std::int64_t end = open_.empty() ? kNever : open_.top().first;
            const std::int64_t t = std::min(start, end);
            if (t == kNever) {
                break;
            }
            measure(m, at, t);
            for (; !open_.empty() && open_.top().first == t; open_.pop()) {
                apply(open_.top().second, false, t);
            }
            for (; !next.done() && next.current().start == t; next.next()) {
                const Clipped& c = next.current();
                count(c);
                if (c.end > c.start) {
                    apply(c.index, true, t);
                    open_.emplace(c.end, c.index);
                }
            }
            at = t;
        }
        measure(m, at, we);
        if (in_gap_) {
            close_gap(m, we);
        }
    }

    void report_items(WindowMap& m) {
        const auto add = [&](ItemKind kind, const std::string& name, const ItemAcc& a, Category c,
                             std::int64_t exposed) {
            m.items.push_back(ItemTime{kind, name, c, a.count, a.total_ns, a.union_ns, exposed});
        };
        for (const std::size_t id : gpu_names_.touched()) {
            const ItemAcc& a = gpu_names_.acc(id);
            add(ItemKind::kernel, t_.name_text(static_cast<NameId>(id)), a, a.category,
                a.exposed_ns);
        }
        for (const std::size_t id : categories_.touched()) {
            const auto c = static_cast<Category>(id);
            add(ItemKind::category, std::string(category_name(c)), categories_.acc(id), c,
                category_exposed_[id]);
        }
        for (const std::size_t id : annotations_.touched()) {
            add(ItemKind::annotation, t_.name_text(static_cast<NameId>(id)), annotations_.acc(id),
                Category::annotation, annotations_.acc(id).exposed_ns);
        }
        std::sort(m.items.begin(), m.items.end(), [](const ItemTime& a, const ItemTime& b) {
            if (a.kind != b.kind) {
                return a.kind < b.kind;
            }
            if (a.exposed_ns != b.exposed_ns) {
                return a.exposed_ns > b.exposed_ns;
            }
            if (a.total_ns != b.total_ns) {
                return a.total_ns > b.total_ns;
            }
            return a.name < b.name;
        });
    }

    void gantt(WindowMap& m, const PartInput& in, std::int64_t ws, std::int64_t we) {
        const std::size_t cols = options_.gantt_columns;
        const std::int64_t span = we - ws;
        if (cols == 0 || span <= 0) {
            return;
        }
        std::map<LaneId, std::vector<std::array<std::int64_t, kCategoryCount>>> cover;
        const auto col_start = [&](std::size_t c) {
            return ws + static_cast<std::int64_t>(static_cast<i128>(span) * static_cast<i128>(c) /
                                                  static_cast<i128>(cols));
        };
        for (Candidates next(t_, in, ws, we); !next.done(); next.next()) {
            const Clipped& c = next.current();
            const Interval& iv = t_.intervals()[c.index];
            if (iv.category == Category::annotation || c.end == c.start) {
                continue;
            }
            auto& row = cover[iv.lane];
            if (row.empty()) {
                row.resize(cols, {});
            }
            auto first = static_cast<std::size_t>(static_cast<i128>(c.start - ws) *
                                                  static_cast<i128>(cols) / span);
            for (std::size_t col = std::min(first, cols - 1); col < cols; ++col) {
                const std::int64_t a = std::max(c.start, col_start(col));
                const std::int64_t b = std::min(c.end, col_start(col + 1));
                if (a >= c.end) {
                    break;
                }
                if (b > a) {
                    row[col][static_cast<std::size_t>(iv.category)] += b - a;
                }
            }
        }
        // GPU lanes first, then CPU lanes, each by (owner, id).
        std::vector<LaneId> order;
        for (const auto& [lane, row] : cover) {
            order.push_back(lane);
        }
        std::sort(order.begin(), order.end(), [&](LaneId a, LaneId b) {
            const LaneKey& ka = t_.lanes()[a].key;
            const LaneKey& kb = t_.lanes()[b].key;
            return std::tuple(ka.kind != LaneKind::gpu_stream, ka.owner, ka.id) <
                   std::tuple(kb.kind != LaneKind::gpu_stream, kb.owner, kb.id);
        });
        for (const LaneId lane : order) {
            const LaneKey& k = t_.lanes()[lane].key;
            GanttRow row;
            row.lane = k.kind == LaneKind::gpu_stream
                           ? "GPU " + std::to_string(k.owner) + " stream " + std::to_string(k.id)
                           : "CPU " + std::to_string(k.owner) + "/" + std::to_string(k.id);
            for (const auto& cell : cover[lane]) {
                // CPU calls nest inside operators: the most specific one shows (sync, then the
                // API call, then the operator). GPU lanes: the category with the most time.
                std::size_t best = kCategoryCount;
                const auto has = [&](Category c) { return cell[static_cast<std::size_t>(c)] > 0; };
                if (has(Category::sync)) {
                    best = static_cast<std::size_t>(Category::sync);
                } else if (has(Category::cuda_runtime) || has(Category::cuda_driver)) {
                    best = static_cast<std::size_t>(
                        cell[static_cast<std::size_t>(Category::cuda_driver)] >
                                cell[static_cast<std::size_t>(Category::cuda_runtime)]
                            ? Category::cuda_driver
                            : Category::cuda_runtime);
                } else {
                    for (std::size_t c = 0; c < kCategoryCount; ++c) {
                        if (cell[c] > 0 && (best == kCategoryCount || cell[c] > cell[best])) {
                            best = c;
                        }
                    }
                }
                row.cells += best == kCategoryCount ? ' ' : gantt_char(static_cast<Category>(best));
            }
            m.gantt.push_back(std::move(row));
        }
    }

    const Timeline& t_;
    const MapOptions& options_;
    Family gpu_names_;
    Family annotations_;
    Family categories_;
    std::vector<std::int64_t> category_exposed_;
    // The open intervals of the sweep, (clipped end, index), the earliest end on top.
    using Open = std::pair<std::int64_t, std::uint32_t>;
    std::priority_queue<Open, std::vector<Open>, std::greater<>> open_;
    bool gantt_ = false;
    int gpu_active_ = 0, compute_active_ = 0, comm_active_ = 0, memory_active_ = 0;
    int cpu_work_active_ = 0, sync_active_ = 0, api_active_ = 0, gpu_categories_open_ = 0;
    bool in_gap_ = false;
    std::int64_t gap_start_ = 0;
};

}  // namespace cko::timeline::sweep_detail
