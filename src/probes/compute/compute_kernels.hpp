#pragma once
// Kernels of the shared-memory, compute-pipe and timer probes (implemented in
// compute_kernels.cu), their host launchers, and a small RAII owner of device memory.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/cuda_check.hpp"
#include "device/device_buffer.hpp"

#ifdef __CUDACC__
#define GP_HOST_DEVICE __host__ __device__
#else
#define GP_HOST_DEVICE
#endif

namespace gpuprobe::probes::kernels {

using device::DeviceArray;

/// What thread 0 of every block writes: its SM, clock64 and %globaltimer around the timed part,
/// and how many of the block's threads ended with a wrong value.
struct BlockRecord {
  std::uint64_t c0, c1;  ///< clock64 (cycles of this SM)
  std::uint64_t g0, g1;  ///< %globaltimer (ns)
  std::uint32_t smid;
  std::uint32_t bad;
};

// ---- Shared memory ---------------------------------------------------------------------------

/// Chains each thread keeps in flight; the kernel is instantiated for these counts only.
constexpr int kSmemChainCounts[] = {1, 4, 32};

/// A shared-memory "self-loop" chase: every 4-byte word of the block's shared memory holds its
/// own shared-window address, so ld.shared at address p returns p (in its first 4 bytes) and
/// each load's address is the previous load's result. Thread (warp w, lane l) runs `chains`
/// independent chains; chain k starts at
///   base + w * warp_offset + l * stride_bytes + k * chain_offset
/// with base aligned to 128 B, so the bank pattern of every warp-wide load is that of lane
/// l -> l * stride_bytes.
struct SmemLaunch {
  int word_bytes = 4;  ///< 4, 8 or 16 (ld.volatile.shared .u32, .v2.u32, .v4.u32)
  int chains = 4;      ///< one of kSmemChainCounts
  std::uint32_t stride_bytes = 4;
  std::uint32_t chain_offset_bytes = 128;
  std::uint32_t warp_offset_bytes = 0;
  int threads_per_block = 32;
  int blocks = 1;
  std::uint32_t iterations = 1024;  ///< loads per chain (a multiple of 4)
};

/// Dynamic shared memory the launch needs (the footprint plus 128 B of alignment slack).
std::uint32_t smem_chase_bytes(const SmemLaunch& l);
/// Resident blocks per SM for this launch (also raises the kernel's dynamic shared limit).
int smem_chase_blocks_per_sm(const SmemLaunch& l);
/// Launches the chase; records[b] gets block b's timing (bad = threads whose chains did not
/// end where they started).
void launch_smem_chase(const SmemLaunch& l, BlockRecord* records, cudaStream_t stream);

// ---- Compute pipes ---------------------------------------------------------------------------

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
void launch_fma(const FmaLaunch& l, double* out, BlockRecord* records, cudaStream_t stream);

// ---- Timers ----------------------------------------------------------------------------------

constexpr int kTimerPairs = 64;
constexpr int kTimerGaps = 32;
constexpr int kTimerMaxChanges = 256;
constexpr int kTimerStreamReads = 32;

/// What the timer probe kernel (one thread) writes.
struct TimerProbeOut {
  std::uint32_t clock64_pair[kTimerPairs];          ///< clock64 read twice back to back
  std::uint32_t clock32_pair[kTimerPairs];          ///< %clock read twice back to back
  std::uint32_t clock64_gap[kTimerGaps];            ///< clock64 around i dependent adds (i = index)
  std::uint32_t clock32_gap[kTimerGaps];            ///< %clock around the same
  std::uint32_t clock64_stream[kTimerStreamReads];  ///< 32 consecutive clock64 reads - the first
  std::uint32_t clock32_stream[kTimerStreamReads];  ///< the same for %clock
  std::uint32_t globaltimer_read[kTimerPairs];      ///< clock64 around one %globaltimer read, used
  std::uint32_t globaltimer_pair[kTimerPairs];      ///< %globaltimer read twice back to back (ns)
  std::uint32_t changes;                            ///< %globaltimer changes seen in the spin
  std::uint32_t spin_reads;                         ///< %globaltimer reads in the spin
  std::uint32_t change_ns[kTimerMaxChanges];        ///< size of each change (ns)
  std::uint32_t change_cycles[kTimerMaxChanges];    ///< clock64 cycles since the previous change
};

void launch_timer_probe(TimerProbeOut* out, std::uint32_t max_spin_reads, cudaStream_t stream);
/// An empty kernel <<<1, 1>>>, for the CUDA-event measurements.
void launch_empty(cudaStream_t stream);

}  // namespace gpuprobe::probes::kernels
