// Samples as structs (issue 28 item 1): each typed experiment's samples convert from the recorded
// JSON once, round-trip through their own conversion, and a ragged sample throws the JSON
// library's one-line error.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "probes/compute/compute_samples.hpp"
#include "probes/latency/latency_samples.hpp"

namespace gpuprobe {
namespace {

using nlohmann::json;

json chase_point(double ws, double median, double mad) {
  return {{"working_set_bytes", ws},
          {"load", "ca"},
          {"cycles_per_load", {{"median", median}, {"mad", mad}, {"n", 5}, {"p5", median}}}};
}

TEST(TypedSamples, LatencySweepConvertsOnceAndRoundTrips) {
  json samples = {
      {"points", {chase_point(1024, 30, 0.5), chase_point(2048, 31, 0.25)}},
      {"near_knee_replicates", {{{"seed", 2}, {"points", {chase_point(4096, 200, 1)}}}}},
      {"l1_knee_refinement",
       {{"found", true}, {"node_stride_bytes", 128}, {"nodes_held", 10}, {"nodes_not_held", 11}}}};
  const auto s = samples.get<probes::latency::SweepSamples>();
  ASSERT_EQ(s.points.size(), 2u);
  EXPECT_DOUBLE_EQ(s.points[1].working_set_bytes, 2048);
  EXPECT_DOUBLE_EQ(s.points[1].cycles_mad, 0.25);
  ASSERT_EQ(s.near_knee_replicates.size(), 1u);
  ASSERT_TRUE(s.l1_knee_refinement.has_value());
  EXPECT_DOUBLE_EQ(s.l1_knee_refinement->nodes_not_held, 11);
  const auto again = json(s).get<probes::latency::SweepSamples>();
  EXPECT_EQ(json(again), json(s));
}

TEST(TypedSamples, LatencySweepOptionalRecordsAreLenient) {
  // No replicates, and a refinement that did not find the knee or is not an object: none.
  json samples = {{"points", json::array()}, {"l1_knee_refinement", {{"found", false}}}};
  auto s = samples.get<probes::latency::SweepSamples>();
  EXPECT_TRUE(s.near_knee_replicates.empty());
  EXPECT_FALSE(s.l1_knee_refinement.has_value());
  samples["l1_knee_refinement"] = "garbled";
  EXPECT_FALSE(samples.get<probes::latency::SweepSamples>().l1_knee_refinement.has_value());
}

TEST(TypedSamples, RaggedSamplesThrowTheJsonError) {
  json missing_mad = {{"points", {chase_point(1024, 30, 0.5)}}};
  missing_mad["points"][0]["cycles_per_load"].erase("mad");
  EXPECT_THROW(missing_mad.get<probes::latency::SweepSamples>(), json::out_of_range);
  json wrong_type = {{"points", {chase_point(1024, 30, 0.5)}}};
  wrong_type["points"][0]["working_set_bytes"] = "1 KiB";
  EXPECT_THROW(wrong_type.get<probes::latency::SweepSamples>(), json::type_error);
  EXPECT_THROW(
      (json{{"carveouts", {{{"points", json::array()}}}}}.get<probes::latency::CarveoutSamples>()),
      json::out_of_range);
}

TEST(TypedSamples, ComputeSummaryPrecisionNeedsSizeAndMad) {
  json point = {{"op", "ffma"},
                {"accumulators", 4},
                {"warps_per_sm", 32},
                {"ops_per_clk_per_sm", {{"median", 128.0}, {"mad", 0.1}, {"n", 7}}},
                {"ops_per_s_median", 1e12},
                {"sm_clock_mhz_measured", 1980.0}};
  const auto s = json{{"points", {point}}}.get<probes::compute::ThroughputSamples>();
  ASSERT_EQ(s.points.size(), 1u);
  EXPECT_GT(s.points[0].ops_per_clk_per_sm.precision(), 0.0);
  point["ops_per_clk_per_sm"].erase("n");
  const auto without_n = json{{"points", {point}}}.get<probes::compute::ThroughputSamples>();
  EXPECT_EQ(without_n.points[0].ops_per_clk_per_sm.precision(), 0.0);
  const auto again = json(s).get<probes::compute::ThroughputSamples>();
  EXPECT_EQ(json(again), json(s));
}

}  // namespace
}  // namespace gpuprobe
