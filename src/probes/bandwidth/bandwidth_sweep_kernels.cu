// Kernels of bandwidth.sweep and bandwidth.hierarchy. See bandwidth_sweep_kernels.hpp.
#include <array>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/cuda_check.hpp"
#include "device/device_buffer.hpp"
#include "device/ptx.cuh"
#include "probes/bandwidth/bandwidth_sweep_kernels.hpp"

namespace gpuprobe::probes::bws {
namespace {

using u32 = std::uint32_t;
using u64 = std::uint64_t;
namespace ptx = ::gpuprobe::device::ptx;

// 16-B loads with an explicit cache operator. volatile: the same addresses are read every pass
// and nothing is written, so without it the compiler could hoist the loads out of the pass loop.
/// 16-B load with cache operator L at p + kOffsetBytes (an immediate offset of the instruction).
template <Load L, int kOffsetBytes = 0>
__device__ __forceinline__ uint4 load_v(const uint4* p) {
  uint4 v;
#define GP_LOAD_V4(OP)                                             \
  asm volatile("ld.global" OP ".v4.u32 {%0, %1, %2, %3}, [%4+%5];" \
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)        \
               : "l"(p), "n"(kOffsetBytes))
  if constexpr (L == Load::kCa) {
    GP_LOAD_V4(".ca");
  } else if constexpr (L == Load::kCg) {
    GP_LOAD_V4(".cg");
  } else if constexpr (L == Load::kPlain) {
    GP_LOAD_V4("");
  } else if constexpr (L == Load::kNc) {
    GP_LOAD_V4(".nc");
  } else {
    GP_LOAD_V4(".L1::no_allocate");
  }
#undef GP_LOAD_V4
  return v;
}
template <bool kCg>
__device__ __forceinline__ uint4 load_ca_cg(const uint4* p) {
  return load_v<kCg ? Load::kCg : Load::kCa>(p);
}

__device__ __forceinline__ u32 add4(u32 acc, uint4 v) { return acc + v.x + v.y + v.z + v.w; }

/// One pass over vectors first, first + step, ... < n: four independent loads in flight per
/// iteration before their sums are needed.
template <bool kCg>
__device__ __forceinline__ u32 read_pass(const uint4* base, u32 first, u32 step, u32 n, u32 acc) {
  u32 j = first;
  for (; j + 3 * step < n; j += 4 * step) {
    const uint4 a = load_ca_cg<kCg>(base + j);
    const uint4 b = load_ca_cg<kCg>(base + j + step);
    const uint4 c = load_ca_cg<kCg>(base + j + 2 * step);
    const uint4 d = load_ca_cg<kCg>(base + j + 3 * step);
    acc = add4(add4(acc, a), b);
    acc = add4(add4(acc, c), d);
  }
  for (; j < n; j += step) acc = add4(acc, load_ca_cg<kCg>(base + j));
  return acc;
}

/// Four passes at once. Pass k reads vector (j + k n / 4) mod n for the same j as read_pass;
/// the j of all threads cover [0, n) once and a rotation keeps that, so each of the four passes
/// still reads every vector exactly once, but a thread has four independent loads in flight even
/// when it owns a single vector (one 16-B load in flight per thread cannot cover the memory
/// latency of a small slice per SM; four or more per thread can).
template <bool kCg>
__device__ __forceinline__ u32 read_4_passes(const uint4* base, u32 first, u32 step, u32 n,
                                             u32 acc) {
  const u32 s1 = n / 4, s2 = n / 2, s3 = static_cast<u32>((3ull * n) / 4);
  u32 acc1 = 0, acc2 = 0, acc3 = 0;
  for (u32 j = first; j < n; j += step) {
    const u32 j1 = j + s1 >= n ? j + s1 - n : j + s1;
    const u32 j2 = j + s2 >= n ? j + s2 - n : j + s2;
    const u32 j3 = j + s3 >= n ? j + s3 - n : j + s3;
    const uint4 a = load_ca_cg<kCg>(base + j);
    const uint4 b = load_ca_cg<kCg>(base + j1);
    const uint4 c = load_ca_cg<kCg>(base + j2);
    const uint4 d = load_ca_cg<kCg>(base + j3);
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

// ---- Variants of bandwidth.hierarchy (kL1Variants / kL2Variants) ---------------------------


/// One sweep of j = first, first + step, ... < n reading, for each j, the U vectors
/// (j + off[k]) mod n (off[k] < n): U passes at once when the offsets are U rotations.
template <int U, Load L, Fold F>
__device__ __forceinline__ void read_rotated(const uint4* base, u32 first, u32 step, u32 n,
                                             const u32 (&off)[U], FoldAcc<F>& acc, u32 one) {
  for (u32 j = first; j < n; j += step) {
    uint4 v[U];
#pragma unroll
    for (int k = 0; k < U; ++k) {
      const u32 jk = j + off[k];
      v[k] = load_v<L>(base + (jk >= n ? jk - n : jk));
    }
#pragma unroll
    for (int k = 0; k < U; ++k) acc.add(v[k], one);
  }
}

/// `passes` passes, U at a time: pass q rotated by (q mod rotations) n / rotations; the passes
/// left over (passes mod U) one at a time, unrotated.
template <int U, Load L, Fold F>
__device__ __forceinline__ void read_passes_rotated(const uint4* base, u32 first, u32 step, u32 n,
                                                    u32 passes, u32 rotations, FoldAcc<F>& acc,
                                                    u32 one) {
  u32 q = 0;
  for (; q + U <= passes; q += U) {
    u32 off[U];
#pragma unroll
    for (int k = 0; k < U; ++k)
      off[k] = static_cast<u32>((static_cast<u64>((q + k) % rotations) * n) / rotations);
    read_rotated<U, L>(base, first, step, n, off, acc, one);
  }
  const u32 none[1] = {0};
  for (; q < passes; ++q) read_rotated<1, L>(base, first, step, n, none, acc, one);
}

/// Loads U vectors at p, p + T, ..., p + (U - 1) T (immediate offsets) and folds them.
template <int U, int T, Load L, Fold F, int... K>
__device__ __forceinline__ void load_fold_linear(const uint4* p, FoldAcc<F>& acc, u32 one,
                                                 std::integer_sequence<int, K...>) {
  const uint4 v[U] = {load_v<L, K * T * 16>(p)...};
#pragma unroll
  for (int k = 0; k < U; ++k) acc.add(v[k], one);
}

/// One pass over p, p + T, ... < end: U loads from one pointer per iteration, the rest singly.
template <int U, int T, Load L, Fold F>
__device__ __forceinline__ void read_pass_linear(const uint4* p, const uint4* end, FoldAcc<F>& acc,
                                                 u32 one) {
  for (; p + (U - 1) * T < end; p += U * T)
    load_fold_linear<U, T, L>(p, acc, one, std::make_integer_sequence<int, U>{});
  for (; p < end; p += T) acc.add(load_v<L>(p), one);
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

/// The block's sub-slice in the L1 regime: thread 0 takes the next slot of the block's SM
/// (`s_slot`) and clears `s_sum`; every thread gets the first vector and `sub`, the vectors of a
/// sub-slice.
__device__ __forceinline__ const uint4* claim_sub_slice(const SliceParams& p, u32 smid, u32& s_slot,
                                                        u32& s_sum, u32& sub) {
  if (threadIdx.x == 0) {
    s_slot = atomicAdd(&p.slot_counters[smid % p.slices], 1u);
    s_sum = 0;
  }
  __syncthreads();
  sub = p.slice_vectors / p.slots;
  return p.data + static_cast<u64>(smid % p.slices) * p.slice_vectors +
         static_cast<u64>(s_slot % p.slots) * sub;
}

__global__ void __launch_bounds__(kThreads, 2) l1_slices_kernel(SliceParams p) {
  __shared__ u32 s_slot, s_sum;
  const u32 smid = ptx::sm_id();
  u32 sub;
  const uint4* base = claim_sub_slice(p, smid, s_slot, s_sum, sub);
  u32 acc = 0;
  for (u32 w = 0; w < p.warm_passes; ++w)
    acc = read_pass<false>(base, threadIdx.x, kThreads, sub, acc);
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
  for (u32 w = 0; w < p.warm_passes; ++w)
    acc = read_pass<true>(p.data, first, step, p.vectors, acc);
  __shared__ u64 s_stamps[4];
  stamp(s_stamps);
  acc = read_passes<true>(p.data, first, step, p.vectors, p.timed_passes, acc);
  stamp(s_stamps + 2);
  const u32 total = block_sum(acc, &s_sum);
  if (threadIdx.x == 0) write_record(p.records, s_stamps, ptx::sm_id(), 0, total);
}

/// Block-wide fold (XOR or wrapping sum) of `v`, valid in thread 0.
template <bool kXor>
__device__ __forceinline__ u32 block_fold(u32 v, u32* scratch) {
  if constexpr (!kXor) {
    return block_sum(v, scratch);
  } else {
    for (int o = 16; o > 0; o >>= 1) v ^= __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) atomicXor(scratch, v);
    __syncthreads();
    return *scratch;
  }
}

/// L1 variant: kL1Variants[i] spelled out (see L1Variant). Same slot logic and records as
/// l1_slices_kernel.
template <Fold F, bool kLinear, int U, int T, int B>
__global__ void __launch_bounds__(T, B) l1_variant_kernel(SliceParams p) {
  __shared__ u32 s_slot, s_sum;
  const u32 smid = ptx::sm_id();
  u32 sub;
  const uint4* base = claim_sub_slice(p, smid, s_slot, s_sum, sub);
  FoldAcc<F> acc;
  __shared__ u64 s_stamps[4];
  if constexpr (kLinear) {
    const uint4* first = base + threadIdx.x;
    const uint4* end = base + sub;
    for (u32 w = 0; w < p.warm_passes; ++w)
      read_pass_linear<U, T, Load::kCa>(first, end, acc, p.one);
    stamp(s_stamps);
    for (u32 q = 0; q < p.timed_passes; ++q)
      read_pass_linear<U, T, Load::kCa>(first, end, acc, p.one);
    stamp(s_stamps + 2);
  } else {
    read_passes_rotated<U, Load::kCa>(base, threadIdx.x, T, sub, p.warm_passes, U, acc, p.one);
    stamp(s_stamps);
    read_passes_rotated<U, Load::kCa>(base, threadIdx.x, T, sub, p.timed_passes, U, acc, p.one);
    stamp(s_stamps + 2);
  }
  const u32 total = block_fold<fold_is_xor(F)>(acc.total(), &s_sum);
  if (threadIdx.x == 0) write_record(p.records, s_stamps, smid, s_slot, total);
}

/// L2 variant: kL2Variants[i] spelled out (see L2Variant); folds with kAdd3.
template <Load L, int U, int T, int B>
__global__ void __launch_bounds__(T, B) l2_variant_kernel(SharedParams p) {
  __shared__ u32 s_sum;
  if (threadIdx.x == 0) s_sum = 0;
  const u32 first = blockIdx.x * T + threadIdx.x;
  const u32 step = gridDim.x * T;
  FoldAcc<Fold::kAdd3> acc;
  constexpr u32 kOne = 1;
  read_passes_rotated<U, L>(p.data, first, step, p.vectors, p.warm_passes, p.rotations, acc, kOne);
  __shared__ u64 s_stamps[4];
  stamp(s_stamps);
  read_passes_rotated<U, L>(p.data, first, step, p.vectors, p.timed_passes, p.rotations, acc, kOne);
  stamp(s_stamps + 2);
  const u32 total = block_sum(acc.total(), &s_sum);
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

namespace {

using L1Fn = void (*)(SliceParams);
using L2Fn = void (*)(SharedParams);

template <std::size_t I>
constexpr L1Fn l1_kernel_of() {
  constexpr L1Variant v = kL1Variants[I];
  if constexpr (I == 0)
    return l1_slices_kernel;
  else
    return l1_variant_kernel<v.fold, v.linear, v.unroll, static_cast<int>(v.threads),
                             v.blocks_per_sm>;
}
template <std::size_t I>
constexpr L2Fn l2_kernel_of() {
  constexpr L2Variant v = kL2Variants[I];
  if constexpr (I == 0)
    return l2_shared_kernel;
  else
    return l2_variant_kernel<v.load, v.unroll, static_cast<int>(v.threads), v.blocks_per_sm>;
}
template <std::size_t... I>
constexpr std::array<L1Fn, sizeof...(I)> l1_table(std::index_sequence<I...>) {
  return {{l1_kernel_of<I>()...}};
}
template <std::size_t... I>
constexpr std::array<L2Fn, sizeof...(I)> l2_table(std::index_sequence<I...>) {
  return {{l2_kernel_of<I>()...}};
}
const std::array<L1Fn, kL1VariantCount> kL1Kernels =
    l1_table(std::make_index_sequence<kL1VariantCount>{});
const std::array<L2Fn, kL2VariantCount> kL2Kernels =
    l2_table(std::make_index_sequence<kL2VariantCount>{});

// The baseline entries must describe the kernels they stand for.
static_assert(kL1Variants[0].fold == Fold::kSum4 && !kL1Variants[0].linear &&
              kL1Variants[0].unroll == 4 && kL1Variants[0].threads == kThreads &&
              kL1Variants[0].blocks_per_sm == 2);
static_assert(kL2Variants[0].load == Load::kCg && kL2Variants[0].unroll == 4 &&
              kL2Variants[0].rotations == 4 && kL2Variants[0].threads == kThreads &&
              kL2Variants[0].blocks_per_sm == 2);

void check_variant(int variant, int count, const char* what) {
  if (variant < 0 || variant >= count)
    throw std::out_of_range(std::string(what) + ": no kernel variant " + std::to_string(variant));
}

}  // namespace

void launch_l1_slices(const SliceParams& p, unsigned blocks, cudaStream_t s, int variant) {
  check_variant(variant, kL1VariantCount, "launch_l1_slices");
  GP_CUDA_CHECK(cudaMemsetAsync(p.slot_counters, 0, sizeof(u32) * p.slices, s));
  kL1Kernels[variant]<<<blocks, kL1Variants[variant].threads, 0, s>>>(p);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_l2_shared(const SharedParams& p, unsigned blocks, cudaStream_t s, int variant) {
  check_variant(variant, kL2VariantCount, "launch_l2_shared");
  kL2Kernels[variant]<<<blocks, kL2Variants[variant].threads, 0, s>>>(p);
  GP_CUDA_CHECK_LAUNCH();
}

int l1_variant_occupancy(int variant) {
  check_variant(variant, kL1VariantCount, "l1_variant_occupancy");
  GP_CUDA_CHECK(
      cudaFuncSetAttribute(kL1Kernels[variant], cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  int n = 0;
  GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kL1Kernels[variant],
                                                              kL1Variants[variant].threads, 0));
  return n;
}

int l2_variant_occupancy(int variant) {
  check_variant(variant, kL2VariantCount, "l2_variant_occupancy");
  const Load l = kL2Variants[variant].load;
  if (variant != 0 && (l == Load::kPlain || l == Load::kNc))
    GP_CUDA_CHECK(cudaFuncSetAttribute(kL2Kernels[variant],
                                       cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  int n = 0;
  GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kL2Kernels[variant],
                                                              kL2Variants[variant].threads, 0));
  return n;
}

void launch_register_fma(const FmaParams& p, unsigned blocks, cudaStream_t s) {
  register_fma_kernel<<<blocks, kThreads, 0, s>>>(p);
  GP_CUDA_CHECK_LAUNCH();
}

int blocks_per_sm(int kind) {
  int n = 0;
  switch (kind) {
    case 0:
      GP_CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, l1_slices_kernel, kThreads, 0));
      break;
    case 1:
      GP_CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, l2_shared_kernel, kThreads, 0));
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
