// The built-in models (h200, a100, rtx5080, tiny) and their names.
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/text_input.hpp"
#include "core/units.hpp"
#include "device/model_device.hpp"

namespace gpuprobe::device {

namespace {

using units::kGiB;
using units::kKiB;
using units::kMiB;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Built-in models.
//
// THESE ARE MODELS: plausible parameters chosen to resemble the named GPUs, NOT measurements of
// them. Latencies are SM cycles of a dependent single-thread chase.
//  * Every model's default shared carve-out is 0, so a chase without a carve-out request sees
//    the largest L1 (the whole unified L1/shared storage), as on a GPU running a kernel that
//    uses no shared memory. carveout_percent = 100 gives the smallest L1.
//  * L1: 128-B lines, 4-way (a guess; with a contiguous chain the lines spread evenly over the
//    sets, so the associativity does not move the capacity step).
//  * L2: 128-B lines, 16-way. h200 and a100 have a partitioned L2 (near half + far half);
//    rtx5080 a single L2.
//  * rtx5080: two candidate latency sets were considered, 43 / 302 / 520 and (at ~2932 MHz)
//    43 / 366 / 922 cycles for L1 / L2 / DRAM; the model uses the second, at 2932 MHz, whose
//    DRAM latency (~315 ns) is the more plausible for GDDR7.

namespace {

ModelConfig h200() {
  ModelConfig c;
  c.name = "h200";
  c.cc_major = 9, c.cc_minor = 0;
  c.sm_count = 132;
  c.sm_clock_mhz = 1980, c.mem_clock_mhz = 3201;
  c.mem_bus_width_bits = 6144;
  c.global_mem_bytes = 141 * kGiB;
  c.l1_shared_unified_bytes = 256 * kKiB;
  c.default_shared_carveout_bytes = 0;
  c.shared_per_sm_bytes = 228 * kKiB;
  c.l1 = {0, 128, 4, 33};
  c.l2_partitioned = true;
  c.l2_near = {30 * kMiB, 128, 16, 260};
  c.l2 = {60 * kMiB, 128, 16, 430};
  c.l2_far_hit_latency_cycles = 430;
  c.l2_partition_masks = {0xab000};  // the partition hash cache.l2.partition found on H200s
  c.dram_latency_cycles = 820;
  c.shared_latency_cycles = 30;
  c.noise_relative_sigma = 0.003;
  c.seed = 200;
  return c;
}

ModelConfig a100() {
  ModelConfig c;
  c.name = "a100";
  c.cc_major = 8, c.cc_minor = 0;
  c.sm_count = 108;
  c.sm_clock_mhz = 1410, c.mem_clock_mhz = 1215;
  c.mem_bus_width_bits = 5120;
  c.global_mem_bytes = 40 * kGiB;
  c.l1_shared_unified_bytes = 192 * kKiB;
  c.default_shared_carveout_bytes = 0;
  c.shared_per_sm_bytes = 164 * kKiB;
  c.l1 = {0, 128, 4, 34};
  c.l2_partitioned = true;
  c.l2_near = {20 * kMiB, 128, 16, 200};
  c.l2 = {40 * kMiB, 128, 16, 380};
  c.l2_far_hit_latency_cycles = 380;
  c.dram_latency_cycles = 650;
  c.shared_latency_cycles = 29;
  c.noise_relative_sigma = 0.003;
  c.seed = 100;
  return c;
}

ModelConfig rtx5080() {
  ModelConfig c;
  c.name = "rtx5080";
  c.cc_major = 12, c.cc_minor = 0;
  c.sm_count = 84;
  c.sm_clock_mhz = 2932, c.mem_clock_mhz = 15001;
  c.mem_bus_width_bits = 256;
  c.global_mem_bytes = 16 * kGiB;
  c.l1_shared_unified_bytes = 128 * kKiB;
  c.default_shared_carveout_bytes = 0;
  c.shared_per_sm_bytes = 100 * kKiB;
  c.l1 = {0, 128, 4, 43};
  c.l2_partitioned = false;
  c.l2_near = {};  // unused
  c.l2 = {64 * kMiB, 128, 16, 366};
  c.l2_far_hit_latency_cycles = 366;  // unused: one L2
  c.dram_latency_cycles = 922;
  c.shared_latency_cycles = 30;
  c.noise_relative_sigma = 0.003;
  c.seed = 5080;
  return c;
}

/// Small and exact, for fast tests: L1 16 KiB by default (64 KiB unified, 48 KiB carve-out),
/// L2 near 256 KiB / whole 512 KiB, no noise.
ModelConfig tiny() {
  ModelConfig c;
  c.name = "tiny";
  c.cc_major = 9, c.cc_minor = 0;
  c.sm_count = 4;
  c.sm_clock_mhz = 1000, c.mem_clock_mhz = 1000;
  c.mem_bus_width_bits = 256;
  c.global_mem_bytes = 1 * kGiB;
  c.l1_shared_unified_bytes = 64 * kKiB;
  c.default_shared_carveout_bytes = 48 * kKiB;
  c.shared_per_sm_bytes = 48 * kKiB;
  c.l1 = {0, 128, 4, 30};
  c.l2_partitioned = true;
  c.l2_near = {256 * kKiB, 128, 8, 200};
  c.l2 = {512 * kKiB, 128, 8, 300};
  c.l2_far_hit_latency_cycles = 300;
  c.dram_latency_cycles = 500;
  c.shared_latency_cycles = 25;
  c.noise_relative_sigma = 0;
  c.seed = 1;
  return c;
}

}  // namespace

std::vector<std::string> model_names() { return {"h200", "a100", "rtx5080", "tiny"}; }

ModelConfig builtin_model_config(const std::string& name) {
  if (name == "h200") return h200();
  if (name == "a100") return a100();
  if (name == "rtx5080") return rtx5080();
  if (name == "tiny") return tiny();
  std::string list;
  for (const auto& n : model_names()) list += (list.empty() ? "" : ", ") + n;
  throw UsageError("unknown model " + text_input::quoted(name) + "; available: " + list);
}

}  // namespace gpuprobe::device
