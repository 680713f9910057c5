// Pointer-chase kernels. One template over the load operator: the kernels differ only in the
// PTX cache operator of the dependent load.
#include <stdexcept>
#include <string>

#include "core/cuda_check.hpp"
#include "core/dispatch.hpp"
#include "device/chase_kernels.hpp"
#include "device/ptx.cuh"

namespace gpuprobe::device::kernels {
namespace {

template <LoadOp kOp>
__device__ __forceinline__ std::uint64_t load_next(std::uint64_t address) {
  return ptx::load_u64<kOp>(address);
}

using ptx::global_timer;
using ptx::sm_id;

// The clock must not be read before the last load has returned: a branch on the loaded value
// stalls issue until it arrives (warps issue in order), so the timer read that follows the
// branch sees the completed chain. The value is never zero for a well-formed chain.
__device__ __forceinline__ void wait_for(std::uint64_t value, ChaseOut* out) {
  if (value == 0) {
    out->smid = 0xffffffffu;
    __trap();
  }
}

template <LoadOp kOp>
__global__ void chase_kernel(const std::uint64_t* start, std::uint64_t warmup, std::uint64_t steps,
                             ChaseOut* out) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  std::uint64_t p = reinterpret_cast<std::uint64_t>(start);
  for (std::uint64_t i = 0; i < warmup; ++i) p = load_next<kOp>(p);
  wait_for(p, out);
  const std::uint64_t g0 = global_timer();
  const std::uint64_t t0 = clock64();
  std::uint64_t i = 0;
  for (; i + 8 <= steps; i += 8) {
#pragma unroll
    for (int u = 0; u < 8; ++u) p = load_next<kOp>(p);
  }
  for (; i < steps; ++i) p = load_next<kOp>(p);
  wait_for(p, out);
  const std::uint64_t t1 = clock64();
  const std::uint64_t g1 = global_timer();
  out->end_address = p;
  out->cycles = t1 - t0;
  out->globaltimer_ns = g1 - g0;
  out->smid = sm_id();
}

template <LoadOp kOp>
__global__ void sampled_chase_kernel(const std::uint64_t* start, std::uint64_t warmup,
                                     std::uint64_t steps, std::uint32_t every,
                                     std::uint32_t* samples, ChaseOut* out) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  std::uint64_t p = reinterpret_cast<std::uint64_t>(start);
  for (std::uint64_t i = 0; i < warmup; ++i) p = load_next<kOp>(p);
  wait_for(p, out);
  const std::uint64_t t_begin = clock64();
  std::uint32_t k = 0, taken = 0;  // k: steps since the last sample
  for (std::uint64_t i = 0; i < steps; ++i) {
    const std::uint64_t t0 = clock64();
    p = load_next<kOp>(p);
    wait_for(p, out);
    const std::uint64_t t1 = clock64();
    if (k == 0) __stcg(samples + taken++, static_cast<unsigned>(t1 - t0));
    if (++k == every) k = 0;
  }
  out->end_address = p;
  out->cycles = clock64() - t_begin;
  out->globaltimer_ns = 0;
  out->smid = sm_id();
}

__global__ void build_chain_kernel(std::uint64_t* base, const std::uint32_t* next,
                                   std::uint64_t nodes, std::uint32_t stride_words) {
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       i < nodes; i += threads) {
    base[i * stride_words] =
        reinterpret_cast<std::uint64_t>(base + next[i] * static_cast<std::uint64_t>(stride_words));
  }
}

// Reads every word and writes it back incremented only when it has an impossible value, so the
// pass is a pure read stream that the compiler cannot drop (the branch depends on the data).
__global__ void flush_kernel(std::uint64_t* buffer, std::uint64_t words) {
  const std::uint64_t threads = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       i < words; i += threads) {
    const std::uint64_t v = __ldcg(buffer + i);
    if (v == 0x5a5a5a5a5a5a5a5aull) buffer[i] = v + 1;
  }
}

__global__ void shared_chase_kernel(const std::uint32_t* next, std::uint32_t nodes,
                                    std::uint32_t stride_words, std::uint64_t steps,
                                    ChaseOut* out) {
  extern __shared__ std::uint32_t smem[];
  const std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  for (std::uint32_t i = threadIdx.x; i < nodes; i += blockDim.x)
    smem[i * stride_words] = base + next[i] * stride_words * 4u;
  __syncthreads();
  if (threadIdx.x != 0) return;
  std::uint32_t p = base;
  // One untimed pass is not needed for shared memory (no caches), but a few steps settle the pipe.
  for (int i = 0; i < 32; ++i) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p) : : "memory");
  wait_for(p, out);
  const std::uint64_t t0 = clock64();
  std::uint64_t i = 0;
  for (; i + 8 <= steps; i += 8) {
#pragma unroll
    for (int u = 0; u < 8; ++u) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p) : : "memory");
  }
  for (; i < steps; ++i) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p) : : "memory");
  wait_for(p, out);
  const std::uint64_t t1 = clock64();
  out->end_address = (p - base) / (stride_words * 4u);
  out->cycles = t1 - t0;
  out->globaltimer_ns = 0;
  out->smid = sm_id();
}

__global__ void timer_calibration_kernel(std::uint64_t* out) {
  if (threadIdx.x != 0) return;
  std::uint64_t best64 = ~0ull;
  std::uint64_t best32 = ~0ull;
  for (int i = 0; i < 64; ++i) {
    const std::uint64_t a = clock64();
    const std::uint64_t b = clock64();
    best64 = min(best64, b - a);
    const std::uint32_t c = static_cast<std::uint32_t>(clock());
    const std::uint32_t d = static_cast<std::uint32_t>(clock());
    best32 = min(best32, static_cast<std::uint64_t>(d - c));
  }
  out[0] = best64;
  out[1] = best32;
}

// One thread of one block, at the preferred carve-out: how every chase kernel is launched.
template <typename Kernel, typename... Args>
void launch_one_thread(Kernel kernel, int carveout_percent, cudaStream_t stream, Args... args) {
  GP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                     carveout_percent));
  kernel<<<1, 1, 0, stream>>>(args...);
  GP_CUDA_CHECK_LAUNCH();
}

// Calls f with the load operator as a compile-time constant (std::integral_constant).
template <typename F>
void with_load_op(LoadOp op, const char* what, F&& f) {
  if (!dispatch<LoadOp::kDefault, LoadOp::kCa, LoadOp::kCg, LoadOp::kCv, LoadOp::kNc>(op, f))
    throw std::invalid_argument(std::string(what) + ": unknown load operator");
}

}  // namespace

void launch_sampled_chase(LoadOp op, const std::uint64_t* start, std::uint64_t warmup,
                          std::uint64_t steps, std::uint32_t every, std::uint32_t* samples,
                          int carveout_percent, ChaseOut* out, cudaStream_t stream) {
  if (every == 0) throw std::invalid_argument("sampled chase: every must be > 0");
  with_load_op(op, "sampled chase", [&](auto kop) {
    launch_one_thread(sampled_chase_kernel<decltype(kop)::value>, carveout_percent, stream, start,
                      warmup, steps, every, samples, out);
  });
}

void launch_build_chain(std::uint64_t* base, const std::uint32_t* next, std::uint64_t nodes,
                        std::uint32_t stride_bytes, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(std::min<std::uint64_t>((nodes + 255) / 256, 4096));
  build_chain_kernel<<<blocks, 256, 0, stream>>>(base, next, nodes, stride_bytes / 8);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_flush(std::uint64_t* buffer, std::uint64_t bytes, int sm_count, cudaStream_t stream) {
  flush_kernel<<<sm_count * 4, 512, 0, stream>>>(buffer, bytes / 8);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_chase(LoadOp op, const std::uint64_t* start, std::uint64_t warmup, std::uint64_t steps,
                  int carveout_percent, ChaseOut* out, cudaStream_t stream) {
  with_load_op(op, "chase", [&](auto kop) {
    launch_one_thread(chase_kernel<decltype(kop)::value>, carveout_percent, stream, start, warmup,
                      steps, out);
  });
}

void launch_shared_chase(const std::uint32_t* next, std::uint32_t nodes, std::uint32_t stride_bytes,
                         std::uint64_t steps, ChaseOut* out, cudaStream_t stream) {
  const std::uint32_t bytes = nodes * stride_bytes;
  GP_CUDA_CHECK(cudaFuncSetAttribute(
      shared_chase_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  shared_chase_kernel<<<1, 256, bytes, stream>>>(next, nodes, stride_bytes / 4, steps, out);
  GP_CUDA_CHECK_LAUNCH();
}

cudaFuncAttributes chase_attributes(LoadOp op) {
  cudaFuncAttributes a{};
  switch (op) {
    case LoadOp::kDefault:
      GP_CUDA_CHECK(cudaFuncGetAttributes(&a, chase_kernel<LoadOp::kDefault>));
      break;
    case LoadOp::kCa:
      GP_CUDA_CHECK(cudaFuncGetAttributes(&a, chase_kernel<LoadOp::kCa>));
      break;
    case LoadOp::kCg:
      GP_CUDA_CHECK(cudaFuncGetAttributes(&a, chase_kernel<LoadOp::kCg>));
      break;
    case LoadOp::kCv:
      GP_CUDA_CHECK(cudaFuncGetAttributes(&a, chase_kernel<LoadOp::kCv>));
      break;
    case LoadOp::kNc:
      GP_CUDA_CHECK(cudaFuncGetAttributes(&a, chase_kernel<LoadOp::kNc>));
      break;
  }
  return a;
}

cudaFuncAttributes shared_chase_attributes() {
  cudaFuncAttributes a{};
  GP_CUDA_CHECK(cudaFuncGetAttributes(&a, shared_chase_kernel));
  return a;
}

void launch_timer_calibration(std::uint64_t* out, cudaStream_t stream) {
  timer_calibration_kernel<<<1, 32, 0, stream>>>(out);
  GP_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuprobe::device::kernels
