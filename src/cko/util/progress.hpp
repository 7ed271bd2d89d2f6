// One step of a long operation, for whoever shows it: a terminal's status line, an MCP client's
// progress notification (progress/total and the running effect), a detached operation's status.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace cko {

struct Progress {
    Progress() = default;
    explicit Progress(std::string status_line) : line(std::move(status_line)) {}

    std::string line;                  // what a person reads; "" clears a terminal's status line
    double done = 0;                   // units done (pairs or calls); fractional inside a pair
    double total = 0;                  // units planned at most; 0 when the step is not counted
    std::string unit;                  // "pairs", "calls"
    std::optional<double> effect_pct;  // the running effect estimate, once a pair is done
    std::optional<double> eta_s;       // seconds left at most, once there is a rate

    [[nodiscard]] bool counted() const { return total > 0; }

    // The line with the running effect and the time left, when there are any.
    [[nodiscard]] std::string text() const {
        std::string out = line;
        if (effect_pct && std::isfinite(*effect_pct)) {
            out += fmt::format("; effect so far {:+.2f} %", *effect_pct);
        }
        if (eta_s && std::isfinite(*eta_s)) {
            out += fmt::format("; at most ~{:.0f} s left", std::max(0.0, *eta_s));
        }
        return out;
    }
};

using ProgressFn = std::function<void(const Progress&)>;

}  // namespace cko
