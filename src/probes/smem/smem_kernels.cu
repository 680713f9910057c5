// Kernels of the shared-memory probes. Kernels that differ only in the word type or the number
// of chains are one template: smem_chase_kernel<Word, chains>.
#include <string>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "device/ptx.cuh"
#include "probes/smem/smem_kernels.hpp"

namespace gpuprobe::probes::kernels {
namespace {

using device::ptx::clock_64;
using device::ptx::global_timer;
using device::ptx::sm_id;

// One warp-wide shared load of a Word at shared address p; returns the first 4 bytes. The load
// is volatile so that ptxas keeps its full width although only the first word feeds the chain.
template <class Word>
struct SmemLoad;

template <>
struct SmemLoad<std::uint32_t> {
  static __device__ __forceinline__ std::uint32_t load(std::uint32_t p) {
    std::uint32_t v;
    asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(v) : "r"(p));
    return v;
  }
};

template <>
struct SmemLoad<uint2> {
  static __device__ __forceinline__ std::uint32_t load(std::uint32_t p) {
    uint2 v;
    asm volatile("ld.volatile.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(p));
    return v.x;
  }
};

template <>
struct SmemLoad<uint4> {
  static __device__ __forceinline__ std::uint32_t load(std::uint32_t p) {
    uint4 v;
    asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(p));
    return v.x;
  }
};

template <class Word, int kChains>
__global__ void __launch_bounds__(kChains >= 32 ? 32 : 1024)
    smem_chase_kernel(std::uint32_t words, std::uint32_t stride_bytes, std::uint32_t chain_offset,
                      std::uint32_t warp_offset, std::uint32_t iterations, BlockTiming* records) {
  extern __shared__ __align__(16) std::uint32_t smem[];
  const std::uint32_t raw = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  // Every 4-byte word holds its own shared address: a load at p returns p.
  for (std::uint32_t i = threadIdx.x; i < words; i += blockDim.x) smem[i] = raw + 4u * i;
  const std::uint32_t base = (raw + 127u) & ~127u;
  const std::uint32_t lane = threadIdx.x & 31u;
  const std::uint32_t warp = threadIdx.x >> 5;
  const std::uint32_t first = base + warp * warp_offset + lane * stride_bytes;
  std::uint32_t p[kChains];
#pragma unroll
  for (int k = 0; k < kChains; ++k) p[k] = first + static_cast<std::uint32_t>(k) * chain_offset;
  __syncthreads();
  std::uint64_t c0 = 0, g0 = 0;
  if (threadIdx.x == 0) {
    g0 = global_timer();
    c0 = clock_64();
  }
  for (std::uint32_t i = 0; i < iterations; i += 4) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
#pragma unroll
      for (int k = 0; k < kChains; ++k) p[k] = SmemLoad<Word>::load(p[k]);
    }
  }
  int bad = 0;
#pragma unroll
  for (int k = 0; k < kChains; ++k)
    bad |= p[k] != first + static_cast<std::uint32_t>(k) * chain_offset;
  // The barrier's count depends on every chain's last load, so the clock read after it sees
  // the whole block's loads completed.
  const int n_bad = __syncthreads_count(bad);
  if (threadIdx.x == 0) {
    const std::uint64_t c1 = clock_64();
    const std::uint64_t g1 = global_timer();
    records[blockIdx.x] = BlockTiming{c0, c1, g0, g1, sm_id(), static_cast<std::uint32_t>(n_bad)};
  }
}

using SmemKernel = void (*)(std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t,
                            std::uint32_t, BlockTiming*);

template <class Word>
SmemKernel smem_kernel_for_chains(int chains) {
  switch (chains) {
    case 1:
      return &smem_chase_kernel<Word, 1>;
    case 4:
      return &smem_chase_kernel<Word, 4>;
    case 32:
      return &smem_chase_kernel<Word, 32>;
    default:
      throw UsageError("shared-memory chase: " + std::to_string(chains) +
                       " chains per thread is not built; use 1, 4 or 32");
  }
}

SmemKernel smem_kernel_for(const SmemLaunch& l) {
  switch (l.word_bytes) {
    case 4:
      return smem_kernel_for_chains<std::uint32_t>(l.chains);
    case 8:
      return smem_kernel_for_chains<uint2>(l.chains);
    case 16:
      return smem_kernel_for_chains<uint4>(l.chains);
    default:
      throw UsageError("shared-memory word size " + std::to_string(l.word_bytes) +
                       " B is not allowed; use 4, 8 or 16");
  }
}

SmemKernel prepare_smem(const SmemLaunch& l) {
  const SmemKernel kernel = smem_kernel_for(l);
  GP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(smem_chase_bytes(l))));
  return kernel;
}

}  // namespace

std::uint32_t smem_chase_bytes(const SmemLaunch& l) {
  const std::uint32_t warps = static_cast<std::uint32_t>((l.threads_per_block + 31) / 32);
  const std::uint32_t footprint = (warps - 1) * l.warp_offset_bytes + 31u * l.stride_bytes +
                                  static_cast<std::uint32_t>(l.chains - 1) * l.chain_offset_bytes +
                                  static_cast<std::uint32_t>(l.word_bytes);
  return (footprint + 128u + 127u) / 128u * 128u;
}

int smem_chase_blocks_per_sm(const SmemLaunch& l) {
  const SmemKernel kernel = prepare_smem(l);
  int blocks = 0;
  GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, l.threads_per_block,
                                                              smem_chase_bytes(l)));
  return blocks;
}

void launch_smem_chase(const SmemLaunch& l, BlockTiming* records, cudaStream_t stream) {
  if (l.iterations % 4 != 0)
    throw UsageError("shared-memory chase: iterations must be a multiple of 4");
  const SmemKernel kernel = prepare_smem(l);
  const std::uint32_t bytes = smem_chase_bytes(l);
  kernel<<<l.blocks, l.threads_per_block, bytes, stream>>>(
      bytes / 4, l.stride_bytes, l.chain_offset_bytes, l.warp_offset_bytes, l.iterations, records);
  GP_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuprobe::probes::kernels
