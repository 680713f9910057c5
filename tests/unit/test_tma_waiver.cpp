// The TMA and distributed-shared-memory probes apply only to a real compute capability 9.0 GPU:
// a modelled sm_80 device waives them for the architecture, a modelled H200 for not being a
// CUDA GPU; a real 9.0 device is not waived.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/experiment.hpp"
#include "device/model_device.hpp"
#include "probes/hopper/tma.hpp"
#include "probes/hopper/tma_kernels.hpp"

namespace gpuprobe {
namespace {

const std::vector<std::string> kIds = {"hopper.tma.latency", "hopper.tma.bandwidth",
                                       "hopper.dsmem"};

TEST(TmaWaiver, Registered) {
  for (const auto& id : kIds) EXPECT_NE(Registry::builtin().find(id), nullptr) << id;
  EXPECT_EQ(Registry::builtin().select({"hopper.tma.*"}).size(), 2u);
}

TEST(TmaWaiver, ModelledA100NeedsSm90) {
  device::ModelDevice dev(device::builtin_model_config("a100"));
  ASSERT_EQ(dev.info().cc_major, 8);
  for (const auto& id : kIds) {
    const auto* e = Registry::builtin().find(id);
    ASSERT_NE(e, nullptr) << id;
    const auto why = e->waiver(dev.info());
    ASSERT_TRUE(why.has_value()) << id;
    EXPECT_NE(why->find("needs sm_90"), std::string::npos) << id << ": " << *why;
  }
}

TEST(TmaWaiver, ModelledH200NeedsACudaGpu) {
  auto dev = device::make_model_device("h200");
  ASSERT_EQ(dev->info().kind, "model");
  ASSERT_EQ(dev->info().cc_major, 9);
  for (const auto& id : kIds) {
    const auto* e = Registry::builtin().find(id);
    ASSERT_NE(e, nullptr) << id;
    const auto why = e->waiver(dev->info());
    ASSERT_TRUE(why.has_value()) << id;
    EXPECT_NE(why->find("needs a CUDA GPU"), std::string::npos) << id << ": " << *why;
  }
}

TEST(TmaWaiver, RealHopperIsNotWaived) {
  device::DeviceInfo info;
  info.kind = "cuda";
  info.cc_major = 9;
  info.cc_minor = 0;
  for (const auto& id : kIds)
    EXPECT_FALSE(Registry::builtin().find(id)->waiver(info).has_value()) << id;
  info.cc_major = 7;
  info.cc_minor = 5;
  for (const auto& id : kIds)
    EXPECT_TRUE(Registry::builtin().find(id)->waiver(info).has_value()) << id;
}

TEST(TmaAnalyze, FindingsOnlyFromVerifiedPoints) {
  const auto* e = Registry::builtin().find("hopper.tma.bandwidth");
  ASSERT_NE(e, nullptr);
  ExperimentResult r;
  r.parameters = {{"peak_gb_s", 4800.0}};
  auto point = [](const char* dir, int tile, int stages, double median, bool verified) {
    return nlohmann::json{{"direction", dir},
                          {"tile_bytes", tile},
                          {"stages", stages},
                          {"gb_s", {{"n", 5}, {"median", median}, {"mad", 1.0}}},
                          {"launches", 5},
                          {"launches_failing_verification", verified ? 0 : 2},
                          {"first_failure", verified ? "" : "7 words differ from the pattern"},
                          {"verified", verified}};
  };
  r.samples = {{"points",
                {point("load", 4096, 1, 1000, true), point("load", 32768, 4, 3000, true),
                 point("load", 16384, 4, 9000, false), point("store", 8192, 2, 2500, true)}}};
  e->analyze(r);
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].name, "hopper.tma.load_bandwidth");
  EXPECT_DOUBLE_EQ(r.findings[0].value, 3000);
  EXPECT_EQ(r.findings[0].extra["tile_bytes"], 32768);
  EXPECT_EQ(r.findings[0].extra["stages"], 4);
  EXPECT_DOUBLE_EQ(r.findings[0].extra["percent_of_peak"].get<double>(), 62.5);
  EXPECT_EQ(r.findings[1].name, "hopper.tma.store_bandwidth");
  // The unverified point is not silently dropped: the experiment is an error that names it.
  EXPECT_EQ(r.status, Status::kError);
  ASSERT_EQ(r.statistics.at("rows_failing_verification").size(), 1u);
  EXPECT_EQ(r.statistics["rows_failing_verification"][0]["row"], "load dram tile 16384 B stages 4");
  EXPECT_NE(r.reason.find("7 words differ"), std::string::npos) << r.reason;
}

TEST(TmaAnalyze, LatencyRowFailingItsCheckIsAnError) {
  const auto* e = Registry::builtin().find("hopper.tma.latency");
  ExperimentResult r;
  auto point = [](const char* copy, int bytes, bool verified) {
    return nlohmann::json{{"copy", copy},
                          {"regime", "l2"},
                          {"bytes", bytes},
                          {"cycles", {{"n", 9}, {"median", 500.0}, {"mad", 2.0}}},
                          {"words_checked", bytes / 4},
                          {"words_wrong", verified ? 0 : 3},
                          {"first_wrong", verified ? "" : "word 5 at offset 0"},
                          {"verified", verified}};
  };
  r.samples = {{"points", {point("bulk", 128, true), point("bulk", 256, false)}}};
  e->analyze(r);
  EXPECT_EQ(r.status, Status::kError);
  EXPECT_NE(r.reason.find("bulk l2 256 B"), std::string::npos) << r.reason;
  ASSERT_EQ(r.findings.size(), 1u);
  // MAD 2 of 500 over 9 samples: precise to 2 %.
  EXPECT_GT(r.findings[0].confidence, 0.99);
}

TEST(TmaAnalyze, DsmemRowFailingItsCheckIsAnError) {
  const auto* e = Registry::builtin().find("hopper.dsmem");
  ExperimentResult r;
  const nlohmann::json s = {{"n", 9}, {"median", 200.0}, {"mad", 1.0}};
  r.samples = {
      {"cluster_sizes",
       {{{"cluster_size", 2},
         {"launched", true},
         {"latency_peer", {{"cycles_per_load", s}, {"wrong_end_nodes", 0}, {"verified", true}}},
         {"latency_self", {{"cycles_per_load", s}, {"wrong_end_nodes", 4}, {"verified", false}}},
         {"bandwidth", {{"gb_s", s}, {"launches_failing_verification", 0}, {"verified", true}}}}}}};
  e->analyze(r);
  EXPECT_EQ(r.status, Status::kError);
  EXPECT_NE(r.reason.find("cluster size 2 latency_self"), std::string::npos) << r.reason;
  EXPECT_EQ(r.findings.size(), 2u);
}

TEST(TmaPattern, IsNotTrivial) {
  EXPECT_NE(probes::tma::pattern(0), probes::tma::pattern(1));
  EXPECT_NE(probes::tma::pattern(1), probes::tma::pattern(std::uint64_t{1} << 32 | 1));
}

}  // namespace
}  // namespace gpuprobe
