// Tests for the replay judged fairly (analysis/replay_fair.hpp) on hand-made runs of a sweep
// with four plateaus: a replay inside the runs' band passes, one point in twenty outside it
// still passes, two fail; a plateau or the L1 knee off by more than 3 % of the median run
// fails; fewer than four runs are undecided with a low confidence, never a pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/replay_fair.hpp"
#include "core/finding_names.hpp"

namespace gpuprobe::analysis::replay_fair {
namespace {

using nlohmann::json;
using replay::SweepPoint;

constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * kKiB;

/// A latency curve: L1 32 up to 200 KiB, L2 near 280 up to 24 MiB, mixed 510 up to 48 MiB,
/// DRAM 650 beyond; 40 working sets, log spaced from 16 KiB to 256 MiB.
double truth(double ws) {
  if (ws <= 200 * kKiB) return 32;
  if (ws <= 24 * kMiB) return 280;
  if (ws <= 48 * kMiB) return 510;
  return 650;
}

std::vector<double> grid() {
  std::vector<double> ws;
  for (double x = 16 * kKiB; x <= 256 * kMiB; x *= 1.28) ws.push_back(std::round(x / 128) * 128);
  ws.push_back(200 * kKiB);  // the knee's last point on the L1 plateau
  ws.push_back(202 * kKiB);  // and the first off it
  std::sort(ws.begin(), ws.end());
  return ws;
}

replay::MeasuredFindings findings(double scale) {
  return {{finding::kL1HitLatency.name, 32 * scale},  {finding::kL1Capacity.name, 200 * kKiB},
          {finding::kL2HitLatency.name, 280 * scale}, {finding::kL2MixedLatency.name, 510 * scale},
          {finding::kDramLatency.name, 650 * scale},  {finding::kL2NearCapacity.name, 24 * kMiB},
          {finding::kL2Capacity.name, 48 * kMiB}};
}

/// `n` runs, each the truth scaled by 1 + k * 0.5 % (k = 0 .. n-1), and the main run's points.
struct Fixture {
  std::vector<SweepPoint> points;
  Runs runs;
  explicit Fixture(std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) {
      const double scale = 1 + 0.005 * static_cast<double>(k);
      replay::RunCurve curve;
      for (double ws : grid())
        curve[ws] = json{{"median", truth(ws) * scale}, {"n", 9}, {"mad", 0.1}};
      runs.curves.push_back(curve);
      runs.findings.push_back(findings(scale));
    }
    for (double ws : grid()) {
      SweepPoint p;
      p.working_set_bytes = ws;
      p.measured_cycles = truth(ws);
      p.summary = {{"median", truth(ws)}, {"n", 9}, {"mad", 0.1}};
      points.push_back(p);
    }
  }
  std::vector<double> replay_of(double scale = 1.0) const {
    std::vector<double> out;
    for (const auto& p : points) out.push_back(truth(p.working_set_bytes) * scale);
    return out;
  }
};

const Finding* find(const std::vector<Finding>& fs, const FindingKey& key) {
  const auto it =
      std::find_if(fs.begin(), fs.end(), [&](const Finding& f) { return f.name == key.name; });
  return it == fs.end() ? nullptr : &*it;
}

TEST(ReplayFair, AReplayInsideTheRunsBandPasses) {
  const Fixture fx(4);
  const auto j = judge_fair(fx.points, fx.replay_of(1.004), fx.runs);
  EXPECT_EQ(j.runs, 4u);
  EXPECT_EQ(j.points_judged, fx.points.size());
  EXPECT_EQ(j.points_within, fx.points.size());
  ASSERT_EQ(j.plateaus.size(), 4u);
  EXPECT_EQ(j.plateaus_within, 4u);
  ASSERT_TRUE(j.knee.has_value());
  EXPECT_DOUBLE_EQ(j.knee->model, 200 * kKiB);
  EXPECT_NEAR(j.knee->error_percent, 0.0, 1e-9);
  EXPECT_EQ(j.verdict, Verdict::kPass);
  const auto fs = fair_findings(j);
  const auto* v = find(fs, finding::kReplayFairVerdict);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->value, 0.0);
  EXPECT_EQ(v->unit, "class");
  EXPECT_GT(v->confidence, 0.5);
  for (const FindingKey* k :
       {&finding::kReplayFairPointsWithin, &finding::kReplayFairPlateausWithin,
        &finding::kReplayFairL1KneeError}) {
    const auto* f = find(fs, *k);
    ASSERT_NE(f, nullptr) << k->name;
    EXPECT_EQ(f->unit, k->unit) << k->name;
    EXPECT_FALSE(f->method.empty());
  }
  EXPECT_EQ(typed_value(to_json(*v)).text, "passes against the runs");
}

TEST(ReplayFair, TheShareOfPointsDecides) {
  const Fixture fx(4);
  auto replayed = fx.replay_of();
  // One point of the L2 plateau 10 % high: 1 of 42 off (97.6 %) still passes.
  const std::size_t n = fx.points.size();
  ASSERT_GE(n, 40u);
  std::size_t first_l2 = 0;
  while (truth(fx.points[first_l2].working_set_bytes) != 280) ++first_l2;
  replayed[first_l2 + 3] *= 1.10;
  auto j = judge_fair(fx.points, replayed, fx.runs);
  EXPECT_EQ(j.points_within, n - 1);
  EXPECT_EQ(j.verdict, Verdict::kPass);
  // Three points off: below 95 %, a fail that says where.
  replayed[first_l2 + 4] *= 1.10;
  replayed[first_l2 + 5] *= 1.10;
  j = judge_fair(fx.points, replayed, fx.runs);
  EXPECT_EQ(j.points_within, n - 3);
  EXPECT_EQ(j.verdict, Verdict::kFail);
  ASSERT_EQ(j.misses.size(), 1u);
  EXPECT_NE(j.misses[0].find("within 3 % of the runs' range"), std::string::npos);
  EXPECT_EQ(j.plateaus_within, 4u);  // the medians stay on the plateau
}

TEST(ReplayFair, APlateauOffByMoreThanThreePercentFails) {
  const Fixture fx(4);
  auto replayed = fx.replay_of();
  for (std::size_t i = 0; i < fx.points.size(); ++i)
    if (truth(fx.points[i].working_set_bytes) == 650) replayed[i] *= 1.04;
  const auto j = judge_fair(fx.points, replayed, fx.runs);
  EXPECT_EQ(j.verdict, Verdict::kFail);
  EXPECT_EQ(j.plateaus_within, 3u);
  const auto it = std::find_if(j.plateaus.begin(), j.plateaus.end(),
                               [](const PlateauJudgement& p) { return p.name == "dram.latency"; });
  ASSERT_NE(it, j.plateaus.end());
  EXPECT_FALSE(it->within);
  EXPECT_NEAR(it->error_percent, 100 * (650 * 1.04 / (650 * 1.0075) - 1), 1e-6);
}

TEST(ReplayFair, AnL1KneeOffByMoreThanThreePercentFails) {
  const Fixture fx(4);
  auto replayed = fx.replay_of();
  // The replay leaves the L1 plateau one grid point early (the grid's last point below 200 KiB
  // is more than 3 % below it).
  std::size_t knee = 0;
  while (fx.points[knee].working_set_bytes < 200 * kKiB) ++knee;
  replayed[knee] = 280;
  replayed[knee - 1] = 280;
  const auto j = judge_fair(fx.points, replayed, fx.runs);
  ASSERT_TRUE(j.knee.has_value());
  EXPECT_LT(j.knee->model, 200 * kKiB * 0.97);
  EXPECT_FALSE(j.knee->within);
  EXPECT_EQ(j.verdict, Verdict::kFail);
  EXPECT_NE(j.misses.back().find("L1 knee"), std::string::npos);
}

TEST(ReplayFair, FewerThanFourRunsAreUndecidedWithALowConfidence) {
  for (std::size_t n : {1u, 2u, 3u}) {
    const Fixture fx(n);
    const auto j = judge_fair(fx.points, fx.replay_of(1.002), fx.runs);
    EXPECT_EQ(j.verdict, Verdict::kUndecided) << n;
    const auto fs = fair_findings(j);
    const auto* v = find(fs, finding::kReplayFairVerdict);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->value, -1.0);
    EXPECT_LT(v->confidence, 0.3) << n;
    // Each criterion's own confidence is lowered too.
    const auto* p = find(fs, finding::kReplayFairPlateausWithin);
    ASSERT_NE(p, nullptr);
    EXPECT_LT(p->confidence, 0.5) << n;
  }
}

TEST(ReplayFair, BadInputIsRefused) {
  const Fixture fx(4);
  EXPECT_THROW(judge_fair(fx.points, {1.0, 2.0}, fx.runs), std::invalid_argument);
  EXPECT_THROW(judge_fair(fx.points, fx.replay_of(), Runs{}), std::invalid_argument);
}

}  // namespace
}  // namespace gpuprobe::analysis::replay_fair
