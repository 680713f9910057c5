#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace gpuprobe::stats {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) throw std::invalid_argument("quantile of an empty sample");
  if (q < 0 || q > 1) throw std::invalid_argument("quantile outside [0, 1]");
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

Summary summarize(const std::vector<double>& values) {
  if (values.empty()) throw std::invalid_argument("summary of an empty sample");
  Summary s;
  s.n = values.size();
  auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  s.min = *mn;
  s.max = *mx;
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(s.n);
  s.median = median(values);
  s.p5 = quantile(values, 0.05);
  s.p95 = quantile(values, 0.95);
  std::vector<double> dev(values.size());
  std::transform(values.begin(), values.end(), dev.begin(),
                 [&](double x) { return std::fabs(x - s.median); });
  s.mad = median(dev);
  double ss = 0;
  for (double x : values) ss += (x - s.mean) * (x - s.mean);
  s.stddev = s.n > 1 ? std::sqrt(ss / static_cast<double>(s.n - 1)) : 0.0;
  return s;
}

double relative_spread(const Summary& s) {
  if (s.median == 0) return 0;
  // Below 5 samples p5/p95 are the extremes anyway, and the MAD can be 0 for data that
  // alternates (120, 100, 120): the full range is the honest spread.
  if (s.n < 5) return (s.max - s.min) / std::fabs(s.median);
  return (s.p95 - s.p5) / std::fabs(s.median);
}

nlohmann::json to_json(const Summary& s) {
  return {{"n", s.n},   {"min", s.min}, {"max", s.max}, {"mean", s.mean},    {"median", s.median},
          {"p5", s.p5}, {"p95", s.p95}, {"mad", s.mad}, {"stddev", s.stddev}};
}

double spread_confidence(const nlohmann::json& m) {
  const double med = m.at("median").get<double>();
  if (!(med > 0)) return 0;
  return confidence_from_spread((m.at("p95").get<double>() - m.at("p5").get<double>()) / med);
}

Capped at_most_median_multiple(const std::vector<double>& values, double factor) {
  Capped c;
  if (values.empty()) return c;
  c.cap = factor * median(values);
  for (double v : values)
    if (v <= c.cap) c.kept.push_back(v);
  return c;
}

TwoMeans two_means(std::vector<double> v, std::size_t min_class) {
  TwoMeans s;
  const std::size_t n = v.size();
  min_class = std::max<std::size_t>(min_class, 1);
  if (n < 2 * min_class) return s;
  std::sort(v.begin(), v.end());
  std::vector<double> sum(n + 1, 0), sq(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    sum[i + 1] = sum[i] + v[i];
    sq[i + 1] = sq[i] + v[i] * v[i];
  }
  const auto cost = [&](std::size_t a, std::size_t b) {  // [a, b)
    const double m = static_cast<double>(b - a), t = sum[b] - sum[a];
    return sq[b] - sq[a] - t * t / m;
  };
  std::size_t best = 0;
  double best_cost = 0;
  for (std::size_t k = min_class; k + min_class <= n; ++k) {
    if (v[k] == v[k - 1]) continue;
    const double c = cost(0, k) + cost(k, n);
    if (best == 0 || c < best_cost) {
      best_cost = c;
      best = k;
    }
  }
  if (best == 0) return s;
  s.found = true;
  s.low.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(best));
  s.high.assign(v.begin() + static_cast<std::ptrdiff_t>(best), v.end());
  s.threshold = (s.low.back() + s.high.front()) / 2;
  return s;
}

bool classes_apart(const TwoMeans& split, std::size_t min_class) {
  if (!split.found || split.low.size() < min_class || split.high.size() < min_class) return false;
  const double sd_low = 1.4826 * summarize(split.low).mad;
  const double sd_high = 1.4826 * summarize(split.high).mad;
  const double gap = quantile(split.high, 0.05) - quantile(split.low, 0.95);
  return gap > 3 * (sd_low + sd_high) && gap > 0;
}

}  // namespace gpuprobe::stats
