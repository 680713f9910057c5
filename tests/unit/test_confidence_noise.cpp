// core/confidence.hpp on synthetic data: every factor falls as the noise rises (issue 9, item 2).
// The level finder's confidences are tested the same way in test_levels_property.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/confidence.hpp"
#include "core/stats.hpp"
#include "measure/checks.hpp"

namespace gpuprobe {
namespace {

constexpr double kPi = 3.14159265358979323846;

// Portable N(0, 1) from the raw mt19937_64 stream.
std::vector<double> noisy_samples(double centre, double rel_noise, std::size_t n,
                                  std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) / 9007199254740992.0; };
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i) {
    const double g = std::sqrt(-2.0 * std::log(uniform())) * std::cos(2.0 * kPi * uniform());
    v.push_back(centre * (1.0 + rel_noise * g));
  }
  return v;
}

const std::vector<double> kNoise = {0.005, 0.01, 0.02, 0.05, 0.1, 0.2};

TEST(ConfidenceNoise, PrecisionFallsAsNoiseRises) {
  double last = 2;
  for (double noise : kNoise) {
    const auto v = noisy_samples(100, noise, 15, 11);
    const double c = confidence::precision(v, 100);
    EXPECT_LT(c, last) << "noise " << noise;
    last = c;
  }
  EXPECT_LT(last, 0.5);
  EXPECT_GT(confidence::precision(noisy_samples(100, 0.005, 15, 11), 100), 0.9);
}

TEST(ConfidenceNoise, SeparationFallsAsNoiseRises) {
  double last = 2;
  for (double noise : kNoise) {
    const auto a = noisy_samples(100, noise, 15, 21);
    const auto b = noisy_samples(105, noise, 15, 22);
    const double c = confidence::separation(confidence::separation_z(a, b));
    EXPECT_LT(c, last) << "noise " << noise;
    last = c;
  }
  EXPECT_LT(last, 0.5);
}

TEST(ConfidenceNoise, AgreementFallsAsTrialsDisagree) {
  // "Noise" of a categorical conclusion: the fraction of trials that disagree.
  double last = 2;
  for (std::size_t disagreeing : {0u, 2u, 5u, 10u, 20u, 40u, 50u}) {
    const double c = confidence::agreement(100 - disagreeing, 100);
    EXPECT_LT(c, last) << disagreeing;
    last = c;
  }
  EXPECT_LT(last, 0.5);
}

TEST(ConfidenceNoise, SummaryPrecisionIsThePrecisionOfTheSamples) {
  // A summary keeps n, median and MAD; its precision is that of any sample with those.
  for (double noise : kNoise) {
    const auto v = noisy_samples(100, noise, 15, 31);
    const stats::Summary s = stats::summarize(v);
    EXPECT_NEAR(probes::summary_precision(stats::to_json(s)), confidence::precision(v, s.median),
                1e-9)
        << "noise " << noise;
  }
}

TEST(Confidence, IdenticalWholeNumbersDoNotClaimAFractionOfAUnit) {
  // Five identical cycle counts locate an 8-cycle step only to within half a cycle: within 2 %
  // (0.16 cycles) is not certain; the same spread-free samples of a non-integral quantity are.
  const std::vector<double> cycles(5, 8.0), ratio(5, 8.5);
  EXPECT_LT(confidence::precision(cycles, 8.0), 0.5);
  EXPECT_GT(confidence::precision(cycles, 8.0), 0.3);
  EXPECT_DOUBLE_EQ(confidence::precision(ratio, 8.5), 1.0);
  // A 300-cycle latency is still precise to 2 % with whole-cycle samples.
  EXPECT_GT(confidence::precision(std::vector<double>(5, 300.0), 300.0), 0.999);
  // Two whole-number medians one cycle apart are no longer infinitely separated.
  EXPECT_LT(confidence::separation_z(cycles, std::vector<double>(5, 9.0)), 3.0);
}

}  // namespace
}  // namespace gpuprobe
