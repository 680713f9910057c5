#pragma once
// Per-block timing: what thread 0 of a timed block writes (the same layout on the host and the
// device), and the one reduction of a launch's records to per-SM rates, SM clock and wall span.
#include <cstdint>
#include <vector>

namespace gpuprobe::measure {

/// Thread 0 of every timed block (or warp) writes one: its SM, clock64 and %globaltimer around
/// the timed part, and how many of its threads ended with a wrong value (0 where not checked).
struct BlockTiming {
  std::uint64_t c0, c1;  ///< clock64 (cycles of this SM)
  std::uint64_t g0, g1;  ///< %globaltimer (ns)
  std::uint32_t smid;
  std::uint32_t bad;
};

/// One launch's records reduced: work per cycle of each SM (the work of its blocks over the span
/// from its first block's start to its last block's end, in that SM's clock64), the SM clock
/// (cycles over %globaltimer ns, median over records) and the wall span over all records.
struct LaunchSummary {
  double rate_median = 0;  ///< work per cycle per SM, median over SMs
  double rate_min = 0;
  double clock_mhz = 0;
  double elapsed_ns = 0;  ///< last %globaltimer end - first start, over all records
  int sms = 0;
  int min_blocks_per_sm = 0, max_blocks_per_sm = 0;
  std::uint64_t bad = 0;  ///< sum of the records' bad counts
};

/// Every block did `work_per_block` (0 when only the clock and the span are wanted).
LaunchSummary summarize_blocks(const std::vector<BlockTiming>& records, double work_per_block);

}  // namespace gpuprobe::measure
