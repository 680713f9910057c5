#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds cache.l2.partition: per-SM L2 hit latency of 512 lines in four 2 MiB pages, the near /
/// far partition of every line, the SM groups, and the partition as a function of address bits.
void register_l2_partition_experiments(Registry& registry);

}  // namespace gpuprobe::probes
