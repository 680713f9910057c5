// The L2 conflict set by eviction sweeps (analysis/cache_inference.hpp) on modelled L2s whose
// hashed sets outnumber what one access sequence can reach, as on the H200: a property test
// over random hierarchies (fixed seed) recovers ways, line size and policy class, and targeted
// checks show what the search does when its pool is too small or the device has no sweep.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>

#include "device/model_device.hpp"
#include "measure/cache_search.hpp"
#include "model_probe.hpp"

namespace gpuprobe {
namespace {

using device::ModelConfig;
using device::Replacement;
using measure::cache::Level;

using test::kGiB;
using test::kKiB;
using test::kMiB;
using test::probe_on;

struct Large {
  ModelConfig config;
  std::uint64_t pool_lines = 0, buffer_bytes = 0;
};

/// An L2 of 2^s sets per partition (s = 9..11) behind a random GF(2) hash of address bits up
/// to bit 29, 64- or 128-B lines, 4..24 ways, any policy, 1 or 2 partitions (replication on or
/// off), no TLB.
Large random_large(std::mt19937_64& rng, int index) {
  const auto pick = [&](std::initializer_list<std::uint32_t> v) {
    return *(v.begin() + static_cast<std::ptrdiff_t>(rng() % v.size()));
  };
  Large d;
  ModelConfig& c = d.config;
  c.name = "large-" + std::to_string(index);
  c.cc_major = 9;
  c.sm_count = 4;
  c.global_mem_bytes = 64 * kGiB;
  c.l1.line_bytes = 128;
  c.l1.ways = 4;
  c.l1.capacity_bytes = 0;
  c.l1_shared_unified_bytes = 64 * kKiB;
  c.l1.hit_latency_cycles = 30;
  const Replacement policies[] = {Replacement::kLru, Replacement::kFifo, Replacement::kTreePlru,
                                  Replacement::kRandom};
  c.l2.policy = policies[rng() % 4];
  c.l2.line_bytes = pick({64, 128});
  c.l2.ways =
      c.l2.policy == Replacement::kTreePlru ? pick({4, 8, 16}) : pick({4, 6, 8, 12, 16, 20, 24});
  c.l2.sector_bytes = 32;
  const int s = 9 + static_cast<int>(rng() % 3);
  const int line_bits = __builtin_ctz(c.l2.line_bytes);
  for (int i = 0; i < s; ++i) {
    std::uint64_t mask = std::uint64_t{1} << (line_bits + i);
    for (int b = line_bits + s; b < 30; ++b)
      if (rng() % 3 == 0) mask |= std::uint64_t{1} << b;
    c.l2.set_hash_masks.push_back(mask);
  }
  const int partitions = 1 + static_cast<int>(rng() % 2);
  const std::uint64_t partition_bytes = (std::uint64_t{1} << s) * c.l2.ways * c.l2.line_bytes;
  c.l2.capacity_bytes = partition_bytes * static_cast<std::uint64_t>(partitions);
  c.l2_partitions = partitions;
  c.l2.hit_latency_cycles = 250;
  c.l2_far_hit_latency_cycles = 420;
  c.dram_latency_cycles = 700;
  if (partitions == 2) {
    c.l2_partitioned = true;
    c.l2_near = c.l2;
    c.l2_near.capacity_bytes = partition_bytes;
    std::uint64_t mask = 0;
    while (mask == 0)
      for (int b = line_bits; b < 24; ++b)
        if (rng() % 3 == 0) mask |= std::uint64_t{1} << b;
    c.l2_partition_masks = {mask};
    c.l2_replication = rng() % 2;
  }
  c.tlb = {};
  c.noise_relative_sigma = 0.003;
  c.seed = 5000 + static_cast<std::uint64_t>(index);
  // What the experiment sizes from the device: four times the L2's lines at 128 B.
  d.pool_lines = 4 * c.l2.capacity_bytes / 128;
  d.buffer_bytes = 1;
  while (d.buffer_bytes < 2 * d.pool_lines * kKiB) d.buffer_bytes *= 2;
  return d;
}

TEST(L2Eviction, RecoversWaysLinePolicyOfLargeHashedL2s) {
  using namespace analysis::cache;
  using namespace measure::cache;
  std::mt19937_64 rng(20261202);
  const int kHierarchies = 40;
  int deterministic = 0, recovered = 0, random_policy = 0, random_honest = 0, random_seen = 0;
  std::uint64_t most_tests = 0;
  for (int i = 0; i < kHierarchies; ++i) {
    const Large d = random_large(rng, i);
    const auto& c = d.config;
    device::ModelDevice dev(c);
    auto buf = dev.alloc_probe_buffer(d.buffer_bytes);
    Probe p = probe_on(dev, *buf, d.buffer_bytes, 300 + static_cast<std::uint64_t>(i));
    const auto cal = calibrate(p, Level::kL2);
    ASSERT_TRUE(cal.ok) << c.name;
    const auto set = find_conflict_set_by_eviction(p, cal, d.pool_lines, 1024);
    const auto line = infer_line_size(p, Level::kL2, cal, set);
    const auto pol = infer_policy(p, Level::kL2, cal, set);
    const bool ok = set.found && set.minimal_verified && set.repeatable() &&
                    set.ways == c.l2.ways && line.line_bytes == c.l2.line_bytes &&
                    pol.label() == device::to_string(c.l2.policy);
    if (c.l2.policy == Replacement::kRandom) {
      // No eviction set is minimal under random replacement; what the search must not do is
      // name a deterministic class for it.
      ++random_policy;
      random_honest += pol.label() != "lru" && pol.label() != "fifo" && pol.label() != "tree_plru";
      random_seen += set.probabilistic() ? 1 : 0;
    } else {
      ++deterministic;
      recovered += ok;
      most_tests = std::max<std::uint64_t>(most_tests, set.eviction_tests);
      // What names an L2 "random" on the GPU must never fire on a deterministic policy.
      EXPECT_FALSE(set.probabilistic()) << c.name;
    }
    if (!ok)
      std::printf(
          "%s (%s, %u-way, %u B, %d partition(s)%s): found %d minimal %d ways %u line %u "
          "policy %s, %llu tests\n",
          c.name.c_str(), device::to_string(c.l2.policy).c_str(), c.l2.ways, c.l2.line_bytes,
          c.l2_partitions, c.l2_replication ? ", replication" : "", set.found, set.minimal_verified,
          set.ways, line.line_bytes, pol.label().c_str(),
          static_cast<unsigned long long>(set.eviction_tests));
  }
  std::printf(
      "recovered %d of %d deterministic (at most %llu tests); random policy not named "
      "deterministic: %d of %d; eviction seen not to repeat: %d\n",
      recovered, deterministic, static_cast<unsigned long long>(most_tests), random_honest,
      random_policy, random_seen);
  EXPECT_GE(recovered * 100, deterministic * 95);
  EXPECT_EQ(random_honest, random_policy);
  // One target in most random-policy caches already shows eviction that does not repeat (the
  // experiment sweeps up to ten targets).
  EXPECT_GE(2 * random_seen, random_policy);
}

TEST(L2Eviction, APoolSmallerThanTheCacheFindsNothing) {
  using namespace analysis::cache;
  using namespace measure::cache;
  std::mt19937_64 rng(7);
  Large d = random_large(rng, 1);
  d.config.l2.policy = Replacement::kLru;
  device::ModelDevice dev(d.config);
  auto buf = dev.alloc_probe_buffer(d.buffer_bytes);
  Probe p = probe_on(dev, *buf, d.buffer_bytes, 11);
  const auto cal = calibrate(p, Level::kL2);
  // A tenth of the cache's lines cannot hold ways lines of every set.
  const auto set = find_conflict_set_by_eviction(
      p, cal, d.config.l2.capacity_bytes / d.config.l2.line_bytes / 10, 1024);
  EXPECT_FALSE(set.found);
  EXPECT_NE(set.note.find("does not evict"), std::string::npos) << set.note;
}

/// One unpartitioned modulo L2 of 4 sets x `ways` (LRU, 128-B lines) on a random large model.
ModelConfig wide_lru_l2(std::uint32_t ways) {
  std::mt19937_64 rng(5);
  Large d = random_large(rng, 3);
  auto& c = d.config;
  c.l2.policy = Replacement::kLru;
  c.l2.line_bytes = 128;
  c.l2.ways = ways;
  c.l2.set_hash_masks.clear();
  c.l2_partitioned = false;
  c.l2_partitions = 1;
  c.l2_partition_masks.clear();
  c.l2.capacity_bytes = std::uint64_t{4} * ways * 128;
  return c;
}

/// The eviction search over 8192 candidates at `alignment` on a wide_lru_l2(ways) model.
analysis::cache::ConflictSet search_wide_lru_l2(std::uint32_t ways, std::uint64_t alignment) {
  using namespace analysis::cache;
  using namespace measure::cache;
  device::ModelDevice dev(wide_lru_l2(ways));
  auto buf = dev.alloc_probe_buffer(64 * kMiB);
  Probe p = probe_on(dev, *buf, 64 * kMiB, 13);
  const auto cal = calibrate(p, Level::kL2);
  return find_conflict_set_by_eviction(p, cal, 8192, alignment);
}

// A 512-way set (every 1 KiB-aligned candidate falls into the target's set): the groups double
// while every one is needed, each such pass raising the lower bound, until single lines are
// the groups and the whole prefix is the minimal set.
TEST(L2Eviction, AVeryWideSetIsFoundThroughDoublingGroups) {
  const auto set = search_wide_lru_l2(512, 1024);
  EXPECT_TRUE(set.found) << set.note;
  EXPECT_TRUE(set.repeatable());
  EXPECT_EQ(set.ways, 512u);
  EXPECT_EQ(set.ways_at_least, 512u);
}

// A 200-way set among line-aligned candidates (a quarter of them congruent): at 64 groups
// nearly every group holds a congruent line, a pass frees under a twentieth, and the search
// stops with a lower bound. The bound is the groups that pass kept, each needed (before the
// eighth session a pass that removed a few groups left it at the previous pass's 32).
TEST(L2Eviction, BoundCountsTheGroupsKept) {
  const auto set = search_wide_lru_l2(200, 128);
  EXPECT_FALSE(set.found);
  EXPECT_TRUE(set.repeatable());
  // Each kept group holds a congruent line: more than the 32 of the first pass, at most the
  // 201 congruent lines an LRU set of 200 ways needs.
  EXPECT_GT(set.ways_at_least, 32u) << set.note;
  EXPECT_LE(set.ways_at_least, 201u);
  EXPECT_NE(set.note.find("of 64 groups"), std::string::npos) << set.note;
  EXPECT_NE(set.note.find(std::to_string(set.ways_at_least) + " competing lines"),
            std::string::npos)
      << set.note;
}

// The same search, stopped with every group needed: the volume check replaces one group at a
// time by as many fresh lines. A conflict within a 200-way set restores the eviction only when
// the fresh group brings as many congruent lines as the dropped one held (about a half of the
// time here), never every time as a capacity eviction does: not "volume".
TEST(L2Eviction, VolumeCheckDoesNotCallAWideSetVolume) {
  const auto set = search_wide_lru_l2(200, 128);
  ASSERT_EQ(set.volume_trials, 8) << set.note;
  EXPECT_LT(set.volume_restored, 8) << set.note;
  EXPECT_NE(analysis::cache::volume_verdict(set.volume_trials, set.volume_restored), "volume")
      << set.note;
}

/// The eviction search on an unpartitioned 16-way LRU L2 whose lines are stored apart from its
/// tags: a data store of 1 / `data_share` of the tags that frees the least recently used line
/// of all when full. `sets_log2` > 0 replaces the random model's index by a hash over that many
/// bits (128-B lines) and sizes the pool and buffer for it.
analysis::cache::ConflictSet search_decoupled_l2(std::uint64_t seed, int index,
                                                 std::uint64_t data_share, int sets_log2,
                                                 std::uint64_t probe_seed) {
  using namespace analysis::cache;
  using namespace measure::cache;
  std::mt19937_64 rng(seed);
  Large d = random_large(rng, index);
  auto& c = d.config;
  c.l2.policy = Replacement::kLru;
  c.l2.ways = 16;
  c.l2_partitions = 1;
  c.l2_partitioned = false;
  c.l2_partition_masks.clear();
  if (sets_log2 > 0) {
    c.l2.line_bytes = 128;
    c.l2.set_hash_masks.clear();
    for (int i = 0; i < sets_log2; ++i) {
      std::uint64_t mask = std::uint64_t{1} << (7 + i);
      for (int b = 7 + sets_log2; b < 30; ++b)
        if (rng() % 3 == 0) mask |= std::uint64_t{1} << b;
      c.l2.set_hash_masks.push_back(mask);
    }
  }
  c.l2.capacity_bytes = (std::uint64_t{1} << c.l2.set_hash_masks.size()) * 16 * c.l2.line_bytes;
  c.l2.data_capacity_bytes = c.l2.capacity_bytes / data_share;
  c.l2.data_victim = device::DataVictim::kGlobalLru;
  if (sets_log2 > 0) {
    d.pool_lines = 4 * c.l2.capacity_bytes / 128;
    d.buffer_bytes = 1;
    while (d.buffer_bytes < 2 * d.pool_lines * kKiB) d.buffer_bytes *= 2;
  }
  device::ModelDevice dev(c);
  auto buf = dev.alloc_probe_buffer(d.buffer_bytes);
  Probe p = probe_on(dev, *buf, d.buffer_bytes, probe_seed);
  const auto cal = calibrate(p, Level::kL2);
  EXPECT_TRUE(cal.ok);
  return find_conflict_set_by_eviction(p, cal, d.pool_lines, 1024);
}

// A target that leaves by capacity, not by a conflict in its set: an L2 whose lines are stored
// apart from its tags (a data store of an eighth of the tags, freeing the least recently used
// line of all when full). Every prefix past the store's lines evicts the placed target before
// 16 lines of its set arrive, any group removed ends it, and any fresh lines of the same count
// bring it back every time: "volume".
TEST(L2Eviction, VolumeCheckNamesACapacityEviction) {
  using namespace analysis::cache;
  using namespace measure::cache;
  const auto set = search_decoupled_l2(31, 5, 8, 0, 19);
  EXPECT_FALSE(set.found) << set.note;
  ASSERT_EQ(set.volume_trials, 8) << set.note;
  EXPECT_EQ(set.volume_restored, 8);
  EXPECT_EQ(volume_verdict(set.volume_trials, set.volume_restored), "volume");
  EXPECT_NE(set.note.find("(volume)"), std::string::npos) << set.note;
}

// The same capacity eviction over a larger set: 2048 sets x 16 ways behind a hash, a data store
// of a quarter of the tags (8192 lines). The first pass of 32 groups frees nothing; a set that
// frees under a twentieth of 32 groups has about 96 congruent lines or more, which 64 groups
// cannot resolve either, so over more than 64 x 64 lines the search stops there (a pass of 64
// groups over such a set cost about a second per target on the H200) with the volume check.
TEST(L2Eviction, ALargeStuckSearchStopsAtThirtyTwoGroups) {
  using namespace analysis::cache;
  using namespace measure::cache;
  const auto set = search_decoupled_l2(37, 6, 4, 11, 23);
  EXPECT_FALSE(set.found) << set.note;
  EXPECT_GT(set.shortest_prefix, 64u * 64u);
  EXPECT_NE(set.note.find("of 32 groups"), std::string::npos) << set.note;
  EXPECT_EQ(set.ways_at_least, 32u) << set.note;
  EXPECT_EQ(volume_verdict(set.volume_trials, set.volume_restored), "volume") << set.note;
}

// Known answers: only a complete check of 8 trials has a verdict; all 8 restored is "volume",
// 6 or 7 undecided, 5 or fewer "not_volume".
TEST(L2Eviction, VolumeVerdictKnownAnswers) {
  using namespace analysis::cache;
  using namespace measure::cache;
  EXPECT_EQ(volume_verdict(8, 8), "volume");
  EXPECT_EQ(volume_verdict(8, 7), "undecided");
  EXPECT_EQ(volume_verdict(8, 6), "undecided");
  EXPECT_EQ(volume_verdict(8, 5), "not_volume");
  EXPECT_EQ(volume_verdict(8, 0), "not_volume");
  EXPECT_EQ(volume_verdict(0, 0), "");
  EXPECT_EQ(volume_verdict(5, 5), "");  // cut short
  EXPECT_EQ(volume_verdict(8, 9), "");  // not a count of the trials
}

// Two partitions whose DRAM misses differ by home (700 / 940 cycles): the cold reads pick the
// lines homed in SM 0's partition as eviction targets; with one DRAM latency for both homes
// there is nothing to tell them apart and no target is chosen.
TEST(L2Eviction, NearHomeTargetsFromColdReads) {
  for (const bool by_home : {true, false}) {
    device::ModelConfig c = device::builtin_model_config("h200");
    c.l2_partitions = 2;
    if (by_home) {
      c.dram_near_home_latency_cycles = 700;
      c.dram_far_home_latency_cycles = 940;
    }
    device::ModelDevice dev(c);
    auto buf = dev.alloc_probe_buffer(test::kGiB);
    auto p = test::probe_on(dev, *buf, test::kGiB, 5);
    const auto t = measure::cache::near_home_targets(p, 32, 1024);
    ASSERT_EQ(t.lines.size(), 32u);
    EXPECT_EQ(t.split, by_home);
    if (!by_home) {
      EXPECT_TRUE(t.targets.empty());
      continue;
    }
    std::size_t near = 0;
    for (auto o : t.lines) near += __builtin_parityll(o & c.l2_partition_masks[0]) == 0;
    ASSERT_EQ(t.targets.size(), near);  // every near-homed line, and only those
    for (auto o : t.targets) EXPECT_EQ(__builtin_parityll(o & c.l2_partition_masks[0]), 0) << o;
    // The eviction search evicts the target it is given.
    p.eviction_target = t.targets.front();
    const auto cal = measure::cache::calibrate(p, measure::cache::Level::kL2);
    const auto cs =
        measure::cache::find_conflict_set_by_eviction(p, cal, 4 * c.l2.capacity_bytes / 128, 1024);
    EXPECT_EQ(cs.target, t.targets.front());
  }
}

// Cold reads of 32 random lines on an H200 (GPU-2776457c, cache.l2.ways' target_selection):
// 15 near-homed DRAM misses at 549-596 cycles, 14 far-homed at 706-787, and three page walks
// (899, 1126, 1873) that pulled a plain two-means split to one class.
TEST(L2Eviction, NearHomeSplitOfRecordedH200ColdReads) {
  const std::vector<double> cold = {549, 557, 559, 560, 563, 566, 575, 577, 577,  578, 582,
                                    583, 592, 593, 596, 706, 721, 724, 732, 737,  741, 759,
                                    761, 763, 766, 773, 775, 776, 787, 899, 1126, 1873};
  const auto th = analysis::cache::near_home_threshold(cold);
  ASSERT_TRUE(th.has_value());
  EXPECT_GT(*th, 596);
  EXPECT_LT(*th, 706);
  EXPECT_EQ(std::count_if(cold.begin(), cold.end(), [&](double v) { return v < *th; }), 15);
  // Another H200 (GPU-df21093a): 14 / 14 with a walk (998) inside the cap that drew an
  // iterated two-means away from the gap.
  const std::vector<double> cold2 = {548, 554, 558, 559, 563, 563, 572, 579,  582,  582, 582,
                                     582, 583, 589, 681, 695, 723, 729, 746,  751,  753, 755,
                                     757, 758, 759, 769, 775, 788, 998, 1052, 1203, 2266};
  const auto th2 = analysis::cache::near_home_threshold(cold2);
  ASSERT_TRUE(th2.has_value());
  EXPECT_EQ(std::count_if(cold2.begin(), cold2.end(), [&](double v) { return v < *th2; }), 14);
  // One class (a single DRAM latency): no split.
  std::vector<double> one(32);
  for (std::size_t i = 0; i < one.size(); ++i) one[i] = 650 + (i % 7) * 3;
  one.push_back(1500);
  EXPECT_FALSE(analysis::cache::near_home_threshold(one).has_value());
}

// A TLB of 32 entries of 2 MiB in front of the L2 (a miss costs 400 cycles): the sweep over a
// pool of 128 pages or more loses the target's translation in every test, and a re-read that
// paid the walk looked like an evicted line (every prefix evicted, the "set" was the pages
// that pushed the entry out). The eviction test reads another line of the target's page first,
// untimed, and the set of the L2 is found.
TEST(L2Eviction, ATranslationLostToTheSweepIsNotAnEviction) {
  using namespace analysis::cache;
  using namespace measure::cache;
  std::mt19937_64 rng(20261203);
  Large d = random_large(rng, 4);
  auto& c = d.config;
  c.l2.policy = Replacement::kLru;
  c.tlb = {{32, 2 * kMiB, 0, 400}};
  ASSERT_GE(d.buffer_bytes / (2 * kMiB), 4 * c.tlb[0].entries) << c.name;
  device::ModelDevice dev(c);
  auto buf = dev.alloc_probe_buffer(d.buffer_bytes);
  Probe p = probe_on(dev, *buf, d.buffer_bytes, 17);
  const auto cal = calibrate(p, Level::kL2);
  ASSERT_TRUE(cal.ok);
  const auto set = find_conflict_set_by_eviction(p, cal, d.pool_lines, 1024);
  EXPECT_TRUE(set.found) << set.note;
  EXPECT_TRUE(set.repeatable());
  EXPECT_EQ(set.ways, c.l2.ways) << set.note;
}

/// A pool outcome for search_pools: found or not, by eviction sweeps, its target's kind.
measure::cache::PoolOutcome outcome(bool found, const std::string& kind = "dram",
                                    const std::string& method = "eviction_sweeps") {
  measure::cache::PoolOutcome o;
  o.set.found = found;
  o.set.ways = found ? 16 : 0;
  o.set.method = method;
  o.kind = kind;
  return o;
}

// The pools of one level. On the H200 most eviction targets give no set (their eviction is not
// a conflict in one set): each is replaced by the next until two sets of one kind are found, up
// to the limit (six misses before two sets was past the old limit of five pools).
TEST(L2Eviction, SearchPoolsReplacesTargetsWithoutASet) {
  using measure::cache::search_pools;
  int calls = 0;
  const auto six_misses = search_pools(2, 10, [&](int k) {
    ++calls;
    return outcome(k >= 6);
  });
  EXPECT_EQ(calls, 8);  // stops at the second set
  EXPECT_EQ(six_misses.pools.size(), 8u);
  EXPECT_EQ(six_misses.chosen, (std::vector<std::size_t>{6, 7}));
  EXPECT_EQ(six_misses.kind, "dram");
  // No set at all: every pool up to the limit is tried, none chosen.
  const auto none = search_pools(2, 10, [](int) { return outcome(false); });
  EXPECT_EQ(none.pools.size(), 10u);
  EXPECT_TRUE(none.chosen.empty());
}

// Sets count together only when their targets were served alike: a first set whose target was
// a far line's near copy does not stop two later sets of lines homed beside the SM from
// agreeing (before, every set unlike the first was set aside: GPU-378d63f9 had two such 16-way
// sets and no ways finding).
TEST(L2Eviction, SearchPoolsCountsSetsOfOneKind) {
  using measure::cache::search_pools;
  const std::vector<measure::cache::PoolOutcome> seq = {
      outcome(true, "far_partition"), outcome(true, "dram"), outcome(false), outcome(true, "dram"),
      outcome(true, "far_partition")};
  const auto r = search_pools(2, 10, [&](int k) { return seq[static_cast<std::size_t>(k)]; });
  EXPECT_EQ(r.pools.size(), 4u);
  EXPECT_EQ(r.chosen, (std::vector<std::size_t>{1, 3}));
  EXPECT_EQ(r.kind, "dram");
  // Too few pools for two of a kind: the kind with the most sets, the earliest of equals.
  const auto short_run =
      search_pools(2, 3, [&](int k) { return seq[static_cast<std::size_t>(k)]; });
  EXPECT_EQ(short_run.chosen, (std::vector<std::size_t>{0}));
  EXPECT_EQ(short_run.kind, "far_partition");
  // Pools of sequences draw from the same candidates: one that finds no set ends the search.
  const auto l1 = search_pools(3, 3, [](int k) { return outcome(k == 0, "", "sequences"); });
  EXPECT_EQ(l1.pools.size(), 2u);
  EXPECT_EQ(l1.chosen, (std::vector<std::size_t>{0}));
}

TEST(L2Eviction, ADeviceWithoutSweepsSaysSo) {
  using namespace analysis::cache;
  using namespace measure::cache;
  std::mt19937_64 rng(9);
  const Large d = random_large(rng, 2);
  device::ModelDevice dev(d.config);
  auto buf = dev.alloc_probe_buffer(d.buffer_bytes);
  Probe p = probe_on(dev, *buf, d.buffer_bytes, 12);
  p.max_sweep = 0;
  const auto cal = calibrate(p, Level::kL2);
  const auto set = find_conflict_set_by_eviction(p, cal, d.pool_lines, 1024);
  EXPECT_FALSE(set.found);
  EXPECT_EQ(set.note, "the device runs no sweeps");
}

}  // namespace
}  // namespace gpuprobe
