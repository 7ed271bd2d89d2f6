// Rows → launches → facts: interns metric names and units, applies the semantic layer once per
// metric name, and turns chosen values into facts at the end.
#pragma once

#include "cko/profile/ncu/csv_tokenizer.hpp"
#include "cko/profile/ncu/ncu_metrics.hpp"
#include "cko/profile/ncu/ncu_report.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cko::profile::ncu {

class ReportBuilder {
public:
    ReportBuilder(NcuReport& report, const CsvTokenizer& tokenizer);

    [[nodiscard]] std::uint32_t key(std::string_view section, std::string_view name);
    [[nodiscard]] std::uint32_t unit(std::string_view text);
    // The unit of a key's metric, usually the same unit as that key's previous row.
    [[nodiscard]] std::uint32_t unit_of(std::uint32_t key, std::string_view text);

    // Appends a launch and returns its index.
    std::size_t add_launch(NcuLaunch launch);

    // Keeps one metric of a launch and feeds the semantic layer. `row_offset` locates errors.
    void add_metric(std::size_t launch, std::uint32_t key, std::uint32_t unit,
                    std::string_view value, std::size_t row_offset);

    // The raw page's columns (their keys and units) that add_raw_row reads: called again when the
    // units row changes them; add_raw_row calls it for a layout of another width.
    void set_raw_layout(const MetricLayout& layout);
    // Keeps the metrics of one raw-page row (every metric column of `layout`). The same as
    // add_metric per column, with the common column (not used by the semantic layer, a known
    // unit) needing only to be known a number: a raw page has ~550 of them per launch. `plain`:
    // the row is CsvRow::plain, so when the metric columns sit side by side their cells are one
    // span of quoted cells, checked 64 bytes at a time (byte_scan::for_each_number_suspect) and
    // only the cells it points at checked one by one.
    void add_raw_row(std::size_t launch, std::span<const std::string_view> cells,
                     const MetricLayout& layout, std::size_t row_offset, bool plain = false);

    // Builds one launch's facts (sorted by id) once its rows are all read, and frees what they
    // were built from: a raw page's launch is done after its one row, so a raw import never holds
    // more than one launch's slot values. Later calls for that launch do nothing.
    void finish_launch(std::size_t launch);
    // Builds the facts of every launch added here not built yet.
    void finish();

    // Whether a metric's unmodeled entry is listed (NcuReport::unmodeled lists each once), and the
    // keys of the entries listed here, in order.
    [[nodiscard]] bool listed_unmodeled(std::uint32_t key) const noexcept {
        return key < keys_.size() && keys_[key].listed_unmodeled;
    }
    [[nodiscard]] const std::vector<std::uint32_t>& unmodeled_keys() const noexcept {
        return unmodeled_keys_;
    }
    // How many of the launches built here have no duration fact, counted as each is built (the
    // facts are in cache then; a pass over every launch at the end cost ~2 ms on a 100 MB page).
    [[nodiscard]] std::size_t without_duration() const noexcept { return without_duration_; }

    // A string kept in the report (NcuReport::strings) for LaunchFacts to view, stored once.
    [[nodiscard]] std::string_view intern(std::string_view text);
    // A fact's name kept in the report's arena, stored once per (id, metric, unit); `id` and
    // `metric` are interned strings (intern), so they are told apart by their addresses.
    [[nodiscard]] const FactName* fact_name(std::string_view id, std::string_view metric,
                                            BaseUnit unit);

private:
    struct StringHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept {
            return std::hash<std::string_view>{}(s);
        }
    };
    using Index = std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>>;

    struct KeyInfo {
        MetricMeaning meaning;
        std::uint32_t slot = 0;
        bool listed_unmodeled = false;
        // Details pages repeat one sequence of metrics per launch: the key that followed this one
        // last time is checked before hashing (kNoKey: none yet).
        std::uint32_t next = kNoKey;
        std::uint32_t last_unit = kNoKey;
        std::string_view description;    // interned describe(key), once a fact needs it
        const FactName* fact = nullptr;  // the name of the fact it gives (not a FLOP one)
    };
    static constexpr std::uint32_t kNoKey = 0xffffffffU;
    // One fact a launch can have (a flop slot is one op of one precision).
    struct Slot {
        MetricMeaning meaning;
    };
    // 16 bytes: one per fact slot per launch until finish() (a 100 MB raw page has 10^7).
    struct SlotValue {
        double value = 0;
        std::uint32_t key = 0;
        std::uint16_t priority = 0;
        bool set = false;
    };

    void add_modeled(std::size_t launch, std::uint32_t key, std::uint32_t unit,
                     std::string_view value, std::size_t row_offset);
    [[nodiscard]] std::uint32_t lookup_key(std::string_view section, std::string_view name);
    [[nodiscard]] std::string describe(std::uint32_t key) const;  // "Section: Name" or name
    void note_unmodeled(std::size_t launch, std::uint32_t key, std::uint32_t unit,
                        std::string_view value);

    NcuReport& report_;
    const CsvTokenizer& tokenizer_;
    Index key_index_;
    Index unit_index_;
    Index slot_index_;
    std::string key_buffer_;
    std::uint32_t previous_key_ = kNoKey;
    std::vector<KeyInfo> keys_;
    std::vector<std::optional<UnitConversion>> unit_conversions_;
    std::vector<Slot> slots_;
    // A raw page's launch is finished after its row, so its slot values go back to the heap for
    // the next; a details page's live until finish() and are drawn on the report's arena.
    std::vector<ArenaVector<SlotValue>> launch_slots_;
    void order_slots();
    // A launch's rule facts (details page), sorted by id: per rule, the largest estimated speedup
    // its findings state. The vector is scratch, valid until the next launch.
    const std::vector<LaunchFact>& rule_facts(const NcuLaunch& launch);
    // The name of the fact of a launch's i-th rule with an estimated speedup.
    const FactName* rule_fact_name(const RuleFinding& rule, std::size_t i);
    std::vector<const FactName*> recent_rule_names_;  // the last launch's, by rule number
    std::vector<std::uint32_t> ordered_slots_;        // slot indices by fact id (order_slots)
    std::vector<std::string_view> slot_ids_;          // interned fact id of each slot
    std::vector<std::uint8_t> finished_;              // per launch: facts built
    // Per FLOP fact id, the name its last launch had (its metrics are nearly always the same).
    std::unordered_map<std::string_view, const FactName*> last_flop_name_;
    // An interned string is known by its address alone (one copy per content).
    struct FactNameKey {
        const char* id = nullptr;
        const char* metric = nullptr;
        BaseUnit unit = BaseUnit::count;
        bool operator==(const FactNameKey&) const = default;
    };
    struct FactNameHash {
        std::size_t operator()(const FactNameKey& k) const noexcept;
    };
    std::unordered_map<FactNameKey, const FactName*, FactNameHash> fact_names_;
    std::vector<LaunchFact> scratch_facts_;
    std::vector<LaunchFact> scratch_rules_;
    std::string scratch_metrics_;
    std::string rule_id_;
    std::string rule_metric_;  // scratch: "Section: Name" of a rule fact
    // Raw page, per metric column: 1 where the semantic layer does not use the metric and its
    // unit is known, so the value needs only a number check (set_raw_layout).
    std::vector<std::uint8_t> raw_plain_;
    std::vector<std::uint32_t> raw_special_;  // the other metric columns, in order
    bool raw_side_by_side_ = false;           // the metric columns are consecutive
    std::vector<std::uint32_t> suspects_;     // scratch: columns whose value may be no number
    void note_if_not_number(std::size_t launch, std::uint32_t key, std::uint32_t unit,
                            std::string_view value);
    std::unordered_map<std::string, std::string_view, StringHash, std::equal_to<>> interned_;
    std::vector<std::uint32_t> unmodeled_keys_;
    std::size_t without_duration_ = 0;
};

}  // namespace cko::profile::ncu
