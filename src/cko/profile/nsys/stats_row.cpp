// Exact count/total/avg/median/stdev rows in tenths, as `nsys stats` reports print them.
#include "cko/profile/nsys/stats_row.hpp"

#include "cko/util/error.hpp"

#include <algorithm>
#include <cmath>

namespace cko::profile::nsys {
namespace {

__extension__ typedef __int128 i128;  // exact sums of squares

// No real interval lasts 2^56 ns (2.3 years). Within it every tenths value of a row (a median
// of two, a deviation of 10·2^57) fits int64, and exact sums of squares fit i128 below.
constexpr std::int64_t kMaxDurationNs = std::int64_t{1} << 56;

[[noreturn]] void damaged(const std::string& name, const std::string& what) {
    throw Error(ErrorCode::malformed_input,
                "'" + name + "': " + what +
                    "; the export is damaged (re-export it with nsys export --type sqlite)",
                {{"name", name}});
}

// round(sqrt(q / d)) half up, for q >= 0, d > 0, decided exactly with integers:
// t is right iff d(2t−1)² <= 4q < d(2t+1)².
std::int64_t rounded_sqrt_quotient(i128 q, i128 d) {
    const long double approx = std::sqrt(static_cast<long double>(q) / static_cast<long double>(d));
    auto t = static_cast<std::int64_t>(std::llround(approx));
    const auto square = [](std::int64_t odd) { return static_cast<i128>(odd) * odd; };
    while (t > 0 && d * square(2 * t - 1) > 4 * q) {
        --t;
    }
    while (d * square(2 * t + 1) <= 4 * q) {
        ++t;
    }
    return t;
}

std::int64_t rounded_quotient_wide(i128 numerator, i128 denominator) {
    const bool negative = numerator < 0;
    const i128 n = negative ? -numerator : numerator;
    const i128 q = (2 * n + denominator) / (2 * denominator);
    return static_cast<std::int64_t>(negative ? -q : q);
}

}  // namespace

std::int64_t rounded_quotient(std::int64_t numerator, std::int64_t denominator) {
    return rounded_quotient_wide(numerator, denominator);
}

std::string format_tenths(std::int64_t tenths) {
    const bool negative = tenths < 0;
    const std::uint64_t magnitude =
        negative ? 0 - static_cast<std::uint64_t>(tenths) : static_cast<std::uint64_t>(tenths);
    std::string out = negative ? "-" : "";
    out += std::to_string(magnitude / 10);
    out += '.';
    out += static_cast<char>('0' + magnitude % 10);
    return out;
}

StatsRow summarize_durations(std::string name, std::vector<std::int64_t>& durations) {
    StatsRow row;
    row.name = std::move(name);
    std::sort(durations.begin(), durations.end());
    const std::size_t n = durations.size();
    row.count = static_cast<std::int64_t>(n);
    if (n == 0) {
        return row;
    }
    if (durations.front() < -kMaxDurationNs || durations.back() > kMaxDurationNs) {
        const std::int64_t worst =
            durations.front() < -kMaxDurationNs ? durations.front() : durations.back();
        damaged(row.name,
                "a duration of " + std::to_string(worst) + " ns is outside ±2^56 ns (2.3 years)");
    }
    // The exact deviation multiplies n·Σx² by 400 and n(n−1) by a square near 4q: it is taken
    // while n·Σx² <= 2^116 (1e6 values of 4 minutes each), in long double past that.
    const i128 squares_limit = (static_cast<i128>(1) << 116) / static_cast<i128>(n);
    i128 sum = 0;
    i128 sum_squares = 0;
    bool squares_fit = true;
    for (const std::int64_t d : durations) {
        sum += d;
        if (squares_fit) {
            sum_squares += static_cast<i128>(d) * d;
            squares_fit = sum_squares <= squares_limit;
        }
    }
    if (sum > INT64_MAX || sum < INT64_MIN) {
        damaged(row.name, std::to_string(n) + " durations sum past 2^63 ns");
    }
    row.total_ns = static_cast<std::int64_t>(sum);
    row.min_ns = durations.front();
    row.max_ns = durations.back();
    row.avg_tenths = rounded_quotient_wide(sum * 10, static_cast<i128>(n));
    row.med_tenths =
        n % 2 == 1 ? durations[n / 2] * 10 : (durations[n / 2 - 1] + durations[n / 2]) * 5;
    if (n > 1) {
        const i128 nn = static_cast<i128>(n);
        if (squares_fit) {
            // variance * 100 = 100 (n Σx² − (Σx)²) / (n (n − 1))
            row.stddev_tenths =
                rounded_sqrt_quotient(100 * (nn * sum_squares - sum * sum), nn * (nn - 1));
        } else {
            long double mean = static_cast<long double>(sum) / static_cast<long double>(n);
            long double acc = 0;
            for (const std::int64_t d : durations) {
                acc += (d - mean) * (d - mean);
            }
            row.stddev_tenths = static_cast<std::int64_t>(
                std::llround(10 * std::sqrt(acc / static_cast<long double>(n - 1))));
        }
    }
    return row;
}

void fill_time_percent(std::vector<StatsRow>& rows) {
    i128 grand = 0;
    for (const auto& r : rows) {
        grand += r.total_ns;
    }
    for (auto& r : rows) {
        r.time_percent_tenths =
            grand == 0
                ? std::nullopt
                : std::optional(rounded_quotient_wide(static_cast<i128>(r.total_ns) * 1000, grand));
    }
}

Json StatsRow::to_json() const {
    const auto tenths = [](std::int64_t t) { return static_cast<double>(t) / 10.0; };
    Json j{{"time_percent", time_percent_tenths ? Json(tenths(*time_percent_tenths)) : Json()},
           {"total_ns", total_ns},
           {"count", count},
           {"avg_ns", tenths(avg_tenths)},
           {"med_ns", tenths(med_tenths)},
           {"min_ns", min_ns},
           {"max_ns", max_ns},
           {"stddev_ns", tenths(stddev_tenths)},
           {"name", name}};
    if (!style.empty()) {
        j["style"] = style;
    }
    return j;
}

}  // namespace cko::profile::nsys
