#pragma once
// Host-callable launchers of the cache-structure sequence kernels (sequence_kernels.cu), used by
// the CUDA device's Sequencer (device/sequence.hpp).
#include <cuda_runtime.h>

#include <cstdint>

#include "device/device.hpp"
#include "device/sequence.hpp"

namespace gpuprobe::device::kernels {

/// Accesses staged in shared memory at a time (offsets 8 B + cycles 4 B each), the same dynamic
/// shared allocation at every launch (device/sequence.hpp says why).
inline constexpr std::uint32_t kSequenceChunk = static_cast<std::uint32_t>(kSequenceStagedAccesses);
inline constexpr std::uint32_t kSequenceSharedBytes = kSequenceChunk * 12;
/// The most accesses (place + sequence) of one launch; offsets and cycles live in global memory.
inline constexpr std::uint32_t kSequenceMaxAccesses = 1u << 17;

/// Bits of SequenceStatus::flags.
enum SequenceFlag : std::uint32_t {
  kSeqPlaced = 1u,     ///< the placing block ran every place load
  kSeqRan = 2u,        ///< the sequence block ran every access
  kSeqTimedOut = 4u,   ///< the sequence block waited too long for the placing block
  kSeqMismatch = 8u,   ///< a loaded value differed from its offset
  kSeqNoPlacer = 16u,  ///< (host) no block reached the placing SM
};

/// Zero before a launch; written by the kernel.
struct SequenceStatus {
  std::uint32_t claims[2];   ///< [0] placing block claimed, [1] sequence block claimed
  std::uint32_t ready;       ///< the placing block finished
  std::uint32_t flags;       ///< SequenceFlag bits
  std::uint32_t smid;        ///< SM of the sequence block
  std::uint32_t place_smid;  ///< SM of the placing block
  std::uint32_t first_bad;   ///< index (place then sequence) of the first wrong value + 1
  std::uint32_t pad;
};

struct SequenceParams {
  std::uint64_t base = 0;                  ///< probe buffer start (2 MiB aligned)
  const std::uint64_t* offsets = nullptr;  ///< n_place place offsets, then n_seq offsets
  std::uint32_t n_place = 0;
  std::uint32_t n_seq = 0;
  std::int32_t place_sm = -1;       ///< -1: the sequence block places too
  std::int32_t sm = -1;             ///< -1: the first block to start
  std::uint32_t* cycles = nullptr;  ///< [n_seq]: cycles of each access
  SequenceStatus* status = nullptr;
  std::uint64_t timeout_cycles = 0;
};

/// Lines one sweep launch may hold, and the sweep's work unit (one block's loads per claim).
inline constexpr std::uint32_t kSweepMaxLines = 1u << 22;
inline constexpr std::uint32_t kSweepThreads = 256;
inline constexpr std::uint32_t kSweepChunk = 4 * kSweepThreads;

/// Zero before a launch; written by the sweep kernel.
struct SweepStatus {
  std::uint32_t next;        ///< work counter: the next (round-major) index to claim
  std::uint32_t blocks;      ///< blocks that ran on the chosen SM
  std::uint32_t done;        ///< loads performed
  std::uint32_t bad;         ///< loads whose value differed from its offset
  std::uint32_t pad[4];
};

struct SweepParams {
  std::uint64_t base = 0;                  ///< probe buffer start
  const std::uint64_t* offsets = nullptr;  ///< n line offsets
  std::uint32_t n = 0;
  std::uint32_t rounds = 1;
  std::int32_t sm = 0;  ///< only blocks on this SM load; the others leave at once
  SweepStatus* status = nullptr;
};

/// Fills `bytes` of `base` so that every 8-byte word holds its own byte offset.
void launch_fill_offsets(std::uint64_t* base, std::uint64_t bytes, cudaStream_t stream);
/// Counts the words of `base` that do not hold their own offset into *bad (zeroed before).
void launch_check_offsets(const std::uint64_t* base, std::uint64_t bytes, unsigned long long* bad,
                          cudaStream_t stream);
/// One sequence launch: `blocks` blocks of 32 threads; the first block on p.place_sm places,
/// the first block on p.sm runs the sequence (the same block when the SMs are equal or
/// place_sm is -1). Throws std::invalid_argument for an unknown operator.
void launch_sequence(LoadOp op, const SequenceParams& p, unsigned blocks, int carveout_percent,
                     cudaStream_t stream);

/// One sweep launch: `blocks` blocks of kSweepThreads threads; the blocks that start on p.sm
/// claim chunks of the round-major index space until it is used up, loading every line with
/// `op` and counting wrong values. Throws std::invalid_argument for an unknown operator.
void launch_sweep(LoadOp op, const SweepParams& p, unsigned blocks, cudaStream_t stream);

}  // namespace gpuprobe::device::kernels
