#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds cache.l2.mixture: what the latency sweep's mixed region is made of. One SM chases
/// working sets around the L2 near-partition knee with every 32nd load timed on its own: the
/// share served by the near partition, what the other loads cost, and how the share differs
/// between the chase's 2 MiB pages.
void register_l2_mixture_experiments(Registry& registry);

}  // namespace gpuprobe::probes
