#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds hopper.pipeline: a persistent TMA -> shared-memory ring (1..4 stages) -> wgmma
/// m64n256k16 bf16 tile pipeline on every SM, against the wgmma-only and copy-only rates of
/// the same tiles. Waived unless the device is a real compute capability 9.0 GPU
/// ("needs sm_90a (Hopper)", then "needs a CUDA GPU" on a modelled one).
void register_pipeline_experiments(Registry& registry);

}  // namespace gpuprobe::probes
