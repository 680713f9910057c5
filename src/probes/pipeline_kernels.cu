// Kernels of hopper.pipeline: one persistent CTA per SM; a producer warp streams A and B tiles
// with cp.async.bulk.tensor.2d into a ring of 1..4 stages (full / empty mbarrier pair per stage),
// one or two consumer warpgroups run wgmma.mma_async m64n256k16 bf16 -> f32 on every stage and
// release it. Device code only for sm_90a; the compute_75 PTX pass compiles empty stubs.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "core/cuda_check.hpp"
#include "device/ptx.cuh"
#include "device/sm90.cuh"
#include "probes/pipeline_kernels.hpp"

namespace gpuprobe::probes::pipeline {
namespace {

struct Params {
  int mode;
  int stages;
  std::uint32_t items;
  std::uint32_t m_blocks, tiles;
  std::uint32_t k_total;
  std::uint64_t desc_a, desc_b;
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

constexpr std::uint64_t kTimeoutCycles = 200000000ull;  // ~0.1 s: a stage that never arrives

using device::sm90::mbar_arrive;
using device::sm90::mbar_expect_tx;
using device::sm90::mbar_init;
__device__ __forceinline__ std::uint32_t to_smem(const void* p) { return device::sm90::smem_addr(p); }
__device__ __forceinline__ void bar_init(std::uint32_t bar, std::uint32_t count) { mbar_init(bar, count); }
__device__ __forceinline__ void bar_expect(std::uint32_t bar, std::uint32_t bytes) { mbar_expect_tx(bar, bytes); }
__device__ __forceinline__ void bar_arrive(std::uint32_t bar) { mbar_arrive(bar); }
/// Waits for the phase with parity `parity`; false when it has not completed after kTimeoutCycles.
__device__ __forceinline__ bool bar_wait(std::uint32_t bar, std::uint32_t parity) {
  return device::sm90::mbar_wait_for(bar, parity, kTimeoutCycles);
}
__device__ __forceinline__ void tma_load_2d(std::uint32_t dst, const CUtensorMap* map, int x, int y,
                                            std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
      "[%4];" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

using device::sm90::wgmma_commit;
using device::sm90::wgmma_fence;
__device__ __forceinline__ void mma_fence() { wgmma_fence(); }
__device__ __forceinline__ void mma_commit() { wgmma_commit(); }
template <int N>
__device__ __forceinline__ void mma_wait() {
  device::sm90::wgmma_wait<N>();
}
/// D (+)= A B^T, m64n256k16 bf16 -> f32; scale_d == 0 discards the old accumulators.
__device__ __forceinline__ void mma_bf16(float (&d)[128], std::uint64_t da, std::uint64_t db,
                                         std::uint32_t scale_d) {
  device::sm90::mma_m64n256k16<device::sm90::Bf16>(d, da, db, scale_d);
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

template <int WGS>
__global__ void __launch_bounds__(WGS * kThreadsPerWarpgroup + 32, 1)
    pipeline_kernel(const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                    Params p, float* out, Times* times, unsigned* timeouts) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kBm = 64 * WGS;
  constexpr std::uint32_t kA = static_cast<std::uint32_t>(kBm) * kKStep * 2;
  constexpr std::uint32_t kStage = kA + static_cast<std::uint32_t>(kN) * kKStep * 2;
  constexpr int kConsumers = WGS * kThreadsPerWarpgroup;
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  __shared__ __align__(8) std::uint64_t full[kMaxStages], empty[kMaxStages];
  const std::uint32_t raw = to_smem(smem_raw);
  const std::uint32_t base = raw + ((1024u - (raw & 1023u)) & 1023u);
  const std::uint32_t S = static_cast<std::uint32_t>(p.stages);
  const std::uint32_t kpi = p.k_total / kKStep;  // k-steps per work item
  const std::uint32_t total = p.items * kpi;
  const int mode = p.mode;
  const std::uint32_t lane = threadIdx.x & 31u;
  if (threadIdx.x == 0) {
    for (std::uint32_t s = 0; s < S; ++s) {
      bar_init(to_smem(&full[s]), 1);
      bar_init(to_smem(&empty[s]), 4 * WGS);  // lane 0 of every consumer warp
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  unsigned long long g0 = 0;
  if (threadIdx.x == 0) g0 = device::ptx::global_timer();
  if (threadIdx.x >= kConsumers) {
    // Producer warp: lane 0 issues everything.
    if (lane == 0) {
      const std::uint32_t loads = mode == static_cast<int>(Mode::kMathOnly) ? (S < total ? S : total) : total;
      for (std::uint32_t i = 0; i < loads; ++i) {
        const std::uint32_t s = i % S, n = i / S;
        if (n > 0 && !bar_wait(to_smem(&empty[s]), (n - 1) & 1u)) {
          atomicAdd(timeouts, 1u);
          break;
        }
        const std::uint32_t item = mode == static_cast<int>(Mode::kMathOnly) ? p.items - 1 : i / kpi;
        const std::uint32_t kb = i % kpi;
        const std::uint32_t j = blockIdx.x + item * gridDim.x;
        const std::uint32_t t = j % p.tiles;
        const int row_a = static_cast<int>((t % p.m_blocks) * kBm);
        const int row_b = static_cast<int>((t / p.m_blocks) * kN);
        const std::uint32_t dst = base + s * kStage;
        const std::uint32_t bar = to_smem(&full[s]);
        bar_expect(bar, kStage);
#pragma unroll
        for (int g = 0; g < kKStep / 8; ++g)
          tma_load_2d(dst + g * (kBm * 16), &map_a, static_cast<int>(kb * kKStep + g * 8), row_a, bar);
#pragma unroll
        for (int g = 0; g < kKStep / 8; ++g)
          tma_load_2d(dst + kA + g * (kN * 16), &map_b, static_cast<int>(kb * kKStep + g * 8), row_b, bar);
      }
    }
  } else {
    const std::uint32_t wg = threadIdx.x / kThreadsPerWarpgroup;
    float d[kAccumulators];
#pragma unroll
    for (int r = 0; r < kAccumulators; ++r) d[r] = 0.0f;
    for (std::uint32_t i = 0; i < total; ++i) {
      const std::uint32_t s = i % S;
      if (mode != static_cast<int>(Mode::kMathOnly) || i < S) {
        bool ok = bar_wait(to_smem(&full[s]), (i / S) & 1u);
        ok = __all_sync(0xffffffffu, ok);
        if (!ok) {
          if (lane == 0) atomicAdd(timeouts, 1u);
          break;
        }
      }
      const bool math = mode != static_cast<int>(Mode::kCopyOnly) || i >= total - kpi;
      if (math) {
        const std::uint32_t first = (i % kpi) == 0 ? 1u : 0u;
        const std::uint32_t sa = base + s * kStage + wg * 1024u;  // 8 row groups of 128 B per warpgroup
        const std::uint32_t sb = base + s * kStage + kA;
        mma_fence();
#pragma unroll
        for (int k = 0; k < kKStep / 16; ++k) {
          const std::uint64_t da = p.desc_a | (((sa + k * 2 * (kBm * 16)) >> 4) & 0x3FFFu);
          const std::uint64_t db = p.desc_b | (((sb + k * 2 * (kN * 16)) >> 4) & 0x3FFFu);
          mma_bf16(d, da, db, (first && k == 0) ? 0u : 1u);
        }
        mma_commit();
      }
      if (mode == static_cast<int>(Mode::kMathOnly)) {
        mma_wait<1>();
      } else if (S == 1 || mode == static_cast<int>(Mode::kCopyOnly)) {
        mma_wait<0>();
        if (lane == 0) bar_arrive(to_smem(&empty[s]));
      } else {
        mma_wait<1>();  // the group of k-step i - 1 is complete: its stage can be refilled
        if (i > 0 && lane == 0) bar_arrive(to_smem(&empty[(i - 1) % S]));
      }
    }
    mma_wait<0>();
    float* o = out + (static_cast<std::size_t>(blockIdx.x) * WGS + wg) * kAccumulators * kThreadsPerWarpgroup;
    const std::uint32_t t = threadIdx.x % kThreadsPerWarpgroup;
#pragma unroll
    for (int r = 0; r < kAccumulators; ++r) o[r * kThreadsPerWarpgroup + t] = d[r];
  }
  __syncthreads();
  if (threadIdx.x == 0) times[blockIdx.x] = Times{g0, device::ptx::global_timer()};
#endif
}

__global__ void feature_kernel(int* flag) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  *flag = 1;
#else
  *flag = 0;
#endif
}

CUtensorMap encode(const std::uint16_t* base, std::uint32_t rows, std::uint32_t k_total, std::uint32_t box_rows) {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    GP_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || f == nullptr)
      throw std::runtime_error("hopper.pipeline: cuTensorMapEncodeTiled entry point not found");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  CUtensorMap map{};
  const cuuint64_t dims[2] = {k_total, rows};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k_total) * 2};
  const cuuint32_t box[2] = {8, box_rows};  // one k-group of 8 bf16 (16 B) x box_rows rows
  const cuuint32_t elem[2] = {1, 1};
  const CUresult r = fn(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<std::uint16_t*>(base), dims, strides,
                        box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("hopper.pipeline: cuTensorMapEncodeTiled failed: CUresult " +
                             std::to_string(static_cast<int>(r)));
  return map;
}

}  // namespace

bool pipeline_compiled() {
  int* flag = nullptr;
  GP_CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
  int host = 0;
  feature_kernel<<<1, 1>>>(flag);
  const cudaError_t e1 = cudaGetLastError();
  const cudaError_t e2 = cudaMemcpy(&host, flag, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(flag);
  GP_CUDA_CHECK(e1);
  GP_CUDA_CHECK(e2);
  return host == 1;
}

void pipeline_prepare(std::uint32_t bytes) {
  GP_CUDA_CHECK(cudaFuncSetAttribute(pipeline_kernel<1>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(bytes)));
  GP_CUDA_CHECK(cudaFuncSetAttribute(pipeline_kernel<2>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(bytes)));
}

void run_pipeline(const Launch& l, const std::uint16_t* a, std::uint32_t m_total, const std::uint16_t* b,
                  std::uint32_t n_total, float* out, Times* times, unsigned* timeouts) {
  if ((l.bm != 64 && l.bm != 128) || l.stages < 1 || l.stages > kMaxStages || l.k_total % kKStep != 0 ||
      l.k_total < kKStep * kMaxStages || l.items < 1 || l.tiles < 1 || l.m_blocks < 1 ||
      l.dynamic_smem < smem_bytes(l.bm, l.stages) || m_total % l.bm != 0 || n_total % kN != 0)
    throw std::invalid_argument("run_pipeline: unsupported launch shape");
  const CUtensorMap ma = encode(a, m_total, l.k_total, static_cast<std::uint32_t>(l.bm));
  const CUtensorMap mb = encode(b, n_total, l.k_total, kN);
  const Params p{static_cast<int>(l.mode), l.stages, l.items, l.m_blocks, l.tiles, l.k_total, l.desc_a, l.desc_b};
  const int wgs = l.bm / 64;
  const unsigned threads = static_cast<unsigned>(wgs * kThreadsPerWarpgroup + 32);
  if (wgs == 2)
    pipeline_kernel<2><<<l.blocks, threads, l.dynamic_smem>>>(ma, mb, p, out, times, timeouts);
  else
    pipeline_kernel<1><<<l.blocks, threads, l.dynamic_smem>>>(ma, mb, p, out, times, timeouts);
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace gpuprobe::probes::pipeline
