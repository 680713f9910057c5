#pragma once
// One chase point as latency.sweep measures it (the chain, the hot or cold warm-up plan, the
// stopping rule), shared by the latency family, the cache-structure family and `gpuprobe
// replay`.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/experiment.hpp"
#include "core/protocol.hpp"
#include "device/device.hpp"

namespace gpuprobe::measure {

/// How one working set is chased: "hot" sets (up to twice the L2) are walked once in full
/// before timing, so the L2 holds the chase's own steady state; "cold" sets (larger) are timed
/// from a flushed L2 over lines no earlier run touched, so every load misses the L2 without a
/// full pass (a 512 MB chain would need 4 M steps for one).
struct ChasePlan {
  bool cold = false;
  std::uint64_t first_warmup_steps = 0;  ///< the protocol's warm-up run (fills the L2)
  std::uint64_t warmup_steps = 0;        ///< untimed steps inside every timed run
  std::uint64_t timed_steps = 0;
};
ChasePlan plan_chase(std::uint64_t nodes, std::uint64_t working_set, std::uint64_t l2_bytes);

struct ChasePoint {
  std::uint64_t working_set = 0;
  device::LoadOp op = device::LoadOp::kCa;
  int carveout = -1;
  ChasePlan plan;
  Measurement cycles;
  double clock_mhz = 0;  ///< SM clock during the chase: cycles over %globaltimer (0 = unknown)
  int smid = -1;
  std::uint64_t offset_bytes = 0;  ///< the chain's offset into its allocation
};
nlohmann::json to_json(const ChasePoint& p);

/// A chain of `working_set` bytes at ctx.options.node_stride (seed: ctx.options.seed unless
/// given; `offset_bytes` into its allocation, ChainSpec::offset_bytes), chased per plan_chase
/// with ctx.options.protocol's stopping rule.
ChasePoint measure_chase(Context& ctx, device::LoadOp op, std::uint64_t working_set, int carveout,
                         std::optional<std::uint64_t> seed = std::nullopt,
                         std::uint64_t offset_bytes = 0);

/// The median cycles per load of measure_chase, carve-out the driver's default: one
/// latency.sweep point as the sweep measures it (`gpuprobe replay` measures the exported model
/// so), or, given a node stride (bytes between the chase's nodes; 0 = ctx.options.node_stride)
/// and a chain seed, the same at that stride.
double chase_point_cycles(Context& ctx, device::LoadOp op, std::uint64_t working_set,
                          std::uint32_t node_stride = 0,
                          std::optional<std::uint64_t> seed = std::nullopt);

}  // namespace gpuprobe::measure
