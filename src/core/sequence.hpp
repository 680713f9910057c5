#pragma once
// The cache-structure primitive: one thread on one chosen SM performs a list of dependent global
// loads at given byte offsets of a probe buffer and times each one. Line size, associativity,
// set indexing, replacement policy, partition replication, far-hit latency and the TLB are all
// inferred from sequences of this kind (src/measure/cache_search.hpp), on the real GPU and on
// the modelled one alike.
//
// Semantics every implementation keeps:
// - Every 8-byte word of a probe buffer holds its own byte offset (written at allocation). The
//   kernel makes load i depend on load i-1 (address = base + offsets[i] + (value_{i-1} -
//   offsets[i-1]), which adds 0 when the data is right), so the loads are serialised and every
//   loaded value is checked: `verified` is true only when every value equals its offset.
// - `place` runs first, on `place_sm`, in the same launch sequence (used to put lines into the
//   L2 partition of another SM); then `sweep` (when not empty); then `sequence` runs on `sm`.
//   All use `op`.
// - `sweep` is a bulk, untimed, unordered pass: many threads of the sequence's SM (`sm` >= 0)
//   load every listed line, `sweep_rounds` times over, every value checked. It is how an
//   eviction test reaches a candidate pool far larger than one dependent sequence could hold
//   (an L2 with tens of thousands of sets and a hashed index: Sequencer::max_sweep_length
//   says how many lines; 0 = the device has no sweep).
// - The L1 is invalidated at every kernel launch on the real GPU, so an experiment that needs
//   lines in the L1 puts its fill accesses at the start of `sequence` (untimed) rather than in a
//   separate call.
// - Only accesses with index >= timed_from are timed; `cycles` has sequence.size() - timed_from
//   entries, each the SM cycles of one load (clock overhead not subtracted; the timer's
//   calibration says how much it is).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/device.hpp"

namespace gpuprobe {

/// Accesses the CUDA sequencer stages in shared memory before its first timed load. A sequence
/// up to this length runs with no other memory traffic; a longer one is refilled between two
/// timed loads through global loads, which on the H200 pass through the L1's storage and
/// disturb it (a single-pool L1 "conflict set" of 343 lines, H200 run of the cache2 helper), so
/// L1 inferences keep their sequences this short. Every launch holds the same shared memory
/// (this many x 12 B), so every launch sees the same carve-out and the same L1.
inline constexpr std::size_t kSequenceStagedAccesses = 4096;

/// A GF(2)-linear set index: bit i of the set is the parity of address & masks[i] (the form of
/// the modelled caches' set_hash_masks and of the masks infer_hash_columns measures).
inline std::uint64_t xor_set_index(std::uint64_t address, const std::vector<std::uint64_t>& masks) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < masks.size(); ++i)
    s |= static_cast<std::uint64_t>(__builtin_parityll(address & masks[i])) << i;
  return s;
}

/// Device memory for access sequences; offsets are bytes from its start (which is aligned to
/// 2 MiB, so in-page address bits equal offset bits).
class ProbeBuffer {
 public:
  virtual ~ProbeBuffer() = default;
  virtual std::uint64_t bytes() const = 0;
};

struct AccessSequence {
  device::LoadOp op = device::LoadOp::kCg;
  std::vector<std::uint64_t> sequence;  ///< byte offsets (multiples of 8), in access order
  std::uint32_t timed_from = 0;         ///< accesses before this index are untimed
  int sm = -1;                          ///< SM that runs `sequence`; -1 = any
  std::vector<std::uint64_t> place;     ///< loads run first on place_sm (empty = none)
  int place_sm = -1;
  bool flush_l2 = false;             ///< evict the whole L2 (and the L1) before `place`/`sequence`
  int carveout_percent = -1;         ///< preferred shared-memory carveout; -1 = driver default
  std::vector<std::uint64_t> sweep;  ///< lines loaded in bulk on `sm` after place (see above)
  int sweep_rounds = 1;              ///< passes over `sweep` (1..16)
};

struct SequenceTiming {
  std::vector<double> cycles;  ///< one per timed access
  int smid = -1;               ///< the SM that ran `sequence`
  bool verified = false;       ///< every loaded value was the expected one
};

/// Implemented by devices that support cache-structure sequences (the CUDA device and the
/// modelled GPU). Obtain it with as_sequencer(device); nullptr means "not supported here" (the
/// experiment is waived with that reason).
class Sequencer {
 public:
  virtual ~Sequencer() = default;
  /// Throws UsageError when `bytes` does not fit in free memory.
  virtual std::unique_ptr<ProbeBuffer> alloc_probe_buffer(std::uint64_t bytes) = 0;
  /// Throws UsageError for an offset outside the buffer, an unaligned offset, timed_from >
  /// sequence.size(), an SM outside 0..sm_count-1, or a sequence longer than
  /// max_sequence_length(); throws VerificationError when a loaded value is wrong.
  virtual SequenceTiming run_sequence(ProbeBuffer& buffer, const AccessSequence& s) = 0;
  /// The most accesses (place + sequence) one call may hold.
  virtual std::size_t max_sequence_length() const = 0;
  /// The most lines one call's `sweep` may hold; 0 = this device runs no sweeps (a sequence
  /// with a non-empty sweep is then a UsageError).
  virtual std::size_t max_sweep_length() const { return 0; }
  /// The aligned block size within which a buffer's virtual address bits are its physical ones
  /// (the device's page); 0 = no translation, every address bit is physical. Flipping an
  /// address bit at or above it moves a line to another page, whose physical frame user code
  /// cannot see: such a flip says whether the page matters, not which physical bits do.
  virtual std::uint64_t physically_contiguous_bytes() const { return 0; }
};

/// The device's sequencer, or nullptr when the device has none.
Sequencer* as_sequencer(device::Device& device);

}  // namespace gpuprobe
