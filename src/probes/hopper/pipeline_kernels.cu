// Kernels of hopper.pipeline: one persistent CTA per SM; a producer warp streams A and B tiles
// with cp.async.bulk.tensor.2d (128-B swizzle; B optionally multicast to a cluster of 2) into a
// ring of 1..4 stages (full / empty mbarrier pair per stage),
// one or two consumer warpgroups run wgmma.mma_async m64n256k16 bf16 -> f32 on every stage and
// release it. Device code only for sm_90a; the compute_75 PTX pass compiles empty stubs.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "core/cuda_check.hpp"
#include "device/launch.hpp"
#include "device/ptx.cuh"
#include "device/sm90.cuh"
#include "probes/hopper/pipeline_kernels.hpp"

namespace gpuprobe::probes::pipeline {
namespace {

struct Params {
  int mode;
  int stages;
  int cluster;
  std::uint32_t items;
  std::uint32_t m_blocks, tiles;
  std::uint32_t k_total;
  std::uint64_t desc_a, desc_b;
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

constexpr int kHalfN = kN / 2;  // rows of B each CTA of a cluster of 2 loads

constexpr std::uint64_t kTimeoutCycles = 200000000ull;  // ~0.1 s: a stage that never arrives

namespace sm90 = device::sm90;
__device__ __forceinline__ std::uint32_t to_smem(const void* p) { return sm90::smem_addr(p); }
/// Waits for the phase with parity `parity`; false when it has not completed after kTimeoutCycles.
__device__ __forceinline__ bool bar_wait(std::uint32_t bar, std::uint32_t parity) {
  return sm90::mbar_wait_for(bar, parity, kTimeoutCycles);
}
/// D (+)= A B^T, m64n256k16 bf16 -> f32; scale_d == 0 discards the old accumulators.
__device__ __forceinline__ void mma_bf16(float (&d)[128], std::uint64_t da, std::uint64_t db,
                                         std::uint32_t scale_d) {
  sm90::mma_m64n256k16<sm90::Bf16>(d, da, db, scale_d);
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

/// RELAXED: the consumers release stages with relaxed arrivals and the producer waits with the
/// default (CTA-scope acquire) try_wait; otherwise release arrivals (cluster scope across the
/// cluster) and, with multicast, a cluster-scope acquire wait.
/// AREG: each warp loads its 16 rows of A for every k16 slice with ldmatrix.x4 (from the
/// swizzled stage) and the wgmmas take A from registers; every k-step then ends with
/// wgmma.wait_group 0 (the A registers are reused by the next k-step).
template <int WGS, bool RELAXED, bool AREG>
__global__ void __launch_bounds__(WGS* kThreadsPerWarpgroup + 32, 1)
    pipeline_kernel(const __grid_constant__ CUtensorMap map_a,
                    const __grid_constant__ CUtensorMap map_b, Params p, float* out, Times* times,
                    unsigned* timeouts) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int kBm = 64 * WGS;
  constexpr std::uint32_t kA = static_cast<std::uint32_t>(kBm) * kKStep * 2;
  constexpr std::uint32_t kStage = kA + static_cast<std::uint32_t>(kN) * kKStep * 2;
  constexpr std::uint32_t kRowBytes = kKStep * 2;  // 128: one swizzled row per k-step
  constexpr int kConsumers = WGS * kThreadsPerWarpgroup;
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  __shared__ __align__(8) std::uint64_t full[kMaxStages], empty[kMaxStages];
  const std::uint32_t raw = to_smem(smem_raw);
  const std::uint32_t base = raw + ((1024u - (raw & 1023u)) & 1023u);
  const std::uint32_t S = static_cast<std::uint32_t>(p.stages);
  const std::uint32_t kpi = p.k_total / kKStep;  // k-steps per work item
  const std::uint32_t total = p.items * kpi;
  const int mode = p.mode;
  const bool multicast = p.cluster == 2;
  const std::uint32_t rank = multicast ? sm90::cluster_rank() : 0u;
  const std::uint32_t lane = threadIdx.x & 31u;
  if (threadIdx.x == 0) {
    for (std::uint32_t s = 0; s < S; ++s) {
      sm90::mbar_init(to_smem(&full[s]), 1);
      // lane 0 of every consumer warp of every CTA whose copies write this CTA's stage
      sm90::mbar_init(to_smem(&empty[s]), 4 * WGS * static_cast<std::uint32_t>(p.cluster));
    }
    sm90::fence_mbar_init();
  }
  if (multicast)
    sm90::cluster_sync();  // the peer's barriers exist before any copy or arrival reaches them
  else
    __syncthreads();
  unsigned long long g0 = 0, c0 = 0;
  if (threadIdx.x == 0) {
    g0 = device::ptx::global_timer();
    c0 = device::ptx::clock_64();
  }
  if (threadIdx.x >= kConsumers) {
    // Producer warp: lane 0 issues everything. Stage s, its phase parity and the k-step kb
    // of work item `item` advance by counting (no divisions in the loop).
    if (lane == 0) {
      const bool resident =
          mode == static_cast<int>(Mode::kMathOnly) || mode == static_cast<int>(Mode::kSyncOnly);
      const std::uint32_t loads =
          mode == static_cast<int>(Mode::kMathOnly) ? (S < total ? S : total) : total;
      std::uint32_t s = 0, phase = 0, kb = 0, item = 0;
      for (std::uint32_t i = 0; i < loads; ++i) {
        if (i >= S) {  // wait until the consumers released the previous fill of stage s
          const std::uint32_t e = to_smem(&empty[s]);
          const bool ok = multicast && !RELAXED
                              ? sm90::mbar_wait_for<true>(e, phase ^ 1u, kTimeoutCycles)
                              : bar_wait(e, phase ^ 1u);
          if (!ok) {
            atomicAdd(timeouts, 1u);
            break;
          }
        }
        const std::uint32_t bar = to_smem(&full[s]);
        if (!resident || i < S) {
          // resident modes: the first S k-steps of the last work item, loaded once
          const std::uint32_t it = resident ? p.items - 1 : item;
          const int k0 = static_cast<int>(kb * kKStep);
          std::uint32_t mb, nb;
          tile_of(blockIdx.x, it, gridDim.x, p.m_blocks, p.tiles, p.cluster, mb, nb);
          const std::uint32_t dst = base + s * kStage;
          sm90::mbar_expect_tx(bar, kStage);  // A and the whole B land here either way
          sm90::tma_load_2d(dst, &map_a, k0, static_cast<int>(mb * kBm), bar);
          if (multicast)
            sm90::tma_load_2d_multicast(dst + kA + rank * kHalfN * kRowBytes, &map_b, k0,
                                        static_cast<int>(nb * kN + rank * kHalfN), bar,
                                        std::uint16_t{3});
          else
            sm90::tma_load_2d(dst + kA, &map_b, k0, static_cast<int>(nb * kN), bar);
        } else {
          sm90::mbar_arrive(bar);  // sync-only: the phase completes without data
        }
        if (++s == S) {
          s = 0;
          phase ^= 1u;
        }
        if (++kb == kpi) {
          kb = 0;
          ++item;
        }
      }
    }
    __syncwarp();
  } else {
    const std::uint32_t wg = threadIdx.x / kThreadsPerWarpgroup;
    float d[kAccumulators];
#pragma unroll
    for (int r = 0; r < kAccumulators; ++r) d[r] = 0.0f;
    // Releases stage s: lane 0 of each warp arrives on the empty barrier of every CTA whose
    // producer writes into this CTA's stage s.
    auto release = [&](std::uint32_t s) {
      if (lane != 0) return;
      const std::uint32_t e = to_smem(&empty[s]);
      if (multicast) {
        for (std::uint32_t r = 0; r < 2; ++r) {
          if (RELAXED)
            sm90::mbar_arrive_cluster_relaxed(sm90::map_rank(e, r));
          else
            sm90::mbar_arrive_cluster(sm90::map_rank(e, r));
        }
      } else if (RELAXED) {
        sm90::mbar_arrive_relaxed(e);
      } else {
        sm90::mbar_arrive(e);
      }
    };
    std::uint32_t s = 0, phase = 0, kb = 0, prev = S - 1;
    for (std::uint32_t i = 0; i < total; ++i) {
      if (mode != static_cast<int>(Mode::kMathOnly) || i < S) {
        bool ok = bar_wait(to_smem(&full[s]), phase);
        ok = __all_sync(0xffffffffu, ok);
        if (!ok) {
          if (lane == 0) atomicAdd(timeouts, 1u);
          break;
        }
      }
      const bool math = mode != static_cast<int>(Mode::kCopyOnly) || i >= total - kpi;
      if (math) {
        const std::uint32_t first = kb == 0 ? 1u : 0u;
        const std::uint32_t sa =
            base + s * kStage + wg * 64u * kRowBytes;  // this warpgroup's 64 rows
        const std::uint32_t sb = base + s * kStage + kA;
        if constexpr (AREG) {
          // Row (in the stage's A) whose 16-B chunk this lane addresses for ldmatrix.x4: rows
          // 0-7 / 8-15 of this warp's 16 (lanes 0-7 and 16-23 / 8-15 and 24-31), k 0-7 of the
          // slice for lanes 0-15, k 8-15 for lanes 16-31; chunk c of row r sits at c ^ (r % 8).
          const std::uint32_t row =
              ((threadIdx.x / 32) % 4) * 16 + (lane % 8) + 8 * ((lane / 8) % 2);
          const std::uint32_t hi = lane / 16;
          std::uint32_t a[kKStep / 16][4];
#pragma unroll
          for (int k = 0; k < kKStep / 16; ++k)
            sm90::ldmatrix_x4(a[k], sa + row * kRowBytes + (((2u * k + hi) ^ (row % 8u)) * 16u));
          sm90::wgmma_fence();
#pragma unroll
          for (int k = 0; k < kKStep / 16; ++k) {
            const std::uint64_t db = p.desc_b | (((sb + k * 32u) >> 4) & 0x3FFFu);
            sm90::mma_m64n256k16_rs<sm90::Bf16>(d, a[k], db, (first && k == 0) ? 0u : 1u);
          }
        } else {
          sm90::wgmma_fence();
#pragma unroll
          for (int k = 0; k < kKStep / 16; ++k) {
            // k-slice k: 16 bf16 = 32 B further along the (swizzled) 128-B rows
            const std::uint64_t da = p.desc_a | (((sa + k * 32u) >> 4) & 0x3FFFu);
            const std::uint64_t db = p.desc_b | (((sb + k * 32u) >> 4) & 0x3FFFu);
            mma_bf16(d, da, db, (first && k == 0) ? 0u : 1u);
          }
        }
        sm90::wgmma_commit();
      }
      if (AREG) {
        sm90::wgmma_wait<0>();
        if (mode != static_cast<int>(Mode::kMathOnly)) release(s);
      } else if (mode == static_cast<int>(Mode::kMathOnly)) {
        sm90::wgmma_wait<1>();
      } else if (S == 1 || mode == static_cast<int>(Mode::kCopyOnly)) {
        sm90::wgmma_wait<0>();
        release(s);
      } else {
        sm90::wgmma_wait<1>();  // the group of k-step i - 1 is complete: its stage can be refilled
        if (i > 0) release(prev);
      }
      prev = s;
      if (++s == S) {
        s = 0;
        phase ^= 1u;
      }
      if (++kb == kpi) kb = 0;
    }
    sm90::wgmma_wait<0>();
    float* o = out + (static_cast<std::size_t>(blockIdx.x) * WGS + wg) * kAccumulators *
                         kThreadsPerWarpgroup;
    const std::uint32_t t = threadIdx.x % kThreadsPerWarpgroup;
#pragma unroll
    for (int r = 0; r < kAccumulators; ++r) o[r * kThreadsPerWarpgroup + t] = d[r];
  }
  // No CTA leaves while its peer may still arrive on its barriers.
  if (multicast)
    sm90::cluster_sync();
  else
    __syncthreads();
  if (threadIdx.x == 0)
    times[blockIdx.x] = Times{g0, device::ptx::global_timer(), c0, device::ptx::clock_64()};
#endif
}

__global__ void feature_kernel(int* flag) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  *flag = 1;
#else
  *flag = 0;
#endif
}

CUtensorMap encode(const std::uint16_t* base, std::uint32_t rows, std::uint32_t k_total,
                   std::uint32_t box_rows) {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    GP_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000,
                                                   cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || f == nullptr)
      throw std::runtime_error("hopper.pipeline: cuTensorMapEncodeTiled entry point not found");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  CUtensorMap map{};
  const cuuint64_t dims[2] = {k_total, rows};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(k_total) * 2};
  const cuuint32_t box[2] = {kKStep, box_rows};  // one k-step of 64 bf16 (128 B) x box_rows rows
  const cuuint32_t elem[2] = {1, 1};
  const CUresult r =
      fn(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<std::uint16_t*>(base), dims, strides,
         box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
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

namespace {
using Kernel = void (*)(CUtensorMap, CUtensorMap, Params, float*, Times*, unsigned*);
Kernel kernel_for(int bm, bool relaxed, bool a_regs) {
  if (a_regs) return bm == 128 ? pipeline_kernel<2, true, true> : pipeline_kernel<1, true, true>;
  if (bm == 128)
    return relaxed ? pipeline_kernel<2, true, false> : pipeline_kernel<2, false, false>;
  return relaxed ? pipeline_kernel<1, true, false> : pipeline_kernel<1, false, false>;
}
cudaLaunchConfig_t launch_config(int blocks, int bm, int cluster, std::uint32_t smem,
                                 cudaLaunchAttribute* attr) {
  return device::cluster_launch_config(static_cast<unsigned>(blocks),
                                       static_cast<unsigned>(bm / 64 * kThreadsPerWarpgroup + 32),
                                       smem, static_cast<unsigned>(cluster), attr);
}
}  // namespace

void pipeline_prepare(std::uint32_t bytes) {
  for (int bm : {64, 128})
    for (int k = 0; k < 3; ++k)
      GP_CUDA_CHECK(cudaFuncSetAttribute(kernel_for(bm, k != 0, k == 2),
                                         cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(bytes)));
}

int pipeline_max_clusters(int bm, int cluster, std::uint32_t smem) {
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t c = launch_config(cluster, bm, cluster, smem, &attr);
  int n = 0;
  GP_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&n, kernel_for(bm, true, false), &c));
  return n;
}

void run_pipeline(const Launch& l, const std::uint16_t* a, std::uint32_t m_total,
                  const std::uint16_t* b, std::uint32_t n_total, float* out, Times* times,
                  unsigned* timeouts) {
  if ((l.bm != 64 && l.bm != 128) || l.stages < 1 || l.stages > kMaxStages ||
      l.k_total % kKStep != 0 || l.k_total < kKStep * kMaxStages || l.items < 1 || l.tiles < 1 ||
      l.m_blocks < 1 || l.dynamic_smem < smem_bytes(l.bm, l.stages) || m_total % l.bm != 0 ||
      n_total % kN != 0 || (l.cluster != 1 && l.cluster != 2) || l.blocks % l.cluster != 0 ||
      (l.cluster == 2 && (l.m_blocks % 2 != 0 || l.tiles % 2 != 0)))
    throw std::invalid_argument("run_pipeline: unsupported launch shape");
  const CUtensorMap ma = encode(a, m_total, l.k_total, static_cast<std::uint32_t>(l.bm));
  const CUtensorMap mb = encode(b, n_total, l.k_total, static_cast<std::uint32_t>(kN / l.cluster));
  const Params p{static_cast<int>(l.mode),
                 l.stages,
                 l.cluster,
                 l.items,
                 l.m_blocks,
                 l.tiles,
                 l.k_total,
                 l.desc_a,
                 l.desc_b};
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t c = launch_config(l.blocks, l.bm, l.cluster, l.dynamic_smem, &attr);
  GP_CUDA_CHECK(cudaLaunchKernelEx(&c, kernel_for(l.bm, l.relaxed, l.a_regs), ma, mb, p, out, times,
                                   timeouts));
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace gpuprobe::probes::pipeline
