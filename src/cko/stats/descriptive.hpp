// Descriptive statistics of one sample vector: median, MAD, standard deviation, CV.
#pragma once

#include <span>

namespace cko::stats {

// Every function here throws invalid_argument on an empty input or a non-finite value.

// The middle value; the mean of the two middle values for an even count.
[[nodiscard]] double median(std::span<const double> values);

// Median absolute deviation from the median, unscaled (multiply by 1.4826 for a normal-consistent
// estimate of the standard deviation; see robust_sd).
[[nodiscard]] double mad(std::span<const double> values);

// 1.4826 · MAD: estimates the standard deviation of normal data, unmoved by a few outliers.
[[nodiscard]] double robust_sd(std::span<const double> values);

// Arithmetic mean.
[[nodiscard]] double mean(std::span<const double> values);

// Sample standard deviation (n − 1 denominator); needs at least 2 values.
[[nodiscard]] double sample_sd(std::span<const double> values);

// Coefficient of variation, sample_sd / mean; needs at least 2 values and a positive mean
// (it describes times, throughputs and other positive quantities).
[[nodiscard]] double cv(std::span<const double> values);

// Throws invalid_argument naming `what` unless every value is finite.
void require_finite(std::span<const double> values, const char* what);

}  // namespace cko::stats
