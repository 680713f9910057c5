#include "core/confidence.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/stats.hpp"

namespace gpuprobe::confidence {

double median_standard_error(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0.0;
  const stats::Summary s = stats::summarize(samples);
  return 1.2533 * 1.4826 * s.mad / std::sqrt(static_cast<double>(s.n));
}

double precision_from_mad(std::size_t n, double mad, double value, double tolerance) {
  if (n < 3 || value == 0.0 || !std::isfinite(value)) return 0.0;
  const double se = 1.2533 * 1.4826 * mad / std::sqrt(static_cast<double>(n));
  if (se <= 0.0) return 1.0;
  return std::clamp(std::erf(tolerance * std::fabs(value) / (std::sqrt(2.0) * se)), 0.0, 1.0);
}

double precision(const std::vector<double>& samples, double value, double tolerance) {
  if (samples.size() < 3) return 0.0;
  return precision_from_mad(samples.size(), stats::summarize(samples).mad, value, tolerance);
}

double precision_of_summary(const nlohmann::json& summary, double tolerance) {
  if (!summary.contains("n") || !summary.contains("mad") || !summary.contains("median")) return 0.0;
  return precision_from_mad(summary.at("n").get<std::size_t>(), summary.at("mad").get<double>(),
                            summary.at("median").get<double>(), tolerance);
}

double separation(double z) {
  if (!(z > 0.0)) return 0.0;
  return std::clamp(std::erf(z / (2.0 * std::sqrt(2.0))), 0.0, 1.0);
}

double separation_z(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return 0.0;
  const double d = std::fabs(stats::median(a) - stats::median(b));
  const double se = std::hypot(median_standard_error(a), median_standard_error(b));
  if (se <= 0.0) return d > 0.0 ? std::numeric_limits<double>::infinity() : 0.0;
  return d / se;
}

double agreement(std::size_t agreeing, std::size_t trials) {
  if (trials == 0) return 0.0;
  const double n = static_cast<double>(trials);
  const double p = static_cast<double>(std::min(agreeing, trials)) / n;
  const double z = 1.6449;  // two-sided 90 %
  const double centre = p + z * z / (2 * n);
  const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n));
  return std::clamp((centre - half) / (1 + z * z / n), 0.0, 1.0);
}

double combine(std::initializer_list<double> factors) {
  double c = 1.0;
  for (double f : factors) c *= std::isfinite(f) ? f : 0.0;
  return std::clamp(c, 0.0, 1.0);
}

}  // namespace gpuprobe::confidence
