// cache.prefetch: the judge on hand-made samples, and the experiment on modelled GPUs with and
// without a stride prefetcher (the truth it must recover: on or off, the largest stride it
// follows, how far ahead it fetches, and into which level).
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "analysis/prefetch.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "device/model_device.hpp"

namespace gpuprobe {
namespace {

namespace pf = analysis::prefetch;

/// Samples of one stride: hits at 300, controls at 650, probes at `probe` cycles per distance.
pf::StrideSamples samples(const std::string& level, std::uint64_t stride,
                          const std::vector<double>& probe) {
  pf::StrideSamples s{level, "cg", stride, {}, {}, {}, {}};
  for (int t = 0; t < 12; ++t) {
    s.trained.push_back(std::vector<double>(16, 650.0 + t));
    std::vector<double> p;
    for (double c : probe) p.push_back(c + t);
    s.probes.push_back(p);
    s.hits.insert(s.hits.end(), {300.0 + t, 480.0 - t});
    s.controls.insert(s.controls.end(), {650.0 + t, 700.0 - t});
  }
  return s;
}

TEST(PrefetchJudge, NoProbeFasterThanTheControlsIsNone) {
  const auto v = pf::judge_level(
      {samples("dram", 128, {650, 650, 650, 650}), samples("dram", 4096, {660, 660, 660, 660})});
  EXPECT_FALSE(v.detected);
  EXPECT_EQ(v.agreeing, 24u);
  EXPECT_GT(v.threshold, 480.0);
  EXPECT_LT(v.threshold, 650.0);
  EXPECT_GT(v.separation, 0.9);
}

TEST(PrefetchJudge, CoveredStridesAndDistancesAreNamed) {
  // Fetched two strides ahead up to 1 KiB, far hits (480) count as there.
  const auto v = pf::judge_level({samples("dram", 256, {480, 470, 650, 650}),
                                  samples("dram", 1024, {300, 480, 650, 650}),
                                  samples("dram", 8192, {650, 650, 650, 650})});
  EXPECT_TRUE(v.detected);
  EXPECT_EQ(v.max_stride_bytes, 1024u);
  EXPECT_EQ(v.max_distance, 2);
  ASSERT_EQ(v.fraction_there.size(), 3u);
  EXPECT_DOUBLE_EQ(v.fraction_there[0].second[1], 1.0);
  EXPECT_DOUBLE_EQ(v.fraction_there[2].second[0], 0.0);
}

TEST(PrefetchJudge, OverlappingReferencesGiveLowSeparation) {
  auto s = samples("dram", 128, {650, 650, 650, 650});
  s.controls = s.hits;  // nothing tells a hit from a miss
  EXPECT_LT(pf::judge_level({s}).separation, 0.5);
}

std::map<std::string, Finding> run_prefetch(const device::ModelConfig& c) {
  device::ModelDevice dev(c);
  RunOptions options;
  FindingBoard board;
  Context ctx{dev, options, board};
  const auto* e = Registry::builtin().find("cache.prefetch");
  EXPECT_NE(e, nullptr);
  ExperimentResult r;
  e->validate(dev, options);
  e->run(ctx, r);
  e->analyze(r);
  EXPECT_EQ(r.status, Status::kPassed) << r.reason;
  std::map<std::string, Finding> out;
  for (const auto& f : r.findings) out[f.name] = f;
  return out;
}

TEST(PrefetchOnModel, NoPrefetcherIsNone) {
  const auto f = run_prefetch(device::builtin_model_config("h200"));
  ASSERT_TRUE(f.count("prefetch.dram_to_l2") && f.count("prefetch.l2_to_l1"));
  EXPECT_EQ(f.at("prefetch.dram_to_l2").value, 0.0);
  EXPECT_EQ(f.at("prefetch.l2_to_l1").value, 0.0);
  EXPECT_GT(f.at("prefetch.dram_to_l2").confidence, 0.8);
}

TEST(PrefetchOnModel, AnL2PrefetcherIsFoundWithItsReachAndDistance) {
  auto c = device::builtin_model_config("h200");
  c.prefetcher = {2, 2048, false};
  const auto f = run_prefetch(c);
  const auto& l2 = f.at("prefetch.dram_to_l2");
  EXPECT_EQ(l2.value, 1.0);
  EXPECT_GT(l2.confidence, 0.8);
  EXPECT_EQ(l2.extra.at("max_stride_bytes").get<std::uint64_t>(), 2048u);
  EXPECT_EQ(l2.extra.at("max_distance_strides").get<int>(), 2);
  // Into the L2 only: the L1 level sees nothing ahead.
  EXPECT_EQ(f.at("prefetch.l2_to_l1").value, 0.0);
}

TEST(PrefetchOnModel, AnL1PrefetcherIsFoundAtTheL1Level) {
  auto c = device::builtin_model_config("h200");
  // (Up to 16 KiB: at 64 KiB every line of a pattern falls into one set of the modelled L1's
  // 4 ways, where the farthest probe evicts the nearest prefetched line before it is probed.)
  c.prefetcher = {4, 16384, true};
  const auto f = run_prefetch(c);
  const auto& l1 = f.at("prefetch.l2_to_l1");
  EXPECT_EQ(l1.value, 1.0);
  EXPECT_EQ(l1.extra.at("max_stride_bytes").get<std::uint64_t>(), 16384u);
  EXPECT_EQ(l1.extra.at("max_distance_strides").get<int>(), 4);
}

TEST(PrefetchOnModel, RaggedSamplesAreBadInputNotACrash) {
  device::ModelDevice dev(device::builtin_model_config("h200"));
  RunOptions options;
  FindingBoard board;
  Context ctx{dev, options, board};
  const auto* e = Registry::builtin().find("cache.prefetch");
  ExperimentResult r;
  e->run(ctx, r);
  ExperimentResult empty_refs = r;
  empty_refs.samples["strides"][0]["hits"] = nlohmann::json::array();
  EXPECT_THROW(e->analyze(empty_refs), UsageError);
  ExperimentResult short_trial = r;
  short_trial.samples["strides"][1]["probes"][3] = nlohmann::json::array({700.0});
  EXPECT_THROW(e->analyze(short_trial), UsageError);
  ExperimentResult unknown_level = r;
  unknown_level.samples["strides"][2]["level"] = "l3";
  EXPECT_THROW(e->analyze(unknown_level), UsageError);
  e->analyze(r);  // the untouched samples still judge
  EXPECT_EQ(r.findings.size(), 2u);
}

TEST(PrefetchOnModel, ABadStrideIsRefused) {
  device::ModelDevice dev(device::builtin_model_config("h200"));
  RunOptions options;
  options.axis_overrides.push_back(parse_axis_override("cache.prefetch.stride_bytes=200"));
  const auto* e = Registry::builtin().find("cache.prefetch");
  EXPECT_THROW(e->validate(dev, options), UsageError);
}

}  // namespace
}  // namespace gpuprobe
