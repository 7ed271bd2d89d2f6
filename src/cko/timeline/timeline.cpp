// The timeline store and the classification rules every importer shares.
#include "cko/timeline/timeline.hpp"

#include "cko/util/error.hpp"

#include <algorithm>
#include <cstring>

namespace cko::timeline {
namespace {

// ASCII only, without the locale: std::tolower per byte was 7% of `cko map` (kernel names are
// hundreds of bytes long).
char ascii_lower(char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// `word` is lower case.
bool contains_ignoring_case(std::string_view text, std::string_view word) {
    if (word.empty()) {
        return true;
    }
    for (std::size_t i = 0; i + word.size() <= text.size(); ++i) {
        if (ascii_lower(text[i]) != word[0]) {
            continue;
        }
        std::size_t k = 1;
        while (k < word.size() && ascii_lower(text[i + k]) == word[k]) {
            ++k;
        }
        if (k == word.size()) {
            return true;
        }
    }
    return false;
}

}  // namespace

Category kernel_category(std::string_view kernel_name) noexcept {
    return contains_ignoring_case(kernel_name, "nccl") ? Category::communication_kernel
                                                       : Category::compute_kernel;
}

Category api_call_category(std::string_view call_name, Category api) noexcept {
    return call_name.find("Synchronize") != std::string_view::npos ? Category::sync : api;
}

SourceId Timeline::begin_source(std::string_view label) {
    sources_.push_back(Source{std::string(label), std::nullopt});
    return static_cast<SourceId>(sources_.size() - 1);
}

void Timeline::end_source(SourceId source, std::optional<std::int64_t> rank) {
    sources_.at(source).rank = rank;
}

LaneId Timeline::lane(SourceId source, const LaneKey& key) {
    // Runs of events on one lane are the rule (a thread's ops, a stream's kernels).
    if (!lanes_.empty() && lanes_[last_lane_].source == source && lanes_[last_lane_].key == key) {
        return last_lane_;
    }
    const auto [it, inserted] =
        lane_index_.emplace(std::tuple{source, key}, static_cast<LaneId>(lanes_.size()));
    if (inserted) {
        lanes_.push_back(Lane{source, key});
    }
    last_lane_ = it->second;
    return it->second;
}

std::size_t Timeline::recent_slot(std::string_view text) noexcept {
    // Length and the last 8 bytes pick the slot: kernel names share long prefixes.
    std::uint64_t tail = 0;
    const std::size_t n = std::min<std::size_t>(text.size(), sizeof tail);
    if (n > 0) {
        std::memcpy(&tail, text.data() + text.size() - n, n);
    }
    return static_cast<std::size_t>((tail * 0x9E3779B97F4A7C15ULL + text.size()) >> 58) %
           kRecentNames;
}

NameId Timeline::name(std::string_view text) {
    // A name comes back with every launch and kernel names run to hundreds of bytes: a small
    // cache of recent names, checked with one compare, spares hashing the whole name each time.
    const std::size_t slot = recent_slot(text);
    if (const NameId id = recent_names_[slot]; id < names_.size() && names_[id] == text) {
        return id;
    }
    NameId id = 0;
    if (const auto it = name_index_.find(text); it != name_index_.end()) {
        id = it->second;
    } else {
        id = static_cast<NameId>(names_.size());
        names_.emplace_back(text);
        name_index_.emplace(std::string(text), id);
    }
    recent_names_[slot] = id;
    return id;
}

void Timeline::interval(const Interval& interval) {
    if (interval.end_ns < interval.start_ns) {
        throw Error(ErrorCode::invalid_argument,
                    "interval '" + names_.at(interval.name) + "' ends (" +
                        std::to_string(interval.end_ns) + " ns) before it starts (" +
                        std::to_string(interval.start_ns) + " ns)",
                    {{"field", "end_ns"}, {"start_ns", interval.start_ns}});
    }
    intervals_.push_back(interval);
}

void Timeline::add(SourceId source, const LaneKey& key, Category category, std::string_view name,
                   std::int64_t start_ns, std::int64_t end_ns, std::int64_t correlation) {
    Interval i;
    i.start_ns = start_ns;
    i.end_ns = end_ns;
    i.correlation = correlation;
    i.lane = lane(source, key);
    i.name = this->name(name);
    i.category = category;
    interval(i);
}

}  // namespace cko::timeline
