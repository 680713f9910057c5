#pragma once
// Kernels of the Hopper probes (implemented in hopper_kernels.cu, device code only for sm_90a:
// the compute_75 PTX holds empty stubs), and their host launchers.
#include <cstdint>

#include "core/cuda_check.hpp"
#include "device/device_buffer.hpp"
#include "measure/block_timing.hpp"

namespace gpuprobe::probes::hopper {

enum class MmaType { kBf16, kF16 };

/// The instruction: wgmma.mma_async.sync.aligned.m64n256k16.f32.<type>.<type>, A and B from
/// shared memory (K-major, no transpose), f32 accumulators (128 registers per thread).
constexpr int kM = 64, kN = 256, kK = 16;
constexpr int kThreadsPerWarpgroup = 128;
constexpr int kAccumulators = kM * kN / kThreadsPerWarpgroup;  // 128
constexpr std::uint32_t kTileABytes = kM * kK * 2;             // 2048
constexpr std::uint32_t kTileBBytes = kN * kK * 2;             // 8192
constexpr double kFlopPerMma = 2.0 * kM * kN * kK;             // 524288

/// A launch: `blocks` blocks of `warpgroups` x 128 threads. Every block copies the shared-memory
/// image (A tile at byte 0, B tile at byte kTileABytes, `image` in global memory) into its
/// shared memory (1024-B aligned), then every warpgroup runs `groups` x (wgmma.fence;
/// `per_group` wgmma on the same accumulators; wgmma.commit_group; wgmma.wait_group `wait`),
/// then wgmma.wait_group 0 and writes its accumulators:
///   out[((block * warpgroups + wg) * 128 + r) * 128 + thread_in_warpgroup] = d[r].
/// records[block]: thread 0's clock64 / %globaltimer around the loop (between block barriers).
/// desc_a / desc_b are the descriptors without their start address (LBO, SBO, swizzle bits);
/// the kernel adds (shared address >> 4).
struct WgmmaLaunch {
  MmaType type = MmaType::kBf16;
  int wait = 1;       ///< 0 or 1
  int per_group = 1;  ///< 1 or 4
  int warpgroups = 1; ///< 1 or 2
  int blocks = 1;
  std::uint32_t groups = 1;
  std::uint32_t dynamic_smem = 0;  ///< >= kTileABytes + kTileBBytes + 1024 (more to keep 1 block/SM)
  std::uint64_t desc_a = 0, desc_b = 0;
};

/// Whether this binary holds the sm_90a wgmma kernels (false if built without sm_90a).
bool wgmma_compiled();
/// Sets the kernels' dynamic shared limit to `bytes`.
void wgmma_prepare(std::uint32_t bytes);
void launch_wgmma(const WgmmaLaunch& l, const std::uint16_t* image, float* out,
                  measure::BlockTiming* records);

}  // namespace gpuprobe::probes::hopper
