#pragma once
// cache.fetch_granularity's inference: the smallest offset from a just-missed address whose load
// misses too is the size of what the miss fetched.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuprobe::analysis {

/// `latency` holds (offset in bytes, median latency) pairs. Returns the smallest offset whose
/// latency exceeds `factor` x the latency at the smallest offset, provided every larger offset
/// does too (a clean step); nullopt when there is no step, or it is not clean.
std::optional<std::uint32_t> fetch_granularity(
    std::vector<std::pair<std::uint32_t, double>> latency, double factor = 1.5);

/// Line size by node stride: random-order chases over one working set W past a capacity knee,
/// at node strides s1 < s2 < ... (powers of two). At s < line each line holds line / s nodes,
/// visited at random times of the cycle: the later visits of a line reuse it while it is still
/// held, so the latency falls. At s > line only W / s lines are touched: fewer lines, fewer
/// misses (with a hashed set index), the latency falls too. At s = line every line is touched
/// once per cycle: the latency peaks. `cycles[i]` holds replicate medians at `strides[i]`; the
/// line is the stride of the peak, found only inside the range (a peak at an end is not
/// bracketed) and only past a knee (peak >= 1.1 x `hit_cycles`).
struct LineByStride {
  bool found = false;
  std::uint32_t line_bytes = 0;
  std::vector<double> medians;                            ///< per stride
  double separation_z_below = 0, separation_z_above = 0;  ///< the peak against its neighbours
  std::string why;                                        ///< when not found
};
LineByStride line_by_stride(const std::vector<std::uint32_t>& strides,
                            const std::vector<std::vector<double>>& cycles, double hit_cycles);

}  // namespace gpuprobe::analysis
