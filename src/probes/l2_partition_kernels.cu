// Kernel of cache.l2.partition: per-SM L2 hit latency of each probed line.
#include <cuda_runtime.h>

#include "core/cuda_check.hpp"
#include "device/ptx.cuh"
#include "probes/l2_partition_kernels.hpp"

namespace gpuprobe::probes::l2part {
namespace {

__device__ __forceinline__ std::uint64_t load_cg(std::uint64_t address) {
  std::uint64_t value;
  asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  return value;
}

// A branch on the loaded value stalls issue until it arrives, so the clock read after it sees
// the completed chain (a line always holds its own, non-zero, address).
__device__ __forceinline__ void wait_for(std::uint64_t value) {
  if (value == 0) __trap();
}

__global__ void prepare_kernel(Params p) {
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < p.n_lines;
       i += gridDim.x * blockDim.x) {
    std::uint64_t* line = const_cast<std::uint64_t*>(p.lines[i]);
    *line = reinterpret_cast<std::uint64_t>(line);
  }
}

__global__ void partition_kernel(Params p) {
  if (threadIdx.x != 0) return;
  const std::uint32_t smid = device::ptx::sm_id();
  if (smid >= 1024 || atomicCAS(&p.claims[smid], 0u, 1u) != 0u) return;
  const std::uint32_t row = atomicAdd(p.rows_used, 1u);
  if (row >= p.max_rows) return;
  p.row_smid[row] = smid;
  for (std::uint32_t i = 0; i < p.n_lines; ++i) {
    std::uint64_t a = reinterpret_cast<std::uint64_t>(p.lines[i]);
    a = load_cg(a);  // brings the line into the L2 if it is not there
    wait_for(a);
    std::uint32_t best = 0xffffffffu;
    for (std::uint32_t r = 0; r < p.reps; ++r) {
      const std::uint64_t t0 = clock64();
#pragma unroll
      for (int k = 0; k < kLoadsPerSample; ++k) a = load_cg(a);
      wait_for(a);
      const std::uint64_t t1 = clock64();
      const std::uint32_t c = static_cast<std::uint32_t>(t1 - t0);
      best = c < best ? c : best;
    }
    p.cycles[static_cast<std::size_t>(row) * p.n_lines + i] = best;
  }
}

}  // namespace

void prepare_lines(const Params& p) {
  prepare_kernel<<<64, 256>>>(p);
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

void run(const Params& p, unsigned blocks) {
  partition_kernel<<<blocks, 32>>>(p);
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace gpuprobe::probes::l2part
