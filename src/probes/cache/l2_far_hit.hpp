#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds cache.l2.far_hit: the pure far-hit latency of the L2 on the chase's scale, whether the
/// near partition keeps copies of far-homed lines an SM has read, and how many copies fit.
void register_l2_far_hit_experiments(Registry& registry);

}  // namespace gpuprobe::probes
