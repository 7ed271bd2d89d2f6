// Rows → launches → facts, with the unit checks that make a fact trustworthy.
#include "cko/profile/ncu/report_builder.hpp"

#include "cko/profile/ncu/byte_scan.hpp"
#include "cko/util/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <unordered_map>

namespace cko::profile::ncu {
namespace {

// Units that count things: a fact in one of them may be printed in another ("block",
// "register/thread", "warp" and "" all map to count; NCU prints some cycle ratios without a unit).
bool dimensionless(BaseUnit u) {
    return u == BaseUnit::count || u == BaseUnit::cycle || u == BaseUnit::inst ||
           u == BaseUnit::inst_per_cycle || u == BaseUnit::ratio;
}

bool compatible(BaseUnit expected, BaseUnit got) {
    return expected == got || (dimensionless(expected) && dimensionless(got));
}

// Whether fact a comes before fact b: the order of a launch's facts.
constexpr auto by_id = [](const LaunchFact& a, const LaunchFact& b) { return a.id() < b.id(); };

// Sets a launch's facts: its slot facts (sorted by id) and its rule facts (sorted by id), merged
// into the report's arena.
void set_launch_facts(NcuLaunch& launch, HugePageArena& arena, const std::vector<LaunchFact>& facts,
                      const std::vector<LaunchFact>& rules) {
    const std::size_t count = facts.size() + rules.size();
    if (count == 0) {
        launch.facts = {};
        return;
    }
    LaunchFact* const kept = arena.allocate<LaunchFact>(count);
    std::merge(facts.begin(), facts.end(), rules.begin(), rules.end(), kept, by_id);
    launch.facts = std::span<const LaunchFact>(kept, count);
}

}  // namespace

ReportBuilder::ReportBuilder(NcuReport& report, const CsvTokenizer& tokenizer)
    : report_(report), tokenizer_(tokenizer) {
    if (!report_.strings) {
        report_.strings = std::make_shared<std::deque<std::string>>();
    }
    if (!report_.arena) {
        report_.arena = std::make_shared<HugePageArena>();
    }
}

std::string_view ReportBuilder::intern(std::string_view text) {
    if (const auto it = interned_.find(text); it != interned_.end()) {
        return it->second;
    }
    const std::string_view kept = report_.strings->emplace_back(text);  // deque: never moves
    interned_.emplace(std::string(text), kept);
    return kept;
}

std::size_t ReportBuilder::FactNameHash::operator()(const FactNameKey& k) const noexcept {
    const auto mix = [](std::size_t h, std::size_t v) {
        return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
    };
    const std::size_t h = mix(std::hash<const void*>{}(k.id), std::hash<const void*>{}(k.metric));
    return mix(h, static_cast<std::size_t>(k.unit));
}

const FactName* ReportBuilder::fact_name(std::string_view id, std::string_view metric,
                                         BaseUnit unit) {
    const FactNameKey key{id.data(), metric.data(), unit};
    const auto it = fact_names_.find(key);
    if (it != fact_names_.end()) {
        return it->second;
    }
    FactName* const name = report_.arena->allocate<FactName>(1);
    *name = FactName{id, metric, unit};
    fact_names_.emplace(key, name);
    return name;
}

std::uint32_t ReportBuilder::key(std::string_view section, std::string_view name) {
    if (previous_key_ != kNoKey) {
        const std::uint32_t predicted = keys_[previous_key_].next;
        if (predicted != kNoKey && report_.keys[predicted].name == name &&
            report_.keys[predicted].section == section) {
            previous_key_ = predicted;
            return predicted;
        }
    }
    const std::uint32_t id = lookup_key(section, name);
    if (previous_key_ != kNoKey) {
        keys_[previous_key_].next = id;
    }
    previous_key_ = id;
    return id;
}

std::uint32_t ReportBuilder::unit_of(std::uint32_t key, std::string_view text) {
    KeyInfo& info = keys_[key];
    if (info.last_unit != kNoKey && report_.units[info.last_unit] == text) {
        return info.last_unit;
    }
    info.last_unit = unit(text);
    return info.last_unit;
}

std::uint32_t ReportBuilder::lookup_key(std::string_view section, std::string_view name) {
    key_buffer_.assign(section);
    key_buffer_.push_back('\x1f');
    key_buffer_.append(name);
    if (const auto it = key_index_.find(std::string_view(key_buffer_)); it != key_index_.end()) {
        return it->second;
    }
    const auto id = static_cast<std::uint32_t>(keys_.size());
    key_index_.emplace(key_buffer_, id);
    report_.keys.push_back(MetricKey{std::string(section), std::string(name)});
    KeyInfo info;
    info.meaning = classify_metric(section, name);
    if (info.meaning.kind != MetricMeaning::Kind::none) {
        std::string slot_name = info.meaning.fact_id;
        if (info.meaning.kind == MetricMeaning::Kind::flop) {
            slot_name += "/" + info.meaning.flop_op;
        }
        const auto [it, inserted] =
            slot_index_.emplace(slot_name, static_cast<std::uint32_t>(slots_.size()));
        if (inserted) {
            slots_.push_back(Slot{info.meaning});
        }
        info.slot = it->second;
    }
    keys_.push_back(std::move(info));
    return id;
}

std::uint32_t ReportBuilder::unit(std::string_view text) {
    if (const auto it = unit_index_.find(text); it != unit_index_.end()) {
        return it->second;
    }
    const auto id = static_cast<std::uint32_t>(unit_conversions_.size());
    unit_index_.emplace(std::string(text), id);
    report_.units.emplace_back(text);
    unit_conversions_.push_back(lookup_unit(text));
    return id;
}

std::size_t ReportBuilder::add_launch(NcuLaunch launch) {
    HugePageArena* const arena = report_.arena.get();
    launch.metric_rows = ArenaVector<std::uint64_t>(ArenaAllocator<std::uint64_t>(arena));
    launch.metric_keys = ArenaVector<std::uint32_t>(ArenaAllocator<std::uint32_t>(arena));
    launch.metric_units = ArenaVector<std::uint32_t>(ArenaAllocator<std::uint32_t>(arena));
    launch.metric_value_at = ArenaVector<std::uint32_t>(ArenaAllocator<std::uint32_t>(arena));
    report_.launches.push_back(std::move(launch));
    launch_slots_.emplace_back(ArenaAllocator<SlotValue>(
        report_.layout == NcuLayout::details ? report_.arena.get() : nullptr));
    return report_.launches.size() - 1;
}

std::string ReportBuilder::describe(std::uint32_t key) const {
    const MetricKey& k = report_.keys[key];
    return k.section.empty() ? k.name : k.section + ": " + k.name;
}

void ReportBuilder::note_unmodeled(std::size_t launch, std::uint32_t key, std::uint32_t unit,
                                   std::string_view value) {
    NcuLaunch& l = report_.launches[launch];
    ++l.unmodeled;
    KeyInfo& info = keys_[key];
    if (info.listed_unmodeled) {
        return;
    }
    info.listed_unmodeled = true;
    unmodeled_keys_.push_back(key);
    Unmodeled u;
    u.name = describe(key);
    u.unit = report_.units[unit];
    u.value = std::string(value);
    u.scope = l.scope;
    report_.unmodeled.push_back(std::move(u));
}

void ReportBuilder::add_metric(std::size_t launch, std::uint32_t key, std::uint32_t unit,
                               std::string_view value, std::size_t row_offset) {
    ++report_.launches[launch].metric_count;
    add_modeled(launch, key, unit, value, row_offset);
}

void ReportBuilder::set_raw_layout(const MetricLayout& layout) {
    raw_plain_.resize(layout.columns.size());
    raw_special_.clear();
    raw_side_by_side_ = !layout.columns.empty();
    for (std::size_t m = 0; m < layout.columns.size(); ++m) {
        raw_plain_[m] = keys_[layout.keys[m]].meaning.kind == MetricMeaning::Kind::none &&
                        unit_conversions_[layout.units[m]].has_value();
        if (raw_plain_[m] == 0) {
            raw_special_.push_back(static_cast<std::uint32_t>(m));
        }
        raw_side_by_side_ = raw_side_by_side_ && layout.columns[m] == layout.columns.front() + m;
    }
}

void ReportBuilder::note_if_not_number(std::size_t launch, std::uint32_t key, std::uint32_t unit,
                                       std::string_view value) {
    if (!value.empty() && !is_ncu_number(value) && !is_not_available(value)) {
        note_unmodeled(launch, key, unit, value);
    }
}

void ReportBuilder::add_raw_row(std::size_t launch, std::span<const std::string_view> cells,
                                const MetricLayout& layout, std::size_t row_offset, bool plain) {
    report_.launches[launch].metric_count += layout.columns.size();
    if (raw_plain_.size() != layout.columns.size()) {
        set_raw_layout(layout);
    }
    const std::size_t columns = layout.columns.size();
    if (plain && raw_side_by_side_) {
        // One span `"v","v",...,"v"`: only the cells the block check points at are looked at
        // one by one, merged in column order with the columns add_modeled reads (so the report's
        // unmodeled list keeps its order).
        const std::string_view* const metric = cells.data() + layout.columns.front();
        const char* const span = metric[0].data() - 1;
        const std::string_view last = metric[columns - 1];
        const auto size = static_cast<std::size_t>(last.data() + last.size() + 1 - span);
        suspects_.clear();
        const bool checked =
            byte_scan::for_each_number_suspect(span, size, columns, [&](std::size_t at) {
                const char* const c = span + at;
                const std::string_view* const after = std::upper_bound(
                    metric + 1, metric + columns, c,
                    [](const char* x, std::string_view v) { return x < v.data(); });
                const auto m = static_cast<std::uint32_t>(after - 1 - metric);
                if (suspects_.empty() || suspects_.back() != m) {
                    suspects_.push_back(m);
                }
                // On from the next cell's first byte (past `","`).
                return static_cast<std::size_t>(metric[m].data() + metric[m].size() + 3 - span);
            });
        if (!checked) {  // a cell that is just ",": every cell is checked
            suspects_.resize(columns);
            for (std::uint32_t m = 0; m < columns; ++m) {
                suspects_[m] = m;
            }
        }
        std::size_t s = 0;
        const auto check_suspects_before = [&](std::size_t end) {
            for (; s < suspects_.size() && suspects_[s] < end; ++s) {
                const std::uint32_t m = suspects_[s];
                if (raw_plain_[m] != 0) {
                    note_if_not_number(launch, layout.keys[m], layout.units[m], metric[m]);
                }
            }
        };
        for (const std::uint32_t m : raw_special_) {
            check_suspects_before(m);
            add_modeled(launch, layout.keys[m], layout.units[m], metric[m], row_offset);
        }
        check_suspects_before(columns);
        return;
    }
    const std::string_view text = report_.text;
    // Values that are views of the text with 8 bytes after their start take the word-wide check.
    const char* const padded_end = text.size() >= 8 ? text.data() + text.size() - 8 : text.data();
    for (std::size_t m = 0; m < columns; ++m) {
        const std::uint32_t key = layout.keys[m];
        const std::uint32_t unit = layout.units[m];
        const std::string_view value = cells[layout.columns[m]];
        if (raw_plain_[m] != 0) {
            const std::less<const char*> before;  // a total order, also for scratch pointers
            const bool padded =
                !before(value.data(), text.data()) && before(value.data(), padded_end);
            if (!value.empty() && !(padded ? is_ncu_number_padded(value) : is_ncu_number(value)) &&
                !is_not_available(value)) {
                note_unmodeled(launch, key, unit, value);
            }
            continue;
        }
        add_modeled(launch, key, unit, value, row_offset);
    }
}

void ReportBuilder::add_modeled(std::size_t launch, std::uint32_t key, std::uint32_t unit,
                                std::string_view value, std::size_t row_offset) {
    const KeyInfo& info = keys_[key];
    const std::optional<UnitConversion>& conv = unit_conversions_[unit];
    if (info.meaning.kind == MetricMeaning::Kind::none) {
        if (!conv || (!value.empty() && !is_ncu_number(value) && !is_not_available(value))) {
            note_unmodeled(launch, key, unit, value);
        }
        return;
    }
    // A metric the semantic layer computes with: its unit must be one we know.
    if (!conv || !compatible(info.meaning.unit, conv->unit)) {
        const std::size_t line = tokenizer_.line_of(row_offset);
        const std::string& unit_text = report_.units[unit];
        throw Error(ErrorCode::unknown_unit,
                    fmt::format("line {}: metric '{}' has the unit '{}', which is {} (the fact "
                                "'{}' is in {})",
                                line, describe(key), unit_text,
                                conv ? fmt::format("a {} unit", base_unit_name(conv->unit))
                                     : std::string("not in the unit table"),
                                info.meaning.fact_id, base_unit_name(info.meaning.unit)),
                    {{"line", line},
                     {"metric", describe(key)},
                     {"unit", unit_text},
                     {"fact", info.meaning.fact_id}});
    }
    if (value.empty() || is_not_available(value)) {
        return;  // NCU could not give it: no fact, the raw metric keeps the "n/a"
    }
    const std::optional<double> number = parse_ncu_number(value);
    if (!number) {
        const std::size_t line = tokenizer_.line_of(row_offset);
        throw Error(ErrorCode::malformed_input,
                    fmt::format("line {}: metric '{}' has the value '{}', which is not a number",
                                line, describe(key), value),
                    {{"line", line}, {"metric", describe(key)}, {"value", value}});
    }
    ArenaVector<SlotValue>& slots = launch_slots_[launch];
    if (slots.size() < slots_.size()) {
        slots.resize(slots_.size());
    }
    SlotValue& slot = slots[info.slot];
    const std::size_t priority =
        info.meaning.kind == MetricMeaning::Kind::direct ? info.meaning.source : 0;
    if (slot.set && slot.priority <= priority) {
        return;  // an earlier table row (or the first sm__/smsp__ twin) already gave it
    }
    slot = SlotValue{*number * conv->factor, key, static_cast<std::uint16_t>(priority), true};
}

void ReportBuilder::order_slots() {
    // Slots in fact-id order (ties: slot order, so a FLOP fact sums its metrics in the order the
    // semantic layer met them): a launch's facts come out sorted with no sort per launch, and each
    // id is interned once rather than once per launch (a 100 MB raw page has 25,000 launches).
    ordered_slots_.resize(slots_.size());
    for (std::uint32_t s = 0; s < slots_.size(); ++s) {
        ordered_slots_[s] = s;
    }
    std::stable_sort(ordered_slots_.begin(), ordered_slots_.end(),
                     [&](std::uint32_t a, std::uint32_t b) {
                         return slots_[a].meaning.fact_id < slots_[b].meaning.fact_id;
                     });
    slot_ids_.resize(slots_.size());
    for (std::size_t s = 0; s < slots_.size(); ++s) {
        slot_ids_[s] = intern(slots_[s].meaning.fact_id);
    }
}

void ReportBuilder::finish_launch(std::size_t li) {
    if (finished_.size() < launch_slots_.size()) {
        finished_.resize(launch_slots_.size(), 0);
    }
    if (finished_[li] != 0) {
        return;
    }
    finished_[li] = 1;
    if (ordered_slots_.size() != slots_.size()) {
        order_slots();
    }
    NcuLaunch& launch = report_.launches[li];
    std::vector<LaunchFact>& facts = scratch_facts_;
    facts.clear();
    const ArenaVector<SlotValue>& values = launch_slots_[li];
    // A FLOP fact (flop.fp32) sums the slots of its ops, adjacent in ordered_slots_.
    std::string_view flop_id;
    double flop_value = 0;
    std::string& flop_metrics = scratch_metrics_;
    const auto close_flop = [&] {
        if (flop_id.empty()) {
            return;
        }
        // The metrics of a FLOP fact are nearly always the same string launch after launch.
        const FactName*& name = last_flop_name_[flop_id];
        if (name == nullptr || name->metric != flop_metrics) {
            name = fact_name(flop_id, intern(flop_metrics), BaseUnit::flop);
        }
        facts.push_back(LaunchFact{name, flop_value});
        flop_id = {};
    };
    for (const std::uint32_t s : ordered_slots_) {
        if (s >= values.size() || !values[s].set) {
            continue;
        }
        const MetricMeaning& m = slots_[s].meaning;
        KeyInfo& key = keys_[values[s].key];
        if (key.description.empty()) {
            key.description = intern(describe(values[s].key));
        }
        if (m.kind != MetricMeaning::Kind::flop) {
            close_flop();
            if (key.fact == nullptr) {
                key.fact = fact_name(slot_ids_[s], key.description, m.unit);
            }
            facts.push_back(LaunchFact{key.fact, values[s].value});
            continue;
        }
        if (flop_id != slot_ids_[s]) {
            close_flop();
            flop_id = slot_ids_[s];
            flop_value = 0;
            flop_metrics.clear();
        }
        flop_value += values[s].value * m.flop_weight;
        if (!flop_metrics.empty()) {
            flop_metrics += '+';
        }
        flop_metrics += key.description;
    }
    close_flop();
    // Rule facts (details page), sorted by id and merged in.
    set_launch_facts(launch, *report_.arena, facts, rule_facts(launch));
    if (launch.find("duration") == nullptr) {
        ++without_duration_;
    }
    ArenaVector<SlotValue>().swap(launch_slots_[li]);  // done with it: memory back now
}

const FactName* ReportBuilder::rule_fact_name(const RuleFinding& rule, std::size_t i) {
    // Launches of one kernel state the same rules in the same order: the i-th rule's name from
    // the last launch is checked first ("Section: Name" against the two cells), before strings
    // are built and looked up.
    constexpr std::string_view kPrefix = "rule.";
    constexpr std::string_view kSuffix = ".estimated_speedup_pct";
    if (i < recent_rule_names_.size()) {
        // The id gives the name and the metric then the section: "A: B" + "C" and "A" + "B: C"
        // have one metric but two ids.
        const std::string_view id = recent_rule_names_[i]->id;
        const std::string_view metric = recent_rule_names_[i]->metric;
        if (id.size() == kPrefix.size() + rule.name.size() + kSuffix.size() &&
            id.substr(kPrefix.size(), rule.name.size()) == rule.name &&
            metric.size() == rule.section.size() + 2 + rule.name.size() &&
            metric.starts_with(rule.section) && metric.ends_with(rule.name) &&
            metric.substr(rule.section.size(), 2) == ": ") {
            return recent_rule_names_[i];
        }
    } else {
        recent_rule_names_.resize(i + 1);
    }
    rule_id_.assign(kPrefix).append(rule.name).append(kSuffix);
    rule_metric_.assign(rule.section).append(": ").append(rule.name);
    recent_rule_names_[i] = fact_name(intern(rule_id_), intern(rule_metric_), BaseUnit::percent);
    return recent_rule_names_[i];
}

const std::vector<LaunchFact>& ReportBuilder::rule_facts(const NcuLaunch& launch) {
    std::vector<LaunchFact>& rules = scratch_rules_;
    rules.clear();
    std::size_t i = 0;
    for (const RuleFinding& rule : launch.rules) {
        if (!rule.estimated_speedup_pct) {
            continue;
        }
        const FactName* name = rule_fact_name(rule, i++);
        // Several findings of one rule: the fact is the largest estimate the report states.
        const auto it = std::find_if(rules.begin(), rules.end(),
                                     [&](const LaunchFact& f) { return f.id() == name->id; });
        if (it == rules.end()) {
            rules.push_back(LaunchFact{name, *rule.estimated_speedup_pct});
        } else {
            it->value = std::max(it->value, *rule.estimated_speedup_pct);
        }
    }
    std::sort(rules.begin(), rules.end(), by_id);
    return rules;
}

void ReportBuilder::finish() {
    for (std::size_t li = 0; li < launch_slots_.size(); ++li) {
        finish_launch(li);
    }
}

}  // namespace cko::profile::ncu
