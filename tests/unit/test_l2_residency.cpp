// cache.l2.persisting and cache.l2.eviction_priority: the judge on hand-made trials, and the
// experiments on modelled GPUs whose set-aside rule and eviction classes are known (the truth
// they must recover), the set-aside put back even when a trial fails, and bad input refused.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "analysis/l2_residency.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "core/finding_names.hpp"
#include "core/l2_residency.hpp"
#include "core/sequence.hpp"
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

TEST(PersistingOnModel, ASetAsideOfPartWaysKeepsOnlyItsWholeWays) {
  // 22 MiB of a 60 MiB, 16-way L2 is 5.87 ways: the model keeps 5 (18.75 MiB), which a rule of
  // bytes would put at 22 MiB.
  auto c = residency_model();
  c.persisting.max_set_aside_bytes = 22 * kMiB;
  device::ModelDevice dev(c);
  const auto f = run_on(dev, "cache.l2.persisting");
  EXPECT_EQ(f.at("l2.persisting.rule").extra.value("label", ""), "ways_floor");
  EXPECT_NEAR(f.at("l2.persisting.capacity").value, 18.75 * kMiB, 1.0 * kMiB);
}

TEST(PersistingOnModel, FarReplicasTakeNoPersistingWays) {
  // With far lines replicated near the SM that loads them (the h200 preset), the set-aside still
  // holds its whole ways of home lines: replicas are plain copies.
  auto c = residency_model();
  c.l2_replication = true;
  device::ModelDevice dev(c);
  const auto f = run_on(dev, "cache.l2.persisting");
  EXPECT_NEAR(f.at("l2.persisting.capacity").value, 30.0 * kMiB, 2.0 * kMiB);
}

TEST(EvictionPriorityOnModel, EvictLastStaysEvictFirstGoesFirstAndTheSetAsideIsPutBack) {
  device::ModelDevice dev(residency_model());
  dev.set_persisting_set_aside(3 * kMiB);
  const auto f = run_on(dev, "cache.l2.eviction_priority");
  EXPECT_EQ(f.at(finding::kL2EvictLastProtects.name).value, 1.0);
  EXPECT_EQ(f.at(finding::kL2EvictFirstGoesFirst.name).value, 1.0);
  EXPECT_GT(f.at("l2.evict.evict_last.heavy").value, 0.8);
  EXPECT_LT(f.at("l2.evict.none.heavy").value, 0.1);
  EXPECT_LT(f.at("l2.evict.evict_first.light").value, f.at("l2.evict.none.light").value - 0.2);
  // The model caps evict_last at the set-aside's whole ways: 30 MiB of 60 MiB, 8 of 16 ways.
  EXPECT_NEAR(f.at(finding::kL2EvictLastMaxShare.name).value, 0.5, 0.06);
  EXPECT_EQ(dev.persisting_set_aside(), 3 * kMiB) << "the set-aside found was not put back";
}

TEST(ResidencyJudge, CappedBinomialShare) {
  // Binomial(40, 1/4) capped at 10: E[min(X, 10)] / 10, by direct summation here.
  double capped = 0, pmf = std::pow(0.75, 40);
  for (int x = 0; x <= 40; ++x) {
    capped += pmf * std::min(x, 10);
    pmf *= (40.0 - x) / (x + 1.0) * (0.25 / 0.75);
  }
  EXPECT_NEAR(rs::binomial_capped_share(40, 0.25, 10), capped / 10, 1e-9);
  EXPECT_GT(rs::binomial_capped_share(40, 0.25, 10), 0.85);
  EXPECT_LT(rs::binomial_capped_share(40, 0.25, 10), 0.92);
  EXPECT_DOUBLE_EQ(rs::binomial_capped_share(40, 0.25, 40), 1.0);
  EXPECT_DOUBLE_EQ(rs::binomial_capped_share(40, 0.25, 0), 0.0);
}

/// Cap trials at a 30 MiB set-aside of a 60 MiB, 16-way L2 (k = 8): `even` and `scattered` of
/// `lines` sampled lines each kept those shares (near hits 280, misses 650).
std::vector<rs::Trial> cap_trials(double even, double scattered, int lines = 1024) {
  std::vector<rs::Trial> trials{trial("control_there", {280, 285, 290, 282}),
                                trial("control_gone", {650, 660, 655, 640})};
  const auto make = [lines](const std::string& group, double kept, std::uint64_t bytes,
                            double share) {
    rs::Trial t = trial(group, {});
    t.set_aside_bytes = 30 * kMiB;
    t.region_bytes = bytes;
    t.select_share = share;
    t.select_seed = 1;
    t.hint = "evict_last";
    const int stayed = static_cast<int>(kept * lines + 0.5);
    for (int i = 0; i < lines; ++i) t.cycles.push_back(i < stayed ? 280 : 650);
    return t;
  };
  trials.push_back(make("cap_even", even, 30 * kMiB, 1.0));
  trials.push_back(make("cap_scattered", scattered, 120 * kMiB, 0.25));
  return trials;
}

TEST(ResidencyJudge, CapRuleTellsPerSetFromAByteBudget) {
  const std::uint64_t l2 = 60 * kMiB;
  const auto judge = [&](double even, double scattered, int ways = 16) {
    const auto t = cap_trials(even, scattered);
    return rs::judge_cap_rule(t, rs::classify(t), l2, ways, 30 * kMiB);
  };
  // Binomial(32, 1/4) capped at 8 keeps 0.879 of the scattered lines.
  const auto per_set = judge(1.0, 0.88);
  EXPECT_EQ(per_set.cap_ways, 8);
  EXPECT_NEAR(per_set.lines_per_set, 8.0, 0.1);
  EXPECT_NEAR(per_set.predicted_per_set, 0.879, 0.001);
  EXPECT_NEAR(per_set.predicted_byte_budget, 1.0, 0.02);
  EXPECT_EQ(per_set.outcome, "per_set");
  EXPECT_GT(per_set.confidence, 0.9);
  const auto budget = judge(1.0, 0.995);
  EXPECT_EQ(budget.outcome, "byte_budget");
  EXPECT_GT(budget.confidence, 0.9);
  // What fits neither rule is said so, and so is what cannot be judged.
  EXPECT_EQ(judge(1.0, 0.5).outcome, "neither");
  EXPECT_EQ(judge(1.0, 0.86, 0).outcome, "undecided");
  EXPECT_LT(judge(1.0, 0.86, 0).confidence, 0.2);
  // Eight sampled lines a placement cannot tell 0.88 from 1.
  const auto few = cap_trials(1.0, 0.875, 8);
  const auto v = rs::judge_cap_rule(few, rs::classify(few), l2, 16, 30 * kMiB);
  EXPECT_EQ(v.outcome, "undecided");
  EXPECT_LT(v.z_between, 2.0);
}

TEST(ResidencyJudge, AScatteredShareOutsideZeroToOneIsBadInput) {
  rs::Samples s;
  s.l2_bytes = 60 * kMiB;
  s.trials = cap_trials(1.0, 0.88);
  EXPECT_EQ(s.problem(), "");
  for (double bad : {0.0, -3.0, 1.5}) {
    s.trials.back().select_share = bad;
    EXPECT_NE(s.problem().find("select_share outside (0, 1]"), std::string::npos) << bad;
  }
  // Trials recorded before scattered placements (no select_share) read as whole regions.
  nlohmann::json old = rs::Trial{};
  old.erase("select_share");
  old.erase("select_seed");
  EXPECT_DOUBLE_EQ(old.get<rs::Trial>().select_share, 1.0);
}

TEST(EvictionPriorityOnModel, TheCapIsFoundPerSetOrAByteBudgetAsModelled) {
  // evict_last lines and persisting-window lines share the cap: both experiments must find it.
  const std::pair<const char*, const FindingKey*> experiments[] = {
      {"cache.l2.eviction_priority", &finding::kL2EvictLastCapRule},
      {"cache.l2.persisting", &finding::kL2PersistingCapRule}};
  for (const auto& [id, key] : experiments)
    for (bool budget : {false, true}) {
      auto c = residency_model();
      c.persisting.byte_budget = budget;
      device::ModelDevice dev(c);
      const auto f = run_on(dev, id);
      const auto& rule = f.at(key->name);
      EXPECT_EQ(rule.extra.value("label", ""), budget ? "byte_budget" : "per_set")
          << id << " " << rule.extra.dump();
      EXPECT_GT(rule.confidence, 0.8) << id << " " << rule.extra.dump();
      EXPECT_EQ(rule.extra.value("cap_ways", 0), 8) << id;
    }
}

rs::DiscardTrial discard_trial(bool discarded, std::uint64_t own, std::uint64_t marked,
                               std::uint64_t other = 0) {
  rs::DiscardTrial t;
  t.discarded = discarded;
  t.region_bytes = (own + marked + other) * 8;
  t.own_words = own;
  t.marked_words = marked;
  t.other_words = other;
  return t;
}

TEST(ResidencyJudge, DiscardVerdictNeedsControlsThatReadTheStoredValue) {
  std::vector<rs::DiscardTrial> dropped, written, no_controls, controls_lost;
  for (int i = 0; i < 8; ++i) {
    dropped.push_back(discard_trial(false, 0, 1000));
    dropped.push_back(discard_trial(true, 990, 10));
    written.push_back(discard_trial(false, 0, 1000));
    written.push_back(discard_trial(true, 0, 1000));
    no_controls.push_back(discard_trial(true, 1000, 0));
    controls_lost.push_back(discard_trial(false, 1000, 0));  // the stores never showed
    controls_lost.push_back(discard_trial(true, 1000, 0));
  }
  const auto d = rs::judge_discard(dropped);
  EXPECT_EQ(d.outcome, "dropped");
  EXPECT_NEAR(d.discarded_old, 0.99, 1e-9);
  EXPECT_GT(d.confidence, 0.5);
  EXPECT_EQ(rs::judge_discard(written).outcome, "written_back");
  EXPECT_EQ(rs::judge_discard(no_controls).outcome, "undecided");
  EXPECT_EQ(rs::judge_discard(no_controls).confidence, 0.0);
  EXPECT_EQ(rs::judge_discard(controls_lost).outcome, "undecided");
  // Half the trials one way, half the other: a verdict with little confidence.
  std::vector<rs::DiscardTrial> split;
  for (int i = 0; i < 8; ++i) {
    split.push_back(discard_trial(false, 0, 1000));
    split.push_back(discard_trial(true, i % 2 ? 1000 : 0, i % 2 ? 0 : 1000));
  }
  EXPECT_LT(rs::judge_discard(split).confidence, 0.3);
}

TEST(EvictionPriorityOnModel, DiscardOfDirtyLinesIsFoundDroppedOrWrittenBackAsModelled) {
  for (bool writes_back : {false, true}) {
    auto c = residency_model();
    c.persisting.discard_writes_back = writes_back;
    device::ModelDevice dev(c);
    ExperimentResult r;
    const auto f = run_on(dev, "cache.l2.eviction_priority", &r);
    const auto& drops = f.at(finding::kL2DiscardDropsDirty.name);
    EXPECT_EQ(drops.value, writes_back ? 0.0 : 1.0) << writes_back;
    EXPECT_EQ(drops.extra.value("outcome", ""), writes_back ? "written_back" : "dropped");
    EXPECT_GT(drops.confidence, 0.7);  // agreement(16, 16) of the controls and of the discards
    EXPECT_EQ(r.parameters.at("discard_region_bytes").get<std::uint64_t>(), 7 * kMiB);  // L2 / 8
    // Recorded samples without discard trials (before they were measured) still analyse.
    ExperimentResult old = r;
    old.samples.erase("discard");
    old.findings.clear();
    Registry::builtin().find("cache.l2.eviction_priority")->analyze(old);
    for (const auto& g : old.findings) EXPECT_NE(g.name, finding::kL2DiscardDropsDirty.name);
  }
}

/// A modelled GPU whose bulk loads fail after a number of them: the experiment must still put
/// back the set-aside it found.
class FailingLoads : public device::ModelDevice {
 public:
  FailingLoads(const device::ModelConfig& c, int succeed) : ModelDevice(c), left_(succeed) {}
  void load_bulk(ProbeBuffer& buffer, const BulkLoads& loads) override {
    if (left_-- <= 0) throw VerificationError("modelled load failure");
    ModelDevice::load_bulk(buffer, loads);
  }

 private:
  int left_;
};

TEST(PersistingOnModel, TheSetAsideIsPutBackWhenATrialFails) {
  for (int succeed : {0, 3, 12}) {
    FailingLoads dev(residency_model(), succeed);
    dev.set_persisting_set_aside(5 * kMiB);
    RunOptions options;
    FindingBoard board;
    Context ctx{dev, options, board};
    ExperimentResult r;
    const auto* e = Registry::builtin().find("cache.l2.persisting");
    ASSERT_NE(e, nullptr);
    EXPECT_THROW(e->run(ctx, r), VerificationError) << succeed;
    EXPECT_EQ(dev.persisting_set_aside(), 5 * kMiB) << succeed;
  }
}

TEST(PersistingOnModel, AGpuWithoutASetAsideIsWaivedWithTheReason) {
  auto c = residency_model();
  c.persisting.max_set_aside_bytes = 0;
  device::ModelDevice dev(c);
  RunOptions options;
  FindingBoard board;
  Context ctx{dev, options, board};
  ExperimentResult r;
  const auto* e = Registry::builtin().find("cache.l2.persisting");
  ASSERT_NE(e, nullptr);
  e->run(ctx, r);
  e->analyze(r);
  EXPECT_EQ(r.status, Status::kWaived);
  EXPECT_NE(r.reason.find("persistingL2CacheMaxSize"), std::string::npos) << r.reason;
}

TEST(PersistingOnModel, AWindowBeyondTheDriversLimitIsRefused) {
  auto c = residency_model();
  c.persisting.max_window_bytes = 32 * kMiB;
  device::ModelDevice dev(c);
  const auto* e = Registry::builtin().find("cache.l2.persisting");
  ASSERT_NE(e, nullptr);
  RunOptions defaults;
  EXPECT_NO_THROW(e->validate(dev, defaults)) << "default sizes are clamped to the limit";
  RunOptions asked;
  asked.axis_overrides.push_back({"cache.l2.persisting", "window_percent", {"200"}});
  try {
    e->validate(dev, asked);
    ADD_FAILURE() << "a 60 MiB window beyond a 32 MiB limit was accepted";
  } catch (const UsageError& err) {
    EXPECT_NE(std::string(err.what()).find("accessPolicyMaxWindowSize"), std::string::npos);
  }
  BulkLoads bad;
  bad.offset = 0;
  bad.bytes = 64 * kMiB;
  bad.windowed = true;
  bad.window.bytes = 64 * kMiB;
  EXPECT_THROW(check_bulk_loads(128 * kMiB, bad, dev.persisting_limits()), UsageError);
  bad.window.bytes = 16 * kMiB;
  bad.window.hit_ratio = 1.5;
  EXPECT_THROW(check_bulk_loads(128 * kMiB, bad, dev.persisting_limits()), UsageError);
}

}  // namespace
}  // namespace gpuprobe
