// hopper.pipeline applies only to a real compute capability 9.0 GPU: a modelled A100 waives it
// for the architecture, a modelled H200 for not being a CUDA GPU.
#include <gtest/gtest.h>

#include <string>

#include "core/experiment.hpp"
#include "device/model_device.hpp"

namespace gpuprobe {
namespace {

TEST(PipelineWaiver, Registered) {
  EXPECT_NE(Registry::builtin().find("hopper.pipeline"), nullptr);
}

TEST(PipelineWaiver, ModelledA100NeedsSm90a) {
  device::ModelDevice dev(device::builtin_model_config("a100"));
  const auto* e = Registry::builtin().find("hopper.pipeline");
  ASSERT_NE(e, nullptr);
  const auto why = e->waiver(dev.info());
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("needs sm_90a"), std::string::npos) << *why;
}

TEST(PipelineWaiver, ModelledH200NeedsACudaGpu) {
  auto dev = device::make_model_device("h200");
  ASSERT_EQ(dev->info().kind, "model");
  const auto* e = Registry::builtin().find("hopper.pipeline");
  ASSERT_NE(e, nullptr);
  const auto why = e->waiver(dev->info());
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("needs a CUDA GPU"), std::string::npos) << *why;
}

TEST(PipelineWaiver, RealHopperIsNotWaived) {
  device::DeviceInfo info;
  info.kind = "cuda";
  info.cc_major = 9;
  info.cc_minor = 0;
  EXPECT_FALSE(Registry::builtin().find("hopper.pipeline")->waiver(info).has_value());
}

TEST(PipelineAnalyze, OverlapAndBestFromVerifiedPoints) {
  const auto* e = Registry::builtin().find("hopper.pipeline");
  ASSERT_NE(e, nullptr);
  auto pt = [](const char* mode, int stages, double ns, double tflops, bool ok,
               bool multicast = false) {
    nlohmann::json p{{"shape", "128x256x64"},
                     {"mode", mode},
                     {"stages", stages},
                     {"verified", ok},
                     {"multicast", multicast}};
    if (!ok) p["error"] = "3 wrong accumulators";
    if (ok) {
      p["ns_per_kstep"] = ns;
      p["ns_per_kstep_summary"] = {{"n", 5}, {"median", ns}, {"mad", 0.001 * ns}};
      p["tflops"] = tflops;
      p["tiles_per_s"] = 1.0;
      p["gb_s"] = 1000.0 / ns;
    }
    return p;
  };
  ExperimentResult r;
  r.samples = {{"points",
                {pt("wgmma_only", 1, 600, 900, true), pt("copy_only", 2, 400, 0, true),
                 pt("pipeline", 2, 700, 800, true), pt("pipeline", 3, 0, 0, false),
                 pt("copy_only", 2, 300, 0, true, true), pt("pipeline", 2, 650, 850, true, true),
                 pt("pipeline", 4, 100, 2000, false, true)}}};
  e->analyze(r);
  ASSERT_EQ(r.findings.size(), 5u);
  EXPECT_EQ(r.findings[0].name, "hopper.pipeline.128x256x64.wgmma_only_tflops");
  // The best verified pipeline point, multicast or not; the unverified one never counts.
  EXPECT_EQ(r.findings[1].name, "hopper.pipeline.128x256x64.best_pipeline_tflops");
  EXPECT_DOUBLE_EQ(r.findings[1].value, 850);
  EXPECT_EQ(r.findings[1].extra.at("multicast"), true);
  EXPECT_DOUBLE_EQ(r.findings[1].extra.at("fraction_of_wgmma_only").get<double>(), 850.0 / 900.0);
  EXPECT_EQ(r.findings[1].extra.at("within_10_percent_of_wgmma_only"), true);
  // The L2 read rate comes from copy-only runs without multicast only.
  EXPECT_EQ(r.findings[2].name, "l2.tma_read_bandwidth");
  EXPECT_DOUBLE_EQ(r.findings[2].value, 1000.0 / 400.0);
  // Overlap pairs each pipeline point with the copy-only run of its own multicast setting.
  EXPECT_EQ(r.findings[3].name, "hopper.pipeline.128x256x64.stages2.overlap");
  EXPECT_DOUBLE_EQ(r.findings[3].value, (400.0 + 600.0 - 700.0) / 400.0);
  EXPECT_EQ(r.findings[4].name, "hopper.pipeline.128x256x64.multicast.stages2.overlap");
  EXPECT_DOUBLE_EQ(r.findings[4].value, (300.0 + 600.0 - 650.0) / 300.0);
  // The two unverified points make the experiment an error, each listed with its reason.
  EXPECT_EQ(r.status, Status::kError);
  ASSERT_EQ(r.statistics.at("rows_failing_verification").size(), 2u);
  EXPECT_EQ(r.statistics["rows_failing_verification"][0]["reason"], "3 wrong accumulators");
  EXPECT_NE(r.reason.find("2 of 7 rows failed verification"), std::string::npos) << r.reason;
  // Confidence from the precision of the medians, not a constant.
  for (const auto& f : r.findings) EXPECT_GT(f.confidence, 0.9) << f.name;
}

TEST(PipelineAnalyze, AllVerifiedPasses) {
  const auto* e = Registry::builtin().find("hopper.pipeline");
  ExperimentResult r;
  nlohmann::json p{
      {"shape", "128x256x64"}, {"mode", "wgmma_only"}, {"stages", 1},        {"verified", true},
      {"ns_per_kstep", 600.0}, {"tflops", 900.0},      {"tiles_per_s", 1.0}, {"gb_s", 1.0}};
  p["ns_per_kstep_summary"] = {{"n", 5}, {"median", 600.0}, {"mad", 60.0}};
  r.samples = {{"points", {p}}};
  e->analyze(r);
  EXPECT_EQ(r.status, Status::kPassed);
  EXPECT_TRUE(r.statistics.at("rows_failing_verification").empty());
  ASSERT_EQ(r.findings.size(), 1u);
  // A 10 % MAD over 5 samples: well below 0.9.
  EXPECT_LT(r.findings[0].confidence, 0.5);
}

}  // namespace
}  // namespace gpuprobe
