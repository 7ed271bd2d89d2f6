// The curated semantic layer: which Nsight Compute metric gives which named fact.
#pragma once

#include "cko/profile/fact.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace cko::profile::ncu {

// One way to get a fact. `section` empty: a raw metric name (`--page raw`, `--metrics`, or the
// details page printed with `--print-metric-name name`); otherwise the details page's section and
// display name. Several rows may give one fact id; the earlier row wins when a launch has both.
struct SemanticSource {
    std::string_view fact_id;
    BaseUnit unit;
    std::string_view section;
    std::string_view metric;
};

[[nodiscard]] std::span<const SemanticSource> semantic_sources() noexcept;

// What a metric means to the semantic layer.
struct MetricMeaning {
    enum class Kind { none, direct, stall, flop };
    Kind kind = Kind::none;
    std::size_t source = 0;  // direct: index into semantic_sources() (its priority)
    std::string fact_id;     // direct, stall ("stall.long_scoreboard_pct"), flop ("flop.fp32")
    BaseUnit unit = BaseUnit::count;  // the base unit the metric must convert to (flop: inst)
    double flop_weight = 0;           // flop: FLOP per counted thread instruction (2 for an FMA)
    std::string flop_op;  // flop: "ffma", "hadd", ... (sm__ and smsp__ forms count once)
};

// Classifies (section, metric). Besides the table: the warp-stall family
// `smsp__warp_issue_stalled_<reason>_per_warp_active.pct` → `stall.<reason>_pct`, and the SASS
// thread-instruction family `{sm,smsp}__sass_thread_inst_executed_op_<op>_pred_on.sum` →
// `flop.{fp16,bf16,fp32,fp64}` for add/mul/fma ops.
[[nodiscard]] MetricMeaning classify_metric(std::string_view section, std::string_view metric);

// Parses an NCU number: thousands separators allowed ("1,980,000"), optional sign, fraction and
// exponent. Empty optional for anything else, "n/a" included.
[[nodiscard]] std::optional<double> parse_ncu_number(std::string_view text) noexcept;

// Whether parse_ncu_number gives a value, without computing it: the plain decimals that fill an
// export ("2,230", "52.88", "-1") are checked in one pass, anything else asks parse_ncu_number.
[[nodiscard]] bool is_ncu_number(std::string_view text) noexcept;

// The same for a value inside a larger buffer: the 8 bytes from text.data() must be readable.
// Values of up to 8 bytes (nine in ten on a raw page) are checked a word at a time.
[[nodiscard]] bool is_ncu_number_padded(std::string_view text) noexcept;

// Whether a value is NCU's "not available" placeholder.
[[nodiscard]] bool is_not_available(std::string_view text) noexcept;

}  // namespace cko::profile::ncu
