#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds cache.prefetch: whether lines ahead of a strided pattern of dependent loads are already
/// in the L2 (after an L2 flush, ld.global.cg) or in the L1 (lines placed in the L2 by another
/// SM, ld.global.ca) before they are loaded.
void register_prefetch_experiments(Registry& registry);

}  // namespace gpuprobe::probes
