// Kernels of the Hopper probes: wgmma.mma_async m64n256k16 (bf16 / f16 inputs, f32
// accumulators) with A and B in shared memory addressed by matrix descriptors. The device code
// exists only for sm_90a (the "a" features: __CUDA_ARCH_FEAT_SM90_ALL); every other target
// (the compute_75 PTX) compiles empty stubs, and wgmma_compiled() tells the host which it got.
#include <cuda_runtime.h>

#include "device/ptx.cuh"
#include "device/sm90.cuh"
#include "core/cuda_check.hpp"
#include "probes/hopper/hopper_kernels.hpp"

namespace gpuprobe::probes::hopper {
namespace {

using Bf16 = device::sm90::Bf16;
using F16 = device::sm90::F16;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

using device::ptx::clock_64;
using device::ptx::global_timer;
using device::ptx::sm_id;

template <class T>
struct Wgmma {
  static __device__ __forceinline__ void mma(float (&d)[128], std::uint64_t da, std::uint64_t db) {
    device::sm90::mma_m64n256k16<T>(d, da, db, 1);
  }
};
using device::sm90::wgmma_commit;
using device::sm90::wgmma_fence;
using device::sm90::wgmma_wait;

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <class T, int kWait, int kPerGroup>
__global__ void __launch_bounds__(256, 1)
    wgmma_kernel(const std::uint16_t* image, std::uint32_t groups, std::uint64_t desc_a,
                 std::uint64_t desc_b, float* out, measure::BlockTiming* records) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  const std::uint32_t raw = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem_raw));
  const std::uint32_t pad = (1024u - (raw & 1023u)) & 1023u;
  std::uint8_t* smem = smem_raw + pad;
  const std::uint32_t base = raw + pad;
  // Copy the A and B images (16 B at a time) and make them visible to the async proxy.
  const uint4* src = reinterpret_cast<const uint4*>(image);
  uint4* dst = reinterpret_cast<uint4*>(smem);
  for (std::uint32_t i = threadIdx.x; i < (kTileABytes + kTileBBytes) / 16; i += blockDim.x) dst[i] = src[i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const std::uint64_t da = desc_a | ((base >> 4) & 0x3FFFu);
  const std::uint64_t db = desc_b | (((base + kTileABytes) >> 4) & 0x3FFFu);
  float d[kAccumulators];
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) d[i] = 0.0f;
  std::uint64_t c0 = 0, g0 = 0;
  __syncthreads();
  if (threadIdx.x == 0) {
    g0 = global_timer();
    c0 = clock_64();
  }
#pragma unroll 1
  for (std::uint32_t g = 0; g < groups; ++g) {
    wgmma_fence();
#pragma unroll
    for (int u = 0; u < kPerGroup; ++u) Wgmma<T>::mma(d, da, db);
    wgmma_commit();
    wgmma_wait<kWait>();
  }
  wgmma_wait<0>();
  __syncthreads();
  if (threadIdx.x == 0) {
    const std::uint64_t c1 = clock_64();
    const std::uint64_t g1 = global_timer();
    records[blockIdx.x] = measure::BlockTiming{c0, c1, g0, g1, sm_id(), 0};
  }
  const std::uint32_t wg = threadIdx.x / kThreadsPerWarpgroup;
  const std::uint32_t t = threadIdx.x % kThreadsPerWarpgroup;
  float* o = out + (static_cast<std::size_t>(blockIdx.x) * (blockDim.x / kThreadsPerWarpgroup) + wg) *
                       kAccumulators * kThreadsPerWarpgroup;
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) o[i * kThreadsPerWarpgroup + t] = d[i];
#endif
}

__global__ void feature_kernel(int* flag) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  *flag = 1;
#else
  *flag = 0;
#endif
}

using KernelPtr = void (*)(const std::uint16_t*, std::uint32_t, std::uint64_t, std::uint64_t, float*,
                           measure::BlockTiming*);

template <class T>
KernelPtr pick(int wait, int per_group) {
  if (wait == 0) return per_group == 4 ? wgmma_kernel<T, 0, 4> : wgmma_kernel<T, 0, 1>;
  return per_group == 4 ? wgmma_kernel<T, 1, 4> : wgmma_kernel<T, 1, 1>;
}

KernelPtr pick(MmaType type, int wait, int per_group) {
  return type == MmaType::kBf16 ? pick<Bf16>(wait, per_group) : pick<F16>(wait, per_group);
}

}  // namespace

bool wgmma_compiled() {
  device::DeviceArray<int> flag(1);
  flag.zero();
  feature_kernel<<<1, 1>>>(flag.get());
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
  return flag.download()[0] == 1;
}

void wgmma_prepare(std::uint32_t bytes) {
  for (auto type : {MmaType::kBf16, MmaType::kF16})
    for (int wait : {0, 1})
      for (int per_group : {1, 4})
        GP_CUDA_CHECK(cudaFuncSetAttribute(pick(type, wait, per_group),
                                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(bytes)));
}

void launch_wgmma(const WgmmaLaunch& l, const std::uint16_t* image, float* out,
                  measure::BlockTiming* records) {
  if ((l.wait != 0 && l.wait != 1) || (l.per_group != 1 && l.per_group != 4) || l.warpgroups < 1 ||
      l.warpgroups > 2 || l.dynamic_smem < kTileABytes + kTileBBytes + 1024)
    throw std::invalid_argument("launch_wgmma: unsupported launch shape");
  pick(l.type, l.wait, l.per_group)<<<l.blocks, l.warpgroups * kThreadsPerWarpgroup, l.dynamic_smem>>>(
      image, l.groups, l.desc_a, l.desc_b, out, records);
  GP_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuprobe::probes::hopper
