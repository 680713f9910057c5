#pragma once
// Special registers read by every probe's kernels: one definition each.
#include <cstdint>

namespace gpuprobe::device::ptx {

/// %globaltimer: nanoseconds (its update period is measured by timer.overhead).
__device__ __forceinline__ std::uint64_t global_timer() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// %clock64: SM cycles.
__device__ __forceinline__ std::uint64_t clock_64() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t));
  return t;
}

/// %clock: the low 32 bits of the SM cycle counter.
__device__ __forceinline__ std::uint32_t clock_32() {
  std::uint32_t t;
  asm volatile("mov.u32 %0, %%clock;" : "=r"(t));
  return t;
}

/// %smid: the SM this thread runs on.
__device__ __forceinline__ std::uint32_t sm_id() {
  std::uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

}  // namespace gpuprobe::device::ptx
