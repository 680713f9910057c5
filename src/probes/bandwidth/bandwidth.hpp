#pragma once
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// Why the bandwidth families are waived on the modelled GPU.
inline constexpr const char* kNoBandwidthModel =
    "needs a CUDA GPU: the modelled GPU has no bandwidth model";

/// Adds bandwidth.read, bandwidth.write, bandwidth.copy (streaming DRAM bandwidth) and
/// bandwidth.stride, bandwidth.offset, bandwidth.layout, bandwidth.transpose (access patterns
/// measured beside what the sector model predicts).
void register_bandwidth_experiments(Registry& registry);

}  // namespace gpuprobe::probes
