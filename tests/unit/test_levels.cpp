// Tests for the plateau / transition analysis and the adaptive sweep. The curves are models of
// what the pointer-chase benchmark measures: exact-LRU steps, steps with 1% Gaussian noise,
// and gradual rises (non-LRU replacement). Noise comes from a fixed-seed mt19937_64 through our
// own Box-Muller transform, so the numbers are the same on every standard library.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "analysis/levels.hpp"
#include "measure/adaptive_sweep.hpp"

namespace gpuprobe::analysis {
namespace {

using measure::adaptive_sweep;
using measure::MeasureFn;

constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kPi = 3.14159265358979323846;

// Portable N(0, 1): std::normal_distribution differs between standard libraries.
class Gauss {
 public:
  explicit Gauss(std::uint64_t seed) : rng_(seed) {}
  double operator()() {
    const double u1 = (static_cast<double>(rng_() >> 11) + 0.5) / 9007199254740992.0;
    const double u2 = (static_cast<double>(rng_() >> 11) + 0.5) / 9007199254740992.0;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
  }

 private:
  std::mt19937_64 rng_;
};

// Exact LRU: y is levels[i] up to and including caps[i], then jumps.
struct StepCurve {
  std::vector<double> levels;
  std::vector<double> caps;
  double operator()(double x) const {
    for (std::size_t i = 0; i < caps.size(); ++i) {
      if (x <= caps[i]) return levels[i];
    }
    return levels.back();
  }
};

// The H200-like hierarchy of the brief: L1, L2 near, L2 far, DRAM.
StepCurve four_levels() { return {{33, 260, 430, 800}, {240 * kKiB, 28 * kMiB, 58 * kMiB}}; }
StepCurve three_levels() { return {{33, 260, 800}, {240 * kKiB, 28 * kMiB}}; }

// Non-LRU replacement: past C only a fraction C/x of the loads hit.
double gradual(double x, double c, double hit_level, double miss_level) {
  const double hit = std::min(1.0, c / x);
  return hit * hit_level + (1.0 - hit) * miss_level;
}

// Steps whose rise is linear in log x over one octave after each capacity (what real hardware
// with a non-LRU policy looks like, per the brief: a smooth rise over a factor ~2 in x).
double octave_ramps(double x, const StepCurve& s) {
  for (std::size_t i = 0; i < s.caps.size(); ++i) {
    if (x <= s.caps[i]) return s.levels[i];
    if (x <= 2 * s.caps[i]) {
      const double f = std::log2(x / s.caps[i]);
      return s.levels[i] * std::pow(s.levels[i + 1] / s.levels[i], f);
    }
  }
  return s.levels.back();
}

template <typename F>
MeasureFn noiseless(F f) {
  return [f](double x) { return CurvePoint{x, f(x), 0.0}; };
}

// y * (1 + rel * N(0,1)); the noise field stays 0 ("unknown"), the hardest case for the
// tolerance test.
template <typename F>
MeasureFn noisy(F f, double rel, std::uint64_t seed) {
  auto gauss = std::make_shared<Gauss>(seed);
  return [f, rel, gauss](double x) { return CurvePoint{x, f(x) * (1.0 + rel * (*gauss)()), 0.0}; };
}

std::vector<CurvePoint> sample(const std::vector<double>& xs, const MeasureFn& m) {
  std::vector<CurvePoint> pts;
  for (double x : xs) pts.push_back(m(x));
  return pts;
}

std::vector<double> log_grid(double lo, double hi, std::size_t n) {
  std::vector<double> xs;
  for (std::size_t i = 0; i < n; ++i) {
    xs.push_back(std::round(lo * std::pow(hi / lo, double(i) / double(n - 1))));
  }
  return xs;
}

// With 1% noise per point a level is the median of a handful of points (the L2-far and DRAM
// plateaus get 5 to 10), whose own error is ~0.5%: 4 cycles at 800. So noisy levels are
// checked to 2% (4 sigma) or 1 cycle, whichever is larger, over several seeds; capacities
// still to 2%.
double noisy_level_tolerance(double level) { return std::max(1.0, 0.02 * level); }

// Checks the analysis against a step model: one plateau per level, each level within
// level_tol (absolute, cycles), each capacity estimate in [C / (1 + cap_tol), C] (the estimate
// is the last x still on the plateau, so it cannot be above C on an exact step).
void expect_matches(const LevelAnalysis& a, const StepCurve& s, double level_tol, double cap_tol) {
  ASSERT_EQ(a.plateaus.size(), s.levels.size());
  ASSERT_EQ(a.transitions.size(), s.caps.size());
  for (std::size_t i = 0; i < s.levels.size(); ++i) {
    EXPECT_NEAR(a.plateaus[i].level, s.levels[i], level_tol) << "plateau " << i;
  }
  for (std::size_t i = 0; i < s.caps.size(); ++i) {
    const Transition& t = a.transitions[i];
    EXPECT_LE(t.estimate, s.caps[i]) << "transition " << i;
    EXPECT_GE(t.estimate, s.caps[i] / (1.0 + cap_tol)) << "transition " << i;
    EXPECT_GT(t.x_first_off, s.caps[i]) << "transition " << i;
    EXPECT_EQ(t.below, i);
    EXPECT_DOUBLE_EQ(t.level_below, a.plateaus[i].level);
    EXPECT_DOUBLE_EQ(t.level_above, a.plateaus[i + 1].level);
    EXPECT_GT(t.confidence, 0.5) << "transition " << i;
    EXPECT_LE(t.confidence, 1.0);
  }
}

// ---- adaptive_sweep on step curves -------------------------------------------------------

TEST(LevelsSweep, RecoversThreeLevelStepCurve) {
  const StepCurve s = three_levels();
  const auto pts = adaptive_sweep(noiseless(s), SweepOptions{});
  expect_matches(find_levels(pts), s, 1.0, 0.02);
}

TEST(LevelsSweep, RecoversFourLevelStepCurve) {
  const StepCurve s = four_levels();
  const auto pts = adaptive_sweep(noiseless(s), SweepOptions{});
  expect_matches(find_levels(pts), s, 1.0, 0.02);
  // Bisection brackets every capacity to the requested 1%.
  for (const Transition& t : find_levels(pts).transitions) {
    EXPECT_LE(t.x_first_off / t.x_last_on - 1.0, 0.01);
  }
}

TEST(LevelsSweep, RecoversStepCurvesWithOnePercentNoise) {
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
    SCOPED_TRACE(seed);
    for (const StepCurve& s : {three_levels(), four_levels()}) {
      const auto pts = adaptive_sweep(noisy(s, 0.01, seed), SweepOptions{});
      const LevelAnalysis a = find_levels(pts);
      ASSERT_EQ(a.plateaus.size(), s.levels.size());
      for (std::size_t i = 0; i < s.levels.size(); ++i) {
        EXPECT_NEAR(a.plateaus[i].level, s.levels[i], noisy_level_tolerance(s.levels[i]));
      }
      ASSERT_EQ(a.transitions.size(), s.caps.size());
      for (std::size_t i = 0; i < s.caps.size(); ++i) {
        EXPECT_NEAR(a.transitions[i].estimate / s.caps[i], 1.0, 0.02) << "transition " << i;
      }
    }
  }
}

TEST(LevelsSweep, ResolvesPlateausOnlyEightPercentApart) {
  const StepCurve s{{100, 108, 116.64, 126}, {64 * kKiB, 2 * kMiB, 32 * kMiB}};
  expect_matches(find_levels(adaptive_sweep(noiseless(s), SweepOptions{})), s, 0.5, 0.02);
  for (std::uint64_t seed : {11u, 12u, 13u}) {
    SCOPED_TRACE(seed);
    const LevelAnalysis a = find_levels(adaptive_sweep(noisy(s, 0.01, seed), SweepOptions{}));
    ASSERT_EQ(a.plateaus.size(), 4u);
    for (std::size_t i = 0; i < s.caps.size(); ++i) {
      EXPECT_NEAR(a.transitions[i].estimate / s.caps[i], 1.0, 0.02) << "transition " << i;
    }
  }
}

TEST(LevelsSweep, TwoLevels) {
  const StepCurve s{{40, 600}, {6 * kMiB}};
  expect_matches(find_levels(adaptive_sweep(noiseless(s), SweepOptions{})), s, 1.0, 0.02);
}

// ---- gradual rises -----------------------------------------------------------------------

TEST(LevelsSweep, GradualRiseGivesCapacityAndNoPlateauInsideTheRamp) {
  const double c = 3 * kMiB, lh = 260, lm = 800;
  auto f = [=](double x) { return gradual(x, c, lh, lm); };
  const auto check = [&](const std::vector<CurvePoint>& pts, double level_tol) {
    const LevelAnalysis a = find_levels(pts);
    // The rise goes on for many octaves (still 3% short of DRAM at 20 C): none of the points
    // on it may form a plateau of its own.
    for (const Plateau& p : a.plateaus) {
      EXPECT_TRUE(p.level < 1.05 * lh || p.level > 0.95 * lm) << "plateau at " << p.level;
    }
    ASSERT_EQ(a.plateaus.size(), 2u);
    ASSERT_EQ(a.transitions.size(), 1u);
    EXPECT_NEAR(a.plateaus[0].level, lh, level_tol);
    // The rise approaches DRAM slowly: its last points are a plateau a little below it.
    EXPECT_GT(a.plateaus[1].level, 0.95 * lm);
    EXPECT_LT(a.plateaus[1].level, 1.01 * lm);
    EXPECT_NEAR(a.transitions[0].estimate / c, 1.0, 0.02);
  };
  {
    SCOPED_TRACE("noiseless");
    check(adaptive_sweep(noiseless(f), SweepOptions{}), 1.0);
  }
  // Half a percent of noise: at 1% the slow end of this rise (2% per octave at 10 C) is
  // within the noise, and its pieces can no longer be told from levels reliably.
  for (std::uint64_t seed : {21u, 22u, 23u}) {
    SCOPED_TRACE(seed);
    check(adaptive_sweep(noisy(f, 0.005, seed), SweepOptions{}), noisy_level_tolerance(lh));
  }
}

TEST(LevelsSweep, OctaveWideRampsBetweenFourLevels) {
  // Each rise takes the octave after its capacity, so the levels are narrower than the steps
  // of four_levels(); L2 far here is flat from 40 to 80 MiB.
  const StepCurve s{{33, 260, 430, 800}, {240 * kKiB, 20 * kMiB, 80 * kMiB}};
  auto f = [s](double x) { return octave_ramps(x, s); };
  // With noise: half a percent. At 1% a level flat for only an octave (2 coarse points) next
  // to smooth rises is sometimes not distinguishable from them (~2% of seeds).
  const double noise = 0.005;
  for (bool with_noise : {false, true}) {
    SCOPED_TRACE(with_noise ? "noisy" : "noiseless");
    const auto pts =
        adaptive_sweep(with_noise ? noisy(f, noise, 31) : noiseless(f), SweepOptions{});
    const LevelAnalysis a = find_levels(pts);
    ASSERT_EQ(a.plateaus.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i) {
      EXPECT_NEAR(a.plateaus[i].level, s.levels[i],
                  with_noise ? noisy_level_tolerance(s.levels[i]) : 1.0);
    }
    // The estimate is the last x within the 2.5% tolerance of the level below: on this ramp
    // that is C * 2^(log(1.025) / log(L_above / L_below)), 3.5% past C for 260 -> 430. Noise
    // moves that crossing: by up to 2.5 sigma of it in y.
    const double slack = with_noise ? 2.5 * noise : 0.0;
    for (std::size_t i = 0; i < 3; ++i) {
      const double log_ratio = std::log(s.levels[i + 1] / s.levels[i]);  // per octave
      const double last = s.caps[i] * std::pow(2.0, std::log(1.025 + slack) / log_ratio);
      const double first =
          s.caps[i] * std::pow(2.0, std::max(0.0, std::log(1.025 - slack)) / log_ratio);
      EXPECT_GE(a.transitions[i].estimate, first / 1.02) << "transition " << i;
      EXPECT_LE(a.transitions[i].estimate, last * 1.02) << "transition " << i;
    }
  }
}

// ---- find_levels on fixed curves ---------------------------------------------------------

TEST(FindLevels, FlatCurveIsOnePlateauWithoutTransitions) {
  const auto xs = log_grid(kKiB, 256 * kMiB, 40);
  for (bool with_noise : {false, true}) {
    SCOPED_TRACE(with_noise ? "noisy" : "noiseless");
    auto flat = [](double) { return 420.0; };
    const LevelAnalysis a =
        find_levels(sample(xs, with_noise ? noisy(flat, 0.01, 41) : noiseless(flat)));
    ASSERT_EQ(a.plateaus.size(), 1u);
    EXPECT_TRUE(a.transitions.empty());
    EXPECT_NEAR(a.plateaus[0].level, 420.0, 4.0);
    // All of it (a noisy end point beyond the 2.5% tolerance may be left out).
    EXPECT_LE(a.plateaus[0].first, 1u);
    EXPECT_GE(a.plateaus[0].last, xs.size() - 2);
  }
}

TEST(FindLevels, ConfidenceHigherForBigCleanStepThanSmallNoisyOne) {
  // Same x grid (with the knee bracketed to 1%), so the same bracket; only the contrast
  // differs.
  const double c = 1 * kMiB;
  auto xs = log_grid(kKiB, 64 * kMiB, 60);
  xs.push_back(c * 0.995);
  xs.push_back(c * 1.005);
  const LevelAnalysis big = find_levels(sample(xs, noiseless(StepCurve{{100, 300}, {c}})));
  const LevelAnalysis small = find_levels(sample(xs, noisy(StepCurve{{100, 106}, {c}}, 0.01, 51)));
  ASSERT_EQ(big.transitions.size(), 1u);
  ASSERT_EQ(small.transitions.size(), 1u);
  EXPECT_NEAR(big.transitions[0].x_first_off / big.transitions[0].x_last_on, 1.01, 1e-3);
  EXPECT_GT(big.transitions[0].confidence, 0.8);
  EXPECT_GT(big.transitions[0].confidence, small.transitions[0].confidence + 0.1);
  EXPECT_GT(small.transitions[0].confidence, 0.0);
  // A wider bracket of the same step is less certain.
  const LevelAnalysis coarse =
      find_levels(sample(log_grid(kKiB, 64 * kMiB, 20), noiseless(StepCurve{{100, 300}, {c}})));
  ASSERT_EQ(coarse.transitions.size(), 1u);
  EXPECT_GT(big.transitions[0].confidence, coarse.transitions[0].confidence + 0.3);
}

TEST(FindLevels, ShortAndLongCurves) {
  // 15 points one octave apart (1 KiB..16 MiB): 8, 3, 2 and 2 points on the four levels.
  {
    const StepCurve s{{30, 250, 420, 780}, {200 * kKiB, 1.5 * kMiB, 5 * kMiB}};
    const auto xs = log_grid(kKiB, 16 * kMiB, 15);
    const LevelAnalysis a = find_levels(sample(xs, noiseless(s)));
    ASSERT_EQ(a.plateaus.size(), 4u);
    ASSERT_EQ(a.transitions.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_NEAR(a.plateaus[i].level, s.levels[i], 1e-9);
      EXPECT_LE(a.transitions[i].x_last_on, s.caps[i]);
      EXPECT_GT(a.transitions[i].x_first_off, s.caps[i]);
      EXPECT_LE(a.transitions[i].x_first_off / a.transitions[i].x_last_on, 2.01);
    }
  }
  // 150 points (8 per octave) with 1% noise: the knees within one grid step, or two when the
  // last point below the capacity happens to be 2.5 sigma high (nothing on a fixed grid can
  // tell that from the knee; adaptive_sweep measures a confirming point).
  {
    const StepCurve s{{30, 250, 420, 780}, {200 * kKiB, 8 * kMiB, 24 * kMiB}};
    const auto xs = log_grid(kKiB, 256 * kMiB, 150);
    const LevelAnalysis a = find_levels(sample(xs, noisy(s, 0.01, 61)));
    ASSERT_EQ(a.plateaus.size(), 4u);
    ASSERT_EQ(a.transitions.size(), 3u);
    const double step = std::pow(256.0 * 1024, 1.0 / 149);
    for (std::size_t i = 0; i < 3; ++i) {
      EXPECT_LE(a.transitions[i].x_last_on, s.caps[i]) << "transition " << i;
      EXPECT_GT(a.transitions[i].x_last_on, s.caps[i] / (step * step * 1.001))
          << "transition " << i;
      EXPECT_LE(a.transitions[i].x_first_off / a.transitions[i].x_last_on, step * 1.001);
    }
  }
}

TEST(FindLevels, TwoPlateausFromFifteenPoints) {
  const auto xs = log_grid(kKiB, 16 * kMiB, 15);
  const LevelAnalysis a = find_levels(sample(xs, noiseless(StepCurve{{50, 500}, {100 * kKiB}})));
  ASSERT_EQ(a.plateaus.size(), 2u);
  ASSERT_EQ(a.transitions.size(), 1u);
  EXPECT_LE(a.transitions[0].x_last_on, 100 * kKiB);
  EXPECT_GT(a.transitions[0].x_first_off, 100 * kKiB);
}

TEST(FindLevels, OrderOfInputDoesNotMatter) {
  auto pts = sample(log_grid(kKiB, 256 * kMiB, 50), noisy(four_levels(), 0.01, 71));
  const LevelAnalysis sorted = find_levels(pts);
  std::mt19937_64 rng(7);
  std::shuffle(pts.begin(), pts.end(), rng);
  const LevelAnalysis shuffled = find_levels(pts);
  ASSERT_EQ(sorted.plateaus.size(), shuffled.plateaus.size());
  ASSERT_EQ(sorted.transitions.size(), shuffled.transitions.size());
  for (std::size_t i = 0; i < sorted.transitions.size(); ++i) {
    EXPECT_EQ(sorted.transitions[i].estimate, shuffled.transitions[i].estimate);
  }
  EXPECT_EQ(sorted.plateaus.size(), 4u);
}

TEST(FindLevels, SingleLastPointAfterAPlateauIsTheDramLevel) {
  std::vector<CurvePoint> pts;
  for (double x : log_grid(kKiB, 32 * kMiB, 30)) pts.push_back({x, 260, 0});
  pts.push_back({48 * kMiB, 800, 0});
  const LevelAnalysis a = find_levels(pts);
  ASSERT_EQ(a.plateaus.size(), 2u);
  EXPECT_EQ(a.plateaus[1].first, a.plateaus[1].last);
  EXPECT_DOUBLE_EQ(a.plateaus[1].level, 800);
  ASSERT_EQ(a.transitions.size(), 1u);
  EXPECT_DOUBLE_EQ(a.transitions[0].x_first_off, 48 * kMiB);
}

TEST(FindLevels, CurveEndingOnARampHasNoPlateauThere) {
  // A plateau, then the curve keeps rising to the last point: the rise is no level.
  std::vector<CurvePoint> pts;
  for (double x : log_grid(kKiB, 256 * kMiB, 40)) {
    pts.push_back({x, gradual(x, 64 * kMiB, 260, 800), 0});
  }
  const LevelAnalysis a = find_levels(pts);
  ASSERT_EQ(a.plateaus.size(), 1u);
  EXPECT_TRUE(a.transitions.empty());
  EXPECT_NEAR(a.plateaus[0].level, 260, 1.0);
}

TEST(FindLevels, OutlierInsideAPlateauDoesNotSplitIt) {
  auto pts = sample(log_grid(kKiB, 256 * kMiB, 60), noiseless(three_levels()));
  pts[5].y *= 1.3;   // a disturbed point inside L1
  pts[30].y *= 0.8;  // and one inside L2
  const LevelAnalysis a = find_levels(pts);
  ASSERT_EQ(a.plateaus.size(), 3u);
  EXPECT_EQ(a.plateaus[0].first, 0u);
  EXPECT_NEAR(a.plateaus[0].level, 33, 0.5);
  EXPECT_NEAR(a.plateaus[1].level, 260, 1.0);
}

TEST(FindLevels, UsesThePointNoiseInTheTolerance) {
  // 6% scatter is beyond the 2.5% relative tolerance, but within 4 x the stated noise.
  std::vector<CurvePoint> pts;
  const auto xs = log_grid(kKiB, 256 * kMiB, 40);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double base = xs[i] <= 8 * kMiB ? 100.0 : 400.0;
    pts.push_back({xs[i], base * (i % 2 == 0 ? 1.06 : 0.94), 0.05 * base});
  }
  const LevelAnalysis a = find_levels(pts);
  ASSERT_EQ(a.plateaus.size(), 2u);
  ASSERT_EQ(a.transitions.size(), 1u);
  EXPECT_LE(a.transitions[0].x_last_on, 8 * kMiB);
  EXPECT_GT(a.transitions[0].x_first_off, 8 * kMiB);
}

TEST(FindLevels, DescribesItsMethod) {
  const LevelAnalysis a = find_levels({{1024, 10, 0}, {2048, 10, 0}});
  EXPECT_NE(a.method.find("segmentation"), std::string::npos);
  EXPECT_EQ(a.plateaus.size(), 1u);
  // A single point is fewer than min_plateau_points: no plateau, but no failure either.
  EXPECT_TRUE(find_levels({{1024, 10, 0}}).plateaus.empty());
}

TEST(FindLevels, RejectsBadInput) {
  EXPECT_THROW(find_levels({}), std::invalid_argument);
  EXPECT_THROW(find_levels({{1024, 0, 0}}), std::invalid_argument);
  EXPECT_THROW(find_levels({{0, 10, 0}}), std::invalid_argument);
  EXPECT_THROW(find_levels({{1024, std::nan(""), 0}}), std::invalid_argument);
}

// ---- adaptive_sweep mechanics ------------------------------------------------------------

TEST(LevelsSweep, NeedsFarFewerPointsThanADenseSweep) {
  // A dense sweep at 1% spacing over 1 KiB..256 MiB would take ~1250 points.
  int calls = 0;
  const StepCurve s = four_levels();
  const MeasureFn m = [&](double x) {
    ++calls;
    return CurvePoint{x, s(x), 0};
  };
  SweepOptions opt;
  opt.x_min = kKiB;
  opt.x_max = 256 * kMiB;
  opt.coarse_per_octave = 2;
  opt.resolution = 0.01;
  const auto pts = adaptive_sweep(m, opt);
  EXPECT_LT(pts.size(), 60u);
  EXPECT_EQ(static_cast<std::size_t>(calls), pts.size());  // every x measured once
}

TEST(LevelsSweep, PointsAreAlignedSortedUniqueAndSpanTheRange) {
  for (double align : {128.0, 4096.0}) {
    SCOPED_TRACE(align);
    std::map<double, int> seen;
    const StepCurve s = four_levels();
    const MeasureFn m = [&](double x) {
      ++seen[x];
      return CurvePoint{x, s(x), 0};
    };
    SweepOptions opt;
    opt.x_min = 1000;  // not a multiple of align
    opt.x_max = 200 * kMiB;
    opt.align = align;
    const auto pts = adaptive_sweep(m, opt);
    ASSERT_GE(pts.size(), 20u);
    for (std::size_t i = 0; i < pts.size(); ++i) {
      EXPECT_EQ(std::fmod(pts[i].x, align), 0.0) << pts[i].x;
      EXPECT_GE(pts[i].x, align);
      if (i > 0) {
        EXPECT_GT(pts[i].x, pts[i - 1].x);
      }
    }
    for (const auto& kv : seen) EXPECT_EQ(kv.second, 1) << kv.first;
    EXPECT_LE(pts.front().x, opt.x_min + align);
    EXPECT_DOUBLE_EQ(pts.back().x, opt.x_max);
  }
}

TEST(LevelsSweep, CoarseGridOnlyWhenNothingToRefine) {
  SweepOptions opt;
  opt.x_min = 4 * kKiB;
  opt.x_max = 4 * kMiB;  // 10 octaves at 2 per octave: 21 points
  const auto pts = adaptive_sweep(noiseless([](double) { return 77.0; }), opt);
  EXPECT_EQ(pts.size(), 21u);
}

TEST(LevelsSweep, RespectsMaxPoints) {
  SweepOptions opt;
  opt.max_points = 45;  // the coarse grid has 37
  const auto pts = adaptive_sweep(noiseless(four_levels()), opt);
  EXPECT_LE(pts.size(), 45u);
  EXPECT_GT(pts.size(), 37u);
}

TEST(LevelsSweep, OutlierJustBelowTheKneeDoesNotMoveTheCapacity) {
  // The first measurement within 5% below the L2 capacity is disturbed (+40%), as if another
  // process had touched the L2 then; the capacity must still be found.
  const StepCurve s = three_levels();
  bool disturbed = false;
  const MeasureFn m = [&](double x) {
    double y = s(x);
    if (!disturbed && x <= s.caps[1] && x > s.caps[1] / 1.05) {
      disturbed = true;
      y *= 1.4;
    }
    return CurvePoint{x, y, 0};
  };
  const LevelAnalysis a = find_levels(adaptive_sweep(m, SweepOptions{}));
  EXPECT_TRUE(disturbed);
  ASSERT_EQ(a.transitions.size(), 2u);
  EXPECT_NEAR(a.transitions[1].estimate / s.caps[1], 1.0, 0.02);
}

// The H200's latency.sweep medians on GPU-f545fc29 (results/h200 of the twelfth session,
// before min_level_points; history at 2a38d80) from the L1's knee on: a slope from the near
// partition's knee, a short flat mixed level (44.9 and 53.3 MB), then the rise to DRAM.
const std::vector<std::pair<double, double>>& recorded_h200_sweep() {
  static const std::vector<std::pair<double, double>> kRecorded = {
      {222208, 32.0},    {359552, 280.0},    {22524544, 280.0},  {26762368, 282.0},
      {27940992, 292.7}, {28243712, 288.0},  {28549632, 294.2},  {28977920, 298.6},
      {29171456, 297.4}, {31797504, 409.3},  {37779968, 491.5},  {44887936, 509.2},
      {53333120, 512.2}, {58134144, 523.1},  {58763904, 531.6},  {59400448, 530.5},
      {60043904, 543.9}, {60694400, 544.7},  {63367296, 601.1},  {75289344, 658.8},
      {89454464, 659.2}, {126281088, 659.0}, {178268544, 655.6}, {251658240, 656.4}};
  return kRecorded;
}
// Linear in log x between the recorded medians.
double recorded_h200_latency(double x) {
  const auto& r = recorded_h200_sweep();
  if (x <= r.front().first) return r.front().second;
  for (std::size_t i = 1; i < r.size(); ++i) {
    const auto& [x1, y1] = r[i];
    const auto& [x0, y0] = r[i - 1];
    if (x <= x1) return y0 + (y1 - y0) * std::log(x / x0) / std::log(x1 / x0);
  }
  return r.back().second;
}
// latency.sweep's options: 1 KiB .. 4 x 60 MiB, 128-B nodes.
SweepOptions h200_sweep_options() {
  SweepOptions opt;
  opt.x_min = kKiB;
  opt.x_max = 240 * kMiB;
  opt.resolution = 0.015;
  opt.align = 128;
  return opt;
}
const Plateau* mixed_level(const LevelAnalysis& a) {
  for (const Plateau& p : a.plateaus)
    if (p.level > 480 && p.level < 540) return &p;
  return nullptr;
}

TEST(LevelsSweep, AShortLevelBetweenTwoRisesGetsAThirdPoint) {
  // On GPU-f545fc29 the coarse grid and the knees' bisections left two points on the mixed
  // level, whose median then has no precision: l2.mixed_latency at confidence 0. The sweep
  // must add a third point.
  SweepOptions opt = h200_sweep_options();
  opt.min_level_points = 0;  // without the fill: the flat level rests on two points
  const LevelAnalysis without = find_levels(adaptive_sweep(noiseless(recorded_h200_latency), opt));
  const Plateau* w = mixed_level(without);
  ASSERT_NE(w, nullptr);
  EXPECT_LT(w->members, 3u);
  EXPECT_EQ(w->confidence, 0.0);
  opt.min_level_points = 3;
  const LevelAnalysis with = find_levels(adaptive_sweep(noiseless(recorded_h200_latency), opt));
  const Plateau* p = mixed_level(with);
  ASSERT_NE(p, nullptr);
  EXPECT_GE(p->members, 3u);
  EXPECT_GT(p->confidence, 0.5);
}

TEST(LevelsSweep, MeasureExceptionsPropagate) {
  const MeasureFn m = [](double) -> CurvePoint { throw std::runtime_error("device lost"); };
  EXPECT_THROW(adaptive_sweep(m, SweepOptions{}), std::runtime_error);
}

TEST(LevelsSweep, RejectsBadRange) {
  const MeasureFn m = noiseless([](double) { return 1.0; });
  SweepOptions opt;
  opt.x_min = 0;
  EXPECT_THROW(adaptive_sweep(m, opt), std::invalid_argument);
  opt.x_min = -5;
  EXPECT_THROW(adaptive_sweep(m, opt), std::invalid_argument);
  opt.x_min = 4096;
  opt.x_max = 2048;
  EXPECT_THROW(adaptive_sweep(m, opt), std::invalid_argument);
  opt.x_max = 8192;
  opt.align = 0;
  EXPECT_THROW(adaptive_sweep(m, opt), std::invalid_argument);
}

}  // namespace
}  // namespace gpuprobe::analysis
