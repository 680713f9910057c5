// Kernels of the Hopper TMA and distributed-shared-memory probes. Device code only for
// __CUDA_ARCH__ >= 900 (cp.async.bulk, mbarrier transaction counts and clusters are sm_90
// features); the compute_75 PTX pass compiles empty stubs.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "core/cuda_check.hpp"
#include "device/launch.hpp"
#include "device/ptx.cuh"
#include "device/sm90.cuh"
#include "measure/cuda_event.hpp"
#include "probes/hopper/tma_kernels.hpp"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define GP_TMA_DEVICE 1
#else
#define GP_TMA_DEVICE 0
#endif

namespace gpuprobe::probes::tma {
namespace {

static_assert(sizeof(TensorMap) == sizeof(CUtensorMap), "TensorMap must mirror CUtensorMap");

#if GP_TMA_DEVICE

constexpr std::uint64_t kTimeoutCycles = 4000000000ull;  // ~2 s at 2 GHz: a copy that never lands
constexpr int kConsumers = 128;                          // consumer threads of the load kernel

using device::sm90::fence_mbar_init;
using device::sm90::mbar_arrive;
using device::sm90::mbar_expect_tx;
using device::sm90::mbar_init;
using device::sm90::smem_addr;
/// Waits for the phase of parity `parity` to complete; false after kTimeoutCycles.
__device__ __forceinline__ bool mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  return device::sm90::mbar_wait_for(bar, parity, kTimeoutCycles);
}

__device__ __forceinline__ void bulk_g2s(std::uint32_t dst, const void* src, std::uint32_t bytes,
                                         std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void tensor_g2s(std::uint32_t dst, const CUtensorMap* map, int c0, int c1,
                                           std::uint32_t bar) {
  device::sm90::tma_load_2d(dst, map, c0, c1, bar);
}
__device__ __forceinline__ void bulk_s2g(void* dst, std::uint32_t src, std::uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ void bulk_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ uint4 ld_global_v4(const void* p) {
  uint4 v;
  asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p)
               : "memory");
  return v;
}
__device__ __forceinline__ void st_shared_v4(std::uint32_t a, uint4 v) {
  asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

using device::sm90::cluster_rank;
using device::sm90::cluster_sync;
using device::sm90::map_rank;
__device__ __forceinline__ std::uint32_t ld_cluster_u32(std::uint32_t a) {
  std::uint32_t v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
  return v;
}
__device__ __forceinline__ uint4 ld_cluster_v4(std::uint32_t a) {
  uint4 v;
  asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(a)
               : "memory");
  return v;
}

#endif  // GP_TMA_DEVICE

__global__ void feature_kernel(int* flag) {
#if GP_TMA_DEVICE
  *flag = 1;
#else
  *flag = 0;
#endif
}

// ---- latency --------------------------------------------------------------------------------

__global__ void __launch_bounds__(32) tma_latency_kernel(int kind, const std::uint8_t* src, std::uint32_t bytes,
                                                         std::uint32_t row, const __grid_constant__ CUtensorMap map,
                                                         std::uint8_t* copy_out, LatencyOut* out) {
#if GP_TMA_DEVICE
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  __shared__ __align__(8) std::uint64_t bar_storage;
  const std::uint32_t raw = smem_addr(smem_raw);
  const std::uint32_t pad = (1024u - (raw & 1023u)) & 1023u;
  const std::uint32_t base = raw + pad;
  const std::uint32_t bar = smem_addr(&bar_storage);
  if (threadIdx.x == 0) {
    mbar_init(bar, 1);
    fence_mbar_init();
  }
  __syncthreads();
  std::uint64_t c0 = 0, c1 = 0;
  std::uint32_t timeouts = 0;
  if (threadIdx.x == 0) {
    c0 = device::ptx::clock_64();
    mbar_expect_tx(bar, bytes);
    if (kind == static_cast<int>(CopyKind::kBulk))
      bulk_g2s(base, src, bytes, bar);
    else
      tensor_g2s(base, &map, 0, static_cast<int>(row), bar);
    // Polled, not try_wait: see device::sm90::mbar_poll_for (try_wait may suspend the thread).
    timeouts = device::sm90::mbar_poll_for(bar, 0, kTimeoutCycles) ? 0u : 1u;
    c1 = device::ptx::clock_64();
  }
  __syncthreads();
  const std::uint8_t* smem = smem_raw + pad;
  for (std::uint32_t i = threadIdx.x * 16; i < bytes; i += blockDim.x * 16)
    *reinterpret_cast<uint4*>(copy_out + i) = *reinterpret_cast<const uint4*>(smem + i);
  if (threadIdx.x == 0) *out = LatencyOut{c1 - c0, device::ptx::sm_id(), timeouts};
#endif
}

/// One warp loads `bytes` (K x 16 B per lane, lanes with data only) into registers, stores them
/// to shared memory, __syncwarp; lane 0 times it.
template <int K>
__global__ void __launch_bounds__(32) warp_load_kernel(const std::uint8_t* src, std::uint32_t bytes,
                                                       std::uint8_t* copy_out, LatencyOut* out) {
#if GP_TMA_DEVICE
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  const std::uint32_t base = smem_addr(smem_raw);
  const std::uint32_t lane = threadIdx.x;
  uint4 v[K];
  __syncwarp();
  const std::uint64_t c0 = device::ptx::clock_64();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const std::uint32_t off = (k * 32 + lane) * 16;
    if (off < bytes) v[k] = ld_global_v4(src + off);
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const std::uint32_t off = (k * 32 + lane) * 16;
    if (off < bytes) st_shared_v4(base + off, v[k]);
  }
  __syncwarp();
  const std::uint64_t c1 = device::ptx::clock_64();
  __syncthreads();
  for (std::uint32_t i = lane * 16; i < bytes; i += 32 * 16)
    *reinterpret_cast<uint4*>(copy_out + i) = *reinterpret_cast<const uint4*>(smem_raw + i);
  if (lane == 0) *out = LatencyOut{c1 - c0, device::ptx::sm_id(), 0};
#endif
}

// ---- helpers --------------------------------------------------------------------------------

__global__ void fill_kernel(std::uint32_t* w, std::uint64_t n) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    w[i] = pattern(i);
}

__global__ void mismatch_kernel(const std::uint32_t* w, std::uint64_t n, unsigned long long* count) {
  unsigned long long bad = 0;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
    bad += (w[i] != pattern(i));
  if (bad) atomicAdd(count, bad);
}

// ---- bandwidth --------------------------------------------------------------------------------

constexpr int kMaxStages = 4;

__global__ void __launch_bounds__(160, 1)
    tma_load_bw_kernel(const std::uint8_t* src, std::uint64_t tiles, std::uint32_t tile, std::uint32_t stages,
                       std::uint32_t passes, unsigned long long* sums, unsigned* timeouts) {
#if GP_TMA_DEVICE
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  __shared__ __align__(8) std::uint64_t full[kMaxStages], empty[kMaxStages];
  const std::uint32_t raw = smem_addr(smem_raw);
  const std::uint32_t pad = (1024u - (raw & 1023u)) & 1023u;
  const std::uint32_t base = raw + pad;
  const std::uint8_t* smem = smem_raw + pad;
  if (threadIdx.x == 0) {
    for (std::uint32_t s = 0; s < stages; ++s) {
      mbar_init(smem_addr(&full[s]), 1);
      mbar_init(smem_addr(&empty[s]), kConsumers);
    }
    fence_mbar_init();
  }
  __syncthreads();
  const std::uint64_t total = tiles * passes;
  if (threadIdx.x < 32) {
    if (threadIdx.x == 0) {
      std::uint32_t k = 0;
      for (std::uint64_t j = blockIdx.x; j < total; j += gridDim.x, ++k) {
        const std::uint32_t s = k % stages, n = k / stages;
        if (n > 0 && !mbar_wait(smem_addr(&empty[s]), (n - 1) & 1u)) {
          atomicAdd(timeouts, 1u);
          break;
        }
        mbar_expect_tx(smem_addr(&full[s]), tile);
        bulk_g2s(base + s * tile, src + (j % tiles) * tile, tile, smem_addr(&full[s]));
      }
    }
  } else {
    const std::uint32_t ct = threadIdx.x - 32;
    unsigned long long sum = 0;
    std::uint32_t k = 0;
    for (std::uint64_t j = blockIdx.x; j < total; j += gridDim.x, ++k) {
      const std::uint32_t s = k % stages, n = k / stages;
      if (!mbar_wait(smem_addr(&full[s]), n & 1u)) {
        atomicAdd(timeouts, 1u);
        break;
      }
      const uint4* t = reinterpret_cast<const uint4*>(smem + s * tile);
      for (std::uint32_t v = ct; v < tile / 16; v += kConsumers) {
        const uint4 x = t[v];
        sum += static_cast<unsigned long long>(x.x) + x.y + static_cast<unsigned long long>(x.z) + x.w;
      }
      mbar_arrive(smem_addr(&empty[s]));
    }
    for (int o = 16; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffffu, sum, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(&sums[blockIdx.x], sum);
  }
#endif
}

template <int S>
__global__ void __launch_bounds__(128, 1)
    tma_store_bw_kernel(std::uint32_t* dst, std::uint64_t tiles, std::uint32_t tile, std::uint32_t passes) {
#if GP_TMA_DEVICE
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  const std::uint32_t raw = smem_addr(smem_raw);
  const std::uint32_t pad = (1024u - (raw & 1023u)) & 1023u;
  const std::uint32_t base = raw + pad;
  const std::uint64_t total = tiles * passes;
  const std::uint32_t words = tile / 4;
  std::uint32_t k = 0;
  for (std::uint64_t j = blockIdx.x; j < total; j += gridDim.x, ++k) {
    const std::uint32_t s = k % S;
    if (k >= S) {
      if (threadIdx.x == 0) bulk_wait_read<S - 1>();  // the group that read stage s is done
      __syncthreads();
    }
    const std::uint64_t w0 = (j % tiles) * words;
    const std::uint32_t stage = base + s * tile;
    for (std::uint32_t w = threadIdx.x * 4; w < words; w += blockDim.x * 4) {
      const uint4 v{pattern(w0 + w), pattern(w0 + w + 1), pattern(w0 + w + 2), pattern(w0 + w + 3)};
      st_shared_v4(stage + w * 4, v);
    }
    fence_proxy_async_smem();  // generic-proxy writes -> visible to the bulk copy (async proxy)
    __syncthreads();
    if (threadIdx.x == 0) {
      bulk_s2g(dst + w0, stage, tile);
      bulk_commit();
    }
  }
  if (threadIdx.x == 0) bulk_wait_all();  // every write performed, not only the sources read
#endif
}

// ---- distributed shared memory -----------------------------------------------------------------

__global__ void dsmem_latency_kernel(int target, const std::uint32_t* next, std::uint32_t nodes,
                                     std::uint32_t warmup, std::uint32_t steps, DsmemLatencyOut* out) {
#if GP_TMA_DEVICE
  extern __shared__ __align__(16) std::uint32_t table[];
  for (std::uint32_t i = threadIdx.x; i < nodes; i += blockDim.x) table[i] = next[i];
  cluster_sync();
  if (cluster_rank() == 0 && threadIdx.x == 0) {
    const std::uint32_t remote = map_rank(smem_addr(table), static_cast<std::uint32_t>(target));
    std::uint32_t idx = 0;
    for (std::uint32_t i = 0; i < warmup; ++i) idx = ld_cluster_u32(remote + idx * 4);
    const std::uint64_t c0 = device::ptx::clock_64();
    for (std::uint32_t i = 0; i < steps; ++i) idx = ld_cluster_u32(remote + idx * 4);
    const std::uint64_t c1 = device::ptx::clock_64();
    *out = DsmemLatencyOut{c1 - c0, idx, device::ptx::sm_id()};
  }
  __syncwarp();
  cluster_sync();  // no block leaves while its shared memory may still be read
#endif
}

__global__ void dsmem_bandwidth_kernel(std::uint32_t bytes, std::uint32_t reps, unsigned* sums,
                                       unsigned long long* g0, unsigned long long* g1) {
#if GP_TMA_DEVICE
  extern __shared__ __align__(16) std::uint32_t buf[];
  const std::uint32_t rank = cluster_rank();
  std::uint32_t csize;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(csize));
  for (std::uint32_t i = threadIdx.x; i < bytes / 4; i += blockDim.x) buf[i] = pattern(i) + rank;
  cluster_sync();
  const std::uint32_t remote = map_rank(smem_addr(buf), (rank + 1) % csize);
  const std::uint32_t vecs = bytes / 16;
  unsigned sum = 0;
  __syncthreads();
  const std::uint64_t t0 = device::ptx::global_timer();
  for (std::uint32_t r = 0; r < reps; ++r) {
    std::uint32_t v = threadIdx.x;
    for (; v + 3 * blockDim.x < vecs; v += 4 * blockDim.x) {
      const uint4 a = ld_cluster_v4(remote + v * 16);
      const uint4 b = ld_cluster_v4(remote + (v + blockDim.x) * 16);
      const uint4 c = ld_cluster_v4(remote + (v + 2 * blockDim.x) * 16);
      const uint4 d = ld_cluster_v4(remote + (v + 3 * blockDim.x) * 16);
      sum += a.x + a.y + a.z + a.w + b.x + b.y + b.z + b.w + c.x + c.y + c.z + c.w + d.x + d.y + d.z + d.w;
    }
    for (; v < vecs; v += blockDim.x) {
      const uint4 a = ld_cluster_v4(remote + v * 16);
      sum += a.x + a.y + a.z + a.w;
    }
  }
  __syncthreads();
  const std::uint64_t t1 = device::ptx::global_timer();
  for (int o = 16; o > 0; o /= 2) sum += __shfl_down_sync(0xffffffffu, sum, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(&sums[blockIdx.x], sum);
  if (threadIdx.x == 0) {
    g0[blockIdx.x] = t0;
    g1[blockIdx.x] = t1;
  }
  cluster_sync();
#endif
}

using StoreKernel = void (*)(std::uint32_t*, std::uint64_t, std::uint32_t, std::uint32_t);
StoreKernel store_kernel(int stages) {
  switch (stages) {
    case 1: return tma_store_bw_kernel<1>;
    case 2: return tma_store_bw_kernel<2>;
    case 3: return tma_store_bw_kernel<3>;
    case 4: return tma_store_bw_kernel<4>;
  }
  throw std::invalid_argument("tma: stages must be 1..4");
}

using WarpKernel = void (*)(const std::uint8_t*, std::uint32_t, std::uint8_t*, LatencyOut*);
WarpKernel warp_kernel(std::uint32_t bytes) {
  const std::uint32_t per_lane = (bytes + 511) / 512;  // 16-B vectors per lane
  if (per_lane <= 1) return warp_load_kernel<1>;
  if (per_lane <= 2) return warp_load_kernel<2>;
  if (per_lane <= 4) return warp_load_kernel<4>;
  if (per_lane <= 8) return warp_load_kernel<8>;
  if (per_lane <= 16) return warp_load_kernel<16>;
  if (per_lane <= 32) return warp_load_kernel<32>;
  throw std::invalid_argument("tma: warp load of more than 16 KiB");
}

using Events = measure::EventTimer;

}  // namespace

const char* copy_name(CopyKind k) {
  switch (k) {
    case CopyKind::kBulk: return "bulk";
    case CopyKind::kTensor: return "tensor";
    case CopyKind::kWarpLoad: return "warp_load";
  }
  return "?";
}

bool tma_compiled() {
  int* flag = nullptr;
  GP_CUDA_CHECK(cudaMalloc(&flag, sizeof(int)));
  int host = 0;
  try {
    GP_CUDA_CHECK(cudaMemset(flag, 0, sizeof(int)));
    feature_kernel<<<1, 1>>>(flag);
    GP_CUDA_CHECK_LAUNCH();
    GP_CUDA_CHECK(cudaMemcpy(&host, flag, sizeof(int), cudaMemcpyDeviceToHost));
  } catch (...) {
    cudaFree(flag);
    throw;
  }
  GP_CUDA_CHECK(cudaFree(flag));
  return host == 1;
}

TensorMap encode_rows_map(const void* base, std::uint64_t rows, std::uint32_t box_rows) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  GP_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || fn == nullptr)
    throw std::runtime_error("cuTensorMapEncodeTiled: driver entry point not found (query result " +
                             std::to_string(static_cast<int>(q)) + ")");
  auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  CUtensorMap map{};
  const cuuint64_t dims[2] = {32, rows};
  const cuuint64_t strides[1] = {128};  // bytes between rows
  const cuuint32_t box[2] = {32, box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, const_cast<void*>(base), dims, strides, box,
                            elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("cuTensorMapEncodeTiled failed: CUresult " + std::to_string(static_cast<int>(r)) +
                             " (rows " + std::to_string(rows) + ", box rows " + std::to_string(box_rows) + ")");
  TensorMap out{};
  static_assert(sizeof out == sizeof map);
  std::memcpy(&out, &map, sizeof map);
  return out;
}

void launch_latency(CopyKind kind, const std::uint8_t* src, std::uint32_t bytes, std::uint32_t row,
                    const TensorMap& map, std::uint8_t* copy_out, LatencyOut* out) {
  if (bytes < 16 || bytes > 16384 || bytes % 16 != 0)
    throw std::invalid_argument("launch_latency: bytes must be a multiple of 16 in 16..16384");
  const std::uint32_t smem = bytes + 1024;
  if (kind == CopyKind::kWarpLoad) {
    warp_kernel(bytes)<<<1, 32, bytes>>>(src, bytes, copy_out, out);
  } else {
    CUtensorMap m;
    std::memcpy(&m, &map, sizeof m);
    tma_latency_kernel<<<1, 32, smem>>>(static_cast<int>(kind), src, bytes, row, m, copy_out, out);
  }
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

void fill_pattern(std::uint32_t* words, std::uint64_t n) {
  fill_kernel<<<1024, 256>>>(words, n);
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

std::uint64_t count_mismatches(const std::uint32_t* words, std::uint64_t n) {
  unsigned long long* d = nullptr;
  GP_CUDA_CHECK(cudaMalloc(&d, sizeof *d));
  unsigned long long h = 0;
  try {
    GP_CUDA_CHECK(cudaMemset(d, 0, sizeof *d));
    mismatch_kernel<<<1024, 256>>>(words, n, d);
    GP_CUDA_CHECK_LAUNCH();
    GP_CUDA_CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
  } catch (...) {
    cudaFree(d);
    throw;
  }
  GP_CUDA_CHECK(cudaFree(d));
  return h;
}

std::uint32_t bandwidth_smem_bytes(std::uint32_t tile, int stages) {
  return tile * static_cast<std::uint32_t>(stages) + 1024;
}

void bandwidth_prepare(std::uint32_t bytes) {
  GP_CUDA_CHECK(cudaFuncSetAttribute(tma_load_bw_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     static_cast<int>(bytes)));
  for (int s = 1; s <= kMaxStages; ++s)
    GP_CUDA_CHECK(cudaFuncSetAttribute(store_kernel(s), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(bytes)));
}

double run_load_bandwidth(const std::uint8_t* src, std::uint64_t tiles, std::uint32_t tile, int stages,
                          std::uint32_t passes, int blocks, std::uint32_t smem, unsigned long long* sums,
                          unsigned* timeouts) {
  if (stages < 1 || stages > kMaxStages || tile % 16 != 0 || smem < bandwidth_smem_bytes(tile, stages))
    throw std::invalid_argument("run_load_bandwidth: unsupported shape");
  Events ev;
  ev.start();
  tma_load_bw_kernel<<<blocks, 160, smem>>>(src, tiles, tile, static_cast<std::uint32_t>(stages), passes, sums,
                                             timeouts);
  GP_CUDA_CHECK_LAUNCH();
  return ev.stop_ms();
}

double run_store_bandwidth(std::uint32_t* dst, std::uint64_t tiles, std::uint32_t tile, int stages,
                           std::uint32_t passes, int blocks, std::uint32_t smem) {
  if (tile % 16 != 0 || smem < bandwidth_smem_bytes(tile, stages))
    throw std::invalid_argument("run_store_bandwidth: unsupported shape");
  const auto k = store_kernel(stages);
  Events ev;
  ev.start();
  k<<<blocks, 128, smem>>>(dst, tiles, tile, passes);
  GP_CUDA_CHECK_LAUNCH();
  return ev.stop_ms();
}

void dsmem_prepare() {
  GP_CUDA_CHECK(cudaFuncSetAttribute(dsmem_latency_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  GP_CUDA_CHECK(cudaFuncSetAttribute(dsmem_bandwidth_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
}

namespace {
cudaLaunchConfig_t cluster_config(int cluster, int clusters, int threads, std::uint32_t smem,
                                  cudaLaunchAttribute* attr) {
  return device::cluster_launch_config(static_cast<unsigned>(cluster * clusters),
                                       static_cast<unsigned>(threads), smem,
                                       static_cast<unsigned>(cluster), attr);
}
}  // namespace

int dsmem_max_active_clusters(int cluster, int threads, std::uint32_t smem, int* count) {
  *count = 0;
  if (smem > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(dsmem_bandwidth_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(smem));
    if (e != cudaSuccess) {
      cudaGetLastError();
      return static_cast<int>(e);
    }
  }
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t c = cluster_config(cluster, 1, threads, smem, &attr);
  const cudaError_t e = cudaOccupancyMaxActiveClusters(count, dsmem_bandwidth_kernel, &c);
  if (e != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it
    *count = 0;
  }
  return static_cast<int>(e);
}

void launch_dsmem_latency(int cluster, int target, const std::uint32_t* next, std::uint32_t nodes,
                          std::uint32_t warmup, std::uint32_t steps, DsmemLatencyOut* out) {
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t c = cluster_config(cluster, 1, 32, nodes * 4, &attr);
  GP_CUDA_CHECK(cudaLaunchKernelEx(&c, dsmem_latency_kernel, target, next, nodes, warmup, steps, out));
  GP_CUDA_CHECK_LAUNCH();
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

double run_dsmem_bandwidth(int cluster, int clusters, int threads, std::uint32_t bytes, std::uint32_t reps,
                           unsigned* sums, unsigned long long* g0, unsigned long long* g1) {
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t c = cluster_config(cluster, clusters, threads, bytes, &attr);
  Events ev;
  ev.start();
  GP_CUDA_CHECK(cudaLaunchKernelEx(&c, dsmem_bandwidth_kernel, bytes, reps, sums, g0, g1));
  GP_CUDA_CHECK_LAUNCH();
  return ev.stop_ms();
}

}  // namespace gpuprobe::probes::tma
