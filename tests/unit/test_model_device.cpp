// The modelled GPU: the cache simulator's LRU, and chases that must land on the model's known
// latencies for working sets on either side of every capacity.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "analysis/chain.hpp"
#include "core/error.hpp"
#include "device/model_device.hpp"

namespace gpuprobe::device {
namespace {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

// ---------------------------------------------------------------------------------------------
// CacheSim

TEST(CacheSim, LruSequenceInOneSet) {
  CacheSim c({256, 128, 2, 1});  // one set, two ways
  ASSERT_EQ(c.sets(), 1u);
  ASSERT_EQ(c.ways(), 2u);
  const std::uint64_t A = 0, B = 128, C = 256;
  EXPECT_FALSE(c.access(A));
  EXPECT_FALSE(c.access(B));
  EXPECT_TRUE(c.access(A));        // A most recent, B least
  EXPECT_TRUE(c.access(A + 127));  // same line
  EXPECT_FALSE(c.access(C));       // evicts B
  EXPECT_TRUE(c.contains(A));
  EXPECT_FALSE(c.contains(B));
  EXPECT_TRUE(c.contains(C));
  EXPECT_FALSE(c.access(B));  // evicts A (C was used more recently)
  EXPECT_FALSE(c.contains(A));
  EXPECT_TRUE(c.access(C));
  EXPECT_TRUE(c.access(B));
  EXPECT_EQ(c.hits(), 4u);
  EXPECT_EQ(c.misses(), 4u);
  c.clear();
  EXPECT_FALSE(c.contains(B));
  EXPECT_EQ(c.hits() + c.misses(), 0u);
}

TEST(CacheSim, SetIndexIsLineModuloSets) {
  CacheSim c({3 * 128, 128, 1, 1});  // direct mapped, three sets
  ASSERT_EQ(c.sets(), 3u);
  EXPECT_FALSE(c.access(0 * 128));
  EXPECT_FALSE(c.access(1 * 128));
  EXPECT_FALSE(c.access(2 * 128));
  EXPECT_TRUE(c.access(0));
  EXPECT_FALSE(c.access(3 * 128));  // set 0 again: evicts line 0
  EXPECT_FALSE(c.contains(0));
  EXPECT_TRUE(c.contains(1 * 128));
  EXPECT_TRUE(c.contains(2 * 128));
}

/// Reference true-LRU cache: per set, a list from most to least recently used.
struct ReferenceLru {
  std::uint64_t sets, ways, line;
  std::vector<std::vector<std::uint64_t>> s;
  ReferenceLru(std::uint64_t sets_, std::uint64_t ways_, std::uint64_t line_)
      : sets(sets_), ways(ways_), line(line_), s(sets_) {}
  bool access(std::uint64_t address) {
    const std::uint64_t l = address / line;
    auto& v = s[l % sets];
    auto it = std::find(v.begin(), v.end(), l);
    const bool hit = it != v.end();
    if (hit)
      v.erase(it);
    else if (v.size() == ways)
      v.pop_back();
    v.insert(v.begin(), l);
    return hit;
  }
};

void expect_matches_reference(const CacheConfig& config, std::uint64_t address_lines) {
  CacheSim c(config);
  ReferenceLru ref(c.sets(), c.ways(), config.line_bytes);
  std::mt19937_64 rng(42);
  std::uint64_t hits = 0;
  for (int i = 0; i < 60000; ++i) {
    // A skewed mix: a hot range that mostly hits, and a wide one that evicts.
    const std::uint64_t range = (i % 3 == 0) ? address_lines : address_lines / 4;
    const std::uint64_t address = (rng() % range) * config.line_bytes + rng() % config.line_bytes;
    const bool expected = ref.access(address);
    ASSERT_EQ(c.access(address), expected) << "access " << i;
    hits += expected;
  }
  EXPECT_EQ(c.hits(), hits);
  EXPECT_EQ(c.misses(), 60000 - hits);
  EXPECT_GT(hits, 1000u);
  EXPECT_GT(60000 - hits, 1000u);
}

TEST(CacheSim, SetAssociativeMatchesReferenceLru) {
  expect_matches_reference({16 * 4 * 64, 64, 4, 1}, 200);  // 16 sets x 4 ways (scan)
}

TEST(CacheSim, FullyAssociativeMatchesReferenceLru) {
  CacheSim c({64 * 128, 128, 0, 1});
  EXPECT_EQ(c.sets(), 1u);
  EXPECT_EQ(c.ways(), 64u);  // above kMaxScanWays: the hashed implementation
  expect_matches_reference({64 * 128, 128, 0, 1}, 160);
}

TEST(CacheSim, HighAssociativityMatchesReferenceLru) {
  expect_matches_reference({3 * 40 * 32, 32, 40, 1}, 300);  // 3 sets x 40 ways (hashed)
}

TEST(CacheSim, ZeroCapacityAlwaysMissesAndBadGeometryThrows) {
  CacheSim none({0, 128, 4, 1});
  EXPECT_FALSE(none.access(0));
  EXPECT_FALSE(none.access(0));
  EXPECT_EQ(none.misses(), 2u);
  EXPECT_THROW(CacheSim({1000, 128, 4, 1}), UsageError);  // not a multiple of line * ways
  EXPECT_THROW(CacheSim({1024, 0, 4, 1}), UsageError);
}

// ---------------------------------------------------------------------------------------------
// Chases on the tiny model: L1 16 KiB (128-B lines, 4-way: 32 sets), L2 near 256 KiB (8-way),
// whole L2 512 KiB (8-way); latencies 30 / 200 / 300 / 500.

struct Chased {
  ChaseTiming timing;
  ModelChaseStats stats;
};

Chased chase_once(ModelDevice& dev, std::uint64_t bytes, LoadOp op = LoadOp::kCa, int carveout = -1,
                  std::uint64_t timed = 4000) {
  auto chain = dev.make_chain({bytes, 128, 7});
  ChaseParams p;
  p.op = op;
  p.warmup_steps = 2 * chain->nodes();
  p.timed_steps = timed;
  p.carveout_percent = carveout;
  Chased c{dev.chase(*chain, p), dev.last_chase_stats()};
  return c;
}

TEST(ModelDevice, TinyConfigIsWhatTheTestsAssume) {
  const ModelConfig c = builtin_model_config("tiny");
  EXPECT_EQ(l1_capacity_bytes(c, -1), 16 * KiB);
  EXPECT_EQ(c.l1.hit_latency_cycles, 30);
  EXPECT_TRUE(c.l2_partitioned);
  EXPECT_EQ(c.l2_near.capacity_bytes, 256 * KiB);
  EXPECT_EQ(c.l2.capacity_bytes, 512 * KiB);
  EXPECT_EQ(c.l2_near.hit_latency_cycles, 200);
  EXPECT_EQ(c.l2_far_hit_latency_cycles, 300);
  EXPECT_EQ(c.dram_latency_cycles, 500);
  EXPECT_EQ(c.noise_relative_sigma, 0);
}

TEST(ModelDevice, BelowL1GivesL1Latency) {
  ModelDevice dev(builtin_model_config("tiny"));
  for (std::uint64_t ws : {1 * KiB, 8 * KiB, 16 * KiB}) {
    const Chased c = chase_once(dev, ws);
    EXPECT_DOUBLE_EQ(c.timing.cycles_per_step, 30) << ws;
    EXPECT_EQ(c.stats.l1_hits, 4000u) << ws;
    EXPECT_DOUBLE_EQ(c.timing.total_cycles, 30 * 4000.0);
  }
}

TEST(ModelDevice, JustAboveL1GivesL2Latency) {
  ModelDevice dev(builtin_model_config("tiny"));
  // One more line per set than the 4 ways: the cyclic chase thrashes every set.
  const Chased c = chase_once(dev, 16 * KiB + 32 * 128);
  EXPECT_DOUBLE_EQ(c.timing.cycles_per_step, 200);
  EXPECT_EQ(c.stats.l2_hits, 4000u);

  // Fully associative L1: a single line over capacity already thrashes.
  ModelConfig fa = builtin_model_config("tiny");
  fa.l1.ways = 0;
  ModelDevice fdev(fa);
  EXPECT_DOUBLE_EQ(chase_once(fdev, 16 * KiB).timing.cycles_per_step, 30);
  EXPECT_DOUBLE_EQ(chase_once(fdev, 16 * KiB + 128).timing.cycles_per_step, 200);
}

TEST(ModelDevice, BetweenNearAndWholeL2GivesFarLatency) {
  ModelDevice dev(builtin_model_config("tiny"));
  EXPECT_DOUBLE_EQ(chase_once(dev, 256 * KiB).timing.cycles_per_step, 200);
  const Chased c = chase_once(dev, 384 * KiB);
  EXPECT_DOUBLE_EQ(c.timing.cycles_per_step, 300);
  EXPECT_EQ(c.stats.l2_far_hits, 4000u);
  EXPECT_DOUBLE_EQ(chase_once(dev, 512 * KiB).timing.cycles_per_step, 300);
}

TEST(ModelDevice, BeyondL2GivesDramLatency) {
  ModelDevice dev(builtin_model_config("tiny"));
  const Chased c = chase_once(dev, 1 * MiB);
  EXPECT_DOUBLE_EQ(c.timing.cycles_per_step, 500);
  EXPECT_EQ(c.stats.dram_loads, 4000u);
}

TEST(ModelDevice, UnpartitionedL2) {
  ModelConfig c = builtin_model_config("tiny");
  c.l2_partitioned = false;
  c.l2.hit_latency_cycles = 250;
  ModelDevice dev(c);
  EXPECT_DOUBLE_EQ(chase_once(dev, 384 * KiB).timing.cycles_per_step, 250);
  EXPECT_DOUBLE_EQ(chase_once(dev, 1 * MiB).timing.cycles_per_step, 500);
}

TEST(ModelDevice, CgAndCvBypassL1) {
  ModelDevice dev(builtin_model_config("tiny"));
  for (LoadOp op : all_load_ops()) {
    const double expected = caches_in_l1(op) ? 30 : 200;
    EXPECT_DOUBLE_EQ(chase_once(dev, 8 * KiB, op).timing.cycles_per_step, expected)
        << to_string(op);
  }
}

TEST(ModelDevice, CarveoutChangesL1Capacity) {
  const ModelConfig c = builtin_model_config("tiny");  // 64 KiB unified, 48 KiB shared max
  EXPECT_EQ(l1_capacity_bytes(c, -1), 16 * KiB);
  EXPECT_EQ(l1_capacity_bytes(c, 0), 64 * KiB);
  EXPECT_EQ(l1_capacity_bytes(c, 50), 40 * KiB);
  EXPECT_EQ(l1_capacity_bytes(c, 100), 16 * KiB);
  EXPECT_EQ(l1_capacity_bytes(c, 33), (64 * KiB - 16220) / 512 * 512);  // rounded to line*ways
  EXPECT_THROW(l1_capacity_bytes(c, 101), UsageError);
  EXPECT_THROW(l1_capacity_bytes(c, -2), UsageError);

  ModelDevice dev(c);
  EXPECT_DOUBLE_EQ(chase_once(dev, 32 * KiB, LoadOp::kCa, -1).timing.cycles_per_step, 200);
  EXPECT_DOUBLE_EQ(chase_once(dev, 32 * KiB, LoadOp::kCa, 0).timing.cycles_per_step, 30);
  EXPECT_EQ(dev.current_l1_capacity_bytes(), 64 * KiB);
  EXPECT_DOUBLE_EQ(chase_once(dev, 32 * KiB, LoadOp::kCa, 100).timing.cycles_per_step, 200);

  // The h200 model's default carve-out is 0: the whole 256 KiB is L1.
  EXPECT_EQ(l1_capacity_bytes(builtin_model_config("h200"), -1), 256 * KiB);
  EXPECT_EQ(l1_capacity_bytes(builtin_model_config("h200"), 100), 28 * KiB);
}

TEST(ModelDevice, CacheStatePersistsAcrossChasesButNotAcrossChains) {
  ModelDevice dev(builtin_model_config("tiny"));
  auto chain = dev.make_chain({8 * KiB, 128, 3});
  ChaseParams p;
  p.timed_steps = chain->nodes();  // one pass, no warm-up: every load is a cold miss
  EXPECT_DOUBLE_EQ(dev.chase(*chain, p).cycles_per_step, 500);
  // The L2 keeps the chain, but every chase (a kernel launch) starts with an empty L1.
  EXPECT_DOUBLE_EQ(dev.chase(*chain, p).cycles_per_step, 200);
  p.warmup_steps = chain->nodes();
  EXPECT_DOUBLE_EQ(dev.chase(*chain, p).cycles_per_step, 30);  // warmed inside the launch
  auto fresh = dev.make_chain({8 * KiB, 128, 3});              // a fresh allocation
  p.warmup_steps = 0;
  EXPECT_DOUBLE_EQ(dev.chase(*fresh, p).cycles_per_step, 500);
}

TEST(ModelDevice, VerifiedAndEndsOnThePredictedNode) {
  ModelDevice dev(builtin_model_config("tiny"));
  const ChainSpec spec{100 * 256 + 17, 256, 99};
  auto chain = dev.make_chain(spec);
  ASSERT_EQ(chain->nodes(), 100u);
  EXPECT_EQ(chain->spec().seed, 99u);
  ChaseParams p;
  p.warmup_steps = 1234;
  p.timed_steps = 5677;
  const ChaseTiming t = dev.chase(*chain, p);
  EXPECT_TRUE(t.verified);
  EXPECT_EQ(t.smid, 0);
  const auto order = analysis::random_cycle_order(100, 99);
  EXPECT_EQ(dev.last_final_node(), analysis::node_after(order, 1234 + 5677));
  EXPECT_NE(dev.last_final_node(), analysis::node_after(order, 1234 + 5678));
}

TEST(ModelDevice, MakeChainChecksItsArguments) {
  auto dev = make_model_device("h200");
  EXPECT_EQ(dev->free_memory(), 141 * GiB);
  try {
    dev->make_chain({200 * GiB, 128, 1});
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "working set 200 GiB does not fit in free device memory (141 GiB)");
  }
  EXPECT_THROW(dev->make_chain({1 * MiB, 0, 1}), UsageError);
  EXPECT_THROW(dev->make_chain({64, 128, 1}), UsageError);
  {
    auto chain = dev->make_chain({4 * MiB, 128, 1});
    EXPECT_EQ(dev->free_memory(), 141 * GiB - 4 * MiB);
    EXPECT_THROW(dev->make_chain({141 * GiB - 4 * MiB + 1, 128, 1}), UsageError);
  }
  EXPECT_EQ(dev->free_memory(), 141 * GiB);
}

TEST(ModelDevice, ChaseChecksItsArguments) {
  ModelDevice dev(builtin_model_config("tiny"));
  ModelDevice other(builtin_model_config("tiny"));
  auto chain = dev.make_chain({4 * KiB, 128, 1});
  ChaseParams p;
  p.timed_steps = 0;
  EXPECT_THROW(dev.chase(*chain, p), UsageError);
  p.timed_steps = 10;
  EXPECT_THROW(other.chase(*chain, p), UsageError);
  p.carveout_percent = 150;
  EXPECT_THROW(dev.chase(*chain, p), UsageError);
}

TEST(ModelDevice, UnknownModelIsAUsageError) {
  try {
    make_model_device("x");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown model 'x'; available: h200, a100, rtx5080, tiny");
  }
  EXPECT_EQ(model_names(), (std::vector<std::string>{"h200", "a100", "rtx5080", "tiny"}));
}

TEST(ModelDevice, InconsistentConfigIsAUsageError) {
  ModelConfig c = builtin_model_config("tiny");
  c.l2_near.capacity_bytes = 1 * MiB;  // larger than the whole L2
  EXPECT_THROW(ModelDevice{c}, UsageError);
  c = builtin_model_config("tiny");
  c.l2.capacity_bytes = 1000;
  EXPECT_THROW(ModelDevice{c}, UsageError);
}

TEST(ModelDevice, InfoClocksTimerAndEnvironment) {
  for (const auto& name : model_names()) {
    auto dev = make_model_device(name);
    const ModelConfig c = builtin_model_config(name);
    const DeviceInfo& info = dev->info();
    EXPECT_EQ(info.kind, "model");
    EXPECT_EQ(info.name, "model:" + name);
    EXPECT_EQ(info.l2_bytes, c.l2.capacity_bytes);
    EXPECT_EQ(info.l1_shared_unified_bytes, c.l1_shared_unified_bytes);
    EXPECT_EQ(info.sm_count, c.sm_count);
    EXPECT_EQ(info.shared_per_sm_bytes, c.shared_per_sm_bytes);
    const ClockReading clocks = dev->read_clocks();
    EXPECT_TRUE(clocks.valid);
    EXPECT_EQ(clocks.sm_mhz, c.sm_clock_mhz);
    EXPECT_EQ(clocks.throttle_reasons, 0u);
    EXPECT_EQ(dev->calibrate_timer().clock64_overhead_cycles, 2);
    const nlohmann::json env = dev->environment();
    EXPECT_EQ(env.at("model").at("l2_capacity_bytes").get<std::uint64_t>(), c.l2.capacity_bytes);
    EXPECT_EQ(env.at("model").at("dram_latency_cycles").get<double>(), c.dram_latency_cycles);
    EXPECT_EQ(env.at("model").at("l2_partitioned").get<bool>(), c.l2_partitioned);
  }
}

TEST(ModelDevice, SharedChase) {
  ModelDevice dev(builtin_model_config("tiny"));
  const ChaseTiming t = dev.shared_chase(16 * KiB, 8, 1000);
  EXPECT_DOUBLE_EQ(t.cycles_per_step, 25);
  EXPECT_DOUBLE_EQ(t.total_cycles, 25000);
  EXPECT_TRUE(t.verified);
  EXPECT_THROW(dev.shared_chase(48 * KiB + 1, 8, 1000), UsageError);
  EXPECT_THROW(dev.shared_chase(16 * KiB, 0, 1000), UsageError);
  EXPECT_NO_THROW(dev.shared_chase(48 * KiB, 8, 1000));
}

TEST(ModelDevice, NoiseIsDeterministicForAFixedSeed) {
  auto run = [](std::uint64_t seed) {
    ModelConfig c = builtin_model_config("h200");
    c.seed = seed;
    ModelDevice dev(c);
    std::vector<double> v;
    auto chain = dev.make_chain({64 * KiB, 128, 5});
    ChaseParams p;
    p.warmup_steps = 512;
    p.timed_steps = 1000;
    for (int i = 0; i < 5; ++i) v.push_back(dev.chase(*chain, p).cycles_per_step);
    v.push_back(dev.shared_chase(1024, 8, 100).cycles_per_step);
    return v;
  };
  const auto a = run(11), b = run(11), other = run(12);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, other);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(a[i], 33, 0.05 * 33);  // L1 hits; 0.3 % sigma
  EXPECT_NEAR(a[5], 30, 0.05 * 30);                              // shared memory
  EXPECT_NE(a[0], 33);                                           // noise is there
  EXPECT_NE(a[0], a[1]);
}

// The real-size h200 model at the sizes a sweep reaches (4x its 60 MiB L2 = 1.9 M nodes).
TEST(ModelDevice, H200FullSizeLevels) {
  auto dev = make_model_device("h200");
  auto level = [&](std::uint64_t bytes) {
    auto chain = dev->make_chain({bytes, 128, 1});
    ChaseParams p;
    p.warmup_steps = chain->nodes();
    p.timed_steps = std::min<std::uint64_t>(chain->nodes(), 200000);
    return dev->chase(*chain, p).cycles_per_step;
  };
  EXPECT_NEAR(level(128 * KiB), 33, 0.02 * 33);
  EXPECT_NEAR(level(8 * MiB), 260, 0.02 * 260);
  EXPECT_NEAR(level(45 * MiB), 430, 0.02 * 430);
  EXPECT_NEAR(level(240 * MiB), 820, 0.02 * 820);
}

TEST(ModelDevice, Rtx5080UnpartitionedL2) {
  auto dev = make_model_device("rtx5080");
  auto chain = dev->make_chain({1 * MiB, 128, 1});
  ChaseParams p;
  p.warmup_steps = chain->nodes();
  p.timed_steps = 4000;
  EXPECT_NEAR(dev->chase(*chain, p).cycles_per_step, 366, 0.02 * 366);
}

}  // namespace
}  // namespace gpuprobe::device
