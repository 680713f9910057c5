#pragma once
// Kernels of the shared-memory probes (smem_kernels.cu) and their host launchers.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "device/device_buffer.hpp"
#include "measure/block_timing.hpp"

namespace gpuprobe::probes::kernels {

using device::DeviceArray;
using measure::BlockTiming;

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
void launch_smem_chase(const SmemLaunch& l, BlockTiming* records, cudaStream_t stream);

}  // namespace gpuprobe::probes::kernels
