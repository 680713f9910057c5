#include "analysis/levels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/confidence.hpp"
#include "core/stats.hpp"

namespace gpuprobe::analysis {
namespace {

// The MAD of a normal sample times this estimates its standard deviation.
constexpr double kMadToSigma = 1.4826;
// Penalty per extra segment, in units of sigma^2 * ln(n): BIC charges ~ln(n) per parameter and
// a change point costs two (its position and the new level); 3 leaves a margin against the
// heavy tails of real timing noise. Over-segmentation is cheap anyway (close levels are merged
// afterwards); missing a real step is not.
constexpr double kPenaltyPerSegment = 3.0;
// Without this floor the penalty of a noiseless curve would be zero and every point would be
// its own segment; a third of the tolerance keeps steps below the tolerance unsplit.
constexpr double kSigmaFloorFractionOfTolerance = 1.0 / 3.0;
// Ramp test (see is_ramp): a run is a plateau only if its slope, plus this many standard
// errors, stays below this fraction of the slope across it.
constexpr double kRampSlopeErrors = 2.0;
constexpr double kRampFractionOfBothSides = 0.5;
constexpr double kRampFractionOfSteeperSide = 0.25;
// Shortest baseline (log x) over which the surroundings' slope is measured: a quarter octave.
constexpr double kRampMinBaseline = 0.25 * 0.69314718055994531;
// Points at a plateau's ends beyond this band around its weighted median (half the tolerance
// or 1.5 sigma of the noise), on the side of the rise, are left out of its level.
constexpr double kLevelBandFractionOfTolerance = 0.5;
constexpr double kLevelBandSigmas = 1.5;
// The robust standard error of a median is this times sigma / sqrt(n) (asymptotic efficiency of
// the median of a normal sample, sqrt(pi / 2)).
constexpr double kMedianEfficiency = 1.2533;
// For the confidence only: a plateau's per-point spread is judged together with (in quadrature)
// rel_tolerance / kToleranceSigmas (a point within rel_tolerance is on the level: two sigma).
constexpr double kToleranceSigmas = 2.0;

// Median of values with positive weights: the value below and above which half the weight lies
// (the midpoint of the two middle values on an exact tie, as the plain median does).
double weighted_median(std::vector<std::pair<double, double>> vw) {
  std::sort(vw.begin(), vw.end());  // a copy: the caller's order (by x) is kept
  double total = 0;
  for (const auto& p : vw) total += p.second;
  const double half = 0.5 * total;
  double cum = 0;
  for (std::size_t i = 0; i < vw.size(); ++i) {
    cum += vw[i].second;
    if (std::fabs(cum - half) <= 1e-12 * total && i + 1 < vw.size()) {
      return 0.5 * (vw[i].first + vw[i + 1].first);
    }
    if (cum > half) return vw[i].first;
  }
  return vw.back().first;
}

double mad_of(const std::vector<double>& v, double center) {
  std::vector<double> dev(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) dev[i] = std::fabs(v[i] - center);
  return stats::median(std::move(dev));
}

struct Run {
  std::size_t first = 0, last = 0;
};

// The sorted curve with its logs; everything below works on indices into it.
class Curve {
 public:
  Curve(std::vector<CurvePoint> points, const SegmentOptions& options)
      : p_(std::move(points)), opt_(options) {
    std::stable_sort(p_.begin(), p_.end(),
                     [](const CurvePoint& a, const CurvePoint& b) { return a.x < b.x; });
    u_.reserve(p_.size());
    z_.reserve(p_.size());
    for (const CurvePoint& q : p_) {
      u_.push_back(std::log(q.x));
      z_.push_back(std::log(q.y));
    }
    // Point-to-point differences are noise on the plateaus and large only at the few steps, so
    // their median is a robust noise estimate (a difference of two points has sqrt(2) sigma).
    std::vector<double> diffs;
    for (std::size_t i = 1; i < z_.size(); ++i) diffs.push_back(std::fabs(z_[i] - z_[i - 1]));
    sigma_ = diffs.empty() ? 0.0 : kMadToSigma * stats::median(diffs) / std::sqrt(2.0);
    if (!z_.empty() && z_.back() < z_.front()) rise_ = -1;
  }

  std::size_t size() const { return p_.size(); }

  // How many standard errors apart the levels of two sets of points are, in log y. The noise
  // is the curve's robust estimate, never below the floor the segmentation uses (a noiseless
  // model curve would otherwise split at any difference).
  double step_z(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) const {
    const double s = std::max(sigma_, sigma_floor());
    const double se =
        kMedianEfficiency * s *
        std::sqrt(1.0 / static_cast<double>(a.size()) + 1.0 / static_cast<double>(b.size()));
    return std::fabs(std::log(level(a)) - std::log(level(b))) / se;
  }
  bool one_level(const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) const {
    return step_z(a, b) < opt_.min_separation_z;
  }
  double sigma() const { return sigma_; }
  double sigma_floor() const {
    return kSigmaFloorFractionOfTolerance * std::log1p(opt_.rel_tolerance);
  }
  const CurvePoint& point(std::size_t i) const { return p_[i]; }

  double tolerance(std::size_t i, double level) const {
    return std::max(opt_.rel_tolerance * std::fabs(level), opt_.noise_k * p_[i].noise);
  }
  bool within(std::size_t i, double level) const {
    return std::fabs(p_[i].y - level) <= tolerance(i, level);
  }

  // The level of a set of points (sorted by x). Bisection packs points around every knee, and
  // the start of a gradual rise is still within tolerance there; a plain median of them would
  // creep up the rise (and the next bisection would put even more points there). So first a
  // median with each point weighted by the stretch of log x it stands for (halfway to its
  // neighbours in the set; an end point as much outwards as inwards): the level of the curve,
  // not of where it was sampled most. That one only marks the end points that belong to the
  // rise; the level is the plain median of the others.
  double level(const std::vector<std::size_t>& members) const {
    const std::size_t m = members.size();
    std::vector<std::pair<double, double>> vw;
    const double span = u_[members.back()] - u_[members.front()];
    for (std::size_t k = 0; k < m; ++k) {
      double w = 1.0;
      if (m > 1) {
        const double left = k > 0 ? u_[members[k]] - u_[members[k - 1]] : -1.0;
        const double right = k + 1 < m ? u_[members[k + 1]] - u_[members[k]] : -1.0;
        w = 0.5 * ((left < 0 ? right : left) + (right < 0 ? left : right));
        w = std::max(w, 1e-9 * span + 1e-300);  // repeated x: still counts a little
      }
      vw.emplace_back(p_[members[k]].y, w);
    }
    const double center = weighted_median(vw);
    // Only the marking uses the weights: on a noisy plateau the dense points are as good as
    // any, and a median dominated by two or three coarse points would be needlessly noisy.
    const double band =
        std::max(kLevelBandFractionOfTolerance * opt_.rel_tolerance, kLevelBandSigmas * sigma_) *
        std::fabs(center);
    std::size_t lo = 0, hi = m;
    while (hi - lo > 1 && rise_ * (vw[hi - 1].first - center) > band) --hi;
    while (hi - lo > 1 && rise_ * (center - vw[lo].first) > band) ++lo;
    std::vector<double> core;
    for (std::size_t k = lo; k < hi; ++k) core.push_back(vw[k].first);
    return stats::median(std::move(core));
  }
  double level(const Run& r) const { return level(indices(r)); }
  static std::vector<std::size_t> indices(const Run& r) {
    std::vector<std::size_t> v;
    for (std::size_t i = r.first; i <= r.last; ++i) v.push_back(i);
    return v;
  }

  // Optimal partitioning of log(y) into constant pieces: minimise the sum of squared residuals
  // plus a penalty per segment, exactly, by dynamic programming over the end of the last
  // segment (O(n^2), negligible for the few hundred points a sweep has).
  std::vector<Run> segment() const {
    const std::size_t n = z_.size();
    const double s = std::max(sigma_, sigma_floor());
    const double penalty =
        kPenaltyPerSegment * s * s * std::log(std::max(static_cast<double>(n), 3.0));
    // Prefix sums of the centred values keep the SSE differences accurate.
    double mean = 0;
    for (double v : z_) mean += v / static_cast<double>(n);
    std::vector<double> s1(n + 1, 0.0), s2(n + 1, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
      const double c = z_[i] - mean;
      s1[i + 1] = s1[i] + c;
      s2[i + 1] = s2[i] + c * c;
    }
    auto sse = [&](std::size_t b, std::size_t e) {  // points [b, e)
      const double m = static_cast<double>(e - b);
      const double d1 = s1[e] - s1[b];
      return std::max(0.0, (s2[e] - s2[b]) - d1 * d1 / m);
    };
    std::vector<double> best(n + 1, 0.0);
    std::vector<std::size_t> start(n + 1, 0);
    best[0] = -penalty;
    for (std::size_t e = 1; e <= n; ++e) {
      best[e] = std::numeric_limits<double>::infinity();
      for (std::size_t b = 0; b < e; ++b) {
        const double c = best[b] + sse(b, e) + penalty;
        if (c < best[e]) {
          best[e] = c;
          start[e] = b;
        }
      }
    }
    std::vector<Run> runs;
    for (std::size_t e = n; e > 0; e = start[e]) runs.push_back({start[e], e - 1});
    std::reverse(runs.begin(), runs.end());
    return runs;
  }

  // Merges neighbours whose levels do not differ significantly (step_z below
  // min_separation_z), least significant pair first, so that a run of small noise-driven
  // splits collapses back into its level.
  std::vector<Run> merge_close(std::vector<Run> runs) const {
    while (runs.size() > 1) {
      std::size_t best_i = 0;
      double best_z = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i + 1 < runs.size(); ++i) {
        const double z = step_z(indices(runs[i]), indices(runs[i + 1]));
        if (z < best_z) {
          best_z = z;
          best_i = i;
        }
      }
      if (best_z >= opt_.min_separation_z) break;
      runs[best_i].last = runs[best_i + 1].last;
      runs.erase(runs.begin() + static_cast<std::ptrdiff_t>(best_i) + 1);
    }
    return runs;
  }

  // The parts of a segment that are flat within tolerance: if the point farthest from the
  // median is out of tolerance it cannot belong to the level; drop it and look at both sides
  // again. At a segment's ends this sheds the foot or top of a ramp; inside it cuts at an
  // outlier (the pieces are joined again later if their levels agree).
  void flat_parts(std::size_t first, std::size_t last, std::vector<Run>& out) const {
    const double lvl = level(Run{first, last});
    std::size_t worst = first;
    double worst_excess = -std::numeric_limits<double>::infinity();
    for (std::size_t i = first; i <= last; ++i) {
      const double excess = std::fabs(p_[i].y - lvl) / std::max(tolerance(i, lvl), 1e-300);
      if (excess > worst_excess) {
        worst_excess = excess;
        worst = i;
      }
    }
    if (worst_excess <= 1.0) {
      out.push_back({first, last});
      return;
    }
    if (worst > first) flat_parts(first, worst - 1, out);
    if (worst < last) flat_parts(worst + 1, last, out);
  }

  // A flat run inside a smooth rise (y = hit * L_hit + (1 - hit) * L_miss rises over a factor
  // of 2 or more in x) can pass the tolerance test where the rise is slow, and noise or dense
  // bisection points make short runs look flat anywhere. So a run must show that it is flatter
  // than its surroundings: its least-squares slope (log y against log x), even pushed up by
  // two standard errors, must stay below half the slopes on both sides of it, or below a
  // quarter of the steeper side (the middle level of a smooth curve is approached gently from
  // one side but left steeply on the other). A real plateau passes once it spans enough x,
  // however gentle the rises around it; a piece of a ramp has about the slope of its
  // surroundings, and a tight cluster of points cannot show anything. A run with no rise into
  // it or out of it is not inside a ramp (the ends of the curve, or a bump beside a level).
  bool is_ramp(const std::vector<std::size_t>& members) const {
    const std::size_t first = members.front(), last = members.back();
    const double n = static_cast<double>(members.size());
    double mu = 0, mz = 0;
    for (std::size_t i : members) {
      mu += u_[i] / n;
      mz += z_[i] / n;
    }
    double sxy = 0, sxx = 0;
    for (std::size_t i : members) {
      sxy += (u_[i] - mu) * (z_[i] - mz);
      sxx += (u_[i] - mu) * (u_[i] - mu);
    }
    const double fit = sxx > 0 ? sxy / sxx : 0.0;
    const double slope = rise_ * fit;
    const double start = mz + fit * (u_[first] - mu);
    const double end = mz + fit * (u_[last] - mu);
    // The surroundings' slope is taken over a baseline of half the run's span (at least a
    // quarter octave): across a real plateau's step that is steep whatever the step's shape,
    // along a ramp it is the ramp's slope, and it is long enough that the noise of the single
    // point at its far end does not dominate. A side where the curve ends sooner is no
    // evidence either way.
    const double base = std::max(0.5 * (u_[last] - u_[first]), kRampMinBaseline);
    double left = -1, right = -1;
    for (std::size_t i = first; i-- > 0;) {
      if (u_[first] - u_[i] >= base) {
        left = rise_ * (start - z_[i]) / (u_[first] - u_[i]);
        break;
      }
    }
    for (std::size_t j = last + 1; j < p_.size(); ++j) {
      if (u_[j] - u_[last] >= base) {
        right = rise_ * (z_[j] - end) / (u_[j] - u_[last]);
        break;
      }
    }
    if (left <= 0 || right <= 0) return false;
    if (sxx <= 0) return true;  // all at one x: no evidence of flatness
    const double slope_error = sigma_ / std::sqrt(sxx);
    const double worst_case = slope + kRampSlopeErrors * slope_error;
    const bool flatter_than_both = worst_case < kRampFractionOfBothSides * std::min(left, right);
    const bool flatter_than_steep_side =
        worst_case < kRampFractionOfSteeperSide * std::max(left, right);
    return !flatter_than_both && !flatter_than_steep_side;
  }

 private:
  std::vector<CurvePoint> p_;
  SegmentOptions opt_;
  std::vector<double> u_, z_;
  double sigma_ = 0;
  double rise_ = 1;  // +1 if the curve rises overall (latency curves do), -1 if it falls
};

Plateau make_plateau(const Curve& c, std::size_t first, std::size_t last,
                     const std::vector<std::size_t>& members) {
  Plateau p;
  p.first = first;
  p.last = last;
  p.level = c.level(members);
  std::vector<double> ys;
  for (std::size_t i : members) ys.push_back(c.point(i).y);
  p.noise = mad_of(ys, p.level);
  p.members = members.size();
  p.x_min = c.point(first).x;
  p.x_max = c.point(last).x;
  return p;
}

void validate_points(const std::vector<CurvePoint>& points) {
  if (points.empty()) throw std::invalid_argument("find_levels: the curve has no points");
  for (const CurvePoint& p : points) {
    if (!std::isfinite(p.x) || !std::isfinite(p.y) || !std::isfinite(p.noise)) {
      throw std::invalid_argument("find_levels: a point is not finite");
    }
    // Segmentation works on log x and log y (relative tolerance, log-spaced sweeps).
    if (p.x <= 0 || p.y <= 0) {
      throw std::invalid_argument("find_levels: x and y must be positive");
    }
  }
}

/// Step 6 of find_levels, the transitions: from the end of each plateau, walk up while the curve
/// is still on it; `step_separation[k]` is how well plateaus k and k + 1 are told apart.
std::vector<Transition> find_transitions(const Curve& curve, const std::vector<Plateau>& plateaus,
                                         const std::vector<double>& step_separation) {
  std::vector<Transition> transitions;
  for (std::size_t k = 0; k + 1 < plateaus.size(); ++k) {
    const Plateau& lo = plateaus[k];
    const Plateau& hi = plateaus[k + 1];
    // A point off the level on the side away from the next level, or a single point off it
    // followed by one back on it, is an outlier, not the knee: real sweeps have the odd
    // disturbed point, and stopping at it would put the capacity wherever it happens to be.
    // A point nearer the upper level than the lower one is off the lower level whatever the
    // tolerance: with a step little larger than the tolerance (3 % against 2.5 %) the start of
    // the rise would otherwise count as on the plateau and push the capacity past the knee.
    const double towards = hi.level > lo.level ? 1.0 : -1.0;
    const double half_step = 0.5 * std::fabs(hi.level - lo.level);
    auto on_level = [&](std::size_t i) {
      const double d = curve.point(i).y - lo.level;
      return (curve.within(i, lo.level) && std::fabs(d) < half_step) || towards * d < 0;
    };
    std::size_t on = lo.last;
    while (on + 1 < hi.first) {
      if (on_level(on + 1)) {
        ++on;
      } else if (on + 2 < hi.first && on_level(on + 2)) {
        on += 2;
      } else {
        break;
      }
    }
    Transition t;
    t.below = k;
    t.x_last_on = curve.point(on).x;
    t.x_first_off = curve.point(on + 1).x;
    t.estimate = t.x_last_on;
    t.level_below = lo.level;
    t.level_above = hi.level;
    t.confidence =
        confidence::combine({step_separation[k], bracket_precision(t.x_last_on, t.x_first_off)});
    t.step_separation = step_separation[k];
    transitions.push_back(t);
  }
  return transitions;
}

}  // namespace

double bracket_precision(double last_on, double first_off) {
  const double bracket = std::log(first_off / last_on);
  return bracket > 0 ? std::min(1.0, std::log1p(confidence::kDefaultTolerance) / bracket) : 1.0;
}

LevelAnalysis find_levels(std::vector<CurvePoint> points, const SegmentOptions& options) {
  validate_points(points);
  if (options.min_separation_z < 0 || options.rel_tolerance < 0 || options.noise_k < 0) {
    throw std::invalid_argument("find_levels: tolerances must not be negative");
  }
  const Curve curve(std::move(points), options);
  const std::size_t n = curve.size();
  const std::size_t min_points = std::max<std::size_t>(options.min_plateau_points, 1);

  LevelAnalysis out;
  char z_text[32];
  std::snprintf(z_text, sizeof z_text, "%.3g", options.min_separation_z);
  out.method =
      "piecewise-constant segmentation of log latency (optimal partitioning by DP, "
      "BIC-like penalty from a robust noise estimate), levels closer than " +
      std::string(z_text) +
      " standard errors merged, plateaus by tolerance with ramp rejection; knees bracketed by "
      "bisection";

  // 1. Change points, 2. merge levels that are not really different.
  const std::vector<Run> segments = curve.merge_close(curve.segment());

  // 3. The flat parts of each segment; neighbouring parts at one level (cut apart by an
  //    outlier) are one candidate, so that the tests below see the whole level. "One level":
  //    step_z below min_separation_z and every point within tolerance of the joint level, so
  //    that the slow start of a ramp does not join the plateau before it.
  struct Candidate {
    Run run;
    std::vector<std::size_t> members;
  };
  std::vector<Candidate> groups;
  for (const Run& s : segments) {
    std::vector<Run> parts;
    curve.flat_parts(s.first, s.last, parts);
    for (const Run& r : parts) {
      const std::vector<std::size_t> idx = Curve::indices(r);
      if (!groups.empty() && curve.one_level(groups.back().members, idx)) {
        std::vector<std::size_t> joint = groups.back().members;
        joint.insert(joint.end(), idx.begin(), idx.end());
        const double level = curve.level(joint);
        if (std::all_of(joint.begin(), joint.end(),
                        [&](std::size_t i) { return curve.within(i, level); })) {
          groups.back().run.last = r.last;
          groups.back().members = std::move(joint);
          continue;
        }
      }
      groups.push_back({r, idx});
    }
  }

  // 4. Plateaus: candidates with enough points that are not pieces of a ramp.
  std::vector<Candidate> candidates;
  for (Candidate& g : groups) {
    if (g.members.size() < min_points) {
      // A short run at the far end (the DRAM level is sometimes one or two points of a
      // sweep) counts only if it follows a plateau directly: then it is a clean step to a
      // new level, not the top of a ramp.
      const bool is_last = g.run.last + 1 == n;
      if (!is_last || candidates.empty() || candidates.back().run.last + 1 != g.run.first) {
        continue;
      }
    } else if (curve.is_ramp(g.members)) {
      continue;
    }
    candidates.push_back(std::move(g));
  }

  // 5. Neighbouring plateaus at the same level are one plateau with a bump or a stray ramp
  //    piece between them (what lies between is inside it but does not move its level).
  std::vector<Candidate> merged;
  for (Candidate& c : candidates) {
    if (!merged.empty()) {
      Candidate& prev = merged.back();
      if (curve.one_level(prev.members, c.members)) {
        prev.run.last = c.run.last;
        prev.members.insert(prev.members.end(), c.members.begin(), c.members.end());
        continue;
      }
    }
    merged.push_back(std::move(c));
  }
  for (const Candidate& c : merged) {
    out.plateaus.push_back(make_plateau(curve, c.run.first, c.run.last, c.members));
  }
  // Confidence (core/confidence.hpp): the separation of neighbouring levels, judged by each
  // plateau's per-point spread together with the deviation the finder allows on one level (so
  // that it falls as the noise rises, and a step little larger than that allowance stays weak
  // however quiet the curve), and the precision of each level.
  // The per-point noise: the plateau's own spread, or the curve's when larger (a plateau's
  // members are the points within tolerance of it, so their spread understates heavy noise).
  auto point_sigma = [&](const Plateau& p) {
    return std::hypot(std::max(kMadToSigma * p.noise / p.level, curve.sigma()),
                      options.rel_tolerance / kToleranceSigmas);
  };
  std::vector<double> step_separation;
  for (std::size_t k = 0; k + 1 < out.plateaus.size(); ++k) {
    const Plateau& lo = out.plateaus[k];
    const Plateau& hi = out.plateaus[k + 1];
    const double z =
        std::fabs(std::log(hi.level / lo.level)) / std::hypot(point_sigma(lo), point_sigma(hi));
    step_separation.push_back(confidence::separation(z));
  }
  for (std::size_t k = 0; k < merged.size(); ++k) {
    std::vector<double> ys;
    for (std::size_t i : merged[k].members) ys.push_back(curve.point(i).y);
    Plateau& p = out.plateaus[k];
    double sep = 1.0;  // a lone level has no neighbour to be told apart from
    if (k > 0) sep = std::min(sep, step_separation[k - 1]);
    if (k + 1 < merged.size()) sep = std::min(sep, step_separation[k]);
    p.confidence = confidence::combine({confidence::precision(ys, p.level), sep});
  }

  // 6. Transitions: walk up from the end of each plateau while the curve is still on it.
  out.transitions = find_transitions(curve, out.plateaus, step_separation);
  return out;
}

}  // namespace gpuprobe::analysis
