#pragma once
// cache.l2.persisting (l2_persisting.cpp) and cache.l2.eviction_priority
// (l2_eviction_priority.cpp): what a kernel can ask of the L2.
#include "core/experiment.hpp"

namespace gpuprobe::probes {

void register_l2_residency_experiments(Registry& registry);
void register_l2_eviction_priority(Registry& registry);

}  // namespace gpuprobe::probes
