#pragma once
// Kernels shared by the link probes (host <-> GPU and GPU <-> GPU): a streaming copy by SMs
// through any pointer the device can dereference (its own memory, mapped pinned host memory, a
// peer's memory), a device-side pattern fill and check, and a single-thread dependent chase
// through remote memory. Implemented in link_kernels.cu.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define GP_LINK_HD __host__ __device__
#else
#define GP_LINK_HD
#endif

namespace gpuprobe::probes::link {

/// The word at index i of a pattern with `salt`: a 32-bit mix of (i, salt) with the top bit
/// clear, so it never equals a poisoned word (every byte 0xff).
GP_LINK_HD inline std::uint32_t pattern_word(std::uint64_t i, std::uint32_t salt) {
  std::uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ (static_cast<std::uint64_t>(salt) << 17);
  x ^= x >> 31;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 29;
  return static_cast<std::uint32_t>(x) & 0x7fffffffu;
}

/// How an SM copy is launched: `blocks` x `threads`, each thread moving `unroll` 16-byte words
/// per step (all loads of a step are issued before its stores).
struct CopyLaunch {
  int blocks = 0;
  int threads = 0;
  int unroll = 4;  ///< 1, 2, 4 or 8
};

/// dst[i] = src[i] for `bytes` bytes (a multiple of 16; both 16-byte aligned), by SMs.
void launch_sm_copy(const void* src, void* dst, std::size_t bytes, const CopyLaunch& l,
                    cudaStream_t stream);
/// Writes pattern_word(i, salt) into the `words` 32-bit words at p (any device-visible pointer).
void launch_fill(std::uint32_t* p, std::size_t words, std::uint32_t salt, cudaStream_t stream);
/// Adds to *bad the number of words at p that differ from pattern_word(i, salt).
void launch_check(const std::uint32_t* p, std::size_t words, std::uint32_t salt,
                  unsigned long long* bad, cudaStream_t stream);

/// What the chase kernel writes: the node it ended on and its clocks over the timed steps.
struct ChaseOut {
  std::uint64_t final_node = 0;  ///< the address the last load returned
  std::uint64_t cycles = 0;      ///< clock64 of the SM over the timed steps
  std::uint64_t ns = 0;          ///< %globaltimer over the timed steps
};

/// One thread follows `steps` dependent 8-byte loads (ld.global.cv: a stale copy in any cache
/// is refetched, so every load crosses the link) from `start`: each node holds the address of
/// the next. `warmup` untimed steps come first.
void launch_remote_chase(const std::uint64_t* start, std::uint32_t warmup, std::uint32_t steps,
                         ChaseOut* out, cudaStream_t stream);

}  // namespace gpuprobe::probes::link
