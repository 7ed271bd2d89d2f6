// The HTML printer: one self-contained page (inline CSS and SVG, no script, nothing fetched) of the
// report model.
#pragma once

#include "cko/util/json.hpp"

#include <string>

namespace cko::report {

// The page. Sections carry stable ids (summary, target, baseline, overview, experiments,
// comparisons, champion, audit, cost, profiles, findings, termination); every comparison is an
// <article class="comparison"> holding exactly one <svg class="effect-chart">; the champion's
// name is in the element with id "champion-name".
[[nodiscard]] std::string render_html(const Json& model);

// "✔ improved", "✘ regressed", ...: a symbol and the word, so that no verdict rests on colour.
[[nodiscard]] std::string verdict_label(const std::string& verdict);

}  // namespace cko::report
