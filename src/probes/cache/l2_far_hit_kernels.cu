// cache.l2.far_hit's pinned chase: the copies the near partition keeps are per partition, so the
// chase must run on the SM whose near and far lines were classified.
#include <cuda_runtime.h>

#include "core/cuda_check.hpp"
#include "device/ptx.cuh"
#include "probes/cache/l2_far_hit_kernels.hpp"

namespace gpuprobe::probes::farhit {
namespace {

__global__ void chase_on_sm_kernel(const std::uint64_t* start, std::uint64_t warmup,
                                   std::uint64_t steps, std::uint32_t sm, std::uint32_t* claim,
                                   SmChaseOut* out) {
  if (threadIdx.x != 0 || device::ptx::sm_id() != sm || atomicCAS(claim, 0u, 1u) != 0u) return;
  std::uint64_t p = reinterpret_cast<std::uint64_t>(start);
  for (std::uint64_t i = 0; i < warmup; ++i) p = device::ptx::load_u64<device::LoadOp::kCg>(p);
  // A branch on the value: the clock read waits for the last load (the chain never holds 0).
  if (p == 0) __trap();
  const std::uint64_t t0 = device::ptx::clock_64();
  for (std::uint64_t i = 0; i < steps; ++i) p = device::ptx::load_u64<device::LoadOp::kCg>(p);
  if (p == 0) __trap();
  const std::uint64_t t1 = device::ptx::clock_64();
  out->end_address = p;
  out->cycles = t1 - t0;
  out->smid = sm;
  out->ran = 1;
}

}  // namespace

void chase_on_sm(const std::uint64_t* start, std::uint64_t warmup, std::uint64_t steps, int sm,
                 unsigned blocks, std::uint32_t* claim, SmChaseOut* out) {
  chase_on_sm_kernel<<<blocks, 32>>>(start, warmup, steps, static_cast<std::uint32_t>(sm), claim,
                                     out);
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace gpuprobe::probes::farhit
