#pragma once
// bandwidth.sweep (read bandwidth against working set, L1 and L2 regimes, plateaus found by the
// latency sweep's change-point analysis) and bandwidth.hierarchy (register file, shared memory,
// L1, L2 and DRAM bandwidth beside each level's latency). The helpers below are pure host code,
// exposed for the unit tests.
#include <cstdint>
#include <string>
#include <vector>

#include "core/experiment.hpp"
#include "probes/bandwidth/bandwidth_sweep_kernels.hpp"
#include "probes/bandwidth/rig_samples.hpp"

namespace gpuprobe::probes {

/// Adds bandwidth.sweep and bandwidth.hierarchy.
void register_bandwidth_sweep_experiments(Registry& registry);

namespace bwsweep {

/// Rates of one launch from its block records.
struct LaunchRates {
  double bytes_per_clk_per_sm = 0;      ///< median over SMs of (SM's bytes / SM's cycles)
  double bytes_per_clk_per_sm_min = 0;  ///< the slowest SM
  double gb_s = 0;       ///< all bytes / (last block end - first block start), %globaltimer
  double clock_mhz = 0;  ///< median over SMs of SM cycles / SM nanoseconds
  double span_ns = 0;    ///< last block end - first block start (%globaltimer)
  int sms = 0;           ///< SMs that ran at least one block
  int max_blocks_on_an_sm = 0;
};

/// Groups blocks by SM (record.smid): an SM's bytes are the sum of its blocks' bytes
/// (bytes_per_block[i] for record i), its cycles and nanoseconds the span from its first
/// block's start to its last block's end (%clock64 is per SM, so spans are only taken within
/// one SM). Throws std::invalid_argument on sizes that differ or on an empty span.
LaunchRates rates_of(const std::vector<bws::BlockRecord>& records,
                     const std::vector<double>& bytes_per_block);

/// Bytes a block of the L1 slices kernel reads in its timed passes: slice_bytes / slots per
/// pass (the SM's slice is shared out among its blocks).
double slices_block_bytes(std::uint64_t slice_bytes, std::uint32_t slots,
                          std::uint32_t timed_passes);
/// Bytes the whole grid of the shared-region kernel reads in its timed passes.
double shared_grid_bytes(std::uint64_t region_bytes, std::uint32_t timed_passes);

/// Register-file convention: one FFMA lane-operation reads three 4-byte source registers.
constexpr double kRegisterBytesReadPerFfma = 12.0;
/// And writes one.
constexpr double kRegisterBytesWrittenPerFfma = 4.0;

/// Wrapping 32-bit sum (sum) or XOR (xor_of) of the words value_bits(i, seed) for i in
/// [first, first + count) (the data bw::launch_fill writes with index_mul 1, index_add 0), with
/// per-chunk folds cached so that large ranges are cheap after the first call.
class WordSums {
 public:
  WordSums(std::uint64_t words, std::uint32_t seed);
  std::uint32_t sum(std::uint64_t first, std::uint64_t count) const;
  std::uint32_t xor_of(std::uint64_t first, std::uint64_t count) const;
  static constexpr std::uint64_t kChunkWords = 4096;

 private:
  std::uint32_t fold(std::uint64_t first, std::uint64_t count, bool xor_fold) const;
  std::uint32_t direct(std::uint64_t first, std::uint64_t count, bool xor_fold) const;
  std::uint64_t words_;
  std::uint32_t seed_;
  std::vector<std::uint32_t> chunk_, chunk_xor_;
};

/// What a block reports after reading the same words `passes` times, given the fold of one
/// pass: the wrapping sum passes x one_pass, or for an XOR fold one_pass (odd passes). An even
/// number of XOR passes would cancel to 0 whatever was read, so it throws std::invalid_argument.
std::uint32_t repeat_fold(bool xor_fold, std::uint32_t one_pass, std::uint32_t passes);

/// The host's fold of 16-B vectors read as bws::FoldAcc<F> does on the device (the unit tests
/// check it against the word fold): the wrapping sum of every word, or their XOR for kXor3.
std::uint32_t fold_words(bws::Fold f, const std::vector<std::uint32_t>& words);

/// The L1 working set per SM of bandwidth.hierarchy and where it came from.
struct L1WorkingSet {
  std::uint64_t bytes = 0;
  std::string source;
};
/// Without a measured L1: half the device's unified L1 / shared-memory size per SM (the L1 is
/// at most that), aligned down to 4 KiB; where only the largest shared-memory carveout is known
/// (a CUDA GPU), whole steps of the L1 variants within 3/4 of it, else half of it; 16 KiB (the
/// L1 regime's smallest point) when the device reports neither.
L1WorkingSet l1_fallback(const device::DeviceInfo& d);
/// Bytes one SM reads per unrolled step of the L1 variants (unroll x threads x blocks x 16 B;
/// the least common multiple over bws::kL1Variants: 128 KiB).
std::uint64_t l1_variant_step_bytes();
/// With a measured L1 capacity (finding l1.capacity, confidence >= 0.5): the largest multiple of
/// l1_variant_step_bytes() within 3/4 of it, so that every variant's unrolled loop runs whole
/// steps and the point stays inside the L1; when no step fits,
/// half the capacity aligned down to 4 KiB. Otherwise l1_fallback(d).
L1WorkingSet l1_working_set(const device::DeviceInfo& d, const FindingBoard& prior);

/// Index of the verified variant (row["verified"] == true) with the largest
/// row["measurement"]["median"], or -1 when no row is verified. Rows that failed verification
/// never count, whatever number they carry.
int best_variant(const std::vector<bandwidth_rig::RigPoint>& rows);

}  // namespace bwsweep
}  // namespace gpuprobe::probes
