// Kernels of cache.l2.partition: which L2 partition serves each probed line to each SM.
#include <cuda_runtime.h>

#include "core/cuda_check.hpp"
#include "device/ptx.cuh"
#include "probes/cache/l2_partition_kernels.hpp"

namespace gpuprobe::probes::l2part {
namespace {

constexpr unsigned long long kTimeoutCycles = 4000000000ull;  // ~2 s: the reference never came

__device__ __forceinline__ std::uint64_t load_cg(std::uint64_t address) {
  return device::ptx::load_u64<device::LoadOp::kCg>(address);
}

// A branch on the loaded value stalls issue until it arrives, so the clock read after it sees
// the completed load (a line always holds its own, non-zero, address).
__device__ __forceinline__ void wait_for(std::uint64_t value) {
  if (value == 0) __trap();
}

__global__ void list_kernel(std::uint32_t* out) {
  if (threadIdx.x == 0) {
    const std::uint32_t s = device::ptx::sm_id();
    if (s < 1024) out[s] = 1;
  }
}

__global__ void round_kernel(Params p) {
  if (threadIdx.x != 0) return;
  const std::uint32_t smid = device::ptx::sm_id();
  const bool is_ref = smid == p.reference_smid && atomicCAS(&p.claims[0], 0u, 1u) == 0u;
  if (is_ref) {
    std::uint32_t wrong = 0;
    for (std::uint32_t i = 0; i < p.n_lines; ++i) {
      const auto a = reinterpret_cast<std::uint64_t>(p.lines[i]);
      wrong += load_cg(a) != a ? 1u : 0u;
    }
    // A use of every loaded value: every load has completed before the flag is raised.
    atomicAdd(&p.wrong[0], wrong);
    __threadfence();
    atomicExch(p.ready, 1u);
    atomicOr(p.status, 1u);
  }
  // The measured SM's block: the reference block itself when the SMs are equal.
  const bool is_measured =
      smid == p.measured_smid &&
      (p.measured_smid == p.reference_smid ? is_ref : atomicCAS(&p.claims[1], 0u, 1u) == 0u);
  if (!is_measured) return;
  const unsigned long long start = clock64();
  while (atomicAdd(p.ready, 0u) == 0u) {
    if (clock64() - start > kTimeoutCycles) {
      atomicOr(p.status, 4u);
      return;
    }
  }
  std::uint32_t wrong = 0;
  for (std::uint32_t i = 0; i < p.n_lines; ++i) {
    // The line's address, and a load of the unprobed last line of its 64 KiB region (so that
    // the timed load finds its translation cached), both held until they arrive: the timed
    // part is the line load alone.
    const std::uint64_t a = reinterpret_cast<std::uint64_t>(p.lines[i]);
    wait_for(a);
    const std::uint64_t warm_address = (a & ~std::uint64_t{0xFFFF}) | 0xFF80u;
    const std::uint64_t warm = load_cg(warm_address);
    wait_for(warm);
    const std::uint64_t t0 = clock64();
    const std::uint64_t v = load_cg(a);
    wait_for(v);
    const std::uint64_t t1 = clock64();
    p.cycles[i] = static_cast<std::uint32_t>(t1 - t0);
    // Checked after the clock read: the compare is not part of the timed load.
    wrong += (v != a ? 1u : 0u) + (warm != warm_address ? 1u : 0u);
  }
  atomicAdd(&p.wrong[1], wrong);
  atomicOr(p.status, 2u);
}

}  // namespace

void list_sms(std::uint32_t* out, unsigned blocks) {
  list_kernel<<<blocks, 32>>>(out);
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

void run_round(const Params& p, unsigned blocks) {
  round_kernel<<<blocks, 32>>>(p);
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace gpuprobe::probes::l2part
