#pragma once
// What the TMA and distributed-shared-memory experiments share (tma.cpp, dsmem.cpp).
#include <memory>
#include <optional>
#include <string>

#include "core/device.hpp"
#include "core/experiment.hpp"

namespace gpuprobe::probes::tma_common {

/// Waived below sm_90a ("needs sm_90a ...") and on a modelled device.
std::optional<std::string> hopper_waiver(const device::DeviceInfo& info);

/// VerificationError naming `id` when this binary holds no sm_90 TMA / cluster code.
void require_compiled(const std::string& id);

/// hopper.dsmem (dsmem.cpp).
std::unique_ptr<Experiment> make_dsmem_experiment();

}  // namespace gpuprobe::probes::tma_common
