// Kernels of the shared-memory, compute-pipe and timer probes. Kernels that differ only in a
// word type or an arithmetic op are one template each: smem_chase_kernel<Word, chains> and
// fma_kernel<Op, accumulators>.
#include <cuda_fp16.h>

#include <array>
#include <cstring>
#include <utility>

#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "device/ptx.cuh"
#include "probes/compute/compute_kernels.hpp"

namespace gpuprobe::probes::kernels {
namespace {

using device::ptx::clock_32;
using device::ptx::clock_64;
using device::ptx::global_timer;
using device::ptx::sm_id;

// ---- Shared memory ---------------------------------------------------------------------------

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
                      std::uint32_t warp_offset, std::uint32_t iterations, BlockRecord* records) {
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
    records[blockIdx.x] = BlockRecord{c0, c1, g0, g1, sm_id(), static_cast<std::uint32_t>(n_bad)};
  }
}

using SmemKernel = void (*)(std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t,
                            std::uint32_t, BlockRecord*);

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

// ---- Compute pipes ---------------------------------------------------------------------------
// Each op is x <- x * a + b in one PTX instruction (inline asm: the front end cannot see through
// it, so it can neither fold the chain nor reassociate it; ptxas maps it to one SASS op).

struct FfmaOp {
  using T = float;
  static T from_double(double v) { return static_cast<float>(v); }
  static __device__ __forceinline__ T step(T x, T a, T b) {
    T r;
    asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(x), "f"(a), "f"(b));
    return r;
  }
  static __device__ __forceinline__ T seed(std::uint64_t thread, int k) {
    return static_cast<float>(fma_seed(thread, k, 0));
  }
  static __device__ __forceinline__ double value(T x) { return x; }
};

struct Hfma2Op {  // two halves packed in 32 bits (low = half 0)
  using T = std::uint32_t;
  static std::uint16_t half_bits(float v) {
    const __half h = __float2half_rn(v);
    std::uint16_t bits;
    std::memcpy(&bits, &h, sizeof bits);
    return bits;
  }
  static T from_double(double v) {
    const std::uint32_t h = half_bits(static_cast<float>(v));
    return h | (h << 16);
  }
  static __device__ __forceinline__ T step(T x, T a, T b) {
    T r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(a), "r"(b));
    return r;
  }
  static __device__ __forceinline__ T seed(std::uint64_t thread, int k) {
    const __half lo = __float2half_rn(static_cast<float>(fma_seed(thread, k, 0)));
    const __half hi = __float2half_rn(static_cast<float>(fma_seed(thread, k, 1)));
    return static_cast<T>(__half_as_ushort(lo)) | (static_cast<T>(__half_as_ushort(hi)) << 16);
  }
  static __device__ __forceinline__ double value(T x) {
    const __half lo = __ushort_as_half(static_cast<unsigned short>(x & 0xffffu));
    const __half hi = __ushort_as_half(static_cast<unsigned short>(x >> 16));
    return static_cast<double>(__half2float(lo)) + static_cast<double>(__half2float(hi));
  }
};

struct ImadOp {
  using T = std::uint32_t;
  static T from_double(double v) { return static_cast<T>(static_cast<std::int64_t>(v)); }
  static __device__ __forceinline__ T step(T x, T a, T b) {
    T r;
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(a), "r"(b));
    return r;
  }
  static __device__ __forceinline__ T seed(std::uint64_t thread, int k) {
    return static_cast<T>(fma_seed(thread, k, 0));
  }
  static __device__ __forceinline__ double value(T x) { return static_cast<double>(x); }
};

struct DfmaOp {
  using T = double;
  static T from_double(double v) { return v; }
  static __device__ __forceinline__ T step(T x, T a, T b) {
    T r;
    asm("fma.rn.f64 %0, %1, %2, %3;" : "=d"(r) : "d"(x), "d"(a), "d"(b));
    return r;
  }
  static __device__ __forceinline__ T seed(std::uint64_t thread, int k) {
    return static_cast<double>(fma_seed(thread, k, 0));
  }
  static __device__ __forceinline__ double value(T x) { return x; }
};

template <class Op, int kAcc>
__global__ void __launch_bounds__(1024)
    fma_kernel(typename Op::T a, typename Op::T b, std::uint32_t iterations, double* out,
               BlockRecord* records) {
  constexpr int kSteps = fma_steps_per_iteration(kAcc);
  const std::uint64_t thread = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  typename Op::T acc[kAcc];
#pragma unroll
  for (int k = 0; k < kAcc; ++k) acc[k] = Op::seed(thread, k);
  __syncthreads();
  std::uint64_t c0 = 0, g0 = 0;
  if (threadIdx.x == 0) {
    g0 = global_timer();
    c0 = clock_64();
  }
  for (std::uint32_t i = 0; i < iterations; ++i) {
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
#pragma unroll
      for (int k = 0; k < kAcc; ++k) acc[k] = Op::step(acc[k], a, b);
    }
  }
  // One more step makes the step count odd (the HFMA2 map has period 2).
  double sum = 0;
#pragma unroll
  for (int k = 0; k < kAcc; ++k) sum += Op::value(Op::step(acc[k], a, b));
  out[thread] = sum;
  // Every warp reaches the barrier only after issuing the store that consumes its last result.
  __syncthreads();
  if (threadIdx.x == 0) {
    const std::uint64_t c1 = clock_64();
    const std::uint64_t g1 = global_timer();
    records[blockIdx.x] = BlockRecord{c0, c1, g0, g1, sm_id(), 0u};
  }
}

template <class Op>
using FmaKernel = void (*)(typename Op::T, typename Op::T, std::uint32_t, double*, BlockRecord*);

template <class Op, int... I>
FmaKernel<Op> fma_kernel_at(int accumulators, std::integer_sequence<int, I...>) {
  static const std::array<FmaKernel<Op>, sizeof...(I)> table = {&fma_kernel<Op, I + 1>...};
  return table[static_cast<std::size_t>(accumulators - 1)];
}

template <class Op>
FmaKernel<Op> fma_kernel_for(int accumulators) {
  if (accumulators < 1 || accumulators > kMaxAccumulators)
    throw UsageError("accumulators " + std::to_string(accumulators) + " is not built; use 1..16");
  return fma_kernel_at<Op>(accumulators, std::make_integer_sequence<int, kMaxAccumulators>{});
}

/// Calls f(Op{}) with the op's type.
template <class F>
decltype(auto) with_op(FmaOp op, F&& f) {
  switch (op) {
    case FmaOp::kFfma:
      return f(FfmaOp{});
    case FmaOp::kHfma2:
      return f(Hfma2Op{});
    case FmaOp::kImad:
      return f(ImadOp{});
    case FmaOp::kDfma:
      break;
  }
  return f(DfmaOp{});
}

// ---- Timers ----------------------------------------------------------------------------------

__global__ void timer_probe_kernel(TimerProbeOut* out, std::uint32_t max_spin_reads) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
#pragma unroll 1
  for (int i = 0; i < kTimerPairs; ++i) {
    const std::uint64_t a = clock_64();
    const std::uint64_t b = clock_64();
    out->clock64_pair[i] = static_cast<std::uint32_t>(b - a);
  }
#pragma unroll 1
  for (int i = 0; i < kTimerPairs; ++i) {
    const std::uint32_t a = clock_32();
    const std::uint32_t b = clock_32();
    out->clock32_pair[i] = b - a;
  }
  std::uint32_t x = threadIdx.x;
#pragma unroll 1
  for (int i = 0; i < kTimerGaps; ++i) {
    const std::uint64_t a = clock_64();
#pragma unroll 1
    for (int j = 0; j < i; ++j) asm volatile("add.u32 %0, %0, 1;" : "+r"(x));
    const std::uint64_t b = clock_64();
    out->clock64_gap[i] = static_cast<std::uint32_t>(b - a);
  }
#pragma unroll 1
  for (int i = 0; i < kTimerGaps; ++i) {
    const std::uint32_t a = clock_32();
#pragma unroll 1
    for (int j = 0; j < i; ++j) asm volatile("add.u32 %0, %0, 1;" : "+r"(x));
    const std::uint32_t b = clock_32();
    out->clock32_gap[i] = b - a;
  }
  {
    // Every read is stored, so none can be dropped as dead code.
    std::uint64_t t[kTimerStreamReads];
#pragma unroll
    for (int i = 0; i < kTimerStreamReads; ++i) t[i] = clock_64();
#pragma unroll
    for (int i = 0; i < kTimerStreamReads; ++i)
      out->clock64_stream[i] = static_cast<std::uint32_t>(t[i] - t[0]);
    std::uint32_t c[kTimerStreamReads];
#pragma unroll
    for (int i = 0; i < kTimerStreamReads; ++i) c[i] = clock_32();
#pragma unroll
    for (int i = 0; i < kTimerStreamReads; ++i) out->clock32_stream[i] = c[i] - c[0];
  }
#pragma unroll 1
  for (int i = 0; i < kTimerPairs; ++i) {
    const std::uint64_t a = clock_64();
    const std::uint64_t g = global_timer();
    // Using the value makes the second clock read wait for the first globaltimer read.
    if (g == 0) out->changes = 0xffffffffu;
    const std::uint64_t b = clock_64();
    out->globaltimer_read[i] = static_cast<std::uint32_t>(b - a);
  }
#pragma unroll 1
  for (int i = 0; i < kTimerPairs; ++i) {
    const std::uint64_t a = global_timer();
    const std::uint64_t b = global_timer();
    out->globaltimer_pair[i] = static_cast<std::uint32_t>(b - a);
  }
  std::uint64_t g_prev = global_timer();
  std::uint64_t c_prev = clock_64();
  std::uint32_t n = 0, reads = 0;
  while (n < static_cast<std::uint32_t>(kTimerMaxChanges) && reads < max_spin_reads) {
    const std::uint64_t g = global_timer();
    ++reads;
    if (g != g_prev) {
      const std::uint64_t c = clock_64();
      out->change_ns[n] = static_cast<std::uint32_t>(g - g_prev);
      out->change_cycles[n] = static_cast<std::uint32_t>(c - c_prev);
      g_prev = g;
      c_prev = c;
      ++n;
    }
  }
  out->changes = n;
  out->spin_reads = reads + (x == 0xdeadbeefu ? 1u : 0u);  // keeps the add chains alive
}

__global__ void empty_kernel() {}

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

void launch_smem_chase(const SmemLaunch& l, BlockRecord* records, cudaStream_t stream) {
  if (l.iterations % 4 != 0)
    throw UsageError("shared-memory chase: iterations must be a multiple of 4");
  const SmemKernel kernel = prepare_smem(l);
  const std::uint32_t bytes = smem_chase_bytes(l);
  kernel<<<l.blocks, l.threads_per_block, bytes, stream>>>(
      bytes / 4, l.stride_bytes, l.chain_offset_bytes, l.warp_offset_bytes, l.iterations, records);
  GP_CUDA_CHECK_LAUNCH();
}

int fma_blocks_per_sm(FmaOp op, int accumulators, int threads, std::uint32_t dynamic_smem_bytes) {
  return with_op(op, [&](auto tag) {
    using Op = decltype(tag);
    const auto kernel = fma_kernel_for<Op>(accumulators);
    GP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(dynamic_smem_bytes)));
    GP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       static_cast<int>(cudaSharedmemCarveoutMaxShared)));
    int blocks = 0;
    GP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads,
                                                                dynamic_smem_bytes));
    return blocks;
  });
}

void launch_fma(const FmaLaunch& l, double* out, BlockRecord* records, cudaStream_t stream) {
  with_op(l.op, [&](auto tag) {
    using Op = decltype(tag);
    const auto kernel = fma_kernel_for<Op>(l.accumulators);
    kernel<<<l.blocks, l.threads_per_block, l.dynamic_smem_bytes, stream>>>(
        Op::from_double(l.a), Op::from_double(l.b), l.iterations, out, records);
    GP_CUDA_CHECK_LAUNCH();
  });
}

void launch_timer_probe(TimerProbeOut* out, std::uint32_t max_spin_reads, cudaStream_t stream) {
  timer_probe_kernel<<<1, 32, 0, stream>>>(out, max_spin_reads);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_empty(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
  GP_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuprobe::probes::kernels
