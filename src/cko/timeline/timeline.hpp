// The one timeline model: lanes of intervals (CPU threads, GPU streams) that every importer feeds.
#pragma once

#include "cko/util/closed_enum.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace cko::timeline {

// What an interval is. GPU work: the kernels, copies and memsets a stream executes. CPU: the
// CUDA API calls (sync split out), operators, and annotation ranges (NVTX, record_function).
#define CKO_TIMELINE_CATEGORIES(X) \
    X(compute_kernel)              \
    X(communication_kernel)        \
    X(memcpy_h2d)                  \
    X(memcpy_d2h)                  \
    X(memcpy_d2d)                  \
    X(memcpy_p2p)                  \
    X(memcpy_other)                \
    X(memset)                      \
    X(cuda_runtime)                \
    X(cuda_driver)                 \
    X(sync)                        \
    X(cpu_op)                      \
    X(annotation)
CKO_CLOSED_ENUM(Category, CKO_TIMELINE_CATEGORIES, category_name, category_from_name)
#undef CKO_TIMELINE_CATEGORIES
inline constexpr std::size_t kCategoryCount = kCategorySpellings.size();

[[nodiscard]] constexpr bool is_gpu_work(Category c) noexcept {
    return c <= Category::memset;
}
// HTA's MEMORY class: copies of every kind and memsets.
[[nodiscard]] constexpr bool is_memory_op(Category c) noexcept {
    return c >= Category::memcpy_h2d && c <= Category::memset;
}
// CPU intervals that are work (a thread doing something), as opposed to annotation ranges.
[[nodiscard]] constexpr bool is_cpu_work(Category c) noexcept {
    return c >= Category::cuda_runtime && c <= Category::cpu_op;
}

// Shared classification rules, so that every importer names the same thing the same way.
// A kernel whose name contains "nccl" (any case) is communication (HTA's get_kernel_type).
[[nodiscard]] Category kernel_category(std::string_view kernel_name) noexcept;
// A CUDA API call whose name contains "Synchronize" (cudaDeviceSynchronize,
// cudaStreamSynchronize, cudaEventSynchronize, cuCtxSynchronize, ...) is a sync; every other call
// keeps `api` (cuda_runtime or cuda_driver).
[[nodiscard]] Category api_call_category(std::string_view call_name, Category api) noexcept;

#define CKO_TIMELINE_LANE_KINDS(X) \
    X(cpu_thread)                  \
    X(gpu_stream)
CKO_CLOSED_ENUM(LaneKind, CKO_TIMELINE_LANE_KINDS, lane_kind_name, lane_kind_from_name)
#undef CKO_TIMELINE_LANE_KINDS

// A lane inside one source (one trace file = one rank): a CPU thread (owner = process id,
// id = thread id) or a GPU stream (owner = device, id = stream).
struct LaneKey {
    LaneKind kind = LaneKind::cpu_thread;
    std::int64_t owner = 0;
    std::int64_t id = 0;
    auto operator<=>(const LaneKey&) const = default;
};

using SourceId = std::uint32_t;
using LaneId = std::uint32_t;
using NameId = std::uint32_t;

// One interval [start_ns, end_ns) in integer nanoseconds; zero length is allowed.
struct Interval {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t correlation = -1;  // CUDA correlation id linking a launch to its GPU work; -1 none
    LaneId lane = 0;
    NameId name = 0;
    Category category = Category::compute_kernel;
};

// What importers write into. Neither importer knows the other, and nothing downstream knows the
// file format. begin_source/end_source bracket one file; the rank is known only at its end
// (a Kineto trace may name it after the events).
class TimelineSink {
public:
    virtual ~TimelineSink() = default;
    virtual SourceId begin_source(std::string_view label) = 0;
    virtual void end_source(SourceId source, std::optional<std::int64_t> rank) = 0;
    virtual LaneId lane(SourceId source, const LaneKey& key) = 0;
    virtual NameId name(std::string_view text) = 0;
    // Throws cko::Error(invalid_argument) when end < start.
    virtual void interval(const Interval& interval) = 0;
};

struct Source {
    std::string label;
    std::optional<std::int64_t> rank;
};

struct Lane {
    SourceId source = 0;
    LaneKey key;
};

// The in-memory timeline: compact intervals (40 bytes each) plus one pool of names. This is what
// the map needs and nothing more: no event text, no args.
class Timeline : public TimelineSink {
public:
    SourceId begin_source(std::string_view label) override;
    void end_source(SourceId source, std::optional<std::int64_t> rank) override;
    LaneId lane(SourceId source, const LaneKey& key) override;
    NameId name(std::string_view text) override;
    void interval(const Interval& interval) override;

    // Convenience for tests and small feeders: lane + name + interval in one call.
    void add(SourceId source, const LaneKey& key, Category category, std::string_view name,
             std::int64_t start_ns, std::int64_t end_ns, std::int64_t correlation = -1);

    [[nodiscard]] const std::vector<Source>& sources() const noexcept { return sources_; }
    [[nodiscard]] const std::vector<Lane>& lanes() const noexcept { return lanes_; }
    [[nodiscard]] const std::vector<Interval>& intervals() const noexcept { return intervals_; }
    [[nodiscard]] const std::string& name_text(NameId id) const { return names_[id]; }
    [[nodiscard]] std::size_t name_count() const noexcept { return names_.size(); }

private:
    struct StringHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept {
            return std::hash<std::string_view>{}(s);
        }
    };
    static constexpr std::size_t kRecentNames = 64;
    static std::size_t recent_slot(std::string_view text) noexcept;

    std::vector<Source> sources_;
    std::vector<Lane> lanes_;
    LaneId last_lane_ = 0;  // the lane the last lane() call answered
    // Name ids by recent_slot(); a slot is trusted only after comparing the text.
    std::array<NameId, kRecentNames> recent_names_ = make_recent_names();
    static constexpr std::array<NameId, kRecentNames> make_recent_names() {
        std::array<NameId, kRecentNames> a{};
        a.fill(std::numeric_limits<NameId>::max());
        return a;
    }
    std::map<std::tuple<SourceId, LaneKey>, LaneId> lane_index_;
    std::vector<std::string> names_;
    std::unordered_map<std::string, NameId, StringHash, std::equal_to<>> name_index_;
    std::vector<Interval> intervals_;
};

}  // namespace cko::timeline
