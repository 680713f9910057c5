#pragma once
// Kernels of the compute-pipe probes (compute_kernels.cu) and their host launchers.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "device/device_buffer.hpp"
#include "measure/block_timing.hpp"

#ifdef __CUDACC__
#define GP_HOST_DEVICE __host__ __device__
#else
#define GP_HOST_DEVICE
#endif

namespace gpuprobe::probes::kernels {

using device::DeviceArray;
using measure::BlockTiming;

enum class FmaOp { kFfma, kHfma2, kImad, kDfma };
constexpr int kMaxAccumulators = 16;

/// Steps per accumulator in one loop iteration: even, and K * steps >= 512 instructions per
/// iteration, so the loop's own three instructions cost < 0.6% of the issue slots.
constexpr GP_HOST_DEVICE int fma_steps_per_iteration(int accumulators) {
  return 2 * ((256 + accumulators - 1) / accumulators);
}

/// Start value of accumulator k of global thread `thread` (for HFMA2, half 0 = low, 1 = high):
/// a small integer, exact in every type.
inline GP_HOST_DEVICE int fma_seed(std::uint64_t thread, int k, int half) {
  return static_cast<int>((thread * 3u + static_cast<std::uint64_t>(k) * 5u) & 63u) + 64 * half;
}

/// Every thread runs `accumulators` independent chains x <- x * a + b (a, b kernel arguments),
/// `iterations * fma_steps_per_iteration(accumulators) + 1` steps each, then writes the sum of
/// its accumulators (as double; both halves for HFMA2) to out[global thread].
struct FmaLaunch {
  FmaOp op = FmaOp::kFfma;
  int accumulators = 1;  ///< 1..16
  int threads_per_block = 256;
  int blocks = 1;
  std::uint32_t dynamic_smem_bytes = 0;  ///< only to limit the blocks per SM
  std::uint32_t iterations = 1;
  double a = 1, b = 1;  ///< converted to the op's type (exactly: use small integers)
};

/// Steps each accumulator takes in a launch.
inline std::uint64_t fma_steps(const FmaLaunch& l) {
  return static_cast<std::uint64_t>(l.iterations) *
             static_cast<std::uint64_t>(fma_steps_per_iteration(l.accumulators)) +
         1;
}
/// Resident blocks per SM (also sets the kernel's dynamic shared limit and max-shared carveout).
int fma_blocks_per_sm(FmaOp op, int accumulators, int threads, std::uint32_t dynamic_smem_bytes);
void launch_fma(const FmaLaunch& l, double* out, BlockTiming* records, cudaStream_t stream);

}  // namespace gpuprobe::probes::kernels
