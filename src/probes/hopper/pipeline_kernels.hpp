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

inline constexpr std::uint32_t a_stage_bytes(int bm) {
  return static_cast<std::uint32_t>(bm) * kKStep * 2;
}
inline constexpr std::uint32_t b_stage_bytes() {
  return static_cast<std::uint32_t>(kN) * kKStep * 2;
}
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
/// kSyncOnly: the ring of kPipeline without data after the first fill: the producer loads the
///   first `stages` k-steps of the last work item once (as kMathOnly), then completes every
///   later fill with a plain arrival; the consumers wait, compute and release as in kPipeline.
///   Its rate is the ring's synchronization cost alone.
enum class Mode : int { kPipeline = 0, kMathOnly = 1, kCopyOnly = 2, kSyncOnly = 3 };

/// Global operands: A is m_total x k_total, B is n_total x k_total, bf16, K contiguous (rows of
/// k_total * 2 bytes). Work item `item` of block `block` computes output tile tile_of(...) over
/// all k_total / 64 k-steps (the accumulators restart at every item: wgmma scale-d 0).
/// Shared-memory layout of a stage (128-byte swizzle, K-major): A at 0 as BM rows of 128 B (the
/// 64 k of a k-step), the 16-B chunk c of row r at r * 128 + ((c ^ (r % 8)) * 16); B after A the
/// same with 256 rows. One TMA box {64, BM} for A and {64, 256} for B (two boxes {64, 128} with
/// multicast), each landing as exactly this layout (CU_TENSOR_MAP_SWIZZLE_128B); every stage
/// starts 1024-B aligned.
/// cluster == 2 (multicast): the two CTAs of a cluster compute the two M-adjacent tiles of one
/// N block; each loads its own A and one half of the shared B tile, multicast to both CTAs, so
/// the L2 serves 3/4 (BM 128) or 2/3 (BM 64) of the bytes of cluster 1. A stage is refilled only
/// after the consumers of both CTAs released it (each consumer warp arrives on the empty
/// barrier of both CTAs).
struct Launch {
  int bm = 128;  ///< 64 or 128
  int stages = 2;
  int cluster = 1;  ///< 1, or 2 for B shared by TMA multicast within a cluster of 2
  /// Stage release: relaxed mbarrier arrivals and a CTA-scope wait (true), or release arrivals
  /// (cluster scope with multicast) and, with multicast, a cluster-scope acquire wait (false).
  bool relaxed = true;
  /// A from registers (ldmatrix.x4 + wgmma with a register A operand, relaxed release, every
  /// k-step ends with wgmma.wait_group 0) instead of from a shared-memory descriptor.
  bool a_regs = false;
  Mode mode = Mode::kPipeline;
  int blocks = 1;  ///< a multiple of `cluster`
  std::uint32_t items = 1;
  std::uint32_t m_blocks = 1, tiles = 1;  ///< even when cluster == 2
  std::uint32_t k_total = 64;
  std::uint64_t desc_a = 0, desc_b = 0;  ///< descriptor bits without the start address
  std::uint32_t dynamic_smem = 0;
};

#if defined(__CUDACC__)
#define GP_PIPELINE_HD __host__ __device__
#else
#define GP_PIPELINE_HD
#endif
/// Output tile (M block, N block) of work item `item` of block `block` out of `blocks`. With
/// cluster 1, tile t = (block + item * blocks) % tiles, M block t % m_blocks, N block
/// t / m_blocks. With cluster 2, the pair index p = block / 2 + item * (blocks / 2) picks pair
/// tile q = p % (tiles / 2): N block q / (m_blocks / 2), M block 2 (q % (m_blocks / 2)) + block
/// % 2.
GP_PIPELINE_HD inline void tile_of(std::uint32_t block, std::uint32_t item, std::uint32_t blocks,
                                   std::uint32_t m_blocks, std::uint32_t tiles, int cluster,
                                   std::uint32_t& m_block, std::uint32_t& n_block) {
  if (cluster == 2) {
    const std::uint32_t q = (block / 2 + item * (blocks / 2)) % (tiles / 2), half = m_blocks / 2;
    m_block = 2 * (q % half) + block % 2;
    n_block = q / half;
  } else {
    const std::uint32_t t = (block + item * blocks) % tiles;
    m_block = t % m_blocks;
    n_block = t / m_blocks;
  }
}
#undef GP_PIPELINE_HD

/// Per block: %globaltimer and %clock64 after the start barrier and after the end barrier.
struct Times {
  unsigned long long g0, g1;
  unsigned long long c0, c1;
};

bool pipeline_compiled();
/// Sets the kernels' dynamic shared limit to `bytes`.
void pipeline_prepare(std::uint32_t bytes);

/// Clusters of `cluster` CTAs of this kernel (BM `bm`, `smem` dynamic bytes) that fit on the GPU
/// at once (cudaOccupancyMaxActiveClusters); 0 when none.
int pipeline_max_clusters(int bm, int cluster, std::uint32_t smem);

/// Encodes the 2-D bf16 tensor maps (rows x k_total, box {64, rows per copy}, 128-B swizzle) and
/// launches (with a cluster dimension when l.cluster == 2); synchronizes. out: per block, per
/// consumer warpgroup wg, 128 x 128 floats:
///   out[((block * wgs + wg) * 128 + reg) * 128 + thread] (the last work item's accumulators).
/// timeouts: mbarrier waits that gave up (~0.1 s each). Returns nothing; times per block.
void run_pipeline(const Launch& l, const std::uint16_t* a, std::uint32_t m_total,
                  const std::uint16_t* b, std::uint32_t n_total, float* out, Times* times,
                  unsigned* timeouts);

}  // namespace gpuprobe::probes::pipeline
