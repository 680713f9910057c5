#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds ordering.fence (cost of fence.acq_rel / fence.sc at cta, gpu and sys scope),
/// ordering.atomic (latency and throughput of cuda::atomic_ref fetch_add by scope and memory
/// order) and ordering.litmus (message passing between two SMs, correct and racy protocols).
/// They run on a CUDA GPU through the CUDA runtime and are waived on a modelled GPU.
void register_ordering_experiments(Registry& registry);

}  // namespace gpuprobe::probes
