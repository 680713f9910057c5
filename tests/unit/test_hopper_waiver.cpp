// The Hopper probes apply only to a real compute capability 9.0 GPU: a modelled sm_80 device
// waives them for the architecture, a modelled H200 for not being a CUDA GPU.
#include <gtest/gtest.h>

#include <string>

#include "core/experiment.hpp"
#include "device/model_device.hpp"
#include "probes/hopper/hopper.hpp"

namespace gpuprobe {
namespace {

std::vector<const Experiment*> hopper_experiments() {
  auto chosen = Registry::builtin().select({"hopper.*"});
  EXPECT_FALSE(chosen.empty());
  return chosen;
}

TEST(HopperWaiver, ModelledSm80NeedsSm90a) {
  device::ModelDevice dev(device::builtin_model_config("a100"));
  ASSERT_EQ(dev.info().cc_major, 8);
  for (const auto* e : hopper_experiments()) {
    const auto why = e->waiver(dev.info());
    ASSERT_TRUE(why.has_value()) << e->id();
    EXPECT_NE(why->find("needs sm_90a"), std::string::npos) << e->id() << ": " << *why;
  }
}

TEST(HopperWaiver, ModelledH200NeedsACudaGpu) {
  auto dev = device::make_model_device("h200");
  ASSERT_EQ(dev->info().kind, "model");
  ASSERT_EQ(dev->info().cc_major, 9);
  for (const auto* e : hopper_experiments()) {
    const auto why = e->waiver(dev->info());
    ASSERT_TRUE(why.has_value()) << e->id();
    EXPECT_NE(why->find("needs a CUDA GPU"), std::string::npos) << e->id() << ": " << *why;
  }
}

TEST(HopperWaiver, RealHopperIsNotWaived) {
  device::DeviceInfo info;
  info.kind = "cuda";
  info.cc_major = 9;
  info.cc_minor = 0;
  for (const auto* e : hopper_experiments()) EXPECT_FALSE(e->waiver(info).has_value()) << e->id();
  info.cc_major = 8;
  for (const auto* e : hopper_experiments()) EXPECT_TRUE(e->waiver(info).has_value()) << e->id();
}

TEST(HopperLayout, AccumulatorPositionsCoverTheTileOnce) {
  std::vector<int> seen(64 * 256, 0);
  for (int t = 0; t < 128; ++t)
    for (int r = 0; r < 128; ++r) {
      int row, col;
      probes::hopper_layout::accumulator_position(t, r, row, col);
      ASSERT_GE(row, 0);
      ASSERT_LT(row, 64);
      ASSERT_GE(col, 0);
      ASSERT_LT(col, 256);
      ++seen[row * 256 + col];
    }
  for (int x : seen) EXPECT_EQ(x, 1);
}

TEST(HopperLayout, HalfAndBfloatBitsOfSmallIntegers) {
  using probes::hopper_layout::bf16_bits;
  using probes::hopper_layout::f16_bits;
  EXPECT_EQ(f16_bits(1), 0x3C00);
  EXPECT_EQ(f16_bits(2), 0x4000);
  EXPECT_EQ(f16_bits(3), 0x4200);
  EXPECT_EQ(f16_bits(-3), 0xC200);
  EXPECT_EQ(bf16_bits(1), 0x3F80);
  EXPECT_EQ(bf16_bits(-2), 0xC000);
  EXPECT_EQ(bf16_bits(3), 0x4040);
}

TEST(HopperLayout, DescriptorBitsAndCoreMatrixOffsets) {
  using probes::hopper_layout::descriptor_bits;
  using probes::hopper_layout::element_offset;
  EXPECT_EQ(descriptor_bits(128, 256), (std::uint64_t{8} << 16) | (std::uint64_t{16} << 32));
  const probes::hopper_layout::TileLayout l{256, 128};
  EXPECT_EQ(element_offset(l, 0, 0), 0u);
  EXPECT_EQ(element_offset(l, 1, 0), 16u);
  EXPECT_EQ(element_offset(l, 0, 1), 2u);
  EXPECT_EQ(element_offset(l, 0, 8), 128u);
  EXPECT_EQ(element_offset(l, 8, 0), 256u);
  EXPECT_EQ(element_offset(l, 63, 15), 7u * 256 + 128 + 7 * 16 + 7 * 2);
}

TEST(HopperLayout, Swizzle128DescriptorBits) {
  // SBO 1024 B -> 64 in bits 32-45, LBO 16 B -> 1 in bits 16-29, layout 1 (128-B swizzle) in 62-63.
  EXPECT_EQ(probes::hopper_layout::descriptor_bits_swizzle128(1024),
            (std::uint64_t{1} << 62) | (std::uint64_t{64} << 32) | (std::uint64_t{1} << 16));
}

}  // namespace
}  // namespace gpuprobe
