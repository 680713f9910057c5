#pragma once
// Finding structure in a measured curve: plateaus (cache levels) and the transitions between
// them (capacities), by change-point segmentation. Pure host code.
#include <cstddef>
#include <string>
#include <vector>

namespace gpuprobe::analysis {

/// One measured point: x (e.g. working set in bytes), y (e.g. median cycles per load) and the
/// point's own noise (e.g. the MAD of its repetitions, same unit as y; 0 if unknown).
struct CurvePoint {
  double x = 0;
  double y = 0;
  double noise = 0;
};

struct SegmentOptions {
  /// Two neighbouring levels are one level unless their difference is at least this many
  /// standard errors of their medians (from the curve's robust noise, never taken below a third
  /// of rel_tolerance per point): 3.3 is where confidence::separation reaches 0.9.
  double min_separation_z = 3.3;
  /// A point belongs to a plateau when |y - level| <= max(rel_tolerance * level, noise_k * noise).
  double rel_tolerance = 0.025;
  double noise_k = 4.0;
  /// A plateau needs at least this many points.
  std::size_t min_plateau_points = 2;
};

/// A run of consecutive points (indices first..last, inclusive, into the sorted curve) at one
/// level.
struct Plateau {
  std::size_t first = 0, last = 0;
  double level = 0;  ///< median y of its points
  double noise = 0;  ///< robust spread (MAD) of its points
  double x_min = 0, x_max = 0;
  /// The points the level is the median of (those within the level's band; at most last -
  /// first + 1). core/confidence.hpp's precision needs three: a level of two has precision 0.
  std::size_t members = 0;
  /// core/confidence.hpp: the precision of the level (its points' median) times its
  /// separation from the neighbouring levels (see Transition::confidence).
  double confidence = 0;
};

/// The boundary between plateau `below` and the next one: the curve leaves the lower plateau
/// somewhere in (x_last_on, x_first_off].
struct Transition {
  std::size_t below = 0;   ///< index into plateaus
  double x_last_on = 0;    ///< largest x still on the lower plateau
  double x_first_off = 0;  ///< smallest larger x that is off it
  double estimate = 0;     ///< the capacity: x_last_on (the largest working set that still fits)
  double level_below = 0, level_above = 0;
  /// core/confidence.hpp: separation of the two levels times the precision of the bracket.
  /// Separation: z = |ln level_above - ln level_below| / sqrt(s_below^2 + s_above^2), s the
  /// per-point spread of a plateau (1.4826 MAD / level) in quadrature with rel_tolerance / 2 (a
  /// point within rel_tolerance counts as on a level, so the finder allows that much deviation,
  /// as two sigma, on one level): a 3 % step is weak (about 0.6) however quiet the curve, a step
  /// of 2x certain, and every step less certain as the noise rises. Bracket precision: the capacity
  /// lies anywhere in (x_last_on, x_first_off], so the chance that it lies within kDefaultTolerance
  /// of the estimate, min(1, ln(1 + tol) / ln(x_first_off / x_last_on)).
  double confidence = 0;
  double step_separation = 0;  ///< the separation factor of `confidence` alone
};

/// The precision of a knee bracketed by [last_on, first_off]: min(1, ln(1 + tol) / ln(first_off
/// / last_on)), tol = confidence::kDefaultTolerance; 1 for an empty bracket.
double bracket_precision(double last_on, double first_off);

struct LevelAnalysis {
  std::vector<Plateau> plateaus;        ///< sorted by x
  std::vector<Transition> transitions;  ///< transitions[i] is between plateaus[i] and [i+1]
  std::string method;                   ///< a short description for the findings' "method"
};

/// Segments a curve (any order; it is sorted by x) into plateaus and transitions.
LevelAnalysis find_levels(std::vector<CurvePoint> points, const SegmentOptions& options = {});

struct SweepOptions {
  double x_min = 1024;
  double x_max = 256.0 * 1024 * 1024;
  int coarse_per_octave = 2;  ///< coarse log-spaced points per doubling
  double resolution = 0.01;  ///< stop refining a transition when x_first_off / x_last_on - 1 < this
  std::size_t max_points = 150;
  double align = 128;  ///< every measured x is a multiple of this
  /// A plateau whose level rests on fewer points than this (e.g. a short level between two
  /// knees, hit by two coarse points) gets a point in its widest gap, so that its level is
  /// measured rather than its confidence left at zero (core/confidence.hpp's precision needs
  /// three points).
  std::size_t min_level_points = 3;
};

}  // namespace gpuprobe::analysis
