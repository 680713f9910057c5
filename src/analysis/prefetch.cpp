#include "analysis/prefetch.hpp"

#include <algorithm>
#include <cstddef>

#include "core/confidence.hpp"
#include "core/stats.hpp"

namespace gpuprobe::analysis::prefetch {

namespace {

/// Where "was there" ends: between the slowest hits and the fastest controls when they do not
/// overlap (hits of a partitioned L2 come near and far, so their median is no midpoint), else
/// between the two medians.
double threshold_between(const std::vector<double>& hits, const std::vector<double>& controls) {
  const double hit_p95 = stats::quantile(hits, 0.95), control_p5 = stats::quantile(controls, 0.05);
  if (hit_p95 < control_p5) return (hit_p95 + control_p5) / 2;
  return (stats::median(hits) + stats::median(controls)) / 2;
}

double fraction_below(const std::vector<double>& v, double threshold) {
  if (v.empty()) return 0.0;
  const auto n = std::count_if(v.begin(), v.end(), [&](double c) { return c < threshold; });
  return static_cast<double>(n) / static_cast<double>(v.size());
}

}  // namespace

LevelVerdict judge_level(const std::vector<StrideSamples>& strides) {
  LevelVerdict v;
  if (strides.empty()) return v;
  v.level = strides.front().level;
  std::vector<double> hits, controls;
  for (const auto& s : strides) {
    hits.insert(hits.end(), s.hits.begin(), s.hits.end());
    controls.insert(controls.end(), s.controls.begin(), s.controls.end());
  }
  if (hits.empty() || controls.empty()) return v;
  v.threshold = threshold_between(hits, controls);
  v.separation = confidence::separation(confidence::separation_z(hits, controls));
  const std::size_t distances = std::size(kDistances);
  for (const auto& s : strides) {
    std::vector<double> fractions, medians;
    for (std::size_t k = 0; k < distances; ++k) {
      std::vector<double> at;
      for (const auto& trial : s.probes)
        if (k < trial.size()) at.push_back(trial[k]);
      fractions.push_back(fraction_below(at, v.threshold));
      medians.push_back(stats::median_or_zero(at));
    }
    // A stride is covered when most trials found its nearest probe there; every nearest probe
    // on that side agrees with the stride's verdict.
    const bool covered = fractions.front() > 0.5;
    for (const auto& trial : s.probes) {
      if (trial.empty()) continue;
      v.probes += 1;
      v.agreeing += (trial.front() < v.threshold) == covered ? 1 : 0;
    }
    if (covered) {
      v.detected = true;
      v.max_stride_bytes = std::max(v.max_stride_bytes, s.stride_bytes);
      for (std::size_t k = 0; k < distances; ++k)
        if (fractions[k] > 0.5) v.max_distance = std::max(v.max_distance, kDistances[k]);
    }
    std::vector<double> late;
    for (const auto& trial : s.trained)
      for (std::size_t i = trial.size() / 2; i < trial.size(); ++i) late.push_back(trial[i]);
    v.fraction_there.emplace_back(s.stride_bytes, fractions);
    v.median_cycles.emplace_back(s.stride_bytes, medians);
    v.trained_late_there.emplace_back(s.stride_bytes, fraction_below(late, v.threshold));
  }
  return v;
}

}  // namespace gpuprobe::analysis::prefetch
