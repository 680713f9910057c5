#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds hopper.tma.latency (one bulk / tensor-map TMA copy global -> shared vs a warp's plain
/// loads, L2-hot and from DRAM), hopper.tma.bandwidth (persistent multi-stage TMA loads and
/// bulk-group stores on every SM) and hopper.dsmem (distributed shared memory latency and
/// bandwidth per cluster size). Waived below compute capability 9.0 ("needs sm_90...") and on
/// a modelled device ("needs a CUDA GPU").
void register_tma_experiments(Registry& registry);

}  // namespace gpuprobe::probes
