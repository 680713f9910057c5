#include "analysis/granularity.hpp"

#include <algorithm>

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
