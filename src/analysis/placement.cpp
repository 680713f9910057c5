#include "analysis/placement.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace gpuprobe::analysis {

namespace {

/// A level's weight in the fits: 1 / se^2 (se kept above 1e-6).
double weight(const PhiLevel& l) { return 1 / std::max(l.se * l.se, 1e-12); }

/// phi fitted as a x m (weights w; a in closed form): {a, chi^2}.
std::pair<double, double> scaled_fit(const std::vector<PhiLevel>& levels,
                                     const std::vector<double>& w, const std::vector<double>& m) {
  double wpm = 0, wmm = 0;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    wpm += w[i] * levels[i].phi * m[i];
    wmm += w[i] * m[i] * m[i];
  }
  const double a = wmm > 0 ? wpm / wmm : 0;
  double chi2 = 0;
  for (std::size_t i = 0; i < levels.size(); ++i)
    chi2 += w[i] * (levels[i].phi - a * m[i]) * (levels[i].phi - a * m[i]);
  return {a, chi2};
}

}  // namespace

std::vector<PlacementFit> fit_placement_units(const std::vector<PhiLevel>& levels) {
  std::vector<PlacementFit> fits;
  std::vector<double> w(levels.size()), m(levels.size());
  for (std::size_t i = 0; i < levels.size(); ++i) w[i] = weight(levels[i]);
  for (std::size_t u = 0; u + 2 < levels.size(); ++u) {
    PlacementFit best;
    best.at = u;
    best.chi2 = std::numeric_limits<double>::infinity();
    for (int step = 0; step <= 100; ++step) {
      const double d = step / 100.0;
      for (std::size_t i = 0; i < levels.size(); ++i)
        m[i] = i <= u ? 1.0 : std::pow(d, std::log2(levels[i].block_bytes / levels[u].block_bytes));
      const auto [a, chi2] = scaled_fit(levels, w, m);
      if (chi2 < best.chi2) {
        best.chi2 = chi2;
        best.a = a;
        best.d = d;
      }
    }
    fits.push_back(best);
  }
  return fits;
}

PlacementUnit best_placement_unit(const std::vector<PhiLevel>& levels) {
  PlacementUnit u;
  u.fits = fit_placement_units(levels);
  if (u.fits.size() < 2) return u;
  auto by_chi2 = u.fits;
  std::stable_sort(by_chi2.begin(), by_chi2.end(),
                   [](const PlacementFit& x, const PlacementFit& y) { return x.chi2 < y.chi2; });
  u.found = true;
  u.best = by_chi2[0];
  u.runner_up = by_chi2[1];
  // phi constant over every size: the same fit with m = 1 (a = the weighted mean).
  std::vector<double> w(levels.size());
  for (std::size_t i = 0; i < levels.size(); ++i) w[i] = weight(levels[i]);
  u.flat_chi2 = scaled_fit(levels, w, std::vector<double>(levels.size(), 1.0)).second;
  return u;
}

double PlacementUnit::z2() const {
  return std::max(0.0, std::min(runner_up.chi2, flat_chi2) - best.chi2);
}

}  // namespace gpuprobe::analysis
