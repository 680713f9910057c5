// Kernel of cache.fetch_granularity.
#include <cuda_runtime.h>

#include "core/cuda_check.hpp"
#include "device/ptx.cuh"
#include "probes/cache/fetch_kernels.hpp"

namespace gpuprobe::probes::fetch {
namespace {

template <int kCg>
__device__ __forceinline__ std::uint64_t load(std::uint64_t address) {
  return device::ptx::load_u64<kCg ? device::LoadOp::kCg : device::LoadOp::kCa>(address);
}

// A branch on the loaded value holds the next instruction until the value arrives.
__device__ __forceinline__ void check(std::uint64_t value, std::uint64_t expected,
                                      std::uint32_t* wrong) {
  if (value != expected) atomicAdd(wrong, 1u);
}

__global__ void prepare_kernel(std::uint64_t* region, std::uint64_t words) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       i < words; i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    region[i] = reinterpret_cast<std::uint64_t>(region + i);
}

template <int kCg>
__global__ void probe_kernel(Params p) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const auto base = reinterpret_cast<std::uint64_t>(p.region);
  for (std::uint32_t k = 0; k < p.probes; ++k) {
    const std::uint64_t line = base + p.line_offsets[k];
    const std::uint64_t target = line + p.offsets[k];
    const std::uint64_t v = load<kCg>(line);
    check(v, line, p.wrong);
    if (target == 0) atomicAdd(p.wrong, 1u);  // the timed load's address is ready before t0
    const std::uint64_t t0 = clock64();
    const std::uint64_t w = load<kCg>(target);
    check(w, target, p.wrong);
    const std::uint64_t t1 = clock64();
    p.cycles[k] = static_cast<std::uint32_t>(t1 - t0);
  }
}

}  // namespace

void prepare(std::uint64_t* region, std::uint64_t words) {
  prepare_kernel<<<512, 256>>>(region, words);
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

void run(const Params& p) {
  if (p.cache_global)
    probe_kernel<1><<<1, 32>>>(p);
  else
    probe_kernel<0><<<1, 32>>>(p);
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace gpuprobe::probes::fetch
