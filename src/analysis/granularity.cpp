#include "analysis/granularity.hpp"

#include <algorithm>

#include "core/confidence.hpp"
#include "core/stats.hpp"

namespace gpuprobe::analysis {

std::optional<std::uint32_t> fetch_granularity(
    std::vector<std::pair<std::uint32_t, double>> latency, double factor) {
  if (latency.size() < 2) return std::nullopt;
  std::sort(latency.begin(), latency.end());
  const double base = latency.front().second;
  if (!(base > 0)) return std::nullopt;
  std::optional<std::uint32_t> step;
  for (const auto& [offset, lat] : latency) {
    const bool slow = lat > factor * base;
    if (slow && !step) step = offset;
    if (!slow && step) return std::nullopt;  // fast again after the step: not a clean step
  }
  return step;
}

}  // namespace gpuprobe::analysis

namespace gpuprobe::analysis {

LineByStride line_by_stride(const std::vector<std::uint32_t>& strides,
                            const std::vector<std::vector<double>>& cycles, double hit_cycles) {
  LineByStride r;
  if (strides.size() < 3 || cycles.size() != strides.size()) {
    r.why = "fewer than three strides measured";
    return r;
  }
  for (const auto& c : cycles) {
    if (c.empty()) {
      r.why = "a stride without measurements";
      return r;
    }
    r.medians.push_back(stats::median(c));
  }
  const auto peak = static_cast<std::size_t>(std::max_element(r.medians.begin(), r.medians.end()) -
                                             r.medians.begin());
  if (!(hit_cycles > 0) || r.medians[peak] < 1.1 * hit_cycles) {
    r.why =
        "the working set is not past a capacity knee (every stride within 10 % of the hit "
        "latency)";
    return r;
  }
  if (peak == 0 || peak + 1 == strides.size()) {
    r.why = "the latency peaks at the " + std::string(peak == 0 ? "smallest" : "largest") +
            " stride: the line is not bracketed";
    return r;
  }
  r.line_bytes = strides[peak];
  r.separation_z_below = confidence::separation_z(cycles[peak], cycles[peak - 1]);
  r.separation_z_above = confidence::separation_z(cycles[peak], cycles[peak + 1]);
  r.found = true;
  return r;
}

}  // namespace gpuprobe::analysis
