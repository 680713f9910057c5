#pragma once
// Kernels of the Hopper TMA and distributed-shared-memory probes (tma_kernels.cu). The device
// code exists only for sm_90 and newer (__CUDA_ARCH__ >= 900: cp.async.bulk, mbarrier
// transaction counts, clusters); the compute_75 PTX holds empty stubs and tma_compiled() tells
// the host which it got. Launchers check every CUDA call and launch and synchronize.
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define GP_TMA_HD __host__ __device__
#else
#define GP_TMA_HD
#endif

namespace gpuprobe::probes::tma {

/// The 32-bit word at word index i of every verified buffer (a hash of i).
GP_TMA_HD inline std::uint32_t pattern(std::uint64_t i) {
  std::uint32_t x = static_cast<std::uint32_t>(i) ^ static_cast<std::uint32_t>(i >> 32) * 0x27D4EB2Fu;
  x *= 0x9E3779B1u;
  x ^= x >> 15;
  x *= 0x85EBCA77u;
  x ^= x >> 13;
  return x;
}

/// Host-side image of a CUtensorMap (128 bytes, 64-byte aligned), kept opaque here.
struct TensorMap {
  alignas(64) std::uint64_t opaque[16];
};

/// Whether this binary holds the sm_90 TMA / cluster kernels for the current device.
bool tma_compiled();

/// cuTensorMapEncodeTiled (through cudaGetDriverEntryPointByVersion, no -lcuda): a 2-D tensor of
/// uint32 elements, `rows` rows of 32 elements (128 B, contiguous), box = 32 x box_rows, no
/// swizzle, no interleave. Throws std::runtime_error naming the CUresult on failure.
TensorMap encode_rows_map(const void* base, std::uint64_t rows, std::uint32_t box_rows);

// ---- hopper.tma.latency ------------------------------------------------------------------

enum class CopyKind { kBulk, kTensor, kWarpLoad };
const char* copy_name(CopyKind k);  ///< "bulk", "tensor", "warp_load"

struct LatencyOut {
  std::uint64_t cycles;    ///< clock64 from issue to completion (thread 0)
  std::uint32_t smid;
  std::uint32_t timeouts;  ///< mbarrier waits that gave up (1 s): the copy never completed
};

/// One block of one warp copies `bytes` (16..16384, multiple of 16) from `src` into shared
/// memory and times it; then the block writes the shared bytes to `copy_out` for checking.
///  kBulk:     cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
///  kTensor:   cp.async.bulk.tensor.2d ... box at row `row` of `map` (box_rows = bytes / 128)
///  kWarpLoad: 32 lanes ld.global.v4 of the bytes into registers, st.shared, __syncwarp
void launch_latency(CopyKind kind, const std::uint8_t* src, std::uint32_t bytes, std::uint32_t row,
                    const TensorMap& map, std::uint8_t* copy_out, LatencyOut* out);

/// Fills words[i] = pattern(i), i < n.
void fill_pattern(std::uint32_t* words, std::uint64_t n);
/// Number of words[i] != pattern(i), i < n (synchronous).
std::uint64_t count_mismatches(const std::uint32_t* words, std::uint64_t n);

// ---- hopper.tma.bandwidth ----------------------------------------------------------------

/// Dynamic shared memory the bandwidth kernels need for `stages` tiles of `tile` bytes.
std::uint32_t bandwidth_smem_bytes(std::uint32_t tile, int stages);
/// Raises the bandwidth kernels' dynamic shared limit to `bytes`.
void bandwidth_prepare(std::uint32_t bytes);

/// Global -> shared: `blocks` blocks of 160 threads; lane 0 of warp 0 issues cp.async.bulk tiles
/// into a ring of `stages` (1..4) buffers, each with a "full" mbarrier (expect_tx + complete_tx)
/// and an "empty" mbarrier (128 consumer arrivals); 4 consumer warps wait on "full", sum every
/// word into sums[block] (64-bit) and arrive on "empty". Tile j of the persistent loop
/// (j = block + k * blocks < tiles * passes) is tile j % tiles of the array.
/// Returns the kernel's milliseconds (CUDA events); timeouts counts given-up waits.
double run_load_bandwidth(const std::uint8_t* src, std::uint64_t tiles, std::uint32_t tile, int stages,
                          std::uint32_t passes, int blocks, std::uint32_t smem,
                          unsigned long long* sums, unsigned* timeouts);

/// Shared -> global: `blocks` blocks of 128 threads write pattern(word index) for tile j % tiles
/// into stage k % stages (after cp.async.bulk.wait_group.read stages-1 frees it), fence.proxy.async,
/// then thread 0 issues cp.async.bulk.global.shared::cta.bulk_group + commit_group; the kernel
/// ends with cp.async.bulk.wait_group 0 (the writes are performed). Returns milliseconds.
double run_store_bandwidth(std::uint32_t* dst, std::uint64_t tiles, std::uint32_t tile, int stages,
                           std::uint32_t passes, int blocks, std::uint32_t smem);

// ---- hopper.dsmem ------------------------------------------------------------------------

struct DsmemLatencyOut {
  std::uint64_t cycles;
  std::uint32_t end_index;
  std::uint32_t smid;
};

/// Enables non-portable cluster sizes (16) on the cluster kernels.
void dsmem_prepare();

/// cudaOccupancyMaxActiveClusters for the bandwidth kernel with `cluster` blocks per cluster of
/// `threads` threads and `smem` dynamic shared bytes; returns the CUDA error (not thrown) and
/// writes the count (0 when the error is not cudaSuccess).
int dsmem_max_active_clusters(int cluster, int threads, std::uint32_t smem, int* count);

/// One cluster of `cluster` blocks (cudaLaunchKernelEx + cluster dimension). Every block loads
/// the successor table next[0..nodes) into its shared memory; block rank 0 thread 0 then walks
/// `warmup` + `steps` dependent ld.shared::cluster.u32 through block rank `target`'s copy
/// (mapa), timing the last `steps`.
void launch_dsmem_latency(int cluster, int target, const std::uint32_t* next, std::uint32_t nodes,
                          std::uint32_t warmup, std::uint32_t steps, DsmemLatencyOut* out);

/// `clusters` clusters of `cluster` blocks of `threads` threads; every block fills `bytes` of its
/// shared memory with pattern(j) + its rank, then reads its peer's (rank + 1) % cluster buffer
/// `reps` times with ld.shared::cluster.v4.u32, summing (mod 2^32) into sums[block].
/// g0/g1: per-block %globaltimer around the reads. Returns milliseconds (CUDA events).
double run_dsmem_bandwidth(int cluster, int clusters, int threads, std::uint32_t bytes, std::uint32_t reps,
                           unsigned* sums, unsigned long long* g0, unsigned long long* g1);

}  // namespace gpuprobe::probes::tma
