// The modelled GPU's structural fields: semantic validation of model files (one UsageError
// naming the field), the sequencer's replication and policies, and the Accel-Sim export parsed
// back.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "device/model_export.hpp"

namespace gpuprobe {
namespace {

nlohmann::json h200_model() { return device::to_json(device::builtin_model_config("h200")); }

std::string refusal(nlohmann::json j) {
  try {
    device::model_config_from_json(j);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(ModelStructure, BadFieldsAreRefusedByName) {
  auto j = h200_model();
  j["l2_line_bytes"] = -128;
  EXPECT_NE(refusal(j).find("l2_line_bytes"), std::string::npos) << refusal(j);
  j = h200_model();
  j["l1_line_bytes"] = 96;
  EXPECT_NE(refusal(j).find("power of two"), std::string::npos) << refusal(j);
  j = h200_model();
  j["l2_capacity_bytes"] = 64 * 1024;
  j["l2_near_capacity_bytes"] = 32 * 1024;
  EXPECT_NE(refusal(j).find("smaller than the largest L1"), std::string::npos) << refusal(j);
  j = h200_model();
  j["dram_latency_cycles"] = 0;
  EXPECT_NE(refusal(j).find("dram_latency_cycles"), std::string::npos) << refusal(j);
  j = h200_model();
  j["l1_hit_latency_cycles"] = 1e9;
  EXPECT_NE(refusal(j).find("hit_latency_cycles"), std::string::npos) << refusal(j);
  j = h200_model();
  j["l2_ways"] = 7;
  EXPECT_NE(refusal(j).find("ways"), std::string::npos) << refusal(j);
  j = h200_model();
  j["l2_policy"] = "mru";
  EXPECT_NE(refusal(j).find("tree_plru"), std::string::npos) << refusal(j);
  j = h200_model();
  j["tlb"] = {{{"entries", 16}, {"page_bytes", 3000}, {"miss_penalty_cycles", 10}}};
  EXPECT_NE(refusal(j).find("page_bytes"), std::string::npos) << refusal(j);
  EXPECT_EQ(refusal(h200_model()), "");
}

TEST(ModelStructure, NewFieldsRoundTrip) {
  auto c = device::builtin_model_config("tiny");
  c.l2.policy = device::Replacement::kFifo;
  c.l1.sector_bytes = 32;
  c.l2_partition_masks = {0x3000};
  c.l2_replication = false;
  c.tlb = {{16, 65536, 0, 20}, {256, 65536, 8, 60}};
  c.l2.placement_unit_bytes = 65536;
  const auto back = device::model_config_from_json(device::to_json(c));
  EXPECT_EQ(back.l2.placement_unit_bytes, 65536u);
  EXPECT_EQ(back.l2.policy, device::Replacement::kFifo);
  EXPECT_EQ(back.l1.sector_bytes, 32u);
  EXPECT_EQ(back.l2_partition_masks, c.l2_partition_masks);
  EXPECT_FALSE(back.l2_replication);
  ASSERT_EQ(back.tlb.size(), 2u);
  EXPECT_EQ(back.tlb[1].ways, 8u);
  EXPECT_EQ(back.tlb[1].miss_penalty_cycles, 60);
}

// A placement unit below the line, above 1 GiB, not a power of two, or with a scrambled index
// is refused with one line naming the field.
TEST(ModelStructure, PlacementUnitsTheModelCannotPlaceAreRefused) {
  for (std::uint64_t unit : {std::uint64_t{64}, std::uint64_t{3000}, std::uint64_t{1} << 31}) {
    auto c = device::builtin_model_config("tiny");
    c.l2.placement_unit_bytes = unit;
    try {
      device::ModelDevice dev(c);
      ADD_FAILURE() << unit << " accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("placement_unit_bytes"), std::string::npos) << e.what();
    }
  }
  auto c = device::builtin_model_config("tiny");
  c.l2.placement_unit_bytes = 65536;
  c.l2.scrambled_index = true;
  EXPECT_THROW(device::ModelDevice{c}, UsageError);
  c.l2.scrambled_index = false;
  EXPECT_NO_THROW(device::ModelDevice{c});
}

TEST(ModelStructure, FarLineIsServedNearAfterItsFirstReadOnlyWithReplication) {
  for (bool replication : {true, false}) {
    auto c = device::builtin_model_config("tiny");
    c.l2_partition_masks = {128};
    c.l2_replication = replication;
    device::ModelDevice dev(c);
    auto buf = dev.alloc_probe_buffer(1 << 20);
    AccessSequence s;
    s.op = device::LoadOp::kCg;
    s.flush_l2 = true;
    s.sm = 0;                 // side 0
    s.sequence = {128, 128};  // homed in partition 1: far from SM 0
    const auto t = dev.run_sequence(*buf, s);
    EXPECT_EQ(t.cycles[0], c.dram_latency_cycles);
    EXPECT_EQ(t.cycles[1],
              replication ? c.l2_near.hit_latency_cycles : c.l2_far_hit_latency_cycles);
  }
}

TEST(ModelStructure, AccelsimLinesParseBack) {
  auto c = device::builtin_model_config("tiny");
  c.l1.sector_bytes = 32;
  c.l2.policy = device::Replacement::kFifo;
  const std::string text = device::accelsim_config(device::to_json(c));
  std::istringstream in(text);
  std::string line;
  int parsed = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto a = device::parse_accelsim_cache_line(line);
    if (a.option == "-gpgpu_cache:dl1") {
      EXPECT_EQ(a.type, 'S');
      EXPECT_EQ(a.line_bytes, 128u);
      EXPECT_EQ(a.ways, 4u);
      EXPECT_EQ(a.sets, device::l1_capacity_bytes(c, -1) / 128 / 4);
      EXPECT_EQ(a.replacement, 'L');
      EXPECT_EQ(a.set_index, 'L');
    } else {
      EXPECT_EQ(a.option, "-gpgpu_cache:dl2");
      EXPECT_EQ(a.type, 'N');
      EXPECT_EQ(a.sets, c.l2.capacity_bytes / 2 / 128 / c.l2.ways);  // one of 2 partitions
      EXPECT_EQ(a.replacement, 'F');
    }
    ++parsed;
  }
  EXPECT_EQ(parsed, 2);
  EXPECT_THROW(device::parse_accelsim_cache_line("-gpgpu_cache:dl1 N:64:128"), UsageError);
}

TEST(ModelStructure, ExportFromTheH200ResultWritesAccelsim) {
  std::ifstream in(std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/result.json");
  ASSERT_TRUE(in.good());
  const auto model = device::model_from_result(nlohmann::json::parse(in));
  EXPECT_EQ(model.at("l2_partition_masks").at(0).get<std::uint64_t>(), 0xab000u);
  const std::string text = device::accelsim_config(model);
  EXPECT_NE(text.find("-gpgpu_cache:dl1 "), std::string::npos);
  EXPECT_NE(text.find("-gpgpu_cache:dl2 "), std::string::npos);
}

}  // namespace
}  // namespace gpuprobe
