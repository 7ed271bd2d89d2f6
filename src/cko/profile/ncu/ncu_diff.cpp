// Report diff: pairing by (kernel name, occurrence) and relative deltas per fact.
#include "cko/profile/ncu/ncu_diff.hpp"

#include <cmath>
#include <map>

namespace cko::profile::ncu {
namespace {

// For each launch, how many earlier launches had the same kernel name.
std::vector<std::size_t> occurrences(const NcuReport& report) {
    std::map<std::string, std::size_t> seen;
    std::vector<std::size_t> out;
    out.reserve(report.launches.size());
    for (const NcuLaunch& l : report.launches) {
        out.push_back(seen[l.scope.kernel]++);
    }
    return out;
}

std::optional<double> relative_delta(double a, double b) {
    if (a == 0) {
        return b == 0 ? std::optional<double>(0.0) : std::nullopt;
    }
    return (b - a) / std::fabs(a) * 100.0;
}

std::vector<FactDelta> fact_deltas(const NcuLaunch& a, const NcuLaunch& b) {
    std::map<std::string, FactDelta> by_id;
    for (const LaunchFact& f : a.facts) {
        FactDelta& d = by_id[std::string(f.id())];
        d.id = f.id();
        d.unit = f.unit();
        d.a = f.value;
    }
    for (const LaunchFact& f : b.facts) {
        FactDelta& d = by_id[std::string(f.id())];
        d.id = f.id();
        d.unit = f.unit();
        d.b = f.value;
    }
    std::vector<FactDelta> out;
    out.reserve(by_id.size());
    for (auto& [id, d] : by_id) {
        if (d.a && d.b) {
            d.delta_pct = relative_delta(*d.a, *d.b);
        }
        out.push_back(std::move(d));
    }
    return out;
}

nlohmann::json optional_number(const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json launch_id(const NcuReport& report, std::size_t index) {
    const auto& id = report.launches[index].scope.launch_id;
    return id ? nlohmann::json(*id) : nlohmann::json();
}

}  // namespace

NcuDiff diff_ncu_reports(const NcuReport& a, const NcuReport& b) {
    const std::vector<std::size_t> occ_a = occurrences(a);
    const std::vector<std::size_t> occ_b = occurrences(b);
    std::map<std::pair<std::string, std::size_t>, std::size_t> index_b;
    for (std::size_t i = 0; i < b.launches.size(); ++i) {
        index_b.emplace(std::pair{b.launches[i].scope.kernel, occ_b[i]}, i);
    }
    NcuDiff diff;
    std::vector<bool> b_matched(b.launches.size(), false);
    for (std::size_t i = 0; i < a.launches.size(); ++i) {
        const std::string& kernel = a.launches[i].scope.kernel;
        const auto it = index_b.find(std::pair{kernel, occ_a[i]});
        if (it == index_b.end()) {
            diff.unmatched.push_back(UnmatchedLaunch{'A', kernel, occ_a[i], i});
            continue;
        }
        b_matched[it->second] = true;
        diff.pairs.push_back(LaunchPair{kernel, occ_a[i], i, it->second,
                                        fact_deltas(a.launches[i], b.launches[it->second])});
    }
    for (std::size_t i = 0; i < b.launches.size(); ++i) {
        if (!b_matched[i]) {
            diff.unmatched.push_back(UnmatchedLaunch{'B', b.launches[i].scope.kernel, occ_b[i], i});
        }
    }
    return diff;
}

nlohmann::json diff_to_json(const NcuDiff& diff, const NcuReport& a, const NcuReport& b) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const LaunchPair& p : diff.pairs) {
        nlohmann::json deltas = nlohmann::json::array();
        for (const FactDelta& d : p.deltas) {
            deltas.push_back({{"id", d.id},
                              {"unit", std::string(base_unit_name(d.unit))},
                              {"a", optional_number(d.a)},
                              {"b", optional_number(d.b)},
                              {"delta_pct", optional_number(d.delta_pct)}});
        }
        pairs.push_back({{"kernel", p.kernel},
                         {"occurrence", p.occurrence},
                         {"a_launch_id", launch_id(a, p.a_index)},
                         {"b_launch_id", launch_id(b, p.b_index)},
                         {"deltas", std::move(deltas)}});
    }
    nlohmann::json unmatched = nlohmann::json::array();
    for (const UnmatchedLaunch& u : diff.unmatched) {
        const NcuReport& r = u.side == 'A' ? a : b;
        unmatched.push_back({{"side", std::string(1, u.side)},
                             {"kernel", u.kernel},
                             {"occurrence", u.occurrence},
                             {"launch_id", launch_id(r, u.index)}});
    }
    return {{"format_version", "cko/ncu-diff-v1"},
            {"a", source_to_json(a.source)},
            {"b", source_to_json(b.source)},
            {"pairs", std::move(pairs)},
            {"unmatched", std::move(unmatched)}};
}

}  // namespace cko::profile::ncu
