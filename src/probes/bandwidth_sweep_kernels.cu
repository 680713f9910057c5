// Kernels of bandwidth.sweep and bandwidth.hierarchy. See bandwidth_sweep_kernels.hpp.
#include "core/cuda_check.hpp"
#include "device/device_buffer.hpp"
#include "device/ptx.cuh"
#include "probes/bandwidth_sweep_kernels.hpp"

namespace gpuprobe::probes::bws {
namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;
namespace ptx = ::gpuprobe::device::ptx;

// 16-B loads with an explicit cache operator. volatile: the same addresses are read every pass
// and nothing is written, so without it the compiler could hoist the loads out of the pass loop.
__device__ __forceinline__ uint4 load_ca(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.ca.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}
__device__ __forceinline__ uint4 load_cg(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ u32 add4(u32 acc, uint4 v) { return acc + v.x + v.y + v.z + v.w; }

/// One pass over vectors first, first + step, ... < n: four independent loads in flight per
/// iteration before their sums are needed.
template <bool kCg>
__device__ __forceinline__ u32 read_pass(const uint4* base, u32 first, u32 step, u32 n, u32 acc) {
  u32 j = first;
  for (; j + 3 * step < n; j += 4 * step) {
    const uint4 a = kCg ? load_cg(base + j) : load_ca(base + j);
    const uint4 b = kCg ? load_cg(base + j + step) : load_ca(base + j + step);
    const uint4 c = kCg ? load_cg(base + j + 2 * step) : load_ca(base + j + 2 * step);
    const uint4 d = kCg ? load_cg(base + j + 3 * step) : load_ca(base + j + 3 * step);
    acc = add4(add4(acc, a), b);
    acc = add4(add4(acc, c), d);
  }
  for (; j < n; j += step) acc = add4(acc, kCg ? load_cg(base + j) : load_ca(base + j));
  return acc;
}

/// Four passes at once. Pass k reads vector (j + k n / 4) mod n for the same j as read_pass;
/// the j of all threads cover [0, n) once and a rotation keeps that, so each of the four passes
/// still reads every vector exactly once, but a thread has four independent loads in flight even
/// when it owns a single vector (measured on the H200 with one pass at a time: a 16 KiB slice
/// per SM, one 16-B load per thread per pass, reached only 26 B/clk/SM; the same loads with four
/// or more per thread per pass reached 110-122).
template <bool kCg>
__device__ __forceinline__ u32 read_4_passes(const uint4* base, u32 first, u32 step, u32 n,
                                             u32 acc) {
  const u32 s1 = n / 4, s2 = n / 2, s3 = static_cast<u32>((3ull * n) / 4);
  u32 acc1 = 0, acc2 = 0, acc3 = 0;
  for (u32 j = first; j < n; j += step) {
    const u32 j1 = j + s1 >= n ? j + s1 - n : j + s1;
    const u32 j2 = j + s2 >= n ? j + s2 - n : j + s2;
    const u32 j3 = j + s3 >= n ? j + s3 - n : j + s3;
    const uint4 a = kCg ? load_cg(base + j) : load_ca(base + j);
    const uint4 b = kCg ? load_cg(base + j1) : load_ca(base + j1);
    const uint4 c = kCg ? load_cg(base + j2) : load_ca(base + j2);
    const uint4 d = kCg ? load_cg(base + j3) : load_ca(base + j3);
    // Four independent sums (the total is the same modulo 2^32): no 16-add dependent chain
    // between one iteration's loads and the next.
    acc = add4(acc, a);
    acc1 = add4(acc1, b);
    acc2 = add4(acc2, c);
    acc3 = add4(acc3, d);
  }
  return acc + acc1 + acc2 + acc3;
}

/// Runs `passes` passes: groups of four interleaved, the rest one at a time.
template <bool kCg>
__device__ __forceinline__ u32 read_passes(const uint4* base, u32 first, u32 step, u32 n,
                                           u32 passes, u32 acc) {
  u32 q = 0;
  for (; q + 4 <= passes; q += 4) acc = read_4_passes<kCg>(base, first, step, n, acc);
  for (; q < passes; ++q) acc = read_pass<kCg>(base, first, step, n, acc);
  return acc;
}

/// Block-wide wrapping sum of `v`, valid in thread 0.
__device__ __forceinline__ u32 block_sum(u32 v, u32* scratch) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(scratch, v);
  __syncthreads();
  return *scratch;
}

/// %clock64 and %globaltimer of thread 0 after a barrier, kept in shared memory (not in
/// registers across the timed loop, where they would cost four of the 32 registers a thread
/// has at 2048 threads per SM).
__device__ __forceinline__ void stamp(u64* slot) {
  __syncthreads();
  if (threadIdx.x == 0) {
    slot[0] = ptx::clock_64();
    slot[1] = ptx::global_timer();
  }
}

__device__ __forceinline__ void write_record(BlockRecord* out, const u64* st, u32 smid, u32 slot,
                                             u32 sum) {
  BlockRecord r;
  r.clock_start = st[0];
  r.ns_start = st[1];
  r.clock_end = st[2];
  r.ns_end = st[3];
  r.smid = smid;
  r.slot = slot;
  r.sum = sum;
  out[blockIdx.x] = r;
}

__global__ void __launch_bounds__(kThreads, 2) l1_slices_kernel(SliceParams p) {
  __shared__ u32 s_slot, s_sum;
  const u32 smid = ptx::sm_id();
  if (threadIdx.x == 0) {
    s_slot = atomicAdd(&p.slot_counters[smid % p.slices], 1u);
    s_sum = 0;
  }
  __syncthreads();
  const u32 slot = s_slot % p.slots;
  const u32 sub = p.slice_vectors / p.slots;
  const uint4* base =
      p.data + static_cast<u64>(smid % p.slices) * p.slice_vectors + static_cast<u64>(slot) * sub;
  u32 acc = 0;
  for (u32 w = 0; w < p.warm_passes; ++w) acc = read_pass<false>(base, threadIdx.x, kThreads, sub, acc);
  __shared__ u64 s_stamps[4];
  stamp(s_stamps);
  acc = read_passes<false>(base, threadIdx.x, kThreads, sub, p.timed_passes, acc);
  stamp(s_stamps + 2);
  const u32 total = block_sum(acc, &s_sum);
  if (threadIdx.x == 0) write_record(p.records, s_stamps, smid, s_slot, total);
}

__global__ void __launch_bounds__(kThreads, 2) l2_shared_kernel(SharedParams p) {
  __shared__ u32 s_sum;
  if (threadIdx.x == 0) s_sum = 0;
  const u32 first = blockIdx.x * kThreads + threadIdx.x;
  const u32 step = gridDim.x * kThreads;
  u32 acc = 0;
  for (u32 w = 0; w < p.warm_passes; ++w) acc = read_pass<true>(p.data, first, step, p.vectors, acc);
  __shared__ u64 s_stamps[4];
  stamp(s_stamps);
  acc = read_passes<true>(p.data, first, step, p.vectors, p.timed_passes, acc);
  stamp(s_stamps + 2);
  const u32 total = block_sum(acc, &s_sum);
  if (threadIdx.x == 0) write_record(p.records, s_stamps, ptx::sm_id(), 0, total);
}

__device__ __forceinline__ float ffma(float x, float a, float b) {
  float y;
  asm volatile("fma.rn.f32 %0, %1, %2, %3;" : "=f"(y) : "f"(x), "f"(a), "f"(b));
  return y;
}

__global__ void __launch_bounds__(kThreads, 2) register_fma_kernel(FmaParams p) {
  const u32 thread = blockIdx.x * kThreads + threadIdx.x;
  float x[kFmaChains];
#pragma unroll
  for (int k = 0; k < kFmaChains; ++k) x[k] = fma_start(thread, k);
  __shared__ u64 s_stamps[4];
  stamp(s_stamps);
  for (u32 s = 0; s < p.steps; s += 16) {
#pragma unroll
    for (int i = 0; i < 16; ++i) {
#pragma unroll
      for (int k = 0; k < kFmaChains; ++k) x[k] = ffma(x[k], p.a, p.b);
    }
  }
  stamp(s_stamps + 2);
  float sum = x[0];
#pragma unroll
  for (int k = 1; k < kFmaChains; ++k) sum += x[k];
  p.out[thread] = sum;
  if (threadIdx.x == 0) write_record(p.records, s_stamps, ptx::sm_id(), 0, 0);
}

__global__ void nsmid_kernel(u32* out) {
  u32 n;
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
  *out = n;
}

}  // namespace

std::uint32_t query_nsmid(cudaStream_t s) {
  device::DeviceBuffer word(sizeof(u32));
  nsmid_kernel<<<1, 1, 0, s>>>(word.as<u32>());
  GP_CUDA_CHECK_LAUNCH();
  u32 n = 0;
  GP_CUDA_CHECK(cudaMemcpyAsync(&n, word.as<u32>(), sizeof n, cudaMemcpyDeviceToHost, s));
  GP_CUDA_CHECK(cudaStreamSynchronize(s));
  return n;
}

void launch_l1_slices(const SliceParams& p, unsigned blocks, cudaStream_t s) {
  GP_CUDA_CHECK(cudaMemsetAsync(p.slot_counters, 0, sizeof(u32) * p.slices, s));
  l1_slices_kernel<<<blocks, kThreads, 0, s>>>(p);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_l2_shared(const SharedParams& p, unsigned blocks, cudaStream_t s) {
  l2_shared_kernel<<<blocks, kThreads, 0, s>>>(p);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_register_fma(const FmaParams& p, unsigned blocks, cudaStream_t s) {
  register_fma_kernel<<<blocks, kThreads, 0, s>>>(p);
  GP_CUDA_CHECK_LAUNCH();
}

int blocks_per_sm(int kind) {
  int n = 0;
  switch (kind) {
    case 0:
      GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, l1_slices_kernel, kThreads, 0));
      break;
    case 1:
      GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, l2_shared_kernel, kThreads, 0));
      break;
    default:
      GP_CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, register_fma_kernel, kThreads, 0));
      break;
  }
  return n;
}

void prefer_max_l1() {
  GP_CUDA_CHECK(
      cudaFuncSetAttribute(l1_slices_kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
}

}  // namespace gpuprobe::probes::bws
