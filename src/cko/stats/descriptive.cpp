// Descriptive statistics of one sample vector: median, MAD, standard deviation, CV.
#include "cko/stats/descriptive.hpp"

#include "cko/util/error.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace cko::stats {
namespace {

// 1/Φ⁻¹(3/4): makes the MAD a consistent estimator of σ for normal data.
constexpr double kMadToSd = 1.4826;

void require_values(std::span<const double> values, const char* what, std::size_t at_least) {
    if (values.size() < at_least) {
        throw Error(ErrorCode::invalid_argument, std::string(what) + " needs at least " +
                                                     std::to_string(at_least) + " value(s), got " +
                                                     std::to_string(values.size()));
    }
    require_finite(values, what);
}

double median_in_place(std::vector<double>& values) {
    const std::size_t half = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(half),
                     values.end());
    const double upper = values[half];
    if (values.size() % 2 == 1) {
        return upper;
    }
    const double lower =
        *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(half));
    return 0.5 * lower + 0.5 * upper;
}

}  // namespace

void require_finite(std::span<const double> values, const char* what) {
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (!std::isfinite(values[i])) {
            throw Error(ErrorCode::invalid_argument,
                        std::string(what) + ": value " + std::to_string(i) + " is not finite",
                        {{"index", i}});
        }
    }
}

double median(std::span<const double> values) {
    require_values(values, "median", 1);
    std::vector<double> copy(values.begin(), values.end());
    return median_in_place(copy);
}

double mad(std::span<const double> values) {
    require_values(values, "mad", 1);
    const double center = median(values);
    std::vector<double> deviations;
    deviations.reserve(values.size());
    for (const double v : values) {
        deviations.push_back(std::fabs(v - center));
    }
    return median_in_place(deviations);
}

double robust_sd(std::span<const double> values) {
    return kMadToSd * mad(values);
}

double mean(std::span<const double> values) {
    require_values(values, "mean", 1);
    double sum = 0.0;
    for (const double v : values) {
        sum += v;
    }
    return sum / static_cast<double>(values.size());
}

double sample_sd(std::span<const double> values) {
    require_values(values, "sample_sd", 2);
    const double center = mean(values);
    double sum_squares = 0.0;
    for (const double v : values) {
        sum_squares += (v - center) * (v - center);
    }
    return std::sqrt(sum_squares / static_cast<double>(values.size() - 1));
}

double cv(std::span<const double> values) {
    require_values(values, "cv", 2);
    const double center = mean(values);
    if (!(center > 0.0)) {
        throw Error(ErrorCode::invalid_argument,
                    "cv needs a positive mean (times, throughputs), got " + std::to_string(center));
    }
    return sample_sd(values) / center;
}

}  // namespace cko::stats
