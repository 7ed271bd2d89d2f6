// Signed-rank null distribution, Walsh-average selection, Hodges–Lehmann and rank intervals.
#include "cko/stats/signed_rank.hpp"

#include "cko/stats/normal.hpp"
#include "cko/util/error.hpp"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>

namespace cko::stats {
namespace {

// R's qsignrank/qbinom compare the CDF with p − 10·DBL_EPSILON, so a CDF that equals α/2 up to
// rounding counts as reaching it. Same fuzz here, so our depths match R's.
constexpr double kQuantileFuzz = 10.0 * DBL_EPSILON;

void require_sorted_sample(std::span<const double> sorted, const char* what) {
    if (sorted.empty()) {
        throw Error(ErrorCode::invalid_argument, std::string(what) + " needs at least one value");
    }
}

double walsh_average(double a, double b) {
    // Halving first cannot overflow and rounds exactly like (a + b) / 2 otherwise.
    return 0.5 * a + 0.5 * b;
}

// Order-preserving map of doubles onto unsigned integers (−0.0 sorts just below +0.0).
std::uint64_t order_key(double x) {
    const auto bits = std::bit_cast<std::uint64_t>(x);
    return (bits >> 63) != 0 ? ~bits : bits | (std::uint64_t{1} << 63);
}

double from_order_key(std::uint64_t key) {
    const std::uint64_t bits = (key >> 63) != 0 ? key & ~(std::uint64_t{1} << 63) : ~key;
    return std::bit_cast<double>(bits);
}

// Number of Walsh averages ≤ x. Walsh averages grow with either index, so the largest j that
// still qualifies only moves left as i moves right.
std::size_t count_walsh_at_most(std::span<const double> sorted, double x) {
    const std::size_t n = sorted.size();
    std::size_t count = 0;
    std::size_t j = n;  // one past the last qualifying index for the current i
    for (std::size_t i = 0; i < n; ++i) {
        while (j > i && walsh_average(sorted[i], sorted[j - 1]) > x) {
            --j;
        }
        if (j <= i) {
            break;
        }
        count += j - i;
    }
    return count;
}

// Smallest depth k ≥ 1 with cdf(k − 1) < α/2 ≤ cdf(k) (R's quantile convention); cdf(c) is the
// null probability of a statistic ≤ c. Returns the depth and cdf(depth − 1).
template <typename Cdf>
std::pair<std::size_t, double> quantile_depth(double half_alpha, std::size_t largest, Cdf cdf) {
    std::size_t c = 0;
    while (c < largest && cdf(c) < half_alpha - kQuantileFuzz) {
        ++c;
    }
    const std::size_t depth = c == 0 ? 1 : c;
    return {depth, cdf(depth - 1)};
}

bool has_ties(std::span<const double> sorted) {
    for (std::size_t i = 1; i < sorted.size(); ++i) {
        if (sorted[i] == sorted[i - 1]) {
            return true;
        }
    }
    return false;
}

double tie_corrected_signed_rank_sd(std::span<const double> sorted) {
    const auto n = static_cast<double>(sorted.size());
    double variance = n * (n + 1.0) * (2.0 * n + 1.0) / 24.0;
    std::size_t run = 1;
    for (std::size_t i = 1; i <= sorted.size(); ++i) {
        if (i < sorted.size() && sorted[i] == sorted[i - 1]) {
            ++run;
            continue;
        }
        const auto t = static_cast<double>(run);
        variance -= (t * t * t - t) / 48.0;
        run = 1;
    }
    return std::sqrt(variance);
}

}  // namespace

std::vector<double> signed_rank_null_pmf(std::size_t n) {
    const std::size_t max_sum = n * (n + 1) / 2;
    std::vector<double> pmf(max_sum + 1, 0.0);
    pmf[0] = 1.0;
    std::size_t reach = 0;
    for (std::size_t rank = 1; rank <= n; ++rank) {
        reach += rank;
        // Rank `rank` carries a + sign with probability ½: convolve with (1 + x^rank)/2 in place.
        for (std::size_t t = reach; t >= rank; --t) {
            pmf[t] = 0.5 * (pmf[t] + pmf[t - rank]);
        }
        for (std::size_t t = std::min(rank, reach + 1); t-- > 0;) {
            pmf[t] *= 0.5;
        }
    }
    return pmf;
}

double walsh_average_order_statistic(std::span<const double> sorted, std::size_t k) {
    require_sorted_sample(sorted, "walsh_average_order_statistic");
    const std::size_t total = sorted.size() * (sorted.size() + 1) / 2;
    if (k < 1 || k > total) {
        throw Error(ErrorCode::invalid_argument, "Walsh average rank " + std::to_string(k) +
                                                     " is outside 1.." + std::to_string(total));
    }
    std::uint64_t low = order_key(sorted.front());  // count(low) ≥ 1
    std::uint64_t high = order_key(sorted.back());  // count(high) = total ≥ k
    if (count_walsh_at_most(sorted, sorted.front()) >= k) {
        return sorted.front() + 0.0;
    }
    // Invariant: count(from_order_key(low)) < k ≤ count(from_order_key(high)).
    while (high - low > 1) {
        const std::uint64_t mid = low + (high - low) / 2;
        if (count_walsh_at_most(sorted, from_order_key(mid)) >= k) {
            high = mid;
        } else {
            low = mid;
        }
    }
    return from_order_key(high) + 0.0;  // + 0.0 turns a −0.0 into +0.0
}

double hodges_lehmann(std::span<const double> sorted) {
    require_sorted_sample(sorted, "hodges_lehmann");
    const std::size_t total = sorted.size() * (sorted.size() + 1) / 2;
    if (total % 2 == 1) {
        return walsh_average_order_statistic(sorted, (total + 1) / 2);
    }
    return walsh_average(walsh_average_order_statistic(sorted, total / 2),
                         walsh_average_order_statistic(sorted, total / 2 + 1));
}

RankInterval wilcoxon_signed_rank_interval(std::span<const double> sorted, double confidence) {
    require_sorted_sample(sorted, "wilcoxon_signed_rank_interval");
    const std::size_t n = sorted.size();
    const std::size_t total = n * (n + 1) / 2;
    const double half_alpha = (1.0 - confidence) / 2.0;
    RankInterval interval;
    if (n <= kExactSignedRankLimit && !has_ties(sorted)) {
        const std::vector<double> pmf = signed_rank_null_pmf(n);
        std::vector<double> cdf(pmf.size());
        double running = 0.0;
        for (std::size_t t = 0; t < pmf.size(); ++t) {
            running += pmf[t];
            cdf[t] = running;
        }
        const auto [depth, tail] =
            quantile_depth(half_alpha, total, [&](std::size_t c) { return cdf[c]; });
        interval.depth = depth;
        interval.achieved_confidence = 1.0 - 2.0 * tail;
        interval.exact = true;
    } else {
        const double sd = tie_corrected_signed_rank_sd(sorted);
        const double z = normal_quantile(1.0 - half_alpha);
        const double center = static_cast<double>(total) / 2.0;
        const double raw_depth = std::floor(center - z * sd + 0.5);
        interval.depth = raw_depth < 1.0 ? 1 : static_cast<std::size_t>(raw_depth);
        const double below = static_cast<double>(interval.depth) - 0.5 - center;
        interval.achieved_confidence = 1.0 - 2.0 * normal_cdf(below / sd);
        interval.exact = false;
    }
    interval.low = walsh_average_order_statistic(sorted, interval.depth);
    interval.high = walsh_average_order_statistic(sorted, total + 1 - interval.depth);
    return interval;
}

RankInterval sign_test_interval(std::span<const double> sorted, double confidence) {
    require_sorted_sample(sorted, "sign_test_interval");
    const std::size_t n = sorted.size();
    // Binomial(n, ½) CDF, accumulated in log space so that large n does not underflow.
    std::vector<double> cdf(n + 1);
    double log_pmf = -static_cast<double>(n) * std::log(2.0);
    double running = 0.0;
    for (std::size_t c = 0; c <= n; ++c) {
        running += std::exp(log_pmf);
        cdf[c] = running;
        log_pmf += std::log(static_cast<double>(n - c)) - std::log(static_cast<double>(c + 1));
    }
    const double half_alpha = (1.0 - confidence) / 2.0;
    const auto [depth, tail] = quantile_depth(half_alpha, n, [&](std::size_t c) { return cdf[c]; });
    const std::size_t clamped = std::min(depth, (n + 1) / 2);
    RankInterval interval;
    interval.depth = clamped;
    interval.achieved_confidence = 1.0 - 2.0 * (clamped == depth ? tail : cdf[clamped - 1]);
    interval.exact = true;
    interval.low = sorted[clamped - 1];
    interval.high = sorted[n - clamped];
    return interval;
}

}  // namespace cko::stats
