#pragma once
// Kernels of cache.l2.sharing (l2_sharing_kernels.cu).
#include <cuda_runtime.h>

#include <cstdint>

namespace gpuprobe::probes::sharing {

inline constexpr int kThreads = 512;
inline constexpr std::uint32_t kUnitBytes = 4096;  ///< partition granularity of the lists

struct Params {
  const std::uint64_t* base = nullptr;  ///< words hold their own byte offsets
  const std::uint32_t* units = nullptr;  ///< unit indices (offset / kUnitBytes), all lists
  const std::uint32_t* list_begin = nullptr;  ///< [lists + 1]: where each list starts in units
  const std::uint8_t* sm_side = nullptr;      ///< [smid]: partition side of each SM
  int groups = 1;
  int mode = 0;  ///< analysis::SharingMode
  std::uint32_t reps = 1;
  int blocks_per_sm = 1;
  std::uint32_t* slots = nullptr;  ///< [1024]: zero before; blocks started per SM
  unsigned long long* sum = nullptr;  ///< zero before
};

/// Blocks that fit on one SM at once (occupancy of the sharing kernel).
int blocks_per_sm();
/// sm_count * blocks_per_sm blocks of kThreads: every SM reads its lists reps times.
void launch_sharing(const Params& p, int sm_count);
/// gpu-l2-cache's kernel shape: `blocks` blocks of 1024 threads; see
/// analysis::expect_gpu_l2_cache. vector16: the same elements read 16 B per thread.
void launch_gpu_l2_cache(const std::uint64_t* base, std::uint64_t blocks, std::uint32_t block_run,
                         bool vector16, unsigned long long* sum);
inline constexpr std::uint32_t kGpuL2CacheThreads = 1024;
inline constexpr std::uint32_t kGpuL2CacheN = 64;

}  // namespace gpuprobe::probes::sharing
