// Kernels of timer.overhead: one thread reads %clock, clock64 and %globaltimer in every pattern
// the experiment times, and an empty kernel for the CUDA-event measurements.
#include "core/cuda_check.hpp"
#include "device/ptx.cuh"
#include "probes/timer/timer_kernels.hpp"

namespace gpuprobe::probes::kernels {
namespace {

using device::ptx::clock_32;
using device::ptx::clock_64;
using device::ptx::global_timer;

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

__global__ void hold_kernel(std::uint64_t ns, std::uint64_t* held_ns) {
  const std::uint64_t t0 = global_timer();
  std::uint64_t t = t0;
  while (t - t0 < ns) t = global_timer();
  *held_ns = t - t0;
}

}  // namespace

void launch_timer_probe(TimerProbeOut* out, std::uint32_t max_spin_reads, cudaStream_t stream) {
  timer_probe_kernel<<<1, 32, 0, stream>>>(out, max_spin_reads);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_hold(std::uint64_t ns, std::uint64_t* held_ns, cudaStream_t stream) {
  hold_kernel<<<1, 1, 0, stream>>>(ns, held_ns);
  GP_CUDA_CHECK_LAUNCH();
}

void launch_empty(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
  GP_CUDA_CHECK_LAUNCH();
}

}  // namespace gpuprobe::probes::kernels
