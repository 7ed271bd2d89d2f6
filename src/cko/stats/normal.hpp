// The standard normal distribution: CDF, upper tail and quantile, as the statistics layer needs
// them.
#pragma once

namespace cko::stats {

// Φ(x), the standard normal CDF.
[[nodiscard]] double normal_cdf(double x);

// 1 − Φ(x), computed without cancellation so that far tails (x = 6) keep their digits.
[[nodiscard]] double normal_upper_tail(double x);

// Φ⁻¹(p) for p in (0, 1): Acklam's rational approximation refined by one Halley step, which
// brings it to about 1e-15 relative accuracy. Throws invalid_argument outside (0, 1).
[[nodiscard]] double normal_quantile(double p);

}  // namespace cko::stats
