#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds smem.bank_conflicts and smem.bandwidth. They run on a CUDA GPU through the CUDA runtime and
/// are waived on a modelled GPU.
void register_smem_experiments(Registry& registry);

}  // namespace gpuprobe::probes
