// The analysis on latency.sweep samples recorded on a real H200 (tests/data): it must find what
// the H200 is known to have. 60 MiB of L2 in two partitions (the near one about half), an L1 of
// at most 256 KiB per SM, and the latency ordering L1 < L2 near < L2 far < DRAM.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "core/experiment.hpp"
#include "probes/latency/latency.hpp"

namespace gpuprobe {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::map<std::string, Finding> analyze_recorded(const std::string& file) {
  std::ifstream in(std::string(GPUPROBE_TEST_DATA_DIR) + "/" + file);
  EXPECT_TRUE(in.good()) << file;
  const auto j = nlohmann::json::parse(in);
  ExperimentResult r;
  r.id = "latency.sweep";
  r.parameters = j.at("parameters");
  r.samples = j.at("samples");
  probes::analyze_sweep(r);
  std::map<std::string, Finding> out;
  for (const auto& f : r.findings) out[f.name] = f;
  return out;
}

/// A recorded sweep and the levels the independent reference chase (tools/reference_chase.cu)
/// measured on the same card in the same session: L1, L2 near, L2 far, DRAM cycles.
struct Recorded {
  std::string file;
  double l1, l2_near, l2_far, dram;
};

class H200Recorded : public ::testing::TestWithParam<Recorded> {};

TEST_P(H200Recorded, FindsTheKnownHierarchy) {
  const auto& rec = GetParam();
  const auto f = analyze_recorded(rec.file);
  for (const char* n : {"l1.hit_latency", "l1.capacity", "l2.hit_latency", "l2.near_capacity",
                        "l2.mixed_latency", "l2.capacity", "dram.latency"})
    ASSERT_TRUE(f.count(n)) << n;
  // L2: 60 MiB in total; the effective capacity a single SM sees lies within 10% below it.
  EXPECT_GT(f.at("l2.capacity").value, 0.90 * 60 * kMiB);
  EXPECT_LE(f.at("l2.capacity").value, 60 * kMiB);
  // The near partition: about half of the L2.
  EXPECT_GT(f.at("l2.near_capacity").value, 0.38 * 60 * kMiB);
  EXPECT_LT(f.at("l2.near_capacity").value, 0.5 * 60 * kMiB);
  // L1: the unified 256 KiB minus what the driver keeps; more than 192 KiB.
  EXPECT_GT(f.at("l1.capacity").value, 192 * 1024.0);
  EXPECT_LE(f.at("l1.capacity").value, 256 * 1024.0);
  // The plateaus agree with the reference chase of the same card.
  EXPECT_NEAR(f.at("l1.hit_latency").value, rec.l1, 1.0);
  EXPECT_NEAR(f.at("l2.hit_latency").value, rec.l2_near, 3.0);
  EXPECT_NEAR(f.at("l2.mixed_latency").value, rec.l2_far, 15.0);
  EXPECT_NEAR(f.at("dram.latency").value, rec.dram, 10.0);
  EXPECT_GT(f.at("l2.capacity").confidence, 0.5);
}

INSTANTIATE_TEST_SUITE_P(
    Runs, H200Recorded,
    ::testing::Values(Recorded{"h200_latency_sweep_run1.json", 32.02, 280.33, 524.49, 682.03},
                      Recorded{"h200_latency_sweep_run2.json", 32.02, 280.33, 524.49, 682.03},
                      Recorded{"h200_latency_sweep_run3.json", 32.02, 273.69, 519.45, 677.31},
                      // GPU-71145b83, with the L1 knee refined to one node (binary f1b3a7b);
                      // the reference chase at the same working sets (crosscheck.txt).
                      Recorded{"h200_latency_sweep_run4.json", 32.02, 272.92, 504.02, 650.24},
                      // GPU-afaebaaf (binary ef1552e, results/h200/repeat/run1): the slope left
                      // short steps beside the mixed plateau (293.7 cycles at the near knee's
                      // onset, 553.7 on the rise into DRAM); the mixed level is the widest
                      // plateau between the knees (527.3), not the last one. The reference
                      // chase of the same card and session (results/h200/crosscheck.txt).
                      Recorded{"h200_latency_sweep_run5.json", 32.02, 279.76, 524.49, 683.28}));

// GPU-afaebaaf's run with short steps on its slope: the mixed level is the widest plateau
// between the knees (527.3 cycles over 42.8-55.4 MiB; the 3-point step at 56.0-57.9 MiB reads
// 553.7), and the L2's knee is where that plateau ends (55.4 MiB, bracket up to 56.0), not
// past the step (57.9 MiB).
TEST(H200RecordedL2, MixedLevelIsTheWidestPlateauAndTheKneeItsEnd) {
  const auto f = analyze_recorded("h200_latency_sweep_run5.json");
  EXPECT_NEAR(f.at("l2.mixed_latency").value, 527.3, 1.0);
  const auto& range = f.at("l2.mixed_latency").extra.at("working_set_bytes_range");
  EXPECT_LT(range[0].get<double>(), 45 * kMiB);
  EXPECT_NEAR(f.at("l2.capacity").value, 55.44 * kMiB, 0.1 * kMiB);
  EXPECT_GT(f.at("dram.latency").value, 680.0);
}

// The recorded refinement of the L1 knee (GPU-71145b83): the chase holds 1736 lines and misses
// at 1737, so l1.capacity is 1736 x 128 B with a one-node bracket inside the sweep's.
TEST(H200RecordedL1, KneeRefinedToOneLine) {
  const auto f = analyze_recorded("h200_latency_sweep_run4.json");
  ASSERT_TRUE(f.count("l1.capacity"));
  const auto& c = f.at("l1.capacity");
  EXPECT_EQ(c.value, 1736.0 * 128);
  EXPECT_EQ(c.extra.at("bracket_bytes")[1].get<double>(), 1737.0 * 128);
  EXPECT_LT(c.extra.at("sweep_bracket_bytes")[0].get<double>(), c.value);
  EXPECT_GT(c.confidence, 0.9);
}

}  // namespace
}  // namespace gpuprobe
