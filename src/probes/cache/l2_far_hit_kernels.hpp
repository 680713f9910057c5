#pragma once
// Kernels of cache.l2.far_hit (l2_far_hit_kernels.cu): a single-thread chase pinned to one SM.
#include <cstdint>

namespace gpuprobe::probes::farhit {

struct SmChaseOut {
  std::uint64_t end_address;
  std::uint64_t cycles;
  std::uint32_t smid;
  std::uint32_t ran;  ///< 1 when the chosen SM's block chased
};

/// `blocks` blocks of 32 threads; the first block on SM `sm` chases (ld.global.cg) from
/// `start`: `warmup` untimed steps, then `steps` timed ones. `claim` and `out` zero before.
/// Synchronizes.
void chase_on_sm(const std::uint64_t* start, std::uint64_t warmup, std::uint64_t steps, int sm,
                 unsigned blocks, std::uint32_t* claim, SmChaseOut* out);

}  // namespace gpuprobe::probes::farhit
