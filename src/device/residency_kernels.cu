// Bulk loads that place a region in the L2 under an eviction priority (or under the access-
// policy window of the stream they run on). Every loaded word is checked against its offset.
#include <cuda_runtime.h>

#include "core/cuda_check.hpp"
#include "device/residency_kernels.hpp"

namespace gpuprobe::device::kernels {
namespace {

using u64 = std::uint64_t;

/// The cache policy of one eviction hint (sm_80 and later; 0 elsewhere, never used there).
template <EvictionHint kHint>
__device__ __forceinline__ u64 make_policy(float fraction) {
  u64 policy = 0;
#if __CUDA_ARCH__ >= 800
  if constexpr (kHint == EvictionHint::kEvictFirst)
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, %1;"
                 : "=l"(policy)
                 : "f"(fraction));
  else if constexpr (kHint == EvictionHint::kEvictNormal)
    asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, %1;"
                 : "=l"(policy)
                 : "f"(fraction));
  else if constexpr (kHint == EvictionHint::kEvictLast)
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, %1;"
                 : "=l"(policy)
                 : "f"(fraction));
  else if constexpr (kHint == EvictionHint::kEvictUnchanged)
    asm volatile("createpolicy.fractional.L2::evict_unchanged.b64 %0, %1;"
                 : "=l"(policy)
                 : "f"(fraction));
#endif
  return policy;
}

template <EvictionHint kHint>
__device__ __forceinline__ void load_pair(const u64* p, u64 policy, u64& a, u64& b) {
#if __CUDA_ARCH__ >= 800
  if constexpr (kHint != EvictionHint::kNone) {
    asm volatile("ld.global.cg.L2::cache_hint.v2.u64 {%0, %1}, [%2], %3;"
                 : "=l"(a), "=l"(b)
                 : "l"(p), "l"(policy)
                 : "memory");
    return;
  }
#endif
  (void)policy;
  asm volatile("ld.global.cg.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}

template <EvictionHint kHint>
__global__ void bulk_loads_kernel(const u64* base, u64 first_word, u64 words, float fraction,
                                  unsigned long long* bad) {
  const u64 policy = make_policy<kHint>(fraction);
  unsigned long long wrong = 0;
  const u64 pairs = words / 2;
  for (u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; i < pairs;
       i += static_cast<u64>(gridDim.x) * blockDim.x) {
    const u64 w = first_word + 2 * i;
    u64 a, b;
    load_pair<kHint>(base + w, policy, a, b);
    wrong += (a != w * 8) + (b != (w + 1) * 8);
  }
  if (wrong) atomicAdd(bad, wrong);
}

}  // namespace

void launch_bulk_loads(const std::uint64_t* buffer_base, std::uint64_t offset, std::uint64_t bytes,
                       EvictionHint hint, float fraction, int sm_count, unsigned long long* bad,
                       cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>(sm_count > 0 ? sm_count * 4 : 4);
  constexpr unsigned kThreads = 512;
  const u64 first = offset / 8, words = bytes / 8;
  switch (hint) {
    case EvictionHint::kNone:
      bulk_loads_kernel<EvictionHint::kNone>
          <<<blocks, kThreads, 0, stream>>>(buffer_base, first, words, fraction, bad);
      break;
    case EvictionHint::kEvictFirst:
      bulk_loads_kernel<EvictionHint::kEvictFirst>
          <<<blocks, kThreads, 0, stream>>>(buffer_base, first, words, fraction, bad);
      break;
    case EvictionHint::kEvictNormal:
      bulk_loads_kernel<EvictionHint::kEvictNormal>
          <<<blocks, kThreads, 0, stream>>>(buffer_base, first, words, fraction, bad);
      break;
    case EvictionHint::kEvictLast:
      bulk_loads_kernel<EvictionHint::kEvictLast>
          <<<blocks, kThreads, 0, stream>>>(buffer_base, first, words, fraction, bad);
      break;
    case EvictionHint::kEvictUnchanged:
      bulk_loads_kernel<EvictionHint::kEvictUnchanged>
          <<<blocks, kThreads, 0, stream>>>(buffer_base, first, words, fraction, bad);
      break;
  }
  GP_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuprobe::device::kernels
