#pragma once
// Kernels of timer.overhead (timer_kernels.cu) and their host launchers.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "device/device_buffer.hpp"

namespace gpuprobe::probes::kernels {

using device::DeviceArray;

constexpr int kTimerPairs = 64;
constexpr int kTimerGaps = 32;
constexpr int kTimerMaxChanges = 256;
constexpr int kTimerStreamReads = 32;

/// What the timer probe kernel (one thread) writes.
struct TimerProbeOut {
  std::uint32_t clock64_pair[kTimerPairs];          ///< clock64 read twice back to back
  std::uint32_t clock32_pair[kTimerPairs];          ///< %clock read twice back to back
  std::uint32_t clock64_gap[kTimerGaps];            ///< clock64 around i dependent adds (i = index)
  std::uint32_t clock32_gap[kTimerGaps];            ///< %clock around the same
  std::uint32_t clock64_stream[kTimerStreamReads];  ///< 32 consecutive clock64 reads - the first
  std::uint32_t clock32_stream[kTimerStreamReads];  ///< the same for %clock
  std::uint32_t globaltimer_read[kTimerPairs];      ///< clock64 around one %globaltimer read, used
  std::uint32_t globaltimer_pair[kTimerPairs];      ///< %globaltimer read twice back to back (ns)
  std::uint32_t changes;                            ///< %globaltimer changes seen in the spin
  std::uint32_t spin_reads;                         ///< %globaltimer reads in the spin
  std::uint32_t change_ns[kTimerMaxChanges];        ///< size of each change (ns)
  std::uint32_t change_cycles[kTimerMaxChanges];    ///< clock64 cycles since the previous change
};

void launch_timer_probe(TimerProbeOut* out, std::uint32_t max_spin_reads, cudaStream_t stream);
/// One thread spins on %globaltimer for `ns` and writes how long it spun to *held_ns: it holds
/// the stream busy while the host enqueues what comes after it.
void launch_hold(std::uint64_t ns, std::uint64_t* held_ns, cudaStream_t stream);
/// An empty kernel <<<1, 1>>>, for the CUDA-event measurements.
void launch_empty(cudaStream_t stream);

}  // namespace gpuprobe::probes::kernels
