// Baseline vs candidate: launches matched by kernel name and launch order, per-fact deltas.
#pragma once

#include "cko/profile/ncu/ncu_report.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cko::profile::ncu {

struct FactDelta {
    std::string id;
    BaseUnit unit = BaseUnit::count;
    std::optional<double> a;  // absent: the launch in A lacks the fact
    std::optional<double> b;
    // (b - a) / |a| * 100; 0 when both are 0; absent when a is 0 and b is not, or a side lacks it.
    std::optional<double> delta_pct;
};

// The n-th launch of a kernel in A and the n-th launch of the same kernel in B.
struct LaunchPair {
    std::string kernel;
    std::size_t occurrence = 0;  // 0 = the kernel's first launch
    std::size_t a_index = 0;     // index into the report's launches
    std::size_t b_index = 0;
    std::vector<FactDelta> deltas;  // sorted by id
};

struct UnmatchedLaunch {
    char side = 'A';
    std::string kernel;
    std::size_t occurrence = 0;
    std::size_t index = 0;
};

struct NcuDiff {
    std::vector<LaunchPair> pairs;           // in A's launch order
    std::vector<UnmatchedLaunch> unmatched;  // A's first, then B's
};

[[nodiscard]] NcuDiff diff_ncu_reports(const NcuReport& a, const NcuReport& b);
[[nodiscard]] nlohmann::json diff_to_json(const NcuDiff& diff, const NcuReport& a,
                                          const NcuReport& b);

}  // namespace cko::profile::ncu
