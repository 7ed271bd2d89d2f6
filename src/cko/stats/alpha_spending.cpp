// Group-sequential boundaries from an alpha-spending function (Armitage–McPherson–Rowe recursion).
#include "cko/stats/alpha_spending.hpp"

#include "cko/stats/normal.hpp"
#include "cko/util/error.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>

namespace cko::stats {
namespace {

// Grid intervals per continuation region (even, for Simpson). The integrands are smooth Gaussian
// mixtures: 100 intervals already reproduce the boundaries to 1e-6 (checked against 1600), far
// below what the discrete rank intervals can resolve.
constexpr std::size_t kMinIntervals = 100;
// Grid spacing relative to the standard deviation of one increment, so the kernel is resolved.
constexpr double kStepsPerIncrementSd = 8.0;
constexpr double kBoundarySearchMax = 40.0;

double normal_density(double x) {
    return std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
}

// Density of the score S_k = Z_k·√t_k on the continuation region (−bound, bound), on an even
// Simpson grid; `weights` already include the Simpson factors and the step.
struct ScoreDensity {
    std::vector<double> points;
    std::vector<double> weighted_density;  // density × Simpson weight
};

std::vector<double> simpson_grid(double bound, double increment_sd, std::vector<double>& weights) {
    auto intervals =
        static_cast<std::size_t>(std::ceil(2.0 * bound / (increment_sd / kStepsPerIncrementSd)));
    intervals = std::max(intervals, kMinIntervals);
    intervals += intervals % 2;
    const double step = 2.0 * bound / static_cast<double>(intervals);
    std::vector<double> points(intervals + 1);
    weights.assign(intervals + 1, 0.0);
    for (std::size_t i = 0; i <= intervals; ++i) {
        points[i] = -bound + step * static_cast<double>(i);
        const double factor = (i == 0 || i == intervals) ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0);
        weights[i] = factor * step / 3.0;
    }
    return points;
}

// P(|S_k| ≥ c·√t_k and the path continued until look k).
double exit_probability(const ScoreDensity& previous, double c, double t, double increment_sd) {
    if (previous.points.empty()) {
        return 2.0 * normal_upper_tail(c);
    }
    const double bound = c * std::sqrt(t);
    double probability = 0.0;
    for (std::size_t i = 0; i < previous.points.size(); ++i) {
        const double u = previous.points[i];
        probability +=
            previous.weighted_density[i] * (normal_upper_tail((bound - u) / increment_sd) +
                                            normal_upper_tail((bound + u) / increment_sd));
    }
    return probability;
}

ScoreDensity carry_density(const ScoreDensity& previous, double c, double t, double increment_sd,
                           double next_increment_sd) {
    ScoreDensity next;
    std::vector<double> weights;
    next.points = simpson_grid(c * std::sqrt(t), next_increment_sd, weights);
    next.weighted_density.resize(next.points.size());
    for (std::size_t i = 0; i < next.points.size(); ++i) {
        const double s = next.points[i];
        double density = 0.0;
        if (previous.points.empty()) {
            density = normal_density(s / std::sqrt(t)) / std::sqrt(t);
        } else {
            for (std::size_t j = 0; j < previous.points.size(); ++j) {
                density += previous.weighted_density[j] *
                           normal_density((s - previous.points[j]) / increment_sd) / increment_sd;
            }
        }
        next.weighted_density[i] = density * weights[i];
    }
    return next;
}

void require_plan(std::span<const double> fractions, std::span<const double> cumulative_alpha) {
    if (fractions.empty() || fractions.size() != cumulative_alpha.size()) {
        throw Error(ErrorCode::invalid_argument,
                    "group-sequential boundaries need one cumulative alpha per look");
    }
    double previous_t = 0.0;
    double previous_alpha = 0.0;
    for (std::size_t k = 0; k < fractions.size(); ++k) {
        if (!(fractions[k] > previous_t && fractions[k] <= 1.0)) {
            throw Error(ErrorCode::invalid_argument,
                        "information fractions must increase within (0, 1]");
        }
        if (!(cumulative_alpha[k] >= previous_alpha && cumulative_alpha[k] < 1.0)) {
            throw Error(ErrorCode::invalid_argument,
                        "cumulative alpha must be non-decreasing and below 1");
        }
        previous_t = fractions[k];
        previous_alpha = cumulative_alpha[k];
    }
}

}  // namespace

double obrien_fleming_spending(double information_fraction, double alpha) {
    if (!(information_fraction > 0.0)) {
        return 0.0;
    }
    const double z = normal_quantile(1.0 - alpha / 2.0);
    // 2 − 2Φ(x) = 2·(1 − Φ(x)), taken from the upper tail to keep early looks' tiny values.
    return 2.0 * normal_upper_tail(z / std::sqrt(std::min(information_fraction, 1.0)));
}

std::vector<double> group_sequential_boundaries(std::span<const double> information_fractions,
                                                std::span<const double> cumulative_alpha) {
    require_plan(information_fractions, cumulative_alpha);
    const std::size_t looks = information_fractions.size();
    std::vector<double> boundaries(looks, std::numeric_limits<double>::infinity());
    ScoreDensity continuing;  // empty before the first look
    double previous_t = 0.0;
    double previous_alpha = 0.0;
    for (std::size_t k = 0; k < looks; ++k) {
        const double t = information_fractions[k];
        const double increment_sd = std::sqrt(t - previous_t);
        const double spend = cumulative_alpha[k] - previous_alpha;
        double c = kBoundarySearchMax;
        if (spend > 0.0) {
            double low = 0.0;
            double high = kBoundarySearchMax;
            for (int iteration = 0; iteration < 100 && high - low > 1e-10; ++iteration) {
                const double mid = 0.5 * (low + high);
                // Exit probability falls as the boundary rises.
                if (exit_probability(continuing, mid, t, increment_sd) > spend) {
                    low = mid;
                } else {
                    high = mid;
                }
            }
            c = 0.5 * (low + high);
            boundaries[k] = c;
        }
        if (k + 1 < looks) {
            const double next_sd = std::sqrt(information_fractions[k + 1] - t);
            continuing = carry_density(continuing, c, t, increment_sd, next_sd);
        }
        previous_t = t;
        previous_alpha = cumulative_alpha[k];
    }
    return boundaries;
}

}  // namespace cko::stats
