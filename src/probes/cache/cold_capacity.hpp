#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds cache.cold_capacity: the L1 and L2 capacity seen by a second pass right after a first
/// pass from a flushed cache (cold), by bisection on the working set.
void register_cold_capacity_experiments(Registry& registry);

}  // namespace gpuprobe::probes
