// The standard normal distribution: CDF, upper tail and quantile (Acklam + Halley refinement).
#include "cko/stats/normal.hpp"

#include "cko/util/error.hpp"

#include <array>
#include <cmath>
#include <numbers>
#include <string>

namespace cko::stats {

double normal_cdf(double x) {
    return 0.5 * std::erfc(-x / std::numbers::sqrt2);
}

double normal_upper_tail(double x) {
    return 0.5 * std::erfc(x / std::numbers::sqrt2);
}

namespace {

// Acklam's coefficients (relative error below 1.15e-9 before refinement).
constexpr std::array<double, 6> kA = {-3.969683028665376e+01, 2.209460984245205e+02,
                                      -2.759285104469687e+02, 1.383577518672690e+02,
                                      -3.066479806614716e+01, 2.506628277459239e+00};
constexpr std::array<double, 5> kB = {-5.447609879822406e+01, 1.615858368580409e+02,
                                      -1.556989798598866e+02, 6.680131188771972e+01,
                                      -1.328068155288572e+01};
constexpr std::array<double, 6> kC = {-7.784894002430293e-03, -3.223964580411365e-01,
                                      -2.400758277161838e+00, -2.549732539343734e+00,
                                      4.374664141464968e+00,  2.938163982698783e+00};
constexpr std::array<double, 4> kD = {7.784695709041462e-03, 3.224671290700398e-01,
                                      2.445134137142996e+00, 3.754408661907416e+00};

double acklam_quantile(double p) {
    constexpr double kLowRegion = 0.02425;
    if (p < kLowRegion || p > 1.0 - kLowRegion) {
        const double tail = p < kLowRegion ? p : 1.0 - p;
        const double q = std::sqrt(-2.0 * std::log(tail));
        const double x =
            (((((kC[0] * q + kC[1]) * q + kC[2]) * q + kC[3]) * q + kC[4]) * q + kC[5]) /
            ((((kD[0] * q + kD[1]) * q + kD[2]) * q + kD[3]) * q + 1.0);
        return p < kLowRegion ? x : -x;
    }
    const double q = p - 0.5;
    const double r = q * q;
    return (((((kA[0] * r + kA[1]) * r + kA[2]) * r + kA[3]) * r + kA[4]) * r + kA[5]) * q /
           (((((kB[0] * r + kB[1]) * r + kB[2]) * r + kB[3]) * r + kB[4]) * r + 1.0);
}

}  // namespace

double normal_quantile(double p) {
    if (!(p > 0.0 && p < 1.0)) {
        throw Error(ErrorCode::invalid_argument,
                    "normal quantile needs a probability strictly between 0 and 1, got " +
                        std::to_string(p));
    }
    double x = acklam_quantile(p);
    // One Halley step on Φ(x) − p; the residual is taken on the side of the smaller tail.
    const double residual = p < 0.5 ? normal_cdf(x) - p : (1.0 - p) - normal_upper_tail(x);
    const double u = residual * std::sqrt(2.0 * std::numbers::pi) * std::exp(0.5 * x * x);
    x -= u / (1.0 + 0.5 * x * u);
    return x;
}

}  // namespace cko::stats
