#include "measure/block_timing.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "core/stats.hpp"

namespace gpuprobe::measure {

LaunchSummary summarize_blocks(const std::vector<BlockTiming>& records, double work_per_block) {
  struct Sm {
    int blocks = 0;
    std::uint64_t c0 = std::numeric_limits<std::uint64_t>::max(), c1 = 0;
  };
  std::map<std::uint32_t, Sm> sms;
  std::vector<double> clocks;
  std::uint64_t g0 = std::numeric_limits<std::uint64_t>::max(), g1 = 0;
  LaunchSummary s;
  for (const auto& r : records) {
    auto& sm = sms[r.smid];
    ++sm.blocks;
    sm.c0 = std::min(sm.c0, r.c0);
    sm.c1 = std::max(sm.c1, r.c1);
    g0 = std::min(g0, r.g0);
    g1 = std::max(g1, r.g1);
    if (r.g1 > r.g0 && r.c1 > r.c0)
      clocks.push_back(static_cast<double>(r.c1 - r.c0) / static_cast<double>(r.g1 - r.g0) * 1e3);
    s.bad += r.bad;
  }
  std::vector<double> rates;
  s.min_blocks_per_sm = std::numeric_limits<int>::max();
  for (const auto& [id, sm] : sms) {
    if (sm.c1 > sm.c0)
      rates.push_back(work_per_block * sm.blocks / static_cast<double>(sm.c1 - sm.c0));
    s.min_blocks_per_sm = std::min(s.min_blocks_per_sm, sm.blocks);
    s.max_blocks_per_sm = std::max(s.max_blocks_per_sm, sm.blocks);
  }
  if (sms.empty()) s.min_blocks_per_sm = 0;
  s.sms = static_cast<int>(sms.size());
  if (!rates.empty()) {
    s.rate_median = stats::median(rates);
    s.rate_min = *std::min_element(rates.begin(), rates.end());
  }
  if (!clocks.empty()) s.clock_mhz = stats::median(clocks);
  if (g1 > g0) s.elapsed_ns = static_cast<double>(g1 - g0);
  return s;
}

}  // namespace gpuprobe::measure
