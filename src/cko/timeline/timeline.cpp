// The timeline store and the classification rules every importer shares.
#include "cko/timeline/timeline.hpp"

#include "cko/util/error.hpp"

#include <algorithm>

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
    const auto [it, inserted] =
        lane_index_.emplace(std::tuple{source, key}, static_cast<LaneId>(lanes_.size()));
    if (inserted) {
        lanes_.push_back(Lane{source, key});
    }
    return it->second;
}

NameId Timeline::name(std::string_view text) {
    if (const auto it = name_index_.find(text); it != name_index_.end()) {
        return it->second;
    }
    const auto id = static_cast<NameId>(names_.size());
    names_.emplace_back(text);
    name_index_.emplace(std::string(text), id);
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
