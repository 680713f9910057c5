#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds smem.bank_conflicts, smem.bandwidth, compute.latency, compute.throughput and
/// timer.overhead. They run on a CUDA GPU through the CUDA runtime (the Device seam covers
/// latency only) and are waived on a modelled GPU.
void register_compute_experiments(Registry& registry);

}  // namespace gpuprobe::probes
