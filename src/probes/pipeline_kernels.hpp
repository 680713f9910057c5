#pragma once
// Kernels of hopper.pipeline (pipeline_kernels.cu): a persistent TMA -> shared-memory ring ->
// wgmma tile pipeline. Device code only for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL); the compute_75
// PTX holds empty stubs and pipeline_compiled() tells the host which it got.
#include <cstdint>

namespace gpuprobe::probes::pipeline {

/// Tile of one CTA per k-step: BM x kN x kKStep, BM = 64 x consumer warpgroups (64 or 128).
constexpr int kN = 256;
constexpr int kKStep = 64;
constexpr int kMaxStages = 4;
constexpr int kThreadsPerWarpgroup = 128;
constexpr int kAccumulators = 128;  ///< f32 registers per thread of m64n256 (64 x 256 / 128)

inline constexpr std::uint32_t a_stage_bytes(int bm) { return static_cast<std::uint32_t>(bm) * kKStep * 2; }
inline constexpr std::uint32_t b_stage_bytes() { return static_cast<std::uint32_t>(kN) * kKStep * 2; }
inline constexpr std::uint32_t stage_bytes(int bm) { return a_stage_bytes(bm) + b_stage_bytes(); }
/// Dynamic shared memory for `stages` stages (+1024 for the alignment of the ring).
inline constexpr std::uint32_t smem_bytes(int bm, int stages) {
  return stage_bytes(bm) * static_cast<std::uint32_t>(stages) + 1024;
}

/// kPipeline: the producer warp streams every k-step through the ring, the consumers run
///   4 wgmma m64n256k16 per k-step and release each stage when its wgmma group completed.
/// kMathOnly: the producer loads the first `stages` k-steps of the CTA's last work item once;
///   the consumers then run every k-step on stage (i % stages) without any copy or barrier.
/// kCopyOnly: the producer streams as in kPipeline; the consumers wait for each stage and
///   release it at once, without math, except on the last work item (kept for verification).
enum class Mode : int { kPipeline = 0, kMathOnly = 1, kCopyOnly = 2 };

/// Global operands: A is m_total x k_total, B is n_total x k_total, bf16, K contiguous (rows of
/// k_total * 2 bytes). Work item j of the persistent loop (j = block + w * blocks, w < items)
/// is output tile t = j % tiles, m block t % m_blocks, n block t / m_blocks, over all
/// k_total / 64 k-steps (the accumulators restart at every item: wgmma scale-d 0).
/// Shared-memory layout of a stage (no swizzle, K-major core matrices of 8 rows x 16 B):
/// A at 0: element (row r, k) at (k / 8) * (BM * 16) + (r / 8) * 128 + (r % 8) * 16 + (k % 8) * 2,
/// B after A the same with 256 rows. Each k-group of 8 columns is one TMA box {8, rows}.
struct Launch {
  int bm = 128;  ///< 64 or 128
  int stages = 2;
  Mode mode = Mode::kPipeline;
  int blocks = 1;
  std::uint32_t items = 1;
  std::uint32_t m_blocks = 1, tiles = 1;
  std::uint32_t k_total = 64;
  std::uint32_t dynamic_smem = 0;
  std::uint64_t desc_a = 0, desc_b = 0;  ///< LBO / SBO bits without the start address
};

/// Per block: %globaltimer after the start barrier and after the end barrier.
struct Times {
  unsigned long long g0, g1;
};

bool pipeline_compiled();
/// Sets the kernels' dynamic shared limit to `bytes`.
void pipeline_prepare(std::uint32_t bytes);

/// Encodes the 2-D bf16 tensor maps (rows x k_total, box {8, box_rows}, no swizzle) and launches;
/// synchronizes. out: per block, per consumer warpgroup wg, 128 x 128 floats:
///   out[((block * wgs + wg) * 128 + reg) * 128 + thread] (the last work item's accumulators).
/// timeouts: mbarrier waits that gave up (~0.1 s each). Returns nothing; times per block.
void run_pipeline(const Launch& l, const std::uint16_t* a, std::uint32_t m_total, const std::uint16_t* b,
                  std::uint32_t n_total, float* out, Times* times, unsigned* timeouts);

}  // namespace gpuprobe::probes::pipeline
