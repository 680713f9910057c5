#pragma once
// Special registers and the dependent 64-bit load read by the probes' kernels: one definition each.
#include <cstdint>

#include "device/device.hpp"

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

/// A 64-bit global load with cache operator kOp (volatile, a memory clobber): the dependent
/// load of the pointer chases and of the cache-structure probes.
template <LoadOp kOp>
__device__ __forceinline__ std::uint64_t load_u64(std::uint64_t address) {
  std::uint64_t value;
  if constexpr (kOp == LoadOp::kCa) {
    asm volatile("ld.global.ca.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  } else if constexpr (kOp == LoadOp::kCg) {
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  } else if constexpr (kOp == LoadOp::kCv) {
    asm volatile("ld.global.cv.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  } else if constexpr (kOp == LoadOp::kNc) {
    asm volatile("ld.global.nc.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  } else {
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
  }
  return value;
}

/// %smid: the SM this thread runs on.
__device__ __forceinline__ std::uint32_t sm_id() {
  std::uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

}  // namespace gpuprobe::device::ptx
