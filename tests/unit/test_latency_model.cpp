// latency.sweep + its analysis against modelled GPUs whose true parameters are known.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "analysis/granularity.hpp"
#include "analysis/placement.hpp"
#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "device/model_device.hpp"
#include "finding_lookup.hpp"
#include "measure/chase_point.hpp"

namespace gpuprobe {
namespace {

using device::ModelConfig;

std::map<std::string, Finding> run_experiment(device::Device& dev, const std::string& id,
                                              RunOptions options = {}) {
  FindingBoard board;
  Context ctx{dev, options, board};
  const auto* e = Registry::builtin().find(id);
  EXPECT_NE(e, nullptr);
  ExperimentResult r;
  e->validate(dev, options);
  e->run(ctx, r);
  e->analyze(r);
  std::map<std::string, Finding> out;
  for (const auto& f : r.findings) out[f.name] = f;
  return out;
}

void expect_capacity(const std::map<std::string, Finding>& f, const std::string& name,
                     double truth) {
  ASSERT_TRUE(f.count(name)) << name << " not found";
  EXPECT_NEAR(f.at(name).value, truth, 0.02 * truth) << name;
  EXPECT_GT(f.at(name).confidence, 0.3) << name;
}

void expect_latency(const std::map<std::string, Finding>& f, const std::string& name,
                    double truth) {
  ASSERT_TRUE(f.count(name)) << name << " not found";
  EXPECT_NEAR(f.at(name).value, truth, 1.0) << name;
}

ModelConfig partitioned(std::uint64_t l1, std::uint64_t near, std::uint64_t total, double lat_l1,
                        double lat_near, double lat_far, double lat_dram) {
  ModelConfig c = device::builtin_model_config("tiny");
  c.name = "test";
  c.l1_shared_unified_bytes = l1;
  c.default_shared_carveout_bytes = 0;
  c.shared_per_sm_bytes = l1 / 2;
  c.l1.hit_latency_cycles = lat_l1;
  c.l2_partitioned = true;
  c.l2_near.capacity_bytes = near;
  c.l2_near.hit_latency_cycles = lat_near;
  c.l2.capacity_bytes = total;
  c.l2_far_hit_latency_cycles = lat_far;
  c.dram_latency_cycles = lat_dram;
  return c;
}

TEST(LatencySweepOnModel, RecoversTinyHierarchy) {
  auto dev = device::make_model_device("tiny");
  const auto f = run_experiment(*dev, "latency.sweep");
  expect_capacity(f, "l1.capacity", 16 * 1024);
  expect_capacity(f, "l2.near_capacity", 256 * 1024);
  expect_capacity(f, "l2.capacity", 512 * 1024);
  expect_latency(f, "l1.hit_latency", 30);
  expect_latency(f, "l2.hit_latency", 200);
  expect_latency(f, "l2.mixed_latency", 300);
  expect_latency(f, "dram.latency", 500);
}

TEST(LatencySweepOnModel, RecoversModelledH200) {
  auto dev = device::make_model_device("h200");
  const auto f = run_experiment(*dev, "latency.sweep");
  expect_capacity(f, "l1.capacity", 256 * 1024);
  expect_capacity(f, "l2.near_capacity", 30.0 * 1024 * 1024);
  expect_capacity(f, "l2.capacity", 60.0 * 1024 * 1024);
  expect_latency(f, "l1.hit_latency", 33);
  expect_latency(f, "l2.hit_latency", 260);
  expect_latency(f, "l2.mixed_latency", 430);
  expect_latency(f, "dram.latency", 820);
}

// The L1 knee refined to one node: 1736 lines (not a round size) between sweep points 1.5 %
// apart; the finding is the exact capacity and its bracket one node wide.
TEST(LatencySweepOnModel, L1KneeRefinedToOneNode) {
  ModelConfig c = partitioned(1736 * 128, 0, 8 * 1024 * 1024, 32, 270, 0, 600);
  c.l2_partitioned = false;
  c.l2.hit_latency_cycles = 270;
  c.l2.capacity_bytes = 8 * 1024 * 1024;
  c.l1.ways = 4;
  device::ModelDevice dev(c);
  const auto f = run_experiment(dev, "latency.sweep");
  ASSERT_TRUE(f.count("l1.capacity"));
  EXPECT_EQ(f.at("l1.capacity").value, 1736.0 * 128);
  ASSERT_TRUE(f.at("l1.capacity").extra.contains("bracket_bytes"));
  EXPECT_EQ(f.at("l1.capacity").extra["bracket_bytes"][1].get<double>(), 1737.0 * 128);
  EXPECT_TRUE(f.at("l1.capacity").extra.contains("sweep_bracket_bytes"));
  EXPECT_GT(f.at("l1.capacity").confidence, 0.9);
}

TEST(LatencySweepOnModel, UnpartitionedL2HasNoFarLevel) {
  ModelConfig c = partitioned(96 * 1024, 0, 3 * 1024 * 1024, 40, 250, 0, 600);
  c.l2_partitioned = false;
  c.l2.hit_latency_cycles = 250;
  c.l2.capacity_bytes = 3 * 1024 * 1024;
  device::ModelDevice dev(c);
  const auto f = run_experiment(dev, "latency.sweep");
  expect_capacity(f, "l1.capacity", 96 * 1024);
  expect_capacity(f, "l2.capacity", 3 * 1024 * 1024);
  expect_latency(f, "l1.hit_latency", 40);
  expect_latency(f, "l2.hit_latency", 250);
  expect_latency(f, "dram.latency", 600);
  EXPECT_FALSE(f.count("l2.near_capacity"));
  EXPECT_FALSE(f.count("l2.mixed_latency"));
  EXPECT_FALSE(f.count("l2.far_hit_latency"));
}

TEST(LatencySweepOnModel, DramOnlyThreePercentSlowerThanL2) {
  // Issue 9: a fixed 4 % merge threshold hid this step and l2.capacity went missing. It must be
  // found, and its confidence must say that the step is weak.
  ModelConfig c = partitioned(96 * 1024, 0, 3 * 1024 * 1024, 40, 250, 0, 250 * 1.03);
  c.l2_partitioned = false;
  c.l2.hit_latency_cycles = 250;
  c.l2.capacity_bytes = 3 * 1024 * 1024;
  device::ModelDevice dev(c);
  const auto f = run_experiment(dev, "latency.sweep");
  // The model's L2 does not miss all at once past its capacity: the rise is gradual, and with a
  // step this small the knee is placed where the rise leaves the plateau's tolerance, a few
  // percent late (4.2 % here), not within the 2 % a clear step gets.
  ASSERT_TRUE(f.count("l2.capacity"));
  EXPECT_GE(f.at("l2.capacity").value, 3.0 * 1024 * 1024 * 0.98);
  EXPECT_LE(f.at("l2.capacity").value, 3.0 * 1024 * 1024 * 1.05);
  expect_latency(f, "dram.latency", 250 * 1.03);
  EXPECT_LT(f.at("l2.capacity").confidence, 0.9);
  EXPECT_GT(f.at("l1.capacity").confidence, f.at("l2.capacity").confidence);
}

TEST(LatencySweepOnModel, CloseLevelsAndOddCapacities) {
  // Far hits only 12% slower than near hits, capacities not powers of two.
  ModelConfig c = partitioned(48 * 1024, 1536 * 1024, 2560 * 1024, 28, 240, 270, 700);
  device::ModelDevice dev(c);
  const auto f = run_experiment(dev, "latency.sweep");
  expect_capacity(f, "l1.capacity", 48 * 1024);
  expect_capacity(f, "l2.near_capacity", 1536 * 1024);
  expect_capacity(f, "l2.capacity", 2560 * 1024);
  expect_latency(f, "l2.hit_latency", 240);
  expect_latency(f, "l2.mixed_latency", 270);
  expect_latency(f, "dram.latency", 700);
}

TEST(LatencySweepOnModel, CgLoadsSeeNoL1) {
  auto dev = device::make_model_device("tiny");
  RunOptions o;
  o.loads = {device::LoadOp::kCg};
  const auto f = run_experiment(*dev, "latency.sweep", o);
  EXPECT_FALSE(f.count("l1.capacity"));
  expect_latency(f, "l2.hit_latency", 200);
  expect_capacity(f, "l2.capacity", 512 * 1024);
}

TEST(LatencyCarveoutOnModel, CapacityFollowsCarveout) {
  auto dev = device::make_model_device("h200");
  RunOptions o;
  o.axis_overrides = {parse_axis_override("latency.carveout.carveout_percent=0,50,100")};
  const auto f = run_experiment(*dev, "latency.carveout", o);
  const auto& cfg = device::builtin_model_config("h200");
  expect_capacity(f, "l1.capacity.max_l1", static_cast<double>(device::l1_capacity_bytes(cfg, 0)));
  expect_capacity(f, "l1.capacity.carveout_50",
                  static_cast<double>(device::l1_capacity_bytes(cfg, 50)));
  expect_capacity(f, "l1.capacity.carveout_100",
                  static_cast<double>(device::l1_capacity_bytes(cfg, 100)));
}

// The structural chase (the exported models'): one SM's chase over a set larger than its
// partition reads far-homed lines as far hits (the other partition still holds them) and
// misses its own home lines to DRAM, so the plateau between the knees is (far hit + near-home
// DRAM) / 2; cache.l2.far_hit recovers each home's DRAM latency from cold reads.
TEST(LatencySweepOnModel, StructuralChaseReplaysThePartitionMixture) {
  ModelConfig c = device::builtin_model_config("h200");
  c.l2_partitions = 2;
  c.chase_structural = true;
  c.dram_near_home_latency_cycles = 700;
  c.dram_far_home_latency_cycles = 940;
  c.noise_relative_sigma = 0;
  device::ModelDevice dev(c);
  const auto far = run_experiment(dev, "cache.l2.far_hit");
  ASSERT_TRUE(far.count("dram.latency_near_home"));
  EXPECT_NEAR(far.at("dram.latency_near_home").value, 700, 7);
  EXPECT_NEAR(far.at("dram.latency_far_home").value, 940, 9.4);
  EXPECT_NEAR(far.at("l2.far_hit_latency").value, 430, 4.3);
  const auto f = run_experiment(dev, "latency.sweep");
  expect_capacity(f, "l2.near_capacity", 30.0 * (1 << 20));
  expect_capacity(f, "l2.capacity", 60.0 * (1 << 20));
  ASSERT_TRUE(f.count("l2.mixed_latency"));
  EXPECT_NEAR(f.at("l2.mixed_latency").value, (430 + 700) / 2.0, 0.01 * (430 + 700) / 2.0);
  // Past the L2 both homes miss: the DRAM plateau is their mean.
  EXPECT_NEAR(f.at("dram.latency").value, (700 + 940) / 2.0, 0.01 * (700 + 940) / 2.0);
}

// The L2 line by node stride, on structural models whose partitions have a hashed set index
// (like the H200's): random-order chases past the partition's knee peak at the line's stride.
TEST(LatencyChaseOnModel, LineSizeByStridePeaksAtTheLine) {
  for (std::uint32_t line : {64u, 128u, 256u}) {
    ModelConfig c = device::builtin_model_config("h200");
    const std::uint64_t sets = 1 << 11, ways = 16;
    c.l2 = {2 * sets * ways * line, line, static_cast<std::uint32_t>(ways), 430};
    c.l2_near = {sets * ways * line, line, static_cast<std::uint32_t>(ways), 260};
    c.l2_partitions = 2;
    c.chase_structural = true;
    c.noise_relative_sigma = 0.002;
    std::mt19937_64 rng(line);
    for (int i = 0; i < 11; ++i) {
      std::uint64_t m = 0;
      while (m == 0) m = (rng() & ((std::uint64_t{1} << 31) - 1)) & ~std::uint64_t{line - 1};
      c.l2.set_hash_masks.push_back(m);
    }
    device::ModelDevice dev(c);
    RunOptions o;
    FindingBoard board;
    Context ctx{dev, o, board};
    const std::uint64_t ws = sets * ways * line * 5 / 4;
    const std::vector<std::uint32_t> strides = {32, 64, 128, 256, 512};
    std::vector<std::vector<double>> cycles;
    for (auto s : strides) {
      cycles.emplace_back();
      for (std::uint64_t k = 0; k < 3; ++k)
        cycles.back().push_back(
            measure::chase_point_cycles(ctx, device::LoadOp::kCg, ws, s, 7 + k * 1000 + s));
    }
    const auto a = analysis::line_by_stride(strides, cycles, 260);
    ASSERT_TRUE(a.found) << line << ": " << a.why;
    EXPECT_EQ(a.line_bytes, line);
    EXPECT_GT(a.separation_z_below, 3);
    EXPECT_GT(a.separation_z_above, 3);
  }
}

// The L2's sets are one partition's (a conflict set lives in one partition): with two
// partitions of 30 MiB, 16 ways and 128-B lines, 15360 sets, not the whole L2's 30720.
/// latency.sweep, cache.l2.far_hit and cache.l2.ways on `dev`, each with the earlier ones'
/// findings: every finding by name, and cache.l2.ways' record in `ways`.
std::map<std::string, Finding> run_l2_ways(device::Device& dev, ExperimentResult* ways = nullptr) {
  RunOptions o;
  FindingBoard board;
  Context ctx{dev, o, board};
  std::map<std::string, Finding> f;
  for (const char* id : {"latency.sweep", "cache.l2.far_hit", "cache.l2.ways"}) {
    const auto* e = Registry::builtin().find(id);
    EXPECT_NE(e, nullptr) << id;
    if (e == nullptr) break;
    ExperimentResult r;
    e->run(ctx, r);
    e->analyze(r);
    for (const auto& x : r.findings) {
      board.add(x);
      f[x.name] = x;
    }
    if (ways && std::string(id) == "cache.l2.ways") *ways = r;
  }
  return f;
}

TEST(CacheWaysOnModel, L2SetsAreOnePartitions) {
  auto dev = device::make_model_device("h200");
  const auto f = run_l2_ways(*dev);
  ASSERT_TRUE(f.count("cache.l2.ways"));
  EXPECT_EQ(f.at("cache.l2.ways").value, 16);
  ASSERT_TRUE(f.count("cache.l2.sets"));
  EXPECT_EQ(f.at("cache.l2.sets").value, 15360);  // the device's 60 MiB over 2 partitions
}

// An evicted target (a line homed beside the SM) comes back at its home's DRAM latency; with
// the two homes' DRAM apart (540 / 780 cycles, the sweep's mean 660, far hit 430) a re-read at
// 540 lies nearer the far hit than that mean, and judged against it the sets' targets were
// once called "served from far_partition". Against cache.l2.far_hit's near-home DRAM latency
// they are DRAM misses, and the ways are found.
// The partitions (2 x 4 MiB, 16 ways) index by a hash of the address, as the H200's do, so
// that random lines give no conflict and the eviction sweeps run.
TEST(CacheWaysOnModel, EvictedTargetsAreJudgedAgainstTheirHomesDram) {
  ModelConfig c = device::builtin_model_config("h200");
  const std::uint64_t sets = 1 << 11, n_ways = 16, line = 128;
  c.l2 = {2 * sets * n_ways * line, line, static_cast<std::uint32_t>(n_ways), 430};
  c.l2_near = {sets * n_ways * line, line, static_cast<std::uint32_t>(n_ways), 260};
  std::mt19937_64 rng(11);
  for (int i = 0; i < 11; ++i) {
    std::uint64_t mask = std::uint64_t{1} << (7 + i);
    for (int b = 18; b < 30; ++b)
      if (rng() % 3 == 0) mask |= std::uint64_t{1} << b;
    c.l2.set_hash_masks.push_back(mask);
  }
  c.l2_partitions = 2;
  c.chase_structural = true;
  c.l2_far_hit_latency_cycles = 430;
  c.dram_latency_cycles = 660;
  c.dram_near_home_latency_cycles = 540;
  c.dram_far_home_latency_cycles = 780;
  device::ModelDevice dev(c);
  ExperimentResult ways;
  const auto f = run_l2_ways(dev, &ways);
  ASSERT_TRUE(f.count("dram.latency"));
  EXPECT_NEAR(f.at("dram.latency").value, 660, 6.6);
  ASSERT_TRUE(f.count("cache.l2.ways"));
  EXPECT_EQ(f.at("cache.l2.ways").value, 16);
  EXPECT_EQ(ways.samples.at("set_target_served_after_eviction"), "dram");
  EXPECT_EQ(ways.samples.at("served_references").at("dram_from"), "dram.latency_near_home");
  EXPECT_NEAR(ways.samples.at("served_references").at("dram_cycles").get<double>(), 540, 5.4);
}

TEST(LatencyChaseOnModel, UsesSweepFindingsAndMeasuresEveryLoad) {
  auto dev = device::make_model_device("tiny");
  RunOptions o;
  FindingBoard board;
  Context ctx{*dev, o, board};
  const auto& reg = Registry::builtin();
  test::run_and_post(ctx, board, "latency.sweep");
  ExperimentResult chase;
  reg.find("latency.chase")->run(ctx, chase);
  reg.find("latency.chase")->analyze(chase);
  std::map<std::string, double> v;
  for (const auto& f : chase.findings) v[f.name] = f.value;
  EXPECT_NEAR(v.at("l1.hit_latency.ca"), 30, 1);
  // .cg bypasses the L1: at the L1's working set it is an L2 hit, and named so.
  EXPECT_FALSE(v.count("l1.hit_latency.cg"));
  EXPECT_FALSE(v.count("l1.hit_latency.cv"));
  EXPECT_NEAR(v.at("l2.hit_latency_at_l1_working_set.cg"), 200, 1);
  EXPECT_NEAR(v.at("l2.hit_latency_at_l1_working_set.cv"), 200, 1);
  EXPECT_NEAR(v.at("l2.hit_latency.cg"), 200, 1);
  EXPECT_NEAR(v.at("l2.mixed_latency.ca"), 300, 1);
  EXPECT_FALSE(v.count("l2.far_hit_latency.ca"));
  EXPECT_NEAR(v.at("dram.latency.nc"), 500, 1);
  EXPECT_EQ(v.size(), 20u);  // 5 loads x 4 levels
}

TEST(LatencySharedOnModel, ReportsSharedLatency) {
  auto dev = device::make_model_device("tiny");
  const auto f = run_experiment(*dev, "latency.shared");
  expect_latency(f, "shared.latency", 25);
}

}  // namespace
}  // namespace gpuprobe

namespace gpuprobe {
namespace {

// cache.l2.mixture on a partitioned model (near 1.5 MiB, whole L2 2.5 MiB, far hit 270, DRAM
// 700): below the near knee every sampled load is a near hit, past 1.25 x none is, and what the
// others cost is the far hit (the working sets stay within the whole L2). Without a near
// capacity it is waived; samples whose cycles and pages differ in length are the file's fault.
/// cache.l2.mixture on `dev`, given a near capacity and the near and far hit latencies.
ExperimentResult run_mixture(device::Device& dev, double near_bytes, double hit, double far) {
  const auto* e = Registry::builtin().find("cache.l2.mixture");
  ExperimentResult r;
  EXPECT_NE(e, nullptr);
  if (e == nullptr) return r;
  RunOptions options;
  FindingBoard board;
  board.add({"l2.near_capacity", near_bytes, "bytes", 0.9, "test", nlohmann::json::object()});
  board.add({"l2.hit_latency", hit, "cycles", 0.9, "test", nlohmann::json::object()});
  board.add({"l2.far_hit_latency", far, "cycles", 0.9, "test", nlohmann::json::object()});
  board.add({"l2.partition.hash_mask", 0xab000, "mask", 0.9, "test", nlohmann::json::object()});
  Context ctx{dev, options, board};
  e->run(ctx, r);
  if (r.status == Status::kPassed) e->analyze(r);
  return r;
}

TEST(L2MixtureOnModel, NearShareAndMissCost) {
  ModelConfig c = partitioned(48 * 1024, 1536 * 1024, 2560 * 1024, 28, 240, 270, 700);
  device::ModelDevice dev(c);
  const auto* e = Registry::builtin().find("cache.l2.mixture");
  ASSERT_NE(e, nullptr);
  ExperimentResult r = run_mixture(dev, 1536.0 * 1024, 240, 270);
  ASSERT_EQ(r.status, Status::kPassed) << r.reason;
  ASSERT_FALSE(r.curves.empty());
  const auto& rows = r.curves[0].rows;
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows.front()[1].get<double>(), 1.0);  // 0.95 x: all near
  EXPECT_EQ(rows.back()[1].get<double>(), 0.0);   // 1.6 x: none
  const auto* miss = test::find(r, "l2.mixture.miss_latency");
  ASSERT_NE(miss, nullptr);
  EXPECT_NEAR(miss->value, 270.0, 0.01 * 270);
  EXPECT_GT(miss->confidence, 0.9);
  // The partition's hash travels with the samples, for the analysis by home.
  EXPECT_EQ(r.parameters.at("partition_hash_mask").get<double>(), double{0xab000});

  ExperimentResult bad = r;
  bad.findings.clear();
  bad.curves.clear();
  bad.samples["points"][0]["node"].erase(0);
  EXPECT_THROW(e->analyze(bad), UsageError);
  ExperimentResult negative = r;
  negative.findings.clear();
  negative.curves.clear();
  negative.samples["points"][0]["node"][0] = -3;
  EXPECT_THROW(e->analyze(negative), UsageError);

  // The slope's working sets are drawn at three more offsets; on a modulo-indexed model every
  // allocation gives the same chase.
  ASSERT_TRUE(r.samples.contains("draws"));
  EXPECT_EQ(r.samples.at("draws").size(), 12u);
  for (const auto& d : r.samples.at("draws")) {
    EXPECT_TRUE(d.at("verified").get<bool>());
    EXPECT_GT(d.at("offset_bytes").get<std::uint64_t>(), 0u);
  }
  const auto* spread = test::find(r, "l2.mixture.allocation_spread");
  ASSERT_NE(spread, nullptr);
  EXPECT_LT(spread->value, 1.0);
  EXPECT_LT(spread->confidence, 0.3);  // no allocation differs beyond its noise

  RunOptions options;
  FindingBoard empty;
  Context none{dev, options, empty};
  ExperimentResult w;
  e->run(none, w);
  EXPECT_EQ(w.status, Status::kWaived);
}

// The allocations' analysis on samples whose answer is known: the scale's loads cost 250
// sampled cycles against l2.hit_latency 240 (a timer cost of 10), the far hit 300 (threshold
// 280). At 1 MB the point and one draw read every load near (mean 240), another draw half near
// and half at 410 sampled cycles (mean 320): a spread of 80 / 240; at 2 MB both allocations
// agree. A histogram bin that is not a [cycles, count] pair is the file's fault.
TEST(L2MixtureAnalysis, AllocationSpreadFromDraws) {
  const auto* e = Registry::builtin().find("cache.l2.mixture");
  ASSERT_NE(e, nullptr);
  using nlohmann::json;
  const auto point = [](double ws, std::uint32_t cycles) {
    return json{{"working_set_bytes", ws},
                {"cycles", std::vector<std::uint32_t>(100, cycles)},
                {"page", std::vector<std::uint32_t>(100, 0)}};
  };
  const auto draw = [](double ws, json histogram) {
    return json{
        {"working_set_bytes", ws}, {"offset_bytes", 2097152}, {"cycles_histogram", histogram}};
  };
  ExperimentResult r;
  r.id = "cache.l2.mixture";
  r.parameters = {{"l2_hit_latency_cycles", 240.0}, {"l2_far_hit_latency_cycles", 300.0}};
  r.samples = {
      {"reference", {{"cycles", std::vector<std::uint32_t>(64, 250)}}},
      {"points", json::array({point(1e6, 250), point(2e6, 410)})},
      {"draws",
       json::array({draw(1e6, json::array({json::array({250, 100})})),
                    draw(1e6, json::array({json::array({250, 50}), json::array({410, 50})})),
                    draw(2e6, json::array({json::array({410, 100})}))})}};
  ExperimentResult good = r;
  e->analyze(good);
  const auto* spread = test::find(good, "l2.mixture.allocation_spread");
  ASSERT_NE(spread, nullptr);
  EXPECT_NEAR(spread->value, 100.0 * 80 / 240, 1e-9);
  EXPECT_EQ(spread->extra.at("working_set_bytes").get<double>(), 1e6);
  EXPECT_EQ(spread->extra.at("allocations").get<int>(), 3);
  EXPECT_NEAR(spread->extra.at("near_share_min").get<double>(), 0.5, 1e-12);
  EXPECT_NEAR(spread->extra.at("latency_max_cycles").get<double>(), 320, 1e-9);
  // Heterogeneity: the two all-near allocations (standard error floored at 1 / sqrt(1200))
  // weigh the pooled mean to 240; the mixed one lies 80 / (80.4 / sqrt(100)) = 10 standard
  // errors off it: X^2 = 99, z = (99 - 2) / 2.
  EXPECT_NEAR(spread->extra.at("heterogeneity_z").get<double>(), 48.5, 0.5);
  EXPECT_GT(spread->confidence, 0.99);
  const Curve* alloc = nullptr;
  for (const auto& c : good.curves)
    if (c.name == "allocations") alloc = &c;
  ASSERT_NE(alloc, nullptr);
  ASSERT_EQ(alloc->rows.size(), 2u);
  EXPECT_EQ(alloc->rows[1][2].get<double>(), alloc->rows[1][4].get<double>());  // 2 MB agrees

  ExperimentResult bad = r;
  bad.samples["draws"][0]["cycles_histogram"][0] = json::array({250});
  EXPECT_THROW(e->analyze(bad), UsageError);
  ExperimentResult negative = r;
  negative.samples["draws"][0]["cycles_histogram"][0] = json::array({250, -4});
  EXPECT_THROW(e->analyze(negative), UsageError);
  ExperimentResult nonpositive = r;
  nonpositive.samples["draws"][0]["working_set_bytes"] = -5;
  EXPECT_THROW(e->analyze(nonpositive), UsageError);
  ExperimentResult none = r;
  none.samples.erase("draws");
  e->analyze(none);
  EXPECT_EQ(test::find(none, "l2.mixture.allocation_spread"), nullptr);
}

// The placement unit on samples whose answer is known: 8000 samples over 32 MiB at a near share
// of one half, each 128 KiB block all near or all missed (a fixed pseudo-random choice per
// block): loads share their fate up to 128 KiB and no more. Fates drawn per sample instead
// share nothing: no unit. A node that is no integer is the file's fault.
TEST(L2MixtureAnalysis, PlacementUnitFromSamples) {
  const auto* e = Registry::builtin().find("cache.l2.mixture");
  ASSERT_NE(e, nullptr);
  using nlohmann::json;
  const auto mix = [](std::uint64_t v) {
    v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
    v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
    return v ^ (v >> 31);
  };
  const auto result = [&](bool per_block) {
    std::vector<std::uint32_t> cycles, nodes;
    std::mt19937_64 rng(3);
    for (int i = 0; i < 8000; ++i) {
      const std::uint32_t node = static_cast<std::uint32_t>(rng() % (32u * 1024 * 1024 / 128));
      const bool near = per_block ? (mix(node * 128ull / (128 * 1024)) & 1) : (rng() & 1);
      nodes.push_back(node);
      cycles.push_back(near ? 250 : 410);
    }
    ExperimentResult r;
    r.id = "cache.l2.mixture";
    r.parameters = {{"l2_hit_latency_cycles", 240.0}, {"l2_far_hit_latency_cycles", 300.0}};
    r.samples = {
        {"reference", {{"cycles", std::vector<std::uint32_t>(64, 250)}}},
        {"points",
         json::array({json{{"working_set_bytes", 32e6}, {"cycles", cycles}, {"node", nodes}}})}};
    return r;
  };
  ExperimentResult blocks = result(true);
  e->analyze(blocks);
  const auto* unit = test::find(blocks, "l2.mixture.placement_unit");
  ASSERT_NE(unit, nullptr);
  EXPECT_EQ(unit->value, 128.0 * 1024);
  EXPECT_GT(unit->extra.at("phi").get<double>(), 0.95);
  EXPECT_LT(unit->extra.at("phi_next").get<double>(), 0.2);
  EXPECT_GT(unit->confidence, 0.9);

  // Fates shared by whole 16 MiB blocks: phi never falls up to 8 MiB, so there is no unit to
  // name (at least 8 MiB, or none), only a note.
  {
    ExperimentResult wide = result(true);
    auto& cy = wide.samples["points"][0]["cycles"];
    const auto& nodes = wide.samples["points"][0]["node"];
    for (std::size_t i = 0; i < cy.size(); ++i)
      cy[i] = (nodes[i].get<std::uint64_t>() * 128 / (16u << 20)) % 2 ? 250 : 410;
    // Two 16 MiB blocks would give one fate each side: mix in a third so the share is not 1/2
    // exactly; still no level up to 8 MiB holds two fates.
    e->analyze(wide);
    EXPECT_EQ(test::find(wide, "l2.mixture.placement_unit"), nullptr);
    ASSERT_TRUE(wide.statistics.contains("placement_note"));
    EXPECT_NE(wide.statistics["placement_note"].get<std::string>().find("does not fall"),
              std::string::npos);
  }
  ExperimentResult neither = result(true);
  neither.samples["points"][0].erase("node");
  EXPECT_THROW(e->analyze(neither), UsageError);

  ExperimentResult independent = result(false);
  e->analyze(independent);
  EXPECT_EQ(test::find(independent, "l2.mixture.placement_unit"), nullptr);
  EXPECT_TRUE(independent.statistics.contains("placement_note"));

  ExperimentResult bad = result(true);
  bad.samples["points"][0]["node"][5] = "x";
  EXPECT_THROW(e->analyze(bad), UsageError);
}

// Copies against home lines on samples whose answer is known: 8000 samples over 30 MiB; a
// line's home is the parity of its in-page offset under the mask 0xab000, flipped on odd pages
// (a frame's bits); lines homed in the other partition hit near with probability 0.2, the
// SM's own with 0.6; their misses cost a far hit (310 sampled cycles) and DRAM (410). The
// ratio is recovered; with equal shares it is 1; a mask that is not the hash leaves every
// page's two classes missing alike, so no page is decided and there is no finding.
TEST(L2MixtureAnalysis, CopyShareRatioFromSamples) {
  const auto* e = Registry::builtin().find("cache.l2.mixture");
  ASSERT_NE(e, nullptr);
  using nlohmann::json;
  const auto result = [&](double p_far, double p_near, double mask) {
    std::vector<std::uint32_t> cycles, nodes;
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(0, 1);
    for (int i = 0; i < 8000; ++i) {
      const auto node = static_cast<std::uint32_t>(rng() % (30u * 1024 * 1024 / 128));
      const std::uint64_t at = node * 128ull;
      const bool far_homed =
          ((__builtin_popcountll((at % (2u << 20)) & 0xab000u) & 1) ^ ((at >> 21) & 1)) != 0;
      const bool near = u(rng) < (far_homed ? p_far : p_near);
      nodes.push_back(node);
      cycles.push_back(near ? 250
                            : (far_homed ? 310 : 410) + static_cast<std::uint32_t>(rng() % 9));
    }
    ExperimentResult r;
    r.id = "cache.l2.mixture";
    r.parameters = {{"l2_hit_latency_cycles", 240.0},
                    {"l2_far_hit_latency_cycles", 300.0},
                    {"partition_hash_mask", mask}};
    r.samples = {
        {"reference", {{"cycles", std::vector<std::uint32_t>(64, 250)}}},
        {"points",
         json::array({json{{"working_set_bytes", 30e6}, {"cycles", cycles}, {"node", nodes}}})}};
    e->analyze(r);
    return r;
  };
  const auto skewed = result(0.2, 0.6, 0xab000);
  const auto* ratio = test::find(skewed, "l2.mixture.copy_share_ratio");
  ASSERT_NE(ratio, nullptr);
  EXPECT_NEAR(ratio->value, 0.2 / 0.6, 0.05);
  EXPECT_NEAR(ratio->extra.at("near_share_near_homed").get<double>(), 0.6, 0.03);
  // The delta method's standard error from the pooled counts, and the precision it gives.
  {
    const double qn = ratio->extra.at("near_share_near_homed").get<double>();
    const double qf = ratio->extra.at("near_share_far_homed").get<double>();
    const double nn = ratio->extra.at("samples_near_homed").get<double>();
    const double nf = ratio->extra.at("samples_far_homed").get<double>();
    const double se = ratio->value * std::sqrt((1 - qf) / (qf * nf) + (1 - qn) / (qn * nn));
    EXPECT_NEAR(ratio->extra.at("standard_error").get<double>(), se, 1e-12);
    EXPECT_NEAR(se, 0.0114, 0.002);  // 1/3 x sqrt(0.8 / (0.2 x 4000) + 0.4 / (0.6 x 4000))
    EXPECT_NEAR(ratio->confidence, std::erf(0.02 * ratio->value / (std::sqrt(2.0) * se)), 1e-9);
  }
  const auto equal = result(0.4, 0.4, 0xab000);
  const auto* one = test::find(equal, "l2.mixture.copy_share_ratio");
  ASSERT_NE(one, nullptr);
  EXPECT_NEAR(one->value, 1.0, 0.08);
  const auto wrong = result(0.2, 0.6, 0x1000);
  EXPECT_EQ(test::find(wrong, "l2.mixture.copy_share_ratio"), nullptr);
  // Without a mask in the parameters (results before it was kept): nothing.
  const auto none = result(0.2, 0.6, 0);
  EXPECT_EQ(test::find(none, "l2.mixture.copy_share_ratio"), nullptr);
  EXPECT_TRUE(none.statistics.contains("homes_note"));
}

// The committed H200 result: the mixture kept the run's l2.partition.hash_mask, and on the slope
// the copies of far-homed lines keep the same near-hit share as the lines homed in the SM's
// partition (the near store treats both alike). Results recorded before the mask was kept are
// re-analysed the same way given their own mask.
TEST(L2MixtureAnalysis, CopiesAndHomeLinesOfTheRecordedH200) {
  std::ifstream in(std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/result.json");
  ASSERT_TRUE(in.good());
  const auto result = nlohmann::json::parse(in);
  double mask = 0;
  for (const auto& e : result.at("experiments"))
    for (const auto& f : e.value("findings", nlohmann::json::array()))
      if (f.at("name") == "l2.partition.hash_mask") mask = f.at("value");
  ASSERT_GT(mask, 0);
  for (auto e : result.at("experiments")) {
    if (e.at("id") != "cache.l2.mixture") continue;
    EXPECT_EQ(e.at("parameters").value("partition_hash_mask", 0.0), mask);
    e["parameters"]["partition_hash_mask"] = mask;
    const auto r = replay_analysis(e);
    ASSERT_TRUE(r.has_value());
    const auto* ratio = test::find(*r, "l2.mixture.copy_share_ratio");
    ASSERT_NE(ratio, nullptr);
    EXPECT_NEAR(ratio->value, 1.0, 0.1);
    EXPECT_GE(ratio->extra.at("working_sets").get<int>(), 2);
    return;
  }
  FAIL() << "no cache.l2.mixture in the committed result";
}

// phi by block size as three H200 runs recorded it (GPU-af964f9c, binary df86e86: the main run
// and repeat runs 2 and 3). The scan that stopped at the first size significantly below the
// smallest block's read 16 KiB at 0.71 in run 2 (its 32 KiB level dipped, z 2.1, and 64 KiB
// came back); the fit over every size gives 128 KiB in the main run and run 3, and in run 2 a
// unit at 64 or 128 KiB that does not beat the other clearly (separation under 0.5).
TEST(L2MixtureAnalysis, PlacementUnitOfRecordedH200Curves) {
  using analysis::PhiLevel;
  const std::vector<PhiLevel> main_run = {
      {4096, 0.6305, 0.0134},     {8192, 0.6132, 0.0156},     {16384, 0.6133, 0.0162},
      {32768, 0.6181, 0.0201},    {65536, 0.6038, 0.0284},    {131072, 0.5965, 0.0405},
      {262144, 0.5013, 0.0626},   {524288, 0.3578, 0.0980},   {1048576, 0.1137, 0.1554},
      {2097152, -0.0357, 0.2337}, {4194304, -0.0098, 0.3205}, {8388608, -0.0522, 0.4548}};
  const std::vector<PhiLevel> run2 = {
      {4096, 0.5406, 0.0145},     {8192, 0.5196, 0.0168},     {16384, 0.5153, 0.0176},
      {32768, 0.4840, 0.0226},    {65536, 0.5058, 0.0308},    {131072, 0.4431, 0.0457},
      {262144, 0.3558, 0.0684},   {524288, 0.2162, 0.1037},   {1048576, 0.0574, 0.1554},
      {2097152, -0.0438, 0.2258}, {4194304, -0.0408, 0.3248}, {8388608, -0.0132, 0.4529}};
  const std::vector<PhiLevel> run3 = {
      {4096, 0.5835, 0.0142},     {8192, 0.5594, 0.0166},     {16384, 0.5618, 0.0172},
      {32768, 0.5528, 0.0217},    {65536, 0.5532, 0.0302},    {131072, 0.5234, 0.0438},
      {262144, 0.3627, 0.0697},   {524288, 0.2118, 0.1065},   {1048576, 0.0745, 0.1592},
      {2097152, -0.0448, 0.2316}, {4194304, -0.0439, 0.3327}, {8388608, -0.0063, 0.4617}};
  const auto unit_of = [](const std::vector<PhiLevel>& l) {
    const auto u = analysis::best_placement_unit(l);
    EXPECT_TRUE(u.found);
    EXPECT_GT(u.flat_chi2, u.runner_up.chi2);  // phi falls: no constant fits
    return std::make_pair(l[u.best.at].block_bytes, confidence::separation(std::sqrt(u.z2())));
  };
  EXPECT_EQ(unit_of(main_run).first, 131072);
  EXPECT_EQ(unit_of(run3).first, 131072);
  EXPECT_GT(unit_of(run3).second, 0.5);
  const auto [b2, conf2] = unit_of(run2);
  EXPECT_TRUE(b2 == 65536 || b2 == 131072) << b2;
  EXPECT_LT(conf2, 0.5);
  // Fewer than four sizes leave no candidate with two sizes above it to fit.
  EXPECT_FALSE(analysis::best_placement_unit({main_run.begin(), main_run.begin() + 3}).found);
}

// The inference recovers the placement unit of a modelled L2: a structural model whose
// partitions (4 MiB, 16 ways, 128-B lines) index every block of the unit as if placed at
// random; on the mixture's slope the loads of one block share their fate and those of two
// blocks do not, for a 16 KiB and a 64 KiB unit alike.
TEST(L2MixtureOnModel, RecoversThePlacementUnit) {
  for (std::uint64_t unit : {16u * 1024, 64u * 1024}) {
    ModelConfig c = device::builtin_model_config("h200");
    c.l2 = {8u << 20, 128, 16, 430};
    c.l2_near = {4u << 20, 128, 16, 260};
    c.l2_partitions = 2;
    c.chase_structural = true;
    c.noise_relative_sigma = 0;
    c.l2.placement_unit_bytes = unit;
    device::ModelDevice dev(c);
    const ExperimentResult r = run_mixture(dev, 4.0 * (1 << 20), 260, 430);
    ASSERT_EQ(r.status, Status::kPassed) << r.reason;
    const auto* u = test::find(r, "l2.mixture.placement_unit");
    ASSERT_NE(u, nullptr) << unit;
    EXPECT_EQ(u->value, static_cast<double>(unit));
    EXPECT_GT(u->confidence, 0.9) << unit;
  }
  // A unit the model cannot place is refused with one line.
  ModelConfig bad = device::builtin_model_config("h200");
  bad.l2.placement_unit_bytes = 3000;
  EXPECT_THROW(device::ModelDevice{bad}, UsageError);
}
}  // namespace
}  // namespace gpuprobe
