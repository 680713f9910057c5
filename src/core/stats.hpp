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

}  // namespace gpuprobe::stats
