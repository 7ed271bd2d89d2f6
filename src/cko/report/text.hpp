// Numbers and words as people read them in the report and handoff, and the one place text is
// escaped.
#pragma once

#include "cko/stats/paired_estimate.hpp"
#include "cko/util/json.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cko::report {

// A record's text field, "" when it is absent or null (a host without /etc/machine-id records
// machine_id null; a failed comparison has no verdict): the report shows it empty, never throws.
[[nodiscard]] std::string text_of(const Json& record, const char* key);

// Escapes &, <, >, " and ' for HTML text and attribute values.
[[nodiscard]] std::string html_escape(std::string_view text);

// One Markdown table cell: pipes escaped, line breaks turned into spaces, empty as "–".
[[nodiscard]] std::string md_cell(std::string_view text);

// One line of at most `max_chars` bytes (cut at a UTF-8 boundary, "…" added): line breaks become
// spaces. For long driver messages quoted in tables.
[[nodiscard]] std::string one_line(std::string_view text, std::size_t max_chars = 240);

// "none" for a null JSON value, the string itself for a string, a list as words (list_text),
// dump() otherwise.
[[nodiscard]] std::string value_text(const Json& value);

// What a comparison came to: its verdict, else (a cancelled or failed one has none) its state.
[[nodiscard]] std::string verdict_or_state(const Json& comparison);

// A JSON list as people write it: "small, large" (each item by value_text), "none" when empty;
// never `["small","large"]`.
[[nodiscard]] std::string list_text(const Json& list);

// The lines of `text` wrapped at spaces to at most `max_chars` bytes each (a longer word stays
// whole on its own line); line breaks in `text` become spaces. For notes drawn below a chart.
[[nodiscard]] std::vector<std::string> wrap_text(std::string_view text, std::size_t max_chars);

// "+12.3 %", "−4.31 %" (a real minus sign); "–" for a missing (null) value.
[[nodiscard]] std::string pct_text(const Json& pct);
[[nodiscard]] std::string pct_text(double pct);

// "[+492.7 %, +2630.5 %]" from an entry's ci_low_pct / ci_high_pct; "–" when absent.
[[nodiscard]] std::string interval_text(const Json& entry);

// "2.58× faster (−61.3 % latency_us)" for an effect given in percent (exp(d) − 1, positive =
// better) of a metric whose better direction is `direction`; "no estimate" when absent.
[[nodiscard]] std::string effect_words(const Json& pct, stats::Direction direction,
                                       const std::string& metric);

// "12.3 s", "4 min 05 s", "1 h 02 min"; "0 s" for zero.
[[nodiscard]] std::string seconds_text(double seconds);

// "2026-12-01 09:07:42 UTC".
[[nodiscard]] std::string utc_text(std::int64_t unix_s);

}  // namespace cko::report
