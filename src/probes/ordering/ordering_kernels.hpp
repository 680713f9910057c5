#pragma once
// Kernels of the memory-ordering probes (implemented in ordering_kernels.cu): the cost of
// fences, the latency and throughput of scoped atomics, and a message-passing litmus test
// between two SMs. Also the small RAII owner of device memory these probes (and the Hopper
// probes) allocate through.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/cuda_check.hpp"
#include "device/device_buffer.hpp"
#include "measure/block_timing.hpp"

namespace gpuprobe::probes::ordering {

template <class T>
using DeviceBuffer = device::DeviceArray<T>;

/// Timing of one warp or block (bad is not used here: 0).
using TimeRecord = measure::BlockTiming;

// ---- ordering.fence --------------------------------------------------------------------------

/// The fence between the stores: none (the baseline), fence.acq_rel.{cta,gpu,sys} and
/// fence.sc.{cta,gpu,sys}.
enum class FenceKind { kNone, kAcqRelCta, kAcqRelGpu, kAcqRelSys, kScCta, kScGpu, kScSys };
constexpr FenceKind kAllFences[] = {FenceKind::kNone,     FenceKind::kAcqRelCta,
                                    FenceKind::kAcqRelGpu, FenceKind::kAcqRelSys,
                                    FenceKind::kScCta,     FenceKind::kScGpu,
                                    FenceKind::kScSys};
const char* fence_name(FenceKind f);  ///< "none", "acq_rel.cta", ...

/// Unrolled store + fence steps per loop iteration of the fence kernel.
constexpr int kFenceUnroll = 8;

/// One block of `threads` threads (a multiple of 32) on one SM. Every thread runs
/// `iterations` x kFenceUnroll steps of: x = x * 3 + 1 (a dependent value), st.global (its own
/// word) of x, fence. Lane 0 of each warp writes records[warp] around the loop; every thread
/// writes its final x to out[thread] (checked on the host).
void launch_fence(FenceKind f, int threads, std::uint32_t iterations, std::uint32_t* scratch,
                  std::uint32_t* out, TimeRecord* records);
/// The value every thread's x ends at after `steps` steps from its start (thread index).
std::uint32_t fence_expected(std::uint32_t thread, std::uint64_t steps);

// ---- ordering.atomic -------------------------------------------------------------------------

enum class AtomicScope { kBlock, kDevice, kSystem };
enum class AtomicOrder { kRelaxed, kAcqRel, kSeqCst };
constexpr AtomicScope kAllScopes[] = {AtomicScope::kBlock, AtomicScope::kDevice, AtomicScope::kSystem};
constexpr AtomicOrder kAllOrders[] = {AtomicOrder::kRelaxed, AtomicOrder::kAcqRel, AtomicOrder::kSeqCst};
const char* scope_name(AtomicScope s);  ///< "block", "device", "system"
const char* order_name(AtomicOrder o);  ///< "relaxed", "acq_rel", "seq_cst"

/// Latency: one thread, `steps` dependent fetch_add(1)s: each returned value selects the next
/// counter (counters[old & mask], mask = 0 at run time, so every step hits counters[0]).
/// records[0] gets the timing; *sum_out the sum of the returned values.
void launch_atomic_latency(AtomicScope s, AtomicOrder o, std::uint32_t steps, std::uint32_t mask,
                           std::uint32_t* counters, unsigned long long* sum_out, TimeRecord* records);

/// Throughput modes: every thread its own counter; all threads of a block on the block's
/// counter; all threads of the grid on one counter.
enum class AtomicMode { kIndependent, kContendedBlock, kContendedGrid };
const char* mode_name(AtomicMode m);  ///< "independent", "contended_block", "contended_grid"

/// `blocks` x `threads` threads, each `steps` fetch_add(1)s on its mode's counter (results
/// summed into sums[global thread] so that the hardware cannot turn them into reductions).
/// records[block] gets each block's timing (thread 0, around a block barrier).
void launch_atomic_throughput(AtomicScope s, AtomicOrder o, AtomicMode m, int blocks, int threads,
                              std::uint32_t steps, std::uint32_t* counters,
                              unsigned long long* sums, TimeRecord* records);

// ---- ordering.litmus -------------------------------------------------------------------------

enum class LitmusVariant { kReleaseAcquire, kFence, kRelaxed, kVolatile, kWeak };
constexpr LitmusVariant kAllLitmus[] = {LitmusVariant::kReleaseAcquire, LitmusVariant::kFence,
                                        LitmusVariant::kRelaxed, LitmusVariant::kVolatile,
                                        LitmusVariant::kWeak};
const char* litmus_name(LitmusVariant v);
/// Whether the memory model guarantees that the consumer never reads stale data.
bool litmus_is_synchronizing(LitmusVariant v);

/// Word offsets (4-byte words) of the litmus locations: 256 B apart (different lines).
constexpr std::uint32_t kLitmusData = 0, kLitmusFlag = 64, kLitmusAck = 128, kLitmusAbort = 192;
constexpr std::uint32_t kLitmusWords = 256;

struct LitmusResult {
  std::uint32_t stale;       ///< consumer reads of data != the value the flag announced
  std::uint32_t completed;   ///< iterations the consumer completed
  std::uint32_t timed_out;   ///< 1 when a bounded spin gave up (the run is then aborted)
  std::uint32_t smid[2];     ///< producer's and consumer's SM
  std::uint32_t first_stale_iteration;  ///< 0 = none
  std::uint32_t first_stale_value;
  std::uint32_t pad;
  std::uint64_t g0, g1;      ///< consumer's %globaltimer around the iterations
};

/// Two blocks of one thread each (each with `dynamic_smem` bytes of shared memory, so that they
/// cannot share an SM). Block 0 (producer), for k = 1..iterations: waits for ack == k - 1
/// (acquire), writes data = k, then flag = k (as the variant says). Block 1 (consumer): spins
/// until flag == k, reads data (stale when != k), writes ack = k (release). Every spin gives up
/// after `timeout_ns` of %globaltimer, sets abort and timed_out.
void launch_litmus(LitmusVariant v, std::uint32_t iterations, std::uint64_t timeout_ns,
                   std::uint32_t dynamic_smem, std::uint32_t* words, LitmusResult* result);
/// Sets the litmus kernels' dynamic shared limit; returns the largest allowed.
std::uint32_t litmus_prepare(int ordinal);

}  // namespace gpuprobe::probes::ordering
