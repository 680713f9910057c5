#include "analysis/placement.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuprobe::analysis {

namespace {

/// A level's weight in the fits: 1 / se^2 (se kept above 1e-6).
double weight(const PhiLevel& l) { return 1 / std::max(l.se * l.se, 1e-12); }

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
      double wpm = 0, wmm = 0;
      for (std::size_t i = 0; i < levels.size(); ++i) {
        m[i] = i <= u ? 1.0 : std::pow(d, std::log2(levels[i].block_bytes / levels[u].block_bytes));
        wpm += w[i] * levels[i].phi * m[i];
        wmm += w[i] * m[i] * m[i];
      }
      const double a = wmm > 0 ? wpm / wmm : 0;
      double chi2 = 0;
      for (std::size_t i = 0; i < levels.size(); ++i)
        chi2 += w[i] * (levels[i].phi - a * m[i]) * (levels[i].phi - a * m[i]);
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
  double sw = 0, swp = 0;
  for (const auto& l : levels) {
    sw += weight(l);
    swp += weight(l) * l.phi;
  }
  const double mean = swp / sw;
  for (const auto& l : levels) u.flat_chi2 += weight(l) * (l.phi - mean) * (l.phi - mean);
  return u;
}

double PlacementUnit::z2() const {
  return std::max(0.0, std::min(runner_up.chi2, flat_chi2) - best.chi2);
}

}  // namespace gpuprobe::analysis
