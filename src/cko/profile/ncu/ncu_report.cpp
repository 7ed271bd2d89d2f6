// NCU report access: fact lookup, metrics read back from the text, the counters-not-permitted fact.
#include "cko/profile/ncu/ncu_report.hpp"

#include "cko/profile/ncu/csv_tokenizer.hpp"

#include <algorithm>
#include <sstream>

namespace cko::profile::ncu {

std::string_view layout_name(NcuLayout layout) noexcept {
    return layout == NcuLayout::raw ? "raw" : "details";
}

const LaunchFact* NcuLaunch::find(std::string_view fact_id) const noexcept {
    const auto it =
        std::lower_bound(facts.begin(), facts.end(), fact_id,
                         [](const LaunchFact& f, std::string_view id) { return f.id() < id; });
    return it != facts.end() && it->id() == fact_id ? &*it : nullptr;
}

Fact NcuLaunch::to_fact(const LaunchFact& fact) const {
    return Fact{std::string(fact.id()), fact.value, fact.unit(), scope, std::string(fact.metric())};
}

void for_each_metric(const NcuReport& report, const NcuLaunch& launch,
                     const std::function<void(const MetricView&)>& fn) {
    if (report.text.empty() || launch.metric_rows.empty()) {
        return;
    }
    // The text was tokenized once already; limits were checked then.
    CsvTokenizer tokenizer(report.text, CsvLimits{report.text.size() + 1});
    CsvRow row;
    const MetricLayout& layout = report.metric_layout;
    const auto cell = [&](std::size_t i) {
        return i < row.cells.size() ? row.cells[i] : std::string_view();
    };
    for (std::size_t r = 0; r < launch.metric_rows.size(); ++r) {
        tokenizer.seek(static_cast<std::size_t>(launch.metric_rows[r]));
        if (!tokenizer.next(row)) {
            return;
        }
        if (report.layout == NcuLayout::raw) {
            for (std::size_t m = 0; m < layout.columns.size(); ++m) {
                const MetricKey& key = report.keys[layout.keys[m]];
                fn(MetricView{key.section, key.name, report.units[layout.units[m]],
                              cell(layout.columns[m]), layout.keys[m], layout.units[m]});
            }
        } else {
            const bool indexed = r < launch.metric_keys.size() && r < launch.metric_units.size();
            fn(MetricView{layout.has_section ? cell(layout.section) : std::string_view(),
                          cell(layout.name), cell(layout.unit), cell(layout.value),
                          indexed ? launch.metric_keys[r] : 0,
                          indexed ? launch.metric_units[r] : 0});
        }
    }
}

bool NcuReport::counters_permitted() const noexcept {
    return std::none_of(report_facts.begin(), report_facts.end(),
                        [](const Fact& f) { return f.id == kCountersNotPermitted; });
}

std::string counters_not_permitted_advice() {
    return "NCU was refused access to the GPU performance counters (ERR_NVGPUCTRPERM), so this "
           "collection holds no counter values. Record the NCU version, the command, its exit code "
           "and this error, treat the counters as unavailable, and use timing, Nsight Systems, "
           "PyTorch profiler, compiler or SASS evidence instead. Access is granted by the "
           "machine's "
           "administrator (see https://developer.nvidia.com/ERR_NVGPUCTRPERM); cko never changes "
           "driver settings.";
}

void mark_counters_not_permitted(NcuReport& report) {
    if (!report.counters_permitted()) {
        return;
    }
    Fact fact;
    fact.id = std::string(kCountersNotPermitted);
    fact.value = 1;
    fact.unit = BaseUnit::count;
    fact.metric = "ERR_NVGPUCTRPERM";
    report.report_facts.push_back(std::move(fact));
    report.advice = counters_not_permitted_advice();
}

nlohmann::json rule_to_json(const RuleFinding& rule) {
    nlohmann::json out{{"section", std::string(rule.section)},
                       {"name", std::string(rule.name)},
                       {"type", std::string(rule.type)},
                       {"description", std::string(rule.description)}};
    if (!rule.speedup_type.empty()) {
        out["speedup_type"] = std::string(rule.speedup_type);
    }
    if (rule.estimated_speedup_pct) {
        out["estimated_speedup_pct"] = *rule.estimated_speedup_pct;
    }
    return out;
}

nlohmann::json report_to_json(const NcuReport& report) {
    std::ostringstream out;
    write_report_json(report, out);
    return nlohmann::json::parse(out.str());
}

nlohmann::json launch_to_json(const NcuReport& report, const NcuLaunch& launch) {
    const auto index = static_cast<std::size_t>(&launch - report.launches.data());
    return report_to_json(report)["launches"][index];
}

}  // namespace cko::profile::ncu
