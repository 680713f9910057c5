#pragma once
// The capacity bisection that cache.cold_capacity and cache.l2.far_hit drive: the largest
// working set whose second pass, right after a first pass from a flushed cache, still hits,
// found by bisection in log space between a set that surely hits and one that surely misses.
// It calls back into the measurement, so it lives with the measuring, not in analysis/.
#include <cstdint>
#include <functional>
#include <vector>

namespace gpuprobe::measure {

struct CapacityProbe {
  std::uint64_t bytes = 0;
  double cycles = 0;  ///< second-pass cycles per load
  bool hit = false;
};

struct CapacitySearch {
  bool valid = false;  ///< hit and miss levels differ by at least 10 %
  double hit_cycles = 0, miss_cycles = 0, threshold = 0;
  std::uint64_t lo = 0, hi = 0;       ///< final bracket: lo hits, hi misses
  std::vector<CapacityProbe> probes;  ///< in the order measured
  double capacity() const { return 0.5 * (static_cast<double>(lo) + static_cast<double>(hi)); }
};

/// `measure(bytes)` returns the second-pass cycles per load of a working set of `bytes`
/// (rounded by the caller to whole lines). Bisects `steps` times between lo and hi, with sizes
/// rounded to multiples of `granule`.
CapacitySearch search_capacity(const std::function<double(std::uint64_t)>& measure,
                               std::uint64_t lo, std::uint64_t hi, int steps,
                               std::uint64_t granule);

}  // namespace gpuprobe::measure
