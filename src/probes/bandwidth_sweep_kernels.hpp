#pragma once
// Kernels of bandwidth.sweep and bandwidth.hierarchy (implemented in bandwidth_sweep_kernels.cu):
// reads of an L1-resident slice per SM, reads of one region shared by the whole grid through the
// L2 (ld.global.cg), and a register-only FFMA loop. Every block records its SM, %clock64 and
// %globaltimer around its timed part (after a __syncthreads) and the wrapping 32-bit sum of
// every word it read (or the FFMA results), so that the host can time each SM and verify what
// was read.
#include <cuda_runtime_api.h>

#include <cstdint>

#if defined(__CUDACC__)
#define GP_BWS_HD __host__ __device__
#else
#define GP_BWS_HD
#endif

namespace gpuprobe::probes::bws {

/// What one block of any kernel here writes (one per block, indexed by blockIdx.x).
struct BlockRecord {
  std::uint64_t clock_start = 0, clock_end = 0;  ///< %clock64 around the timed passes
  std::uint64_t ns_start = 0, ns_end = 0;        ///< %globaltimer around the timed passes
  std::uint32_t smid = 0;
  std::uint32_t slot = 0;  ///< slices kernel: the block's index among the blocks of its SM
  std::uint32_t sum = 0;   ///< wrapping sum of every 32-bit word read, all passes
  std::uint32_t pad = 0;
};

constexpr unsigned kThreads = 1024;  ///< threads per block of every kernel here
constexpr int kFmaChains = 8;        ///< independent FFMA chains per thread

/// Regime "L1": the blocks on SM s read slice s % slices (slice_vectors 16-B vectors at
/// data + (s % slices) x slice_vectors); the k-th block to arrive on an SM (k taken modulo
/// `slots`) reads only sub-slice k of slice_vectors / slots vectors, so the SM's working set is
/// exactly one slice. ld.global.ca (L1-allocating) 16-B loads; warm_passes untimed passes, then
/// timed_passes timed ones. slot_counters (slices words) must be zero before the launch: the
/// launcher clears them on the stream.
struct SliceParams {
  const uint4* data = nullptr;
  std::uint32_t slice_vectors = 0;  ///< must be a multiple of slots
  std::uint32_t slices = 1;
  std::uint32_t slots = 1;
  std::uint32_t warm_passes = 1, timed_passes = 1;
  std::uint32_t* slot_counters = nullptr;
  BlockRecord* records = nullptr;
};
void launch_l1_slices(const SliceParams& p, unsigned blocks, cudaStream_t s);

/// Regime "L2": the grid reads vectors [0, vectors) once per pass, grid-stride (thread g reads
/// g, g + G, ... for G threads in the grid), with ld.global.cg (cached in L2 only).
struct SharedParams {
  const uint4* data = nullptr;
  std::uint32_t vectors = 0;
  std::uint32_t warm_passes = 0, timed_passes = 1;
  BlockRecord* records = nullptr;
};
void launch_l2_shared(const SharedParams& p, unsigned blocks, cudaStream_t s);

/// Register-only FFMA: every thread runs kFmaChains independent chains x <- fma(x, a, b) for
/// `steps` steps (steps a multiple of 16), starting at fma_start(thread, chain), and writes the
/// sum of its chains (in chain order) to out[thread]. No memory access in the timed loop.
struct FmaParams {
  std::uint32_t steps = 0;
  float a = 0, b = 0;
  float* out = nullptr;
  BlockRecord* records = nullptr;
};
void launch_register_fma(const FmaParams& p, unsigned blocks, cudaStream_t s);

/// Start value of FFMA chain `chain` of global thread `thread` (same on host and device).
GP_BWS_HD inline float fma_start(std::uint32_t thread, int chain) {
  return 1.0f + static_cast<float>((thread * kFmaChains + static_cast<std::uint32_t>(chain)) &
                                   0xffffu) *
                    (1.0f / 65536.0f);
}

/// Resident blocks of kThreads threads per SM: kind 0 slices, 1 shared, 2 fma.
int blocks_per_sm(int kind);

/// %nsmid: one more than the largest %smid an SM of this GPU can report (SM ids may have gaps,
/// so this can exceed the SM count). Launches one thread on `s` and waits for it.
std::uint32_t query_nsmid(cudaStream_t s);

/// Makes the slices kernel prefer the largest L1 (shared-memory carveout 0 %): a per-kernel
/// attribute, no device setting.
void prefer_max_l1();

}  // namespace gpuprobe::probes::bws
