// ordering.* findings: confidence from the data (core/confidence.hpp), and no finding without
// evidence (issue 9, item 2).
#include <gtest/gtest.h>

#include "core/experiment.hpp"

namespace gpuprobe {
namespace {

nlohmann::json variant(const char* name, std::uint32_t completed, bool timed_out) {
  return {{"variant", name},          {"protocol", "p"},        {"synchronizing", true},
          {"stale_reads", 0},         {"timed_out", timed_out}, {"completed", completed},
          {"ns_per_iteration", 10.0}, {"producer_smid", 0},     {"consumer_smid", 1}};
}

TEST(OrderingEvidence, LitmusWithoutACompletedIterationIsNotEmitted) {
  const auto* e = Registry::builtin().find("ordering.litmus");
  ASSERT_NE(e, nullptr);
  ExperimentResult r;
  r.parameters = {{"iterations", 100000}};
  r.samples = {{"variants",
                {variant("release_acquire", 100000, false), variant("cut_short", 500, true),
                 variant("never_ran", 0, true)}}};
  e->analyze(r);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_TRUE(r.statistics.at("not_reported").contains("ordering.litmus.never_ran.stale_reads"));
  // All iterations checked: near certain; 500 of 100000: weak.
  EXPECT_GT(r.findings[0].confidence, 0.99);
  EXPECT_LT(r.findings[1].confidence, 0.01);
}

TEST(OrderingEvidence, FenceCostConfidenceFallsWithNoise) {
  const auto* e = Registry::builtin().find("ordering.fence");
  auto confidence_at = [&](double mad) {
    ExperimentResult r;
    auto c = [&](const char* fence, double median) {
      return nlohmann::json{{"config", "warp"},
                            {"fence", fence},
                            {"threads", 32},
                            {"sm_clock_mhz_measured", 1980.0},
                            {"slowest_warp_cycles_per_step_median", median},
                            {"cycles_per_step", {{"n", 9}, {"median", median}, {"mad", mad}}}};
    };
    r.samples = {{"cases", {c("none", 100.0), c("acq_rel.gpu", 110.0)}}};
    e->analyze(r);
    return r.findings.at(0).confidence;
  };
  double last = 2;
  for (double mad : {0.1, 1.0, 3.0, 10.0}) {
    const double now = confidence_at(mad);
    EXPECT_LT(now, last) << mad;
    last = now;
  }
  EXPECT_LT(last, 0.5);
}

}  // namespace
}  // namespace gpuprobe
