// Rows → launches → facts, with the unit checks that make a fact trustworthy.
#include "cko/profile/ncu/report_builder.hpp"

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

}  // namespace

ReportBuilder::ReportBuilder(NcuReport& report, const CsvTokenizer& tokenizer)
    : report_(report), tokenizer_(tokenizer) {
    if (!report_.strings) {
        report_.strings = std::make_shared<std::deque<std::string>>();
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
    report_.launches.push_back(std::move(launch));
    launch_slots_.emplace_back();
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
    for (std::size_t m = 0; m < layout.columns.size(); ++m) {
        raw_plain_[m] = keys_[layout.keys[m]].meaning.kind == MetricMeaning::Kind::none &&
                        unit_conversions_[layout.units[m]].has_value();
    }
}

void ReportBuilder::add_raw_row(std::size_t launch, std::span<const std::string_view> cells,
                                const MetricLayout& layout, std::size_t row_offset) {
    report_.launches[launch].metric_count += layout.columns.size();
    if (raw_plain_.size() != layout.columns.size()) {
        set_raw_layout(layout);
    }
    const std::string_view text = report_.text;
    // Values that are views of the text with 8 bytes after their start take the word-wide check.
    const char* const padded_end = text.size() >= 8 ? text.data() + text.size() - 8 : text.data();
    for (std::size_t m = 0; m < layout.columns.size(); ++m) {
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
    std::vector<SlotValue>& slots = launch_slots_[launch];
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

void ReportBuilder::finish() {
    // Every fact id a launch can have, ranked once in id order, so that a launch's facts are
    // sorted by comparing integers, and each id is interned once rather than once per launch
    // (a 100 MB raw page has 25,000 launches of ~60 facts).
    std::vector<std::string_view> ids;
    for (const Slot& slot : slots_) {
        ids.push_back(slot.meaning.fact_id);
    }
    std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>> rule_ranks;
    for (const NcuLaunch& launch : report_.launches) {
        for (const RuleFinding& rule : launch.rules) {
            if (rule.estimated_speedup_pct) {
                rule_ranks.emplace("rule." + rule.name + ".estimated_speedup_pct", 0);
            }
        }
    }
    for (const auto& [id, rank] : rule_ranks) {
        ids.push_back(id);
    }
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    const auto rank_of = [&](std::string_view id) {
        return static_cast<std::uint32_t>(std::lower_bound(ids.begin(), ids.end(), id) -
                                          ids.begin());
    };
    std::vector<std::uint32_t> slot_ranks(slots_.size());
    std::vector<std::string_view> slot_ids(slots_.size());
    for (std::size_t s = 0; s < slots_.size(); ++s) {
        slot_ids[s] = intern(slots_[s].meaning.fact_id);
        slot_ranks[s] = rank_of(slots_[s].meaning.fact_id);
    }
    for (auto& [id, rank] : rule_ranks) {
        rank = rank_of(id);
    }

    struct Ranked {
        std::uint32_t rank = 0;
        LaunchFact fact;
    };
    struct FlopSum {
        std::uint32_t rank = 0;
        std::string_view id;
        double value = 0;
        std::string metrics;  // the metrics summed, in slot order, '+'-joined
    };
    std::vector<Ranked> ranked;
    std::vector<FlopSum> flops;
    // The metrics of a FLOP fact are nearly always the same string launch after launch.
    std::unordered_map<std::string_view, std::string_view> last_flop_metrics;
    std::string rule_id;
    for (std::size_t li = 0; li < report_.launches.size(); ++li) {
        NcuLaunch& launch = report_.launches[li];
        ranked.clear();
        flops.clear();
        const std::vector<SlotValue>& values = launch_slots_[li];
        for (std::size_t s = 0; s < values.size(); ++s) {
            if (!values[s].set) {
                continue;
            }
            const MetricMeaning& m = slots_[s].meaning;
            KeyInfo& key = keys_[values[s].key];
            if (key.description.empty()) {
                key.description = intern(describe(values[s].key));
            }
            if (m.kind == MetricMeaning::Kind::flop) {
                auto sum = std::find_if(flops.begin(), flops.end(),
                                        [&](const FlopSum& f) { return f.id == slot_ids[s]; });
                if (sum == flops.end()) {
                    flops.push_back(FlopSum{slot_ranks[s], slot_ids[s], 0, {}});
                    sum = flops.end() - 1;
                }
                sum->value += values[s].value * m.flop_weight;
                if (!sum->metrics.empty()) {
                    sum->metrics += '+';
                }
                sum->metrics += key.description;
                continue;
            }
            ranked.push_back(Ranked{
                slot_ranks[s], LaunchFact{slot_ids[s], values[s].value, m.unit, key.description}});
        }
        for (const FlopSum& sum : flops) {
            std::string_view& metrics = last_flop_metrics[sum.id];
            if (metrics != sum.metrics) {
                metrics = intern(sum.metrics);
            }
            ranked.push_back(
                Ranked{sum.rank, LaunchFact{sum.id, sum.value, BaseUnit::flop, metrics}});
        }
        for (const RuleFinding& rule : launch.rules) {
            if (!rule.estimated_speedup_pct) {
                continue;
            }
            // Several findings of one rule: the fact is the largest estimate the report states.
            rule_id.assign("rule.").append(rule.name).append(".estimated_speedup_pct");
            const std::uint32_t rank = rule_ranks.find(rule_id)->second;
            const auto it = std::find_if(ranked.begin(), ranked.end(),
                                         [&](const Ranked& r) { return r.rank == rank; });
            if (it == ranked.end()) {
                ranked.push_back(Ranked{
                    rank, LaunchFact{intern(rule_id), *rule.estimated_speedup_pct,
                                     BaseUnit::percent, intern(rule.section + ": " + rule.name)}});
            } else {
                it->fact.value = std::max(it->fact.value, *rule.estimated_speedup_pct);
            }
        }
        std::sort(ranked.begin(), ranked.end(),
                  [](const Ranked& a, const Ranked& b) { return a.rank < b.rank; });
        launch.facts.reserve(ranked.size());
        for (const Ranked& r : ranked) {
            launch.facts.push_back(r.fact);
        }
        std::vector<SlotValue>().swap(launch_slots_[li]);  // done with it: memory back now
    }
}

}  // namespace cko::profile::ncu
