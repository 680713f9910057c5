#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds timer.overhead. They run on a CUDA GPU through the CUDA runtime and are waived on a
/// modelled GPU.
void register_timer_experiments(Registry& registry);

}  // namespace gpuprobe::probes
