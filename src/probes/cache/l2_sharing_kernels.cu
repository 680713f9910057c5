// Kernels of cache.l2.sharing: many SMs stream the same L2-resident units at once.
#include "core/cuda_check.hpp"
#include "device/ptx.cuh"
#include "probes/cache/l2_sharing_kernels.hpp"

namespace gpuprobe::probes::sharing {
namespace {

constexpr std::uint32_t kPartsPerUnit = kUnitBytes / (32 * 16);
constexpr int kInFlight = 4;

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  return v;
}

// One atomic per block of the gpu-l2-cache kernels: 200,000 atomics on one word would cost
// time of their own.
__device__ __forceinline__ void add_block_total(unsigned long long acc, unsigned long long* sum) {
  __shared__ unsigned long long partial[kGpuL2CacheThreads / 32];
  acc = warp_sum(acc);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = acc;
  __syncthreads();
  if (threadIdx.x < 32) {
    acc = warp_sum(partial[threadIdx.x]);
    if (threadIdx.x == 0) atomicAdd(sum, acc);
  }
}

__global__ void __launch_bounds__(kThreads) sharing_kernel(Params p) {
  __shared__ int slot;
  const std::uint32_t smid = device::ptx::sm_id();
  if (threadIdx.x == 0) slot = static_cast<int>(atomicAdd(&p.slots[smid], 1u));
  __syncthreads();
  const int side = p.sm_side[smid];
  const int g = p.sm_group ? p.sm_group[smid] : static_cast<int>(smid) % p.groups;
  if (g == kNoGroup) return;
  if (p.t_first && threadIdx.x == 0) atomicMin(p.t_first, device::ptx::global_timer());
  int first = 2 * g, last = 2 * g + 1;  // lists [first, last]
  if (p.mode == 1) first = last = 2 * g + side;
  if (p.mode == 2) first = last = 2 * g + 1 - side;
  const std::uint32_t b = p.list_begin[first], e = p.list_begin[last + 1];
  const int warps = p.blocks_per_sm * (kThreads / 32);
  const int warp = slot * (kThreads / 32) + static_cast<int>(threadIdx.x / 32);
  const int lane = threadIdx.x % 32;
  unsigned long long acc = 0;
  // Work items of 512 B (one 16 B load per lane), kInFlight per warp at a time: even a slice
  // of a few units keeps every warp of the SM busy.
  const std::uint32_t items = (e - b) * kPartsPerUnit;
  const uint4* base = reinterpret_cast<const uint4*>(p.base);
  if (slot < p.blocks_per_sm) {
    for (std::uint32_t r = 0; r < p.reps; ++r) {
      for (std::uint32_t j = warp; j < items; j += kInFlight * warps) {
        uint4 v[kInFlight];
#pragma unroll
        for (int q = 0; q < kInFlight; ++q) {
          const std::uint32_t jj = j + q * warps;
          v[q] = make_uint4(0, 0, 0, 0);
          if (jj < items) {
            const std::uint64_t unit = p.units[b + jj / kPartsPerUnit];
            v[q] = __ldcg(base + unit * (kUnitBytes / 16) + (jj % kPartsPerUnit) * 32 + lane);
          }
        }
#pragma unroll
        for (int q = 0; q < kInFlight; ++q)
          acc += (static_cast<unsigned long long>(v[q].y) << 32 | v[q].x) +
                 (static_cast<unsigned long long>(v[q].w) << 32 | v[q].z);
      }
    }
  }
  acc = warp_sum(acc);
  if (lane == 0 && acc) atomicAdd(p.sum, acc);
  if (p.t_last) {
    __syncthreads();  // every warp's loads have arrived (their sums are taken)
    if (threadIdx.x == 0) atomicMax(p.t_last, device::ptx::global_timer());
  }
}

__global__ void __launch_bounds__(kGpuL2CacheThreads)
    gpu_l2_cache_kernel(const std::uint64_t* base, std::uint32_t block_run,
                        unsigned long long* sum) {
  unsigned long long acc = 0;
  const std::uint64_t chunk = blockIdx.x % block_run;
#pragma unroll 8
  for (std::uint32_t i = 0; i < kGpuL2CacheN / 2; ++i) {
    const std::uint64_t idx =
        (std::uint64_t{kGpuL2CacheThreads} * block_run * i + chunk * kGpuL2CacheThreads) * 2 +
        threadIdx.x;
    acc += base[idx] + base[idx + kGpuL2CacheThreads];
  }
  add_block_total(acc, sum);
}

// The same pattern with 16 B per thread: thread t reads elements 2t and 2t + 1 of the two rows
// (which are adjacent), so a block covers exactly the same 16 KiB per step as gpu-l2-cache's.
__global__ void __launch_bounds__(kGpuL2CacheThreads)
    gpu_l2_cache_v4_kernel(const std::uint64_t* base, std::uint32_t block_run,
                           unsigned long long* sum) {
  unsigned long long acc = 0;
  const std::uint64_t chunk = blockIdx.x % block_run;
  const uint4* b4 = reinterpret_cast<const uint4*>(base);
#pragma unroll 8
  for (std::uint32_t i = 0; i < kGpuL2CacheN / 2; ++i) {
    const std::uint64_t row =
        (std::uint64_t{kGpuL2CacheThreads} * block_run * i + chunk * kGpuL2CacheThreads) * 2;
    const uint4 v = b4[row / 2 + threadIdx.x];
    acc += (static_cast<unsigned long long>(v.y) << 32 | v.x) +
           (static_cast<unsigned long long>(v.w) << 32 | v.z);
  }
  add_block_total(acc, sum);
}

}  // namespace

int blocks_per_sm() {
  int n = 0;
  GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, sharing_kernel, kThreads, 0));
  return n;
}

void launch_sharing(const Params& p, int sm_count) {
  sharing_kernel<<<sm_count * p.blocks_per_sm, kThreads>>>(p);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_gpu_l2_cache(const std::uint64_t* base, std::uint64_t blocks, std::uint32_t block_run,
                         bool vector16, unsigned long long* sum) {
  if (vector16)
    gpu_l2_cache_v4_kernel<<<static_cast<unsigned>(blocks), kGpuL2CacheThreads>>>(base, block_run,
                                                                                  sum);
  else
    gpu_l2_cache_kernel<<<static_cast<unsigned>(blocks), kGpuL2CacheThreads>>>(base, block_run,
                                                                               sum);
  GP_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuprobe::probes::sharing
