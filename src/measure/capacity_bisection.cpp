#include "measure/capacity_bisection.hpp"

#include <algorithm>
#include <cmath>

namespace gpuprobe::measure {

// Hit and miss levels closer than this cannot be told apart by a midpoint.
constexpr double kMinLevelRatio = 1.10;

CapacitySearch search_capacity(const std::function<double(std::uint64_t)>& measure,
                               std::uint64_t lo, std::uint64_t hi, int steps,
                               std::uint64_t granule) {
  CapacitySearch s;
  auto probe = [&](std::uint64_t bytes) {
    const double c = measure(bytes);
    s.probes.push_back({bytes, c, false});
    return c;
  };
  s.hit_cycles = probe(lo);
  s.miss_cycles = probe(hi);
  s.valid = s.miss_cycles >= kMinLevelRatio * s.hit_cycles;
  s.threshold = 0.5 * (s.hit_cycles + s.miss_cycles);
  s.probes[0].hit = true;
  s.lo = lo;
  s.hi = hi;
  if (!s.valid) return s;
  for (int i = 0; i < steps; ++i) {
    const double mid_f = std::sqrt(static_cast<double>(s.lo) * static_cast<double>(s.hi));
    std::uint64_t mid = static_cast<std::uint64_t>(mid_f) / granule * granule;
    if (mid <= s.lo || mid >= s.hi) break;
    const double c = probe(mid);
    const bool hit = c < s.threshold;
    s.probes.back().hit = hit;
    (hit ? s.lo : s.hi) = mid;
  }
  return s;
}

}  // namespace gpuprobe::measure
