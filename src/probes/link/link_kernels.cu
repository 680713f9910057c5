#include "core/cuda_check.hpp"
#include "probes/link/link_kernels.hpp"

namespace gpuprobe::probes::link {
namespace {

template <int kUnroll>
__global__ void __launch_bounds__(1024)
    sm_copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Loads of a step first, then its stores: kUnroll requests per thread in flight on the link.
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) v[k] = src[i + k * stride];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) dst[i + k * stride] = v[k];
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

__global__ void fill_kernel(std::uint32_t* p, std::size_t words, std::uint32_t salt) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += stride)
    p[i] = pattern_word(i, salt);
}

__global__ void check_kernel(const std::uint32_t* p, std::size_t words, std::uint32_t salt,
                             unsigned long long* bad) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += stride)
    mine += p[i] != pattern_word(i, salt);
  if (mine) atomicAdd(bad, mine);
}

__device__ __forceinline__ std::uint64_t load_cv(std::uint64_t address) {
  std::uint64_t v;
  asm volatile("ld.global.cv.u64 %0, [%1];" : "=l"(v) : "l"(address) : "memory");
  return v;
}

__device__ __forceinline__ std::uint64_t global_timer() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void remote_chase_kernel(const std::uint64_t* start, std::uint32_t warmup,
                                    std::uint32_t steps, ChaseOut* out) {
  std::uint64_t p = reinterpret_cast<std::uint64_t>(start);
  for (std::uint32_t s = 0; s < warmup; ++s) p = load_cv(p);
  const std::uint64_t g0 = global_timer();
  const std::uint64_t c0 = clock64();
  for (std::uint32_t s = 0; s < steps; ++s) p = load_cv(p);
  const std::uint64_t c1 = clock64();
  const std::uint64_t g1 = global_timer();
  out->final_node = p;
  out->cycles = c1 - c0;
  out->ns = g1 - g0;
}

int grid_for(std::size_t items, int threads) {
  const std::size_t blocks = (items + threads - 1) / threads;
  return static_cast<int>(blocks < 4096 ? (blocks ? blocks : 1) : 4096);
}

}  // namespace

void launch_sm_copy(const void* src, void* dst, std::size_t bytes, const CopyLaunch& l,
                    cudaStream_t stream) {
  const auto* s = static_cast<const uint4*>(src);
  auto* d = static_cast<uint4*>(dst);
  const std::size_t n = bytes / sizeof(uint4);
  switch (l.unroll) {
    case 1:
      sm_copy_kernel<1><<<l.blocks, l.threads, 0, stream>>>(s, d, n);
      break;
    case 2:
      sm_copy_kernel<2><<<l.blocks, l.threads, 0, stream>>>(s, d, n);
      break;
    case 4:
      sm_copy_kernel<4><<<l.blocks, l.threads, 0, stream>>>(s, d, n);
      break;
    default:
      sm_copy_kernel<8><<<l.blocks, l.threads, 0, stream>>>(s, d, n);
      break;
  }
  GP_CUDA_CHECK_LAUNCH();
}

void launch_fill(std::uint32_t* p, std::size_t words, std::uint32_t salt, cudaStream_t stream) {
  fill_kernel<<<grid_for(words, 256), 256, 0, stream>>>(p, words, salt);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_check(const std::uint32_t* p, std::size_t words, std::uint32_t salt,
                  unsigned long long* bad, cudaStream_t stream) {
  check_kernel<<<grid_for(words, 256), 256, 0, stream>>>(p, words, salt, bad);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_remote_chase(const std::uint64_t* start, std::uint32_t warmup, std::uint32_t steps,
                         ChaseOut* out, cudaStream_t stream) {
  remote_chase_kernel<<<1, 1, 0, stream>>>(start, warmup, steps, out);
  GP_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuprobe::probes::link
