#pragma once
#include "core/device.hpp"
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds latency.sweep, latency.chase, latency.shared and latency.carveout.
void register_latency_experiments(Registry& registry);

/// latency.sweep's conclusions from its samples (exposed for tests on recorded samples).
void analyze_sweep(ExperimentResult& result);

}  // namespace gpuprobe::probes
