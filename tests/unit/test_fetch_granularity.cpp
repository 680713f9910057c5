// cache.fetch_granularity's inference on modelled latency tables, and its waiver.
#include <gtest/gtest.h>

#include "analysis/granularity.hpp"
#include "core/confidence.hpp"
#include "core/experiment.hpp"

namespace gpuprobe {
namespace {

using analysis::fetch_granularity;

TEST(FetchGranularity, FirstOffsetThatMissesAgain) {
  // A 32-B sector: offsets 8..24 hit the L1 (~32 cycles), 32 and beyond go to the L2.
  EXPECT_EQ(fetch_granularity({{8, 33}, {16, 32}, {24, 33}, {32, 290}, {64, 301}, {128, 299}}),
            32u);
  // A 64-B fill into the L2: 8..48 hit (~300), 64 and beyond come from DRAM (~650). Order of the
  // input does not matter.
  EXPECT_EQ(fetch_granularity({{128, 660}, {8, 300}, {64, 655}, {48, 305}, {32, 298}}), 64u);
}

TEST(FetchGranularity, NoStepOrAStepThatComesBackIsNotAGranularity) {
  EXPECT_FALSE(fetch_granularity({{8, 300}, {32, 310}, {128, 305}}).has_value());
  // Slow at 32, fast again at 64: not a clean step, no claim.
  EXPECT_FALSE(fetch_granularity({{8, 32}, {32, 300}, {64, 33}, {128, 300}}).has_value());
  EXPECT_FALSE(fetch_granularity({{8, 32}}).has_value());
}

TEST(FetchGranularity, AnalyzeReportsBothOperators) {
  const auto* e = Registry::builtin().find("cache.fetch_granularity");
  ASSERT_NE(e, nullptr);
  ExperimentResult r;
  nlohmann::json rows = nlohmann::json::array();
  for (unsigned d : {8u, 16u, 32u, 64u, 128u}) {
    rows.push_back(
        {{"operator", "ld.global.ca"},
         {"offset_bytes", d},
         {"cycles", d < 32 ? std::vector<int>{32, 33, 31} : std::vector<int>{300, 290, 310}}});
    rows.push_back(
        {{"operator", "ld.global.cg"},
         {"offset_bytes", d},
         {"cycles", d < 64 ? std::vector<int>{300, 301, 299} : std::vector<int>{650, 660, 640}}});
  }
  r.samples = {{"rows", rows}};
  e->analyze(r);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].name, "cache.l1.fetch_granularity");
  EXPECT_DOUBLE_EQ(r.findings[0].value, 32);
  EXPECT_EQ(r.findings[1].name, "cache.l2.fill_granularity");
  EXPECT_DOUBLE_EQ(r.findings[1].value, 64);
  // Clean steps, every one of the 15 probes on its side: the agreement of 15 out of 15 (the
  // lower end of its 90 % interval, 0.85) is what limits the confidence.
  EXPECT_NEAR(r.findings[0].confidence, confidence::agreement(15, 15), 1e-6);
  EXPECT_NEAR(r.findings[1].confidence, confidence::agreement(15, 15), 1e-6);
  device::DeviceInfo info;
  info.kind = "model";
  EXPECT_EQ(e->waiver(info).value_or(""), kNeedsCudaGpu);
}

TEST(FetchGranularity, NoStepIsNotEmittedAndTheStatisticsSayWhy) {
  const auto* e = Registry::builtin().find("cache.fetch_granularity");
  ExperimentResult r;
  nlohmann::json rows = nlohmann::json::array();
  for (unsigned d : {8u, 16u, 32u, 64u}) {
    rows.push_back(
        {{"operator", "ld.global.ca"}, {"offset_bytes", d}, {"cycles", {300, 301, 299}}});
    rows.push_back(
        {{"operator", "ld.global.cg"},
         {"offset_bytes", d},
         {"cycles", d < 32 ? std::vector<int>{300, 301, 299} : std::vector<int>{650, 660, 640}}});
  }
  r.samples = {{"rows", rows}};
  e->analyze(r);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].name, "cache.l2.fill_granularity");
  EXPECT_TRUE(r.statistics.at("not_found").contains("cache.l1.fetch_granularity"));
}

TEST(FetchGranularity, ConfidenceFallsWhenProbesDisagree) {
  const auto* e = Registry::builtin().find("cache.fetch_granularity");
  auto confidence_with = [&](std::vector<int> fast, std::vector<int> slow) {
    ExperimentResult r;
    nlohmann::json rows = nlohmann::json::array();
    for (unsigned d : {8u, 16u, 32u, 64u})
      rows.push_back(
          {{"operator", "ld.global.ca"}, {"offset_bytes", d}, {"cycles", d < 32 ? fast : slow}});
    r.samples = {{"rows", rows}};
    e->analyze(r);
    return r.findings.at(0).confidence;
  };
  const double clean = confidence_with({32, 33, 31, 32, 33, 32}, {300, 290, 310, 300, 295, 305});
  // Two probes of each side land on the other side of the threshold.
  const double noisy = confidence_with({32, 33, 31, 32, 290, 300}, {300, 290, 310, 300, 35, 31});
  // 24 of 24 probes agree (0.90) against 16 of 24 (0.50).
  EXPECT_GT(clean, noisy + 0.3);
  EXPECT_LT(noisy, 0.6);
}

}  // namespace
}  // namespace gpuprobe
