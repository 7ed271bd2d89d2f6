// The Markdown printer of the report model (terminals, PR comments): the same sections as the HTML
// page.
#pragma once

#include "cko/util/json.hpp"

#include <string>

namespace cko::report {

[[nodiscard]] std::string render_markdown(const Json& model);

// A one-line text picture of an interval against the band, e.g. "|····[==◆==]··|····|····" (40
// columns; '|' at −m, 0 and +m): for terminals, where no SVG is drawn.
[[nodiscard]] std::string interval_strip(const Json& entry, double minimum_effect_pct,
                                         double lo_log, double hi_log);

}  // namespace cko::report
