// JSON forms of an NCU report and the counters-not-permitted fact.
#include "cko/profile/ncu/ncu_report.hpp"

#include <algorithm>

namespace cko::profile::ncu {

std::string_view layout_name(NcuLayout layout) noexcept {
    return layout == NcuLayout::raw ? "raw" : "details";
}

const Fact* NcuLaunch::find(std::string_view fact_id) const noexcept {
    const auto it = std::lower_bound(facts.begin(), facts.end(), fact_id,
                                     [](const Fact& f, std::string_view id) { return f.id < id; });
    return it != facts.end() && it->id == fact_id ? &*it : nullptr;
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
    nlohmann::json out{{"section", rule.section},
                       {"name", rule.name},
                       {"type", rule.type},
                       {"description", rule.description}};
    if (!rule.speedup_type.empty()) {
        out["speedup_type"] = rule.speedup_type;
    }
    if (rule.estimated_speedup_pct) {
        out["estimated_speedup_pct"] = *rule.estimated_speedup_pct;
    }
    return out;
}

nlohmann::json launch_to_json(const NcuReport& report, const NcuLaunch& launch) {
    nlohmann::json out = nlohmann::json::object();
    out["id"] = launch.scope.launch_id ? nlohmann::json(*launch.scope.launch_id) : nlohmann::json();
    out["kernel"] = launch.scope.kernel;
    out["grid"] = launch.scope.grid ? nlohmann::json(*launch.scope.grid) : nlohmann::json();
    out["block"] = launch.scope.block ? nlohmann::json(*launch.scope.block) : nlohmann::json();
    out["scope"] = scope_to_json(launch.scope);
    if (launch.process_id) {
        out["process_id"] = *launch.process_id;
    }
    if (!launch.compute_capability.empty()) {
        out["compute_capability"] = launch.compute_capability;
    }
    nlohmann::json facts = nlohmann::json::array();
    std::vector<const Fact*> stalls;
    for (const Fact& f : launch.facts) {
        nlohmann::json j{{"id", f.id},
                         {"value", f.value},
                         {"unit", std::string(base_unit_name(f.unit))},
                         {"metric", f.metric}};
        facts.push_back(std::move(j));
        if (f.id.starts_with("stall.")) {
            stalls.push_back(&f);
        }
    }
    out["facts"] = std::move(facts);
    // The three largest stall reasons, as the report states them (ties: by id).
    std::stable_sort(stalls.begin(), stalls.end(),
                     [](const Fact* a, const Fact* b) { return a->value > b->value; });
    nlohmann::json top = nlohmann::json::array();
    for (std::size_t i = 0; i < stalls.size() && i < 3; ++i) {
        top.push_back({{"id", stalls[i]->id}, {"value", stalls[i]->value}});
    }
    out["top_stalls"] = std::move(top);
    nlohmann::json rules = nlohmann::json::array();
    for (const RuleFinding& r : launch.rules) {
        rules.push_back(rule_to_json(r));
    }
    out["rules"] = std::move(rules);
    nlohmann::json metrics = nlohmann::json::array();
    for (const RawMetric& m : launch.metrics) {
        const MetricKey& key = report.keys[m.key];
        nlohmann::json j{{"name", key.name}, {"unit", report.units[m.unit]}, {"value", m.value}};
        if (!key.section.empty()) {
            j["section"] = key.section;
        }
        metrics.push_back(std::move(j));
    }
    out["metrics"] = std::move(metrics);
    out["unmodeled"] = launch.unmodeled;
    return out;
}

nlohmann::json report_to_json(const NcuReport& report) {
    nlohmann::json out{{"format_version", "cko/ncu-report-v1"},
                       {"source", source_to_json(report.source)},
                       {"layout", std::string(layout_name(report.layout))},
                       {"units_row", report.units_row},
                       {"counters_permitted", report.counters_permitted()},
                       {"other_lines", report.other_lines}};
    if (!report.device_name.empty()) {
        out["device_name"] = report.device_name;
    }
    nlohmann::json launches = nlohmann::json::array();
    for (const NcuLaunch& l : report.launches) {
        launches.push_back(launch_to_json(report, l));
    }
    out["launches"] = std::move(launches);
    nlohmann::json facts = nlohmann::json::array();
    for (const Fact& f : report.report_facts) {
        facts.push_back(fact_to_json(f));
    }
    out["report_facts"] = std::move(facts);
    if (!report.advice.empty()) {
        out["advice"] = report.advice;
    }
    nlohmann::json unmodeled = nlohmann::json::array();
    for (const Unmodeled& u : report.unmodeled) {
        unmodeled.push_back(unmodeled_to_json(u));
    }
    out["unmodeled"] = std::move(unmodeled);
    out["tool_messages"] = report.tool_messages;
    out["notes"] = report.notes;
    return out;
}

}  // namespace cko::profile::ncu
