#pragma once
// Descriptive statistics of repeated measurements.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <vector>

namespace gpuprobe::stats {

struct Summary {
  std::size_t n = 0;
  double min = 0, max = 0, mean = 0, median = 0, p5 = 0, p95 = 0;
  double mad = 0;  ///< median absolute deviation (unscaled)
  double stddev = 0;
};

/// Quantile with linear interpolation between order statistics (q in [0, 1]); empty -> throws.
double quantile(std::vector<double> values, double q);

/// The median (mean of the two middle values for an even count); empty -> throws.
double median(std::vector<double> values);

/// Full summary of a sample; empty -> throws std::invalid_argument.
Summary summarize(const std::vector<double>& values);

/// Relative spread used by the stopping rule: (p95 - p5) / median, or (max - min) / median for
/// n < 5.
double relative_spread(const Summary& s);

nlohmann::json to_json(const Summary& s);

/// Confidence in [0, 1] from a relative spread: 1 at no spread, 0.5 at 2%.
inline double confidence_from_spread(double relative_spread) {
  return 1.0 / (1.0 + relative_spread / 0.02);
}

/// confidence_from_spread of (p95 - p5) / median of a summary as to_json writes it; 0 when the
/// median is not positive.
double spread_confidence(const nlohmann::json& summary);

/// Two classes of a sample by 1-D two-means.
struct TwoMeans {
  bool found = false;             ///< a split with at least min_class values a side exists
  std::vector<double> low, high;  ///< sorted
  double threshold = 0;           ///< midpoint of low.back() and high.front()
};
/// The split that minimises the within-class squared deviation over the sorted values (exact:
/// every boundary is tried), among boundaries that leave at least `min_class` values a side
/// and do not separate equal values (no threshold could).
TwoMeans two_means(std::vector<double> values, std::size_t min_class = 1);

/// Whether a split's classes are two and not one noisy class cut in half: the gap between
/// them (5th percentile of the upper, 95th of the lower) exceeds 3 robust sigmas of each class
/// added, with at least `min_class` values a side.
bool classes_apart(const TwoMeans& split, std::size_t min_class = 3);

/// The values at most `factor` x the sample's median, in their order, and that cap: latencies
/// with a one-off delay on top (a translation miss) left out before two_means, where a few of
/// them would become a class of their own. An empty sample gives an empty one and cap 0.
struct Capped {
  std::vector<double> kept;
  double cap = 0;
};
Capped at_most_median_multiple(const std::vector<double>& values, double factor);

/// The median, or 0 for an empty sample.
inline double median_or_zero(const std::vector<double>& v) { return v.empty() ? 0.0 : median(v); }

}  // namespace gpuprobe::stats
