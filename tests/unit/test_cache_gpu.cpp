// Host-side logic of cache.l2.far_hit, cache.l2.sharing and cache.cold_capacity on synthetic
// samples whose truth is known.
#include <gtest/gtest.h>

#include <bitset>
#include <cstdint>
#include <random>
#include <vector>

#include "analysis/cold_capacity.hpp"
#include "analysis/l2_far_hit.hpp"
#include "analysis/l2_sharing.hpp"

namespace gpuprobe::analysis {
namespace {

constexpr std::uint64_t kPage = 2ull << 20;
constexpr std::uint64_t kMask = 0xab000;

int parity(std::uint64_t x) { return static_cast<int>(std::bitset<64>(x).count() & 1u); }

// Lines in 4 pages; page p has constant p & 1 (the physical bits above the page differ).
int true_far(std::uint64_t o) {
  return parity(kMask & (o % kPage)) ^ static_cast<int>((o / kPage) & 1);
}

std::vector<std::uint64_t> lines(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back((rng() % (4 * kPage / 128)) * 128);
  return v;
}

FarHitInput synthetic(bool replication, double near, double far, double chase) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 4);
  FarHitInput in;
  in.offsets = lines(256, 9);
  in.chase_cycles = chase;
  for (int r = 0; r < 5; ++r) {
    FarHitRound round;
    for (auto o : in.offsets) {
      const bool f = true_far(o);
      round.first.push_back((f ? far : near) + noise(rng));
      round.second.push_back((f && !replication ? far : near) + noise(rng));
    }
    in.rounds.push_back(round);
  }
  return in;
}

TEST(CacheGpuFarHit, FindsFarLinesAndReplication) {
  const auto in = synthetic(true, 303, 480, 272.6);
  const auto a = analyze_far_hit(in);
  ASSERT_TRUE(a.split);
  for (std::size_t i = 0; i < in.offsets.size(); ++i)
    EXPECT_EQ(a.line_far[i], true_far(in.offsets[i])) << i;
  EXPECT_TRUE(a.replication);
  EXPECT_EQ(a.replicated, a.far_lines);
  EXPECT_NEAR(a.difference_cycles, 177, 3);
  // Replicated: the hot chase is all near hits, so far = chase + difference.
  EXPECT_NEAR(a.far_hit_cycles, 272.6 + 177, 3);
  EXPECT_NEAR(a.consistency, 1.0, 1e-9);
}

TEST(CacheGpuFarHit, WithoutReplicationTheChaseHoldsItsFarShare) {
  const auto in = synthetic(false, 303, 480, 272.6 + 0.5 * 177);
  const auto a = analyze_far_hit(in);
  ASSERT_TRUE(a.split);
  EXPECT_FALSE(a.replication);
  EXPECT_EQ(a.replicated, 0u);
  // chase = near + far_fraction * d: the near hit on the chase's scale comes back.
  EXPECT_NEAR(a.chase_near_cycles, 272.6 + (0.5 - a.far_line_fraction) * 177, 3);
  EXPECT_NEAR(a.far_hit_cycles, a.chase_near_cycles + a.difference_cycles, 1e-9);
}

TEST(CacheGpuFarHit, OneClassIsNoSplit) {
  auto in = synthetic(true, 300, 300, 272.6);
  const auto a = analyze_far_hit(in);
  EXPECT_FALSE(a.split);
  EXPECT_TRUE(a.line_far.empty());
}

TEST(CacheGpuFarHit, FitsThePartitionFunctionWithPageConstants) {
  const auto offs = lines(256, 5);
  std::vector<int> far;
  for (auto o : offs) far.push_back(true_far(o));
  const auto fit = fit_side(offs, far, 0);
  ASSERT_TRUE(fit.found);
  EXPECT_EQ(fit.mask, kMask);
  EXPECT_DOUBLE_EQ(fit.accuracy, 1.0);
  for (std::uint64_t o = 0; o < 4 * kPage; o += 4096 + 128) EXPECT_EQ(predict_side(fit, o), true_far(o));
  EXPECT_EQ(predict_side(fit, 9 * kPage), -1);
  // A wrong prior is not kept over a fit that predicts better.
  const auto with_bad_prior = fit_side(offs, far, 0x1000);
  EXPECT_EQ(with_bad_prior.mask, kMask);
}

TEST(CacheGpuFarHit, ReplicaStepsFindTheCapacityAndTheOrder) {
  // Copies of up to 700 lines stay; beyond, the oldest read go first.
  std::vector<ReplicaStep> steps;
  for (std::size_t n : {256, 512, 1024, 2048}) {
    ReplicaStep s;
    s.lines = n;
    for (std::size_t i = 0; i < n; ++i) s.second.push_back(n > 700 && i < n - 700 ? 480 : 300);
    steps.push_back(s);
  }
  const auto r = analyze_replica_steps(steps, 390);
  EXPECT_TRUE(r.evicted);
  EXPECT_EQ(r.kept_lines, 512u);
  EXPECT_EQ(r.first_evicting, 1024u);
  EXPECT_EQ(r.evicted_count, 324u);
  EXPECT_NEAR(r.evicted_position, 161.5 / 1023, 1e-9);  // the first lines read were the ones gone
  // No eviction at all: a lower bound only.
  steps.resize(2);
  const auto k = analyze_replica_steps(steps, 390);
  EXPECT_FALSE(k.evicted);
  EXPECT_EQ(k.kept_lines, 512u);
}

TEST(CacheGpuSharing, PlanGroupsAndModes) {
  std::vector<int> side;
  for (int i = 0; i < 64; ++i) side.push_back(i % 3 == 0);
  const auto p = plan_sharing(side, 4096, 132, 4);
  EXPECT_EQ(p.groups, 33);
  std::size_t total = 0;
  for (const auto& l : p.lists) total += l.size();
  EXPECT_EQ(total, 64u);
  for (std::size_t l = 0; l < p.lists.size(); ++l)
    for (auto o : p.lists[l]) {
      EXPECT_EQ((o / 4096) % 33, l / 2);
      EXPECT_EQ(side[o / 4096], static_cast<int>(l % 2));
    }
  EXPECT_EQ(lists_of_sm(p, 40, 1, SharingMode::kNear), std::vector<int>{2 * 7 + 1});
  EXPECT_EQ(lists_of_sm(p, 40, 1, SharingMode::kFar), std::vector<int>{2 * 7});
  EXPECT_EQ(plan_sharing(side, 4096, 132, 132).groups, 1);
  EXPECT_EQ(plan_sharing(side, 4096, 132, 1).groups, 132);
  EXPECT_THROW(plan_sharing(side, 4096, 132, 0), std::invalid_argument);
}

TEST(CacheGpuSharing, BytesAndSumsMatchABruteForceCount) {
  const std::uint64_t unit = 4096;
  std::vector<int> side;
  for (int i = 0; i < 256; ++i) side.push_back((i * 7) % 5 < 2);
  std::vector<int> sm_side;
  for (int s = 0; s < 12; ++s) sm_side.push_back(s % 2);
  for (int k : {1, 3, 12})
    for (auto mode : {SharingMode::kAll, SharingMode::kNear, SharingMode::kFar}) {
      const auto p = plan_sharing(side, unit, 12, k);
      std::uint64_t bytes = 0, sum = 0;
      for (int s = 0; s < 12; ++s)
        for (int u = 0; u < 256; ++u) {
          if (u % p.groups != s % p.groups) continue;
          if (mode == SharingMode::kNear && side[u] != sm_side[s]) continue;
          if (mode == SharingMode::kFar && side[u] == sm_side[s]) continue;
          for (std::uint64_t w = 0; w < unit / 8; ++w) sum += 2 * (u * unit + 8 * w);
          bytes += 2 * unit;
        }
      const auto e = expect_sharing(p, sm_side, mode, 2);
      EXPECT_EQ(e.bytes, bytes) << k;
      EXPECT_EQ(e.sum, sum) << k;
    }
  // Every line read by all SMs: k x the working set per pass.
  const auto all = expect_sharing(plan_sharing(side, unit, 12, 12), sm_side, SharingMode::kAll, 1);
  EXPECT_EQ(all.bytes, 12 * 256 * unit);
}

TEST(CacheGpuSharing, GpuL2CachePatternMatchesItsIndexFormula) {
  const std::uint64_t blocks = 37;
  const std::uint32_t threads = 8, run = 3, n = 6;
  std::uint64_t sum = 0, bytes = 0;
  for (std::uint64_t b = 0; b < blocks; ++b)
    for (std::uint32_t t = 0; t < threads; ++t)
      for (std::uint32_t i = 0; i < n / 2; ++i) {
        const std::uint64_t idx = (std::uint64_t{threads} * run * i + (b % run) * threads) * 2 + t;
        sum += 8 * idx + 8 * (idx + threads);
        bytes += 16;
      }
  const auto e = expect_gpu_l2_cache(blocks, threads, run, n);
  EXPECT_EQ(e.sum, sum);
  EXPECT_EQ(e.bytes, bytes);
  EXPECT_DOUBLE_EQ(gb_per_s(2'000'000'000, 1000), 2.0);
  EXPECT_EQ(gb_per_s(1, 0), 0.0);
}

TEST(CacheGpuColdCapacity, BisectionBracketsTheCapacity) {
  const std::uint64_t cap = 25'165'824 + 3 * 128;  // not a power of two
  int calls = 0;
  auto measure = [&](std::uint64_t b) {
    ++calls;
    return b <= cap ? 270.0 : 600.0;
  };
  const auto s = search_capacity(measure, 1 << 20, 96 << 20, 12, 128);
  ASSERT_TRUE(s.valid);
  EXPECT_LE(s.lo, cap);
  EXPECT_GT(s.hi, cap);
  EXPECT_LT(static_cast<double>(s.hi - s.lo) / cap, 0.01);
  EXPECT_EQ(calls, static_cast<int>(s.probes.size()));
  // Levels too close: no capacity.
  const auto flat = search_capacity([](std::uint64_t) { return 300.0; }, 1 << 20, 96 << 20, 12, 128);
  EXPECT_FALSE(flat.valid);
}

}  // namespace
}  // namespace gpuprobe::analysis
