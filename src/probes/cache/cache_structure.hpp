#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds cache.l1.ways and cache.l2.ways (each level's ways, set-index function, line size and
/// replacement class from one search) and latency.tlb: conflict-set construction, policy
/// sequences and TLB walks over device::Sequencer (src/analysis/cache_inference.*).
void register_cache_structure_experiments(Registry& registry);

}  // namespace gpuprobe::probes
