// Typed samples checked on load (core/samples.hpp's samples_as): a sample of the wrong shape, an
// index out of range or a part missing is one UsageError line naming the experiment, before
// the analysis indexes anything; well-formed samples analyse as before.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/error.hpp"
#include "core/experiment.hpp"
#include "core/samples.hpp"
#include "probes/link/link.hpp"
#include "probes/link/link_samples.hpp"

namespace gpuprobe {
namespace {

using nlohmann::json;

/// What analyze of `samples` for `id` throws: its message, or "" when it does not throw.
std::string analyze_error(const std::string& id, const json& samples) {
  const auto* e = Registry::builtin().find(id);
  EXPECT_NE(e, nullptr) << id;
  ExperimentResult r;
  r.id = id;
  r.samples = samples;
  try {
    e->analyze(r);
  } catch (const UsageError& ex) {
    return ex.what();
  }
  return "";
}

json peer(int gpus, int src, int dst) {
  return {{"gpus", gpus},
          {"pairs",
           {{{"src", src},
             {"dst", dst},
             {"metric", "copy_engine"},
             {"bytes", 1 << 20},
             {"seconds", {1e-3, 1e-3, 1.1e-3}}}}}};
}

TEST(SamplesChecks, LinkPeerIndicesOutOfRangeAreRefusedBeforeTheMatrix) {
  EXPECT_EQ(analyze_error("link.peer", peer(2, 0, 1)), "");
  for (const auto& bad :
       {peer(2, 0, 2), peer(2, -1, 1), peer(2, 1, 1), peer(1 << 30, 0, 1), peer(-1, 0, 1)}) {
    const auto why = analyze_error("link.peer", bad);
    EXPECT_NE(why.find("link.peer: samples"), std::string::npos) << bad.dump() << ": " << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
  json chase = peer(2, 0, 1);
  chase["latency"] = {{{"src", 0}, {"dst", 7}, {"ns_per_load", {900.0}}}};
  EXPECT_NE(analyze_error("link.peer", chase).find("chase 0->7"), std::string::npos);
}

TEST(SamplesChecks, LinkPeerGoodSamplesStillAnalyse) {
  ExperimentResult r;
  r.id = "link.peer";
  r.samples = peer(2, 0, 1);
  probes::analyze_link_peer(r);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_NEAR(r.statistics.at("matrix").at("copy_engine")[0][1].get<double>(),
              (1 << 20) / 1e-3 / 1e9, 1e-9);
}

TEST(SamplesChecks, WrongShapesAreOneLineNamingTheExperiment) {
  // A field of the wrong type, a missing one, an array where an object belongs.
  const std::pair<const char*, json> cases[] = {
      {"ordering.fence", {{"cases", {{{"config", "warp"}, {"fence", 3}}}}}},
      {"ordering.litmus", {{"variants", {json::object()}}}},
      {"latency.chase", {{"points", {{{"level", "l1"}, {"load", "ca"}}}}}},
      {"hopper.wgmma.throughput", {{"points", json::array()}}},
      {"hopper.tma.bandwidth", {{"points", {{{"direction", "load"}}}}}},
      {"hopper.tma.latency", {{"points", "none"}}},
      {"link.host", {{"points", {{{"direction", "h2d"}, {"seconds", "fast"}}}}}},
      {"compute.throughput", {{"points", {json::array()}}}},
  };
  for (const auto& [id, samples] : cases) {
    const auto why = analyze_error(id, samples);
    EXPECT_EQ(why.rfind(std::string(id) + ": samples", 0), 0u) << id << ": " << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
}

TEST(SamplesChecks, PartsAnAnalysisNeedsAreChecked) {
  // A launched cluster size without its measurements.
  const json dsmem = {{"cluster_sizes", {{{"cluster_size", 2}, {"launched", true}}}}};
  EXPECT_NE(analyze_error("hopper.dsmem", dsmem).find("cluster size 2 was launched"),
            std::string::npos);
  // An empty list of replicates (their summary is the finding's).
  const json summary = {{"median", 1e9}, {"n", 3}, {"mad", 1e6}};
  const json atomic = {{"latency", json::array()},
                       {"throughput",
                        {{{"mode", "independent"},
                          {"scope", "device"},
                          {"order", "relaxed"},
                          {"ops_per_s", summary},
                          {"ops_per_s_replicates", json::array()},
                          {"ops_per_clk_gpu_median", 1.0},
                          {"sm_clock_mhz_measured", 1980.0}}}}};
  EXPECT_NE(analyze_error("ordering.atomic", atomic).find("empty ops_per_s_replicates"),
            std::string::npos);
  // A verified pipeline point without the measurements its findings read.
  const json pipeline = {{"points",
                          {{{"shape", "128x256x64"},
                            {"mode", "pipeline"},
                            {"stages", 4},
                            {"verified", true},
                            {"ns_per_kstep", 600.0}}}}};
  EXPECT_NE(analyze_error("hopper.pipeline", pipeline).find("verified point 128x256x64 pipeline"),
            std::string::npos);
  // A summary's count rebuilds a sample of that size: a huge or negative one is refused.
  for (const json n : {json(1e12), json(-3)}) {
    const json fence = {{"cases",
                         {{{"config", "warp"},
                           {"threads", 32},
                           {"fence", "none"},
                           {"cycles_per_step", {{"median", 4.0}, {"n", n}, {"mad", 0.1}}},
                           {"slowest_warp_cycles_per_step_median", 4.0},
                           {"sm_clock_mhz_measured", 1980.0}}}}};
    EXPECT_NE(analyze_error("ordering.fence", fence).find("is not a count"), std::string::npos)
        << n;
  }
}

TEST(SamplesChecks, AnotherSamplesVersionIsRefused) {
  ExperimentResult r;
  r.id = "link.peer";
  r.samples_version = 2;
  r.samples = peer(2, 0, 1);
  EXPECT_THROW(samples_as<probes::link::PeerSamples>(r), UsageError);
  r.samples_version = probes::link::PeerSamples::kVersion;
  EXPECT_NO_THROW(samples_as<probes::link::PeerSamples>(r));
}

TEST(SamplesChecks, RecordedSummaryKeepsWhatWasRecorded) {
  const json full = {{"n", 3},        {"min", 1.0},        {"max", 3.0},   {"mean", 2.0},
                     {"median", 2.0}, {"p5", 1.1},         {"p95", 2.9},   {"mad", 1.0},
                     {"stddev", 1.0}, {"converged", true}, {"wall_s", 0.5}};
  EXPECT_EQ(json(full.get<RecordedSummary>()), full);
  const auto bare = json{{"median", 5.0}}.get<RecordedSummary>();
  EXPECT_EQ(bare.precision(), 0.0);  // no n or MAD: as confidence::precision_of_summary
  EXPECT_THROW(bare.p5_or_throw(), UsageError);
  EXPECT_EQ(json(bare), (json{{"median", 5.0}}));
}

}  // namespace
}  // namespace gpuprobe
