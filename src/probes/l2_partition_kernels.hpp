#pragma once
// Kernel of cache.l2.partition (l2_partition_kernels.cu): on every SM, one thread times
// dependent ld.global.cg loads of each probed line (L2 hits), so that the host sees, per SM
// and per line, whether the line sits in the near or the far L2 partition.
#include <cstdint>

namespace gpuprobe::probes::l2part {

constexpr int kLoadsPerSample = 8;  ///< dependent loads timed together

struct Params {
  const std::uint64_t* const* lines = nullptr;  ///< the probed lines; each holds its own address
  std::uint32_t n_lines = 0;
  std::uint32_t reps = 3;              ///< samples per (SM, line); the minimum is kept
  std::uint32_t max_rows = 0;          ///< rows of `cycles` (>= SMs)
  std::uint32_t* cycles = nullptr;     ///< [row][line]: cycles of kLoadsPerSample loads (min)
  std::uint32_t* row_smid = nullptr;   ///< [row]: the SM that measured the row
  std::uint32_t* claims = nullptr;     ///< [smid < 1024]: zero before the launch
  std::uint32_t* rows_used = nullptr;  ///< zero before the launch
};

/// Writes into every probed line its own address (so that a load of it returns it).
void prepare_lines(const Params& p);
/// Launches `blocks` blocks of 32 threads; the first block to start on each SM measures every
/// line from that SM (one row), the others exit. Synchronizes.
void run(const Params& p, unsigned blocks);

}  // namespace gpuprobe::probes::l2part
