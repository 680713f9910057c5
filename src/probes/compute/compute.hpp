#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds compute.latency and compute.throughput. They run on a CUDA GPU through the CUDA runtime and
/// are waived on a modelled GPU.
void register_compute_experiments(Registry& registry);

}  // namespace gpuprobe::probes
