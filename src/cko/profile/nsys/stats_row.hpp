// One row of an `nsys stats` summary, computed exactly and printed the way nsys prints it.
#pragma once

#include "cko/util/json.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cko::profile::nsys {

// nsys computes these with SQLite (sum, count, avg, median, min, max, sample stdev) and
// round(x, 1). Here every rounded column is an integer number of tenths, computed from the
// integer durations exactly and rounded half away from zero, so the CSV text matches nsys.
struct StatsRow {
    std::string name;
    std::string style;  // nvtx_sum only ("PushPop" / "StartEnd")
    std::int64_t total_ns = 0;
    std::int64_t count = 0;
    std::int64_t min_ns = 0;
    std::int64_t max_ns = 0;
    std::int64_t avg_tenths = 0;
    std::int64_t med_tenths = 0;     // mean of the two middle values for an even count
    std::int64_t stddev_tenths = 0;  // sample standard deviation (n − 1); 0 for one value
    std::optional<std::int64_t> time_percent_tenths;  // of the report's grand total

    [[nodiscard]] Json to_json() const;
};

// Sorts `durations` in place and fills every column but time_percent_tenths.
[[nodiscard]] StatsRow summarize_durations(std::string name, std::vector<std::int64_t>& durations);

// Time (%) = round(total * 100 / sum of totals, 1); nullopt (an empty CSV cell) when the sum is 0.
void fill_time_percent(std::vector<StatsRow>& rows);

// 1234 tenths → "123.4", -5 → "-0.5".
[[nodiscard]] std::string format_tenths(std::int64_t tenths);

// round(numerator / denominator) half away from zero; denominator > 0.
[[nodiscard]] std::int64_t rounded_quotient(std::int64_t numerator, std::int64_t denominator);

}  // namespace cko::profile::nsys
