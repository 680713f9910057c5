#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds cache.l2.sharing: L2 bandwidth against the number of SMs reading the same lines,
/// near- against far-homed lines, and gpu-l2-cache's access pattern.
void register_l2_sharing_experiments(Registry& registry);

}  // namespace gpuprobe::probes
