#include "analysis/l2_sharing.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpuprobe::analysis {

SharingPlan plan_sharing(const std::vector<int>& unit_side, std::uint64_t unit_bytes,
                         int sm_count, int k) {
  if (sm_count < 1 || k < 1 || unit_bytes == 0)
    throw std::invalid_argument("plan_sharing: sm_count, k and unit_bytes must be positive");
  SharingPlan p;
  p.unit_bytes = unit_bytes;
  p.groups = std::max(1, sm_count / k);
  p.lists.assign(static_cast<std::size_t>(p.groups) * 2, {});
  for (std::size_t i = 0; i < unit_side.size(); ++i) {
    const std::size_t g = i % static_cast<std::size_t>(p.groups);
    p.lists[g * 2 + (unit_side[i] & 1)].push_back(i * unit_bytes);
  }
  return p;
}

std::vector<int> lists_of_sm(const SharingPlan& plan, int sm, int sm_side, SharingMode mode) {
  const int g = sm % plan.groups;
  switch (mode) {
    case SharingMode::kAll:
      return {2 * g, 2 * g + 1};
    case SharingMode::kNear:
      return {2 * g + (sm_side & 1)};
    case SharingMode::kFar:
      return {2 * g + (1 - (sm_side & 1))};
  }
  return {};
}

std::uint64_t unit_word_sum(std::uint64_t unit_offset, std::uint64_t unit_bytes) {
  const std::uint64_t words = unit_bytes / 8;
  // sum of unit_offset + 8 i for i < words
  return words * unit_offset + 8 * (words * (words - 1) / 2);
}

SharingExpectation expect_sharing(const SharingPlan& plan, const std::vector<int>& sm_side,
                                  SharingMode mode, std::uint32_t reps) {
  std::vector<std::uint64_t> list_sum(plan.lists.size(), 0);
  for (std::size_t l = 0; l < plan.lists.size(); ++l)
    for (std::uint64_t o : plan.lists[l]) list_sum[l] += unit_word_sum(o, plan.unit_bytes);
  SharingExpectation e;
  for (std::size_t s = 0; s < sm_side.size(); ++s)
    for (int l : lists_of_sm(plan, static_cast<int>(s), sm_side[s], mode)) {
      e.bytes += reps * plan.lists[l].size() * plan.unit_bytes;
      e.sum += static_cast<std::uint64_t>(reps) * list_sum[l];
    }
  return e;
}

SharingExpectation expect_gpu_l2_cache(std::uint64_t blocks, std::uint32_t threads,
                                       std::uint32_t block_run, std::uint32_t n) {
  SharingExpectation e;
  // Element e holds byte offset 8 e. Sum per chunk c (= b % block_run) over i and t of the two
  // elements, times the blocks that read chunk c.
  for (std::uint32_t c = 0; c < block_run; ++c) {
    const std::uint64_t readers = blocks / block_run + (c < blocks % block_run ? 1 : 0);
    std::uint64_t chunk = 0;
    for (std::uint32_t i = 0; i < n / 2; ++i) {
      const std::uint64_t row =
          (static_cast<std::uint64_t>(threads) * block_run * i + std::uint64_t{c} * threads) * 2;
      // elements row + t and row + threads + t, t < threads
      chunk += 8 * (2 * threads * row + threads * static_cast<std::uint64_t>(threads) +
                    2 * (static_cast<std::uint64_t>(threads) * (threads - 1) / 2));
    }
    e.sum += readers * chunk;
  }
  e.bytes = blocks * static_cast<std::uint64_t>(threads) * n * 8;
  return e;
}

double gb_per_s(std::uint64_t bytes, double ms) {
  return ms > 0 ? static_cast<double>(bytes) / (ms * 1e6) : 0.0;
}

}  // namespace gpuprobe::analysis
