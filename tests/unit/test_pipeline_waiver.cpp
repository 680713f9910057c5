// hopper.pipeline applies only to a real compute capability 9.0 GPU: a modelled A100 waives it
// for the architecture, a modelled H200 for not being a CUDA GPU.
#include <gtest/gtest.h>

#include <string>

#include "core/experiment.hpp"
#include "device/model_device.hpp"

namespace gpuprobe {
namespace {

TEST(PipelineWaiver, Registered) { EXPECT_NE(Registry::builtin().find("hopper.pipeline"), nullptr); }

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
  auto pt = [](const char* mode, int stages, double ns, double tflops, bool ok) {
    nlohmann::json p{{"shape", "128x256x64"}, {"mode", mode}, {"stages", stages}, {"verified", ok}};
    if (ok) {
      p["ns_per_kstep"] = ns;
      p["tflops"] = tflops;
      p["tiles_per_s"] = 1.0;
    }
    return p;
  };
  ExperimentResult r;
  r.samples = {{"points",
                {pt("wgmma_only", 1, 600, 900, true), pt("copy_only", 2, 400, 0, true), pt("pipeline", 2, 700, 800, true),
                 pt("pipeline", 3, 0, 0, false)}}};
  e->analyze(r);
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_EQ(r.findings[0].name, "hopper.pipeline.128x256x64.wgmma_only_tflops");
  EXPECT_EQ(r.findings[1].name, "hopper.pipeline.128x256x64.best_pipeline_tflops");
  EXPECT_DOUBLE_EQ(r.findings[1].value, 800);
  EXPECT_EQ(r.findings[2].name, "hopper.pipeline.128x256x64.stages2.overlap");
  EXPECT_DOUBLE_EQ(r.findings[2].value, (400.0 + 600.0 - 700.0) / 400.0);
}

}  // namespace
}  // namespace gpuprobe
