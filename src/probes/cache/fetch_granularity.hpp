#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds cache.fetch_granularity: bytes an L1 miss fetches (ld.global.ca) and bytes a DRAM miss
/// fills into the L2 (ld.global.cg), from the latency of a load `offset` bytes after a miss.
void register_fetch_granularity_experiments(Registry& registry);

}  // namespace gpuprobe::probes
