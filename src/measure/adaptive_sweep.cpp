// The adaptive sweep: measures where the curve's levels and knees are not yet resolved (each
// round judged by analysis::find_levels), so the measuring asks for the points the judging needs.
#include "measure/adaptive_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

namespace gpuprobe::measure {

using analysis::CurvePoint;
using analysis::LevelAnalysis;
using analysis::Plateau;
using analysis::SegmentOptions;
using analysis::SweepOptions;
using analysis::Transition;

namespace {

double align_to(double x, double align) { return std::max(align, std::round(x / align) * align); }

}  // namespace

std::vector<CurvePoint> adaptive_sweep(const MeasureFn& measure, const SweepOptions& sweep,
                                       const SegmentOptions& segment) {
  if (!measure) throw std::invalid_argument("adaptive_sweep: no measure function");
  if (!std::isfinite(sweep.x_min) || !std::isfinite(sweep.x_max) || sweep.x_min <= 0 ||
      sweep.x_max < sweep.x_min) {
    throw std::invalid_argument("adaptive_sweep: need 0 < x_min <= x_max");
  }
  if (!std::isfinite(sweep.align) || sweep.align <= 0) {
    throw std::invalid_argument("adaptive_sweep: align must be positive");
  }
  if (sweep.coarse_per_octave < 1) {
    throw std::invalid_argument("adaptive_sweep: coarse_per_octave must be at least 1");
  }
  if (!(sweep.resolution > 0)) {
    throw std::invalid_argument("adaptive_sweep: resolution must be positive");
  }

  // Measured points by x: each x is measured once, whatever asks for it again.
  std::map<double, CurvePoint> measured;
  auto take = [&](double x) {
    if (measured.count(x) != 0) return;
    CurvePoint p = measure(x);
    p.x = x;  // the sweep owns x (aligned, unique); the measurement supplies y and noise
    measured.emplace(x, p);
  };
  auto sorted_points = [&] {
    std::vector<CurvePoint> v;
    for (const auto& kv : measured) v.push_back(kv.second);
    return v;
  };

  // Coarse grid: an equal log step no wider than 1/coarse_per_octave octave that lands exactly
  // on both ends. The coarse grid is always measured in full; max_points limits refinement.
  const double octaves = std::log2(sweep.x_max / sweep.x_min);
  const int steps =
      std::max(1, static_cast<int>(std::ceil(octaves * sweep.coarse_per_octave - 1e-9)));
  std::set<double> coarse;
  for (int k = 0; k <= steps; ++k) {
    const double x = sweep.x_min * std::pow(sweep.x_max / sweep.x_min, double(k) / steps);
    coarse.insert(align_to(k == steps ? sweep.x_max : x, sweep.align));
  }
  for (double x : coarse) take(x);

  // Gaps wider than half a coarse step around points that are on no plateau get one probe: a
  // narrow level that the coarse grid hit only once, or a plateau the ramp test could not
  // tell from a ramp at coarse spacing, gets the points it needs to be recognised. It stops
  // at half the coarse step, so a long ramp costs about one extra point per coarse point.
  const double probe_ratio = std::pow(2.0, 1.0 / (2.0 * sweep.coarse_per_octave)) * (1 + 1e-9);

  while (measured.size() < sweep.max_points) {
    const std::vector<CurvePoint> pts = sorted_points();
    const LevelAnalysis levels = analysis::find_levels(pts, segment);
    std::set<double> todo;
    auto bisect = [&](double lo, double hi) {
      const double mid = align_to(std::sqrt(lo * hi), sweep.align);
      if (mid > lo && mid < hi && measured.count(mid) == 0) todo.insert(mid);
    };
    for (const Transition& t : levels.transitions) {
      if (t.x_first_off / t.x_last_on - 1.0 > sweep.resolution) {
        const std::size_t before = todo.size();
        bisect(t.x_last_on, t.x_first_off);
        if (todo.size() > before) continue;
        // Else the bracket is as narrow as the alignment allows: resolved.
      }
      // Resolved. The first point off the plateau is trusted only when another point close
      // above it agrees (a lone outlier is skipped by find_levels); when the next point is
      // far away, e.g. the knee sits just below a coarse point, measure one there.
      const auto next = measured.upper_bound(t.x_first_off);
      const double confirm = align_to(t.x_first_off * (1.0 + sweep.resolution), sweep.align);
      const bool near = next != measured.end() && next->first <= confirm * (1.0 + 1e-12);
      if (!near && confirm > t.x_first_off && measured.count(confirm) == 0) todo.insert(confirm);
    }
    if (todo.empty()) {
      std::vector<bool> on_plateau(pts.size(), false);
      for (const Plateau& p : levels.plateaus) {
        for (std::size_t i = p.first; i <= p.last; ++i) on_plateau[i] = true;
      }
      for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
        if (on_plateau[i] && on_plateau[i + 1]) continue;
        if (pts[i + 1].x / pts[i].x > probe_ratio) bisect(pts[i].x, pts[i + 1].x);
      }
    }
    if (todo.empty()) {
      // A level on too few points: one more point in the plateau's widest gap (in log x). A
      // plateau whose widest gap the alignment leaves no room in gets none. A round adds at
      // most one point per such plateau; one that lands on the level completes it, one that
      // does not splits the run (and max_points bounds the sweep in any case).
      for (const Plateau& p : levels.plateaus) {
        if (p.members >= sweep.min_level_points || p.last <= p.first) continue;
        std::size_t widest = p.first;
        for (std::size_t i = p.first; i < p.last; ++i)
          if (pts[i + 1].x / pts[i].x > pts[widest + 1].x / pts[widest].x) widest = i;
        bisect(pts[widest].x, pts[widest + 1].x);
      }
    }
    if (todo.empty()) break;
    for (double x : todo) {
      if (measured.size() >= sweep.max_points) break;
      take(x);
    }
  }
  return sorted_points();
}

}  // namespace gpuprobe::measure
