#pragma once
// Host-callable launchers of the pointer-chase kernels (implemented in chase_kernels.cu).
#include <cuda_runtime.h>

#include <cstdint>

#include "device/device.hpp"

namespace gpuprobe::device::kernels {

/// What one chase kernel writes back: the node it ended on and its own timings.
struct ChaseOut {
  std::uint64_t end_address;
  std::uint64_t cycles;
  std::uint64_t globaltimer_ns;
  std::uint32_t smid;
  std::uint32_t pad;
};

/// Writes the chain into `base`: node i at base + i * stride holds the address of node next[i].
void launch_build_chain(std::uint64_t* base, const std::uint32_t* next, std::uint64_t nodes,
                        std::uint32_t stride_bytes, cudaStream_t stream);

/// Streams over `bytes` of `buffer` (reads and writes) so that earlier data leaves the L2.
void launch_flush(std::uint64_t* buffer, std::uint64_t bytes, int sm_count, cudaStream_t stream);

/// Single-thread chase: `warmup` untimed steps then `steps` timed ones, from `start`.
void launch_chase(LoadOp op, const std::uint64_t* start, std::uint64_t warmup, std::uint64_t steps,
                  int carveout_percent, ChaseOut* out, cudaStream_t stream);

/// The chase of launch_chase that also times every `every`-th timed step on its own
/// (%clock64 around the load; `samples[i / every]`, written past the L1 with st.global.cg).
void launch_sampled_chase(LoadOp op, const std::uint64_t* start, std::uint64_t warmup,
                          std::uint64_t steps, std::uint32_t every, std::uint32_t* samples,
                          int carveout_percent, ChaseOut* out, cudaStream_t stream);

/// Single-thread chase through `nodes` nodes `stride_bytes` apart in dynamic shared memory,
/// successors given by `next` (global memory); the chase starts at node 0.
void launch_shared_chase(const std::uint32_t* next, std::uint32_t nodes, std::uint32_t stride_bytes,
                         std::uint64_t steps, ChaseOut* out, cudaStream_t stream);

/// cudaFuncGetAttributes of the global chase kernel for `op` and of the shared chase kernel.
cudaFuncAttributes chase_attributes(LoadOp op);
cudaFuncAttributes shared_chase_attributes();

/// Back-to-back timer reads; out[0] = min clock64 delta, out[1] = min %clock delta.
void launch_timer_calibration(std::uint64_t* out, cudaStream_t stream);

}  // namespace gpuprobe::device::kernels
