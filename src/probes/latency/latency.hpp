#pragma once
#include "core/device.hpp"
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Adds latency.sweep, latency.chase, latency.shared and latency.carveout.
void register_latency_experiments(Registry& registry);

/// latency.sweep's conclusions from its samples (exposed for tests on recorded samples).
void analyze_sweep(ExperimentResult& result);

/// One latency.sweep point measured on ctx.device exactly as the sweep measures it (the chain,
/// the hot or cold warm-up plan, the stopping rule): the median cycles per load. `gpuprobe
/// replay` measures the exported model at the working sets the GPU was measured at.
double sweep_point_cycles(Context& ctx, device::LoadOp op, std::uint64_t working_set);

}  // namespace gpuprobe::probes
