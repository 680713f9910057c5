// Run to run (issue 9): the findings that moved between the committed H200 runs beyond what each
// run stated are measured as independent replicates, so that one run's confidence sees what
// moves between runs. Each test builds a result as the experiment writes it, from a tight and
// from a moving oracle, and checks the confidence the analysis states.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/confidence.hpp"
#include "core/experiment.hpp"
#include "core/noise.hpp"
#include "core/stats.hpp"

namespace gpuprobe {
namespace {

using nlohmann::json;

const Finding* find(const ExperimentResult& r, const std::string& name) {
  for (const auto& f : r.findings)
    if (f.name == name) return &f;
  return nullptr;
}

// ---- hopper.tma.latency ---------------------------------------------------------------------

/// A replicate's whole-cycle samples around `centre` (+-`jitter` cycles, uniform).
std::vector<double> cycles(double centre, int jitter, int n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-jitter, jitter);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(centre + d(rng));
  return v;
}

json tma_point(int replicate, const char* regime, const std::vector<double>& samples) {
  const auto s = stats::summarize(samples);
  return {{"replicate", replicate},
          {"copy", "tensor"},
          {"regime", regime},
          {"bytes", 128},
          {"cycles", stats::to_json(s)},
          {"cycles_samples", samples},
          {"words_checked", 32},
          {"words_wrong", 0},
          {"first_wrong", ""},
          {"verified", true}};
}

ExperimentResult tma_result(const std::vector<std::vector<double>>& dram_replicates) {
  ExperimentResult r;
  r.samples = {{"points", json::array()}};
  for (std::size_t j = 0; j < dram_replicates.size(); ++j) {
    r.samples["points"].push_back(tma_point(static_cast<int>(j), "dram", dram_replicates[j]));
    r.samples["points"].push_back(tma_point(static_cast<int>(j), "l2", cycles(583, 1, 5, 90 + j)));
  }
  return r;
}

TEST(RunToRun, TmaLatencyFromDramWhoseReplicatesAgreeIsConfident) {
  const auto* e = Registry::builtin().find("hopper.tma.latency");
  ASSERT_NE(e, nullptr);
  auto r = tma_result({cycles(1000, 4, 5, 1), cycles(1002, 4, 5, 2), cycles(998, 4, 5, 3)});
  e->analyze(r);
  const auto* f = find(r, "hopper.tma.tensor_latency_dram");
  ASSERT_NE(f, nullptr);
  EXPECT_GT(f->confidence, 0.9);
  EXPECT_EQ(f->extra.at("replicates").at("replicates"), 3);
  EXPECT_NEAR(f->value, 1000, 3);
}

TEST(RunToRun, TmaLatencyFromDramWhoseReplicatesSplitIsNotConfident) {
  // Two replicates on one mode, one on the next 185 cycles up (the committed H200 runs: 953,
  // 1138, 953, each once stating 1.00): each replicate alone is tight.
  const auto* e = Registry::builtin().find("hopper.tma.latency");
  auto r = tma_result({cycles(953, 1, 5, 4), cycles(1138, 1, 5, 5), cycles(953, 1, 5, 6)});
  e->analyze(r);
  const auto* f = find(r, "hopper.tma.tensor_latency_dram");
  ASSERT_NE(f, nullptr);
  EXPECT_LT(f->confidence, 0.5);
  // And it states a spread that covers the other mode: a run reading 1138 is not beyond it.
  EXPECT_FALSE(noise::judge(f->value, f->confidence, 1138, f->confidence).beyond);
  // The L2-hot finding of the same replicates stays confident.
  const auto* l2 = find(r, "hopper.tma.tensor_latency");
  ASSERT_NE(l2, nullptr);
  EXPECT_GT(l2->confidence, 0.9);
}

TEST(RunToRun, TmaLatencyOfIdenticalWholeCyclesIsNotCertainOfAFraction) {
  // Three identical replicates of identical whole cycles: the median is known to half a cycle,
  // not exactly (the old summaries-only path stated 1.00 for n = 3 equal samples).
  const auto* e = Registry::builtin().find("hopper.tma.latency");
  auto r = tma_result({{20, 20, 20}, {20, 20, 20}, {20, 20, 20}});
  e->analyze(r);
  const auto* f = find(r, "hopper.tma.tensor_latency_dram");
  ASSERT_NE(f, nullptr);
  EXPECT_LT(f->confidence, 0.9);
}

}  // namespace
}  // namespace gpuprobe

// ---- timer.overhead ---------------------------------------------------------------------------

namespace gpuprobe {
namespace {

/// timer.overhead samples with event blocks around `centres` (+-2 % uniform noise, on the
/// events' 32 ns grid); the in-kernel parts empty.
ExperimentResult timer_result(const std::vector<double>& centres, int per_block, bool sizes) {
  ExperimentResult r;
  json s = json::object();
  for (const char* k : {"clock64_pair", "clock32_pair", "clock64_gap", "clock32_gap",
                        "clock64_stream", "clock32_stream", "globaltimer_read", "globaltimer_pair",
                        "change_ns", "change_cycles", "spin_reads", "host_launch_and_sync_ns"})
    s[k] = json::array();
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-0.02, 0.02);
  json b2b = json::array(), one = json::array(), two = json::array(), block_sizes = json::array();
  for (double c : centres) {
    for (int i = 0; i < per_block; ++i) {
      b2b.push_back(1248.0);
      one.push_back(32 * std::round(c * (1 + u(rng)) / 32));
      two.push_back(32 * std::round(1.7 * c * (1 + u(rng)) / 32));
      s["host_launch_and_sync_ns"].push_back(9000.0);
    }
    block_sizes.push_back(per_block);
  }
  s["event_back_to_back_ns"] = b2b;
  s["event_one_empty_kernel_ns"] = one;
  s["event_two_empty_kernels_ns"] = two;
  if (sizes) s["event_replicate_sizes"] = block_sizes;
  r.samples = s;
  return r;
}

TEST(RunToRun, EventAroundAnEmptyKernelWhoseBlocksAgreeIsConfident) {
  const auto* e = Registry::builtin().find("timer.overhead");
  ASSERT_NE(e, nullptr);
  auto r = timer_result({5800, 5800, 5800}, 21, true);
  e->analyze(r);
  const auto* f = find(r, "timer.event.empty_kernel");
  ASSERT_NE(f, nullptr);
  EXPECT_GT(f->confidence, 0.8);
  EXPECT_EQ(f->extra.at("replicates").at("replicates"), 3);
}

TEST(RunToRun, EventAroundAnEmptyKernelThatDriftsBetweenBlocksIsNotConfident) {
  // Blocks drifting by 10 % (as run 2 of the committed repeat did within itself): the same
  // samples as one block would state a confidence that the drift does not justify.
  const auto* e = Registry::builtin().find("timer.overhead");
  auto drifting = timer_result({6400, 5600, 5900}, 21, true);
  e->analyze(drifting);
  const auto* f = find(drifting, "timer.event.empty_kernel");
  ASSERT_NE(f, nullptr);
  EXPECT_LT(f->confidence, 0.5);
  // It covers the runs' 5616 .. 6336 ns: no pair of such runs is judged beyond.
  EXPECT_FALSE(noise::judge(f->value, f->confidence, 6336, f->confidence).beyond);
  EXPECT_FALSE(noise::judge(f->value, f->confidence, 5616, f->confidence).beyond);
  // Results written before the blocks (no sizes): one replicate, the within-run precision.
  auto old = timer_result({6400, 5600, 5900}, 21, false);
  e->analyze(old);
  const auto* g = find(old, "timer.event.empty_kernel");
  ASSERT_NE(g, nullptr);
  EXPECT_GT(g->confidence, f->confidence);
  EXPECT_EQ(g->extra.at("replicates").at("replicates"), 1);
}

}  // namespace
}  // namespace gpuprobe
