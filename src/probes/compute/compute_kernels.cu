// Kernels of the compute-pipe probes. Kernels that differ only in the arithmetic op or the
// number of accumulators are one template: fma_kernel<Op, accumulators>.
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

using device::ptx::clock_64;
using device::ptx::global_timer;
using device::ptx::sm_id;

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
               BlockTiming* records) {
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
    records[blockIdx.x] = BlockTiming{c0, c1, g0, g1, sm_id(), 0u};
  }
}

template <class Op>
using FmaKernel = void (*)(typename Op::T, typename Op::T, std::uint32_t, double*, BlockTiming*);

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

}  // namespace

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

void launch_fma(const FmaLaunch& l, double* out, BlockTiming* records, cudaStream_t stream) {
  with_op(l.op, [&](auto tag) {
    using Op = decltype(tag);
    const auto kernel = fma_kernel_for<Op>(l.accumulators);
    kernel<<<l.blocks, l.threads_per_block, l.dynamic_smem_bytes, stream>>>(
        Op::from_double(l.a), Op::from_double(l.b), l.iterations, out, records);
    GP_CUDA_CHECK_LAUNCH();
  });
}

}  // namespace gpuprobe::probes::kernels
