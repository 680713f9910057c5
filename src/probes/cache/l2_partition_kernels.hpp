#pragma once
// Kernels of cache.l2.partition (l2_partition_kernels.cu). One round, after an L2 flush: the
// reference SM loads every probed line (so each is in the L2 where that SM put it), then the
// measured SM times its first ld.global.cg of each line: a near-partition hit, a far-partition
// hit, or (should the line be gone) DRAM.
#include <cstdint>

namespace gpuprobe::probes::l2part {

struct Params {
  const std::uint64_t* const* lines = nullptr;  ///< the probed lines; each holds its own address
  std::uint32_t n_lines = 0;
  std::uint32_t reference_smid = 0;
  std::uint32_t measured_smid = 0;
  std::uint32_t* cycles = nullptr;  ///< [line]: cycles of the measured SM's first load
  std::uint32_t* claims = nullptr;  ///< [2]: zero before the launch (reference, measured)
  std::uint32_t* ready = nullptr;   ///< zero before the launch; the reference sets it
  std::uint32_t* status = nullptr;  ///< zero before; bit 0: reference ran, bit 1: measured ran,
                                    ///< bit 2: the wait for the reference timed out
  /// [2], zero before the launch: loads that did not return the address the host wrote into
  /// the line, by the reference SM and by the measured SM (its timed and its warming loads).
  std::uint32_t* wrong = nullptr;
};
/// The %smid of every SM that runs a block (out[smid] = 1 for smid < 1024); synchronizes.
void list_sms(std::uint32_t* out, unsigned blocks);
/// One round: `blocks` blocks of 32 threads, all resident; the first block on the reference
/// SM and the first on the measured SM do the work (the same block when the SMs are equal).
/// Synchronizes.
void run_round(const Params& p, unsigned blocks);

}  // namespace gpuprobe::probes::l2part
