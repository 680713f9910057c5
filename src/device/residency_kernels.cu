// Bulk loads that place a region in the L2 under an eviction priority (or under the access-
// policy window of the stream they run on). Every loaded word is checked against its offset.
// And what discard.global.L2 does to a dirty line: marked stores, the discard, and a census of
// what the range holds afterwards.
#include <cuda_runtime.h>

#include "core/cuda_check.hpp"
#include "core/line_select.hpp"
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
                                  u64 select_seed, u64 select_threshold, unsigned long long* bad) {
  const u64 policy = make_policy<kHint>(fraction);
  unsigned long long wrong = 0;
  const u64 pairs = words / 2;
  for (u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; i < pairs;
       i += static_cast<u64>(gridDim.x) * blockDim.x) {
    const u64 w = first_word + 2 * i;
    // A scattered placement loads only the selected lines (16 words each).
    if (!line_select::selected(w / 16, select_seed, select_threshold)) continue;
    u64 a, b;
    load_pair<kHint>(base + w, policy, a, b);
    wrong += (a != w * 8) + (b != (w + 1) * 8);
  }
  if (wrong) atomicAdd(bad, wrong);
}

/// Every word w of [first_word, first_word + words) gets (w * 8) ^ mark: st.global.v2.u64.
__global__ void store_marks_kernel(u64* base, u64 first_word, u64 words, u64 mark) {
  const u64 pairs = words / 2;
  for (u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; i < pairs;
       i += static_cast<u64>(gridDim.x) * blockDim.x) {
    const u64 w = first_word + 2 * i;
    asm volatile("st.global.v2.u64 [%0], {%1, %2};" ::"l"(base + w), "l"((w * 8) ^ mark),
                 "l"(((w + 1) * 8) ^ mark)
                 : "memory");
  }
}

/// discard.global.L2 of every 128-B line from first_line (a line index into the buffer).
__global__ void discard_lines_kernel(u64* base, u64 first_line, u64 lines) {
  for (u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; i < lines;
       i += static_cast<u64>(gridDim.x) * blockDim.x) {
#if __CUDA_ARCH__ >= 800
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(base + (first_line + i) * 16) : "memory");
#else
    (void)base;
#endif
  }
}

/// counts[0..2] += words holding their own offset, their offset ^ mark, anything else.
__global__ void census_kernel(const u64* base, u64 first_word, u64 words, u64 mark,
                              unsigned long long* counts) {
  unsigned long long own = 0, marked = 0, other = 0;
  const u64 pairs = words / 2;
  for (u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x; i < pairs;
       i += static_cast<u64>(gridDim.x) * blockDim.x) {
    const u64 w = first_word + 2 * i;
    u64 v[2];
    load_pair<EvictionHint::kNone>(base + w, 0, v[0], v[1]);
    for (int k = 0; k < 2; ++k) {
      const u64 expect = (w + k) * 8;
      own += v[k] == expect;
      marked += mark != 0 && v[k] == (expect ^ mark);
      other += v[k] != expect && (mark == 0 || v[k] != (expect ^ mark));
    }
  }
  if (own) atomicAdd(&counts[0], own);
  if (marked) atomicAdd(&counts[1], marked);
  if (other) atomicAdd(&counts[2], other);
}

constexpr unsigned kThreads = 512;
unsigned blocks_for(int sm_count) { return static_cast<unsigned>(sm_count > 0 ? sm_count * 4 : 4); }

}  // namespace

void launch_store_marks(std::uint64_t* buffer_base, std::uint64_t offset, std::uint64_t bytes,
                        std::uint64_t mark, int sm_count, cudaStream_t stream) {
  store_marks_kernel<<<blocks_for(sm_count), kThreads, 0, stream>>>(buffer_base, offset / 8,
                                                                    bytes / 8, mark);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_discard_lines(std::uint64_t* buffer_base, std::uint64_t offset, std::uint64_t bytes,
                          int sm_count, cudaStream_t stream) {
  discard_lines_kernel<<<blocks_for(sm_count), kThreads, 0, stream>>>(buffer_base, offset / 128,
                                                                      bytes / 128);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_census(const std::uint64_t* buffer_base, std::uint64_t offset, std::uint64_t bytes,
                   std::uint64_t mark, int sm_count, unsigned long long* counts,
                   cudaStream_t stream) {
  census_kernel<<<blocks_for(sm_count), kThreads, 0, stream>>>(buffer_base, offset / 8, bytes / 8,
                                                               mark, counts);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_bulk_loads(const std::uint64_t* buffer_base, std::uint64_t offset, std::uint64_t bytes,
                       EvictionHint hint, float fraction, std::uint64_t select_seed,
                       std::uint64_t select_threshold, int sm_count, unsigned long long* bad,
                       cudaStream_t stream) {
  const unsigned blocks = blocks_for(sm_count);
  const u64 first = offset / 8, words = bytes / 8;
  switch (hint) {
    case EvictionHint::kNone:
      bulk_loads_kernel<EvictionHint::kNone><<<blocks, kThreads, 0, stream>>>(
          buffer_base, first, words, fraction, select_seed, select_threshold, bad);
      break;
    case EvictionHint::kEvictFirst:
      bulk_loads_kernel<EvictionHint::kEvictFirst><<<blocks, kThreads, 0, stream>>>(
          buffer_base, first, words, fraction, select_seed, select_threshold, bad);
      break;
    case EvictionHint::kEvictNormal:
      bulk_loads_kernel<EvictionHint::kEvictNormal><<<blocks, kThreads, 0, stream>>>(
          buffer_base, first, words, fraction, select_seed, select_threshold, bad);
      break;
    case EvictionHint::kEvictLast:
      bulk_loads_kernel<EvictionHint::kEvictLast><<<blocks, kThreads, 0, stream>>>(
          buffer_base, first, words, fraction, select_seed, select_threshold, bad);
      break;
    case EvictionHint::kEvictUnchanged:
      bulk_loads_kernel<EvictionHint::kEvictUnchanged><<<blocks, kThreads, 0, stream>>>(
          buffer_base, first, words, fraction, select_seed, select_threshold, bad);
      break;
  }
  GP_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuprobe::device::kernels
