// Tests for the replay's judging (analysis/replay.hpp) on hand-made sweeps: regions from the
// result's capacities, errors per region, the GPU's own ranges (other allocations, other runs),
// the off points' placement verdicts and the findings they give; and the model variants the
// sensitivities compare (measure/replay_model.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "analysis/replay.hpp"
#include "core/error.hpp"
#include "device/model_device.hpp"
#include "measure/replay_model.hpp"

namespace gpuprobe::analysis::replay {
namespace {

using nlohmann::json;

constexpr double kKiB = 1024.0;
constexpr double kMiB = 1024.0 * kKiB;

// A result with three capacities: L1 256 KiB, the L2's near partition 30 MiB, the L2 60 MiB.
const MeasuredFindings kCapacities = {
    {"l1.capacity", 256 * kKiB}, {"l2.near_capacity", 30 * kMiB}, {"l2.capacity", 60 * kMiB}};

json summary(double median, std::size_t n = 10, double mad = 1.0) {
  return {{"median", median}, {"n", n}, {"mad", mad}};
}

SweepPoint point(double working_set, double measured) {
  SweepPoint p;
  p.working_set_bytes = working_set;
  p.measured_cycles = measured;
  p.region = region_of(working_set, kCapacities);
  p.summary = summary(measured);
  return p;
}

json sweep_of(const std::vector<std::pair<double, double>>& points) {
  json list = json::array();
  for (const auto& [ws, median] : points)
    list.push_back({{"working_set_bytes", ws}, {"cycles_per_load", summary(median)}});
  return {{"id", "latency.sweep"}, {"status", "passed"}, {"samples", {{"points", list}}}};
}

const Finding* find(const std::vector<Finding>& findings, const std::string& name) {
  const auto it = std::find_if(findings.begin(), findings.end(),
                               [&](const Finding& f) { return f.name == name; });
  return it == findings.end() ? nullptr : &*it;
}

TEST(Replay, RegionsFollowTheResultsOwnCapacitiesInclusive) {
  EXPECT_EQ(region_of(128 * kKiB, kCapacities), "l1");
  EXPECT_EQ(region_of(256 * kKiB, kCapacities), "l1");  // the capacity itself still fits
  EXPECT_EQ(region_of(256 * kKiB + 1, kCapacities), "l2_near");
  EXPECT_EQ(region_of(45 * kMiB, kCapacities), "l2_mixed");
  EXPECT_EQ(region_of(61 * kMiB, kCapacities), "dram");
  // A result without capacities puts everything past 0 bytes in DRAM.
  EXPECT_EQ(region_of(1024, {}), "dram");
}

TEST(Replay, SweepPointsAreReadInOrderAndBadOnesRefused) {
  const auto points =
      sweep_points(sweep_of({{64 * kKiB, 30}, {40 * kMiB, 400}}), "r.json", kCapacities);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[0].region, "l1");
  EXPECT_EQ(points[1].region, "l2_mixed");
  EXPECT_DOUBLE_EQ(points[1].measured_cycles, 400);
  EXPECT_EQ(points[0].op, device::LoadOp::kCa);  // no load recorded: the sweep's default
  EXPECT_THROW(sweep_points(sweep_of({}), "r.json", kCapacities), UsageError);
  EXPECT_THROW(sweep_points(sweep_of({{64 * kKiB, 0}}), "r.json", kCapacities), UsageError);
  EXPECT_THROW(sweep_points(sweep_of({{-1, 30}}), "r.json", kCapacities), UsageError);
  auto bad_load = sweep_of({{64 * kKiB, 30}});
  bad_load["samples"]["points"][0]["load"] = "sideways";
  EXPECT_THROW(sweep_points(bad_load, "r.json", kCapacities), UsageError);
  // Another run's curve reads the same points by working set, and refuses the same way.
  const auto run = run_curve(sweep_of({{64 * kKiB, 31}}), "run.json");
  ASSERT_EQ(run.count(64 * kKiB), 1u);
  EXPECT_DOUBLE_EQ(run.at(64 * kKiB).at("median").get<double>(), 31);
  EXPECT_THROW(run_curve(sweep_of({{0, 31}}), "run.json"), UsageError);
}

TEST(Replay, PassedSweepIsRequired) {
  const json result = {
      {"experiments", json::array({{{"id", "latency.sweep"}, {"status", "error"}}})}};
  EXPECT_THROW(passed_sweep(result, "r.json", "to replay"), UsageError);
  const json ok = {{"experiments", json::array({sweep_of({{1024, 30}})})}};
  EXPECT_EQ(&passed_sweep(ok, "r.json", "to replay"), &ok.at("experiments")[0]);
}

TEST(Replay, ErrorsPerRegionOnAHandMadeCurve) {
  // Measured against replayed: +2 % in the L1, -10 % and +5 % on the near L2, +1 % in DRAM.
  const std::vector<SweepPoint> points = {point(64 * kKiB, 30), point(1 * kMiB, 200),
                                          point(8 * kMiB, 200), point(100 * kMiB, 600)};
  const std::vector<double> replayed = {30.6, 180, 210, 606};
  const auto judged = judge_replay(points, replayed, AllocationEnvelope(), {});
  ASSERT_EQ(judged.points.size(), 4u);
  EXPECT_NEAR(judged.points[1].error_percent, -10.0, 1e-9);  // signed in the samples
  const auto& s = judged.summary;
  EXPECT_EQ(s.points, 4u);
  EXPECT_EQ(s.within, 2u);  // 2 % and 1 %; 10 % and 5 % are off
  ASSERT_EQ(s.worst.count("l2_near"), 1u);
  EXPECT_NEAR(s.worst.at("l2_near").error, 10.0, 1e-9);  // |error|, the larger of the two
  EXPECT_DOUBLE_EQ(s.worst.at("l2_near").working_set_bytes, 1 * kMiB);
  EXPECT_NEAR(s.worst.at("l1").error, 2.0, 1e-9);
  EXPECT_NEAR(s.worst.at("dram").error, 1.0, 1e-9);
  EXPECT_NEAR(s.worst.at("all").error, 10.0, 1e-9);
  EXPECT_EQ(s.worst.at("all").region, "l2_near");
  EXPECT_EQ(s.worst.count("l2_mixed"), 0u);  // no point there: no region
  EXPECT_EQ(s.enveloped, 0u);
  EXPECT_EQ(s.runs_judged, 0u);

  const auto findings = replay_findings(s, {});
  const auto* near = find(findings, "replay.l2_near.worst_error_percent");
  ASSERT_NE(near, nullptr);
  EXPECT_NEAR(near->value, 10.0, 1e-9);
  ASSERT_NE(find(findings, "replay.worst_error_percent"), nullptr);
  const auto* within = find(findings, "replay.points_within_3_percent");
  ASSERT_NE(within, nullptr);
  EXPECT_DOUBLE_EQ(within->value, 0.5);
  // Without other runs or allocations there is nothing to say about them.
  EXPECT_EQ(find(findings, "replay.worst_beyond_runs_percent"), nullptr);
  EXPECT_EQ(find(findings, "replay.l2_mixed.worst_beyond_allocations_percent"), nullptr);
  EXPECT_THROW(judge_replay(points, {1, 2}, AllocationEnvelope(), {}), std::invalid_argument);
}

TEST(Replay, AllocationsRangeInterpolatesAndIncludesTheSweepsOwnPoint) {
  const AllocationEnvelope envelope({{50 * kMiB, 400, 500}, {40 * kMiB, 300, 350}});
  const auto mid = envelope.at(45 * kMiB);
  ASSERT_TRUE(mid.has_value());
  EXPECT_DOUBLE_EQ(mid->low, 350);
  EXPECT_DOUBLE_EQ(mid->high, 425);
  EXPECT_FALSE(envelope.at(39 * kMiB).has_value());  // nothing outside the drawn sets
  EXPECT_FALSE(envelope.at(51 * kMiB).has_value());

  // Measured 440 (above the allocations' 425, so the range reaches it); replayed 462 lies
  // 22 cycles above it: 5 % of the measurement.
  const auto p = point(45 * kMiB, 440);
  const auto j = judge_point(p, 462, envelope, {});
  ASSERT_TRUE(j.allocations.has_value());
  EXPECT_DOUBLE_EQ(j.allocations->low, 350);
  EXPECT_DOUBLE_EQ(j.allocations->high, 440);
  EXPECT_NEAR(j.beyond_allocations_percent, 5.0, 1e-9);
  // Inside the range: 0.
  EXPECT_DOUBLE_EQ(judge_point(p, 400, envelope, {}).beyond_allocations_percent, 0.0);
  // Only the L2's slope is judged against the allocations.
  EXPECT_FALSE(judge_point(point(20 * kMiB, 440), 462, envelope, {}).allocations.has_value());
  const json sample = to_json(j);
  EXPECT_DOUBLE_EQ(sample.at("allocations_high_cycles").get<double>(), 440);
  EXPECT_FALSE(sample.contains("runs_low_cycles"));
}

TEST(Replay, AllocationsComeFromTheMixturesAllocationsCurveOnly) {
  AllocationEnvelope envelope;
  envelope.add_allocations({"other",
                            {"working_set_bytes", "latency_min", "latency_max"},
                            {{40 * kMiB, 1, 2}, {50 * kMiB, 1, 2}},
                            {}});
  EXPECT_TRUE(envelope.empty());
  envelope.add_allocations({"allocations",
                            {"latency_max", "working_set_bytes", "latency_min"},
                            {{350, 40 * kMiB, 300}, {500, 50 * kMiB, 400}},
                            {}});
  const auto r = envelope.at(50 * kMiB);
  ASSERT_TRUE(r.has_value());
  EXPECT_DOUBLE_EQ(r->low, 400);
  EXPECT_DOUBLE_EQ(r->high, 500);
}

TEST(Replay, ARunThatDisagreesIsFlagged) {
  // Two other runs at the same working sets; at 1 MiB the second run measured 260 against
  // this result's 200: the runs' range is [200, 260], 30 % apart.
  const std::vector<SweepPoint> points = {point(1 * kMiB, 200), point(8 * kMiB, 200)};
  RunCurve agreeing = {{1 * kMiB, summary(201)}, {8 * kMiB, summary(199)}};
  RunCurve disagreeing = {{1 * kMiB, summary(260)}};
  const std::vector<RunCurve> runs = {agreeing, disagreeing};
  const auto range = runs_range_at(points[0], runs);
  ASSERT_TRUE(range.has_value());
  EXPECT_DOUBLE_EQ(range->range.low, 200);
  EXPECT_DOUBLE_EQ(range->range.high, 260);
  EXPECT_EQ(range->runs_at_point, 3u);
  EXPECT_FALSE(runs_range_at(point(2 * kMiB, 200), runs).has_value());  // no other run there

  // The replay: 210 at 1 MiB (inside the runs' range), 230 at 8 MiB (15 % above the range
  // [199, 200] the runs give there).
  const auto judged = judge_replay(points, {210, 230}, AllocationEnvelope(), runs);
  const auto& s = judged.summary;
  EXPECT_EQ(s.other_runs, 2u);
  EXPECT_EQ(s.runs_judged, 2u);
  EXPECT_EQ(s.within_runs, 1u);
  EXPECT_NEAR(s.beyond_runs.error, 15.0, 1e-9);
  EXPECT_DOUBLE_EQ(s.beyond_runs.working_set_bytes, 8 * kMiB);
  EXPECT_NEAR(s.runs_spread.error, 30.0, 1e-9);  // (260 - 200) / 200
  EXPECT_DOUBLE_EQ(s.runs_spread.working_set_bytes, 1 * kMiB);
  EXPECT_GT(s.runs_spread_z, 10.0);  // 60 cycles against medians known to about a cycle

  const auto findings = replay_findings(s, {});
  const auto* beyond = find(findings, "replay.worst_beyond_runs_percent");
  ASSERT_NE(beyond, nullptr);
  EXPECT_NEAR(beyond->value, 15.0, 1e-9);
  EXPECT_EQ(beyond->extra.at("runs").get<std::size_t>(), 3u);
  const auto* spread = find(findings, "replay.runs_worst_spread_percent");
  ASSERT_NE(spread, nullptr);
  EXPECT_GT(spread->confidence, 0.9);
  const auto* within = find(findings, "replay.points_within_3_percent_of_runs");
  ASSERT_NE(within, nullptr);
  EXPECT_DOUBLE_EQ(within->value, 0.5);
}

TEST(Replay, OffPointsAreJudgedAgainstThePlacementBound) {
  // Three L2 points off by 10 %: one measured between the replay and the random placement,
  // one outside both, one with no bound in the curve.
  const std::vector<SweepPoint> points = {point(40 * kMiB, 400), point(45 * kMiB, 400),
                                          point(50 * kMiB, 400), point(55 * kMiB, 400)};
  const auto judged = judge_replay(points, {360, 360, 360, 404}, AllocationEnvelope(), {});
  Curve placement{
      "l2_policy_sensitivity",
      {"working_set_bytes", "measured_cycles", "lru", "random_placement"},
      {{40 * kMiB, 400, 360, 420}, {45 * kMiB, 400, 360, 380}, {50 * kMiB, 400, 360, nullptr}},
      {}};
  const auto off = classify_off_points(judged.points, placement);
  ASSERT_EQ(off.size(), 1u);
  const auto& o = off.at("l2_mixed");
  EXPECT_EQ(o.off, 3u);  // 404 is within 3 %
  EXPECT_EQ(o.between, 1u);
  EXPECT_EQ(o.without_bound, 1u);
  ASSERT_EQ(o.unexplained.size(), 1u);
  EXPECT_DOUBLE_EQ(o.unexplained[0].at("working_set_bytes").get<double>(), 45 * kMiB);
  EXPECT_EQ(o.bounds.at("random_placement").get<int>(), 1);

  const auto findings = replay_findings(judged.summary, off);
  const auto* verdict = find(findings, "replay.l2_mixed.off_points_between_placements");
  ASSERT_NE(verdict, nullptr);
  EXPECT_DOUBLE_EQ(verdict->value, 0.5);  // 1 of the 2 judged
  EXPECT_EQ(verdict->extra.at("judged").get<std::size_t>(), 2u);
  // Without a placement curve nothing is judged, and no finding claims a verdict.
  const auto unbounded = classify_off_points(judged.points, Curve{});
  EXPECT_EQ(unbounded.at("l2_mixed").without_bound, 3u);
  EXPECT_EQ(find(replay_findings(judged.summary, unbounded),
                 "replay.l2_mixed.off_points_between_placements"),
            nullptr);
}

TEST(Replay, VariantWorstErrorIsKeptPerRegion) {
  json worst = json::object();
  note_worst_by_region(worst, point(1 * kMiB, 200), 190);  // 5 %
  note_worst_by_region(worst, point(2 * kMiB, 200), 230);  // 15 %
  note_worst_by_region(worst, point(4 * kMiB, 200), 202);  // 1 %: not the worst
  note_worst_by_region(worst, point(100 * kMiB, 600), 600);
  EXPECT_NEAR(worst.at("l2_near").at("error_percent").get<double>(), 15.0, 1e-9);
  EXPECT_DOUBLE_EQ(worst.at("l2_near").at("working_set_bytes").get<double>(), 2 * kMiB);
  EXPECT_DOUBLE_EQ(worst.at("dram").at("error_percent").get<double>(), 0.0);
}

TEST(ReplayModel, TreePlruOnlyOverAPowerOfTwoOfWays) {
  const auto labels = [](const std::vector<measure::ModelVariant>& variants) {
    std::vector<std::string> applicable;
    for (const auto& v : variants)
      if (v.change) applicable.push_back(v.label);
    return applicable;
  };
  const auto twelve = measure::policy_variants({{"l2_ways", 12}}, "l2");
  EXPECT_EQ(labels(twelve), (std::vector<std::string>{"lru", "fifo", "random"}));
  EXPECT_EQ(twelve[2].not_applicable, "12 ways");
  EXPECT_EQ(labels(measure::policy_variants({{"l1_ways", 4}}, "l1")),
            (std::vector<std::string>{"lru", "fifo", "tree_plru", "random"}));
  json model = {{"l2_policy", "lru"}};
  twelve[1].change(model);
  EXPECT_EQ(model.at("l2_policy"), "fifo");
  // No placement unit measured: random placement does not apply, and says why.
  const auto l2 = measure::l2_variants({{"l2_ways", 16}}, {});
  ASSERT_EQ(l2.back().label, "random_placement");
  EXPECT_FALSE(static_cast<bool>(l2.back().change));
  EXPECT_NE(l2.back().not_applicable.find("placement_unit"), std::string::npos);
  const auto fractional =
      measure::l2_variants({{"l2_ways", 16}}, {{"l2.mixture.placement_unit", 1.5 * kMiB + 0.5}});
  EXPECT_EQ(fractional.back().not_applicable,
            "l2.mixture.placement_unit is no whole number of bytes");
}

TEST(ReplayModel, ChasesTheModelAndItsVariantsAtTheSweepsPoints) {
  // The tiny model: a 16 KiB L1 at 30 cycles, a 512 KiB L2, DRAM at 500 cycles, no noise.
  const json model = device::to_json(device::builtin_model_config("tiny"));
  measure::ModelReplay replay(model);
  const auto in_l1 = point(4 * kKiB, 30), in_dram = point(8 * kMiB, 500);
  EXPECT_NEAR(replay.cycles_at(in_l1), 30, 3);
  EXPECT_NEAR(replay.cycles_at(in_dram), 500, 50);

  // A sensitivity over [1 KiB, 1 MiB): the DRAM point is outside; a variant that does not
  // apply leaves its column empty and says why.
  const std::vector<SweepPoint> points = {in_l1, in_dram};
  const std::vector<measure::ModelVariant> variants = {
      {"fifo", [](json& m) { m["l1_policy"] = "fifo"; }, ""},
      {"impossible", {}, "no reason to try"}};
  const auto s = measure::sensitivity({"test_sensitivity", "title", 1 * kKiB, 1 * kMiB}, variants,
                                      model, points);
  EXPECT_EQ(s.curve.columns, (std::vector<std::string>{"working_set_bytes", "measured_cycles",
                                                       "fifo", "impossible"}));
  ASSERT_EQ(s.curve.rows.size(), 1u);
  EXPECT_NEAR(s.curve.rows[0][2].get<double>(), 30, 3);
  EXPECT_TRUE(s.curve.rows[0][3].is_null());
  EXPECT_EQ(s.worst_by_region.at("impossible"), "not applicable: no reason to try");
  EXPECT_TRUE(s.worst_by_region.at("fifo").contains("l1"));
  // A model that is not structural has no sensitivities.
  EXPECT_TRUE(measure::replay_sensitivities(model, kCapacities, points).l1.curve.rows.empty());
}

}  // namespace
}  // namespace gpuprobe::analysis::replay
