#pragma once
// Kernel of cache.fetch_granularity (fetch_kernels.cu): one thread loads a cold line's first
// word, then times a load `offset` bytes further, for many cold lines and offsets.
#include <cstdint>

namespace gpuprobe::probes::fetch {

struct Params {
  const std::uint64_t* region = nullptr;  ///< every word holds its own address
  std::uint64_t region_words = 0;
  const std::uint64_t* line_offsets = nullptr;  ///< [probe]: byte offset of a cold line
  const std::uint32_t* offsets = nullptr;       ///< [probe]: bytes from the line to the timed load
  std::uint32_t probes = 0;
  int cache_global = 0;             ///< 0: ld.global.ca, 1: ld.global.cg
  std::uint32_t* cycles = nullptr;  ///< [probe]
  std::uint32_t* wrong = nullptr;   ///< loads that did not return their own address
};

/// Writes its own address into every word of the region.
void prepare(std::uint64_t* region, std::uint64_t words);
/// One thread runs every probe in order; synchronizes.
void run(const Params& p);

}  // namespace gpuprobe::probes::fetch
