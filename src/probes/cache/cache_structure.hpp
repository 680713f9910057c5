#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds cache.l1.ways, cache.l2.ways (with the set-index function), cache.line_size,
/// cache.replacement and latency.tlb: conflict-set construction, policy sequences and TLB
/// walks over device::Sequencer (src/analysis/cache_inference.*).
void register_cache_structure_experiments(Registry& registry);

}  // namespace gpuprobe::probes
