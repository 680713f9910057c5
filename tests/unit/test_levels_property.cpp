// Property test of the level finder (issue 9, item 6): random hierarchies with known ground
// truth, from a fixed seed. Every number here comes from the raw mt19937_64 stream (whose output
// the standard fixes) through our own transforms, so the set of curves is the same everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "analysis/levels.hpp"

namespace gpuprobe::analysis {
namespace {

constexpr double kPi = 3.14159265358979323846;

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : rng_(seed) {}
  double uniform() { return (static_cast<double>(rng_() >> 11) + 0.5) / 9007199254740992.0; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
  double gauss() {
    const double u1 = uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
  }

 private:
  std::mt19937_64 rng_;
};

// One random hierarchy: 1 to 4 levels, each step a factor log-uniform in [1.03, 10], relative
// Gaussian noise uniform in [0, 2 %], plateaus of 4 to 40 points on a log grid of 8 points per
// octave. The truth: each level's latency, and each capacity = x of its plateau's last point.
struct Hierarchy {
  std::vector<double> levels, capacities;
  double noise = 0;
  std::vector<CurvePoint> points;
};

Hierarchy random_hierarchy(Rng& rng) {
  Hierarchy h;
  const std::size_t n_levels = 1 + rng.below(4);
  h.noise = rng.uniform(0.0, 0.02);
  double level = rng.uniform(20.0, 60.0);
  double x = 1024.0;
  const double ratio = std::pow(2.0, 1.0 / 8.0);
  for (std::size_t l = 0; l < n_levels; ++l) {
    if (l > 0) level *= std::exp(rng.uniform(std::log(1.03), std::log(10.0)));
    h.levels.push_back(level);
    const std::size_t len = 4 + rng.below(37);
    for (std::size_t k = 0; k < len; ++k) {
      h.points.push_back({x, level * (1.0 + h.noise * rng.gauss()), 0.0});
      if (k + 1 == len && l + 1 < n_levels) h.capacities.push_back(x);
      x *= ratio;
    }
  }
  return h;
}

bool recovered(const LevelAnalysis& a, const Hierarchy& h) {
  if (a.plateaus.size() != h.levels.size()) return false;
  if (a.transitions.size() != h.capacities.size()) return false;
  for (std::size_t i = 0; i < h.levels.size(); ++i) {
    if (std::fabs(a.plateaus[i].level / h.levels[i] - 1.0) > 0.01) return false;
  }
  for (std::size_t i = 0; i < h.capacities.size(); ++i) {
    if (std::fabs(a.transitions[i].estimate / h.capacities[i] - 1.0) > 0.02) return false;
  }
  return true;
}

constexpr std::size_t kHierarchies = 400;
constexpr std::uint64_t kSeed = 20260901;

// Measured on these 400 hierarchies. Before issue 9 (fixed 4 % merge threshold): 348 recovered,
// plateau count right in 395. With the statistical merge threshold: 350 and 400. Two mutations
// of levels.cpp that survived every other test fail here: stopping the knee walk one point
// early (`on + 1 < hi.first` -> `on + 2`) recovers 343; doubling the noise estimate
// (`/ sqrt(2)` -> `* sqrt(2)`) gets the plateau count right in only 398.
constexpr std::size_t kRecoveredToday = 350;
constexpr std::size_t kCountRightToday = 400;

TEST(LevelsProperty, RecoversRandomHierarchies) {
  Rng rng(kSeed);
  std::size_t ok = 0, count_ok = 0;
  for (std::size_t i = 0; i < kHierarchies; ++i) {
    const Hierarchy h = random_hierarchy(rng);
    const LevelAnalysis a = find_levels(h.points);
    ok += recovered(a, h) ? 1 : 0;
    count_ok += a.plateaus.size() == h.levels.size() ? 1 : 0;
  }
  EXPECT_GE(ok, kRecoveredToday);
  EXPECT_GE(count_ok, kCountRightToday);
}

// An L2 whose DRAM is only 3 % slower, measured with 0.3 % noise: the level must be found (a
// fixed 4 % merge threshold hid it), and its confidence must say that the step is weak.
TEST(LevelsProperty, ThreePercentStepWithQuietNoiseIsFoundButWeak) {
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    Rng rng(seed);
    std::vector<CurvePoint> pts;
    double x = 1024;
    std::vector<double> caps;
    const double levels[] = {280.0, 280.0 * 1.03};
    for (int l = 0; l < 2; ++l)
      for (int k = 0; k < 20; ++k) {
        pts.push_back({x, levels[l] * (1.0 + 0.003 * rng.gauss()), 0.0});
        if (k == 19 && l == 0) caps.push_back(x);
        x *= std::pow(2.0, 1.0 / 8.0);
      }
    const LevelAnalysis a = find_levels(pts);
    ASSERT_EQ(a.plateaus.size(), 2u) << "seed " << seed;
    ASSERT_EQ(a.transitions.size(), 1u);
    EXPECT_NEAR(a.transitions[0].estimate / caps[0], 1.0, 0.02);
    // Weak: the step's separation (about 0.6) and a bracket of one grid step (9 %).
    EXPECT_GT(a.transitions[0].confidence, 0.05) << "seed " << seed;
    EXPECT_LT(a.transitions[0].confidence, 0.5) << "seed " << seed;
    // The upper level's own confidence is its separation from the lower one times its precision.
    EXPECT_GT(a.plateaus[1].confidence, 0.3) << "seed " << seed;
    EXPECT_LT(a.plateaus[1].confidence, 0.75) << "seed " << seed;
  }
}

// The level finder's confidences fall as the noise rises (same steps, same grid, same seed).
TEST(LevelsProperty, ConfidenceFallsAsNoiseRises) {
  double last_transition = 2, last_plateau = 2;
  for (double noise : {0.0, 0.005, 0.01, 0.02, 0.04}) {
    Rng rng(7);
    std::vector<CurvePoint> pts;
    double x = 1024;
    for (double level : {100.0, 110.0})
      for (int k = 0; k < 16; ++k) {
        pts.push_back({x, level * (1.0 + noise * rng.gauss()), 0.0});
        x *= std::pow(2.0, 1.0 / 8.0);
      }
    const LevelAnalysis a = find_levels(pts);
    ASSERT_EQ(a.transitions.size(), 1u) << "noise " << noise;
    EXPECT_LT(a.transitions[0].confidence, last_transition) << "noise " << noise;
    EXPECT_LT(a.plateaus[0].confidence, last_plateau) << "noise " << noise;
    last_transition = a.transitions[0].confidence;
    last_plateau = a.plateaus[0].confidence;
  }
  EXPECT_LT(last_transition, 0.5);
}

}  // namespace
}  // namespace gpuprobe::analysis
