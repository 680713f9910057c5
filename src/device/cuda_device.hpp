#pragma once
// The real GPU behind the Device seam.
#include <memory>

#include "device/device.hpp"

namespace gpuprobe::device {

/// Opens CUDA device `ordinal`. Throws UsageError when there is no such device, no CUDA device
/// at all, or the GPU is older than the tool supports (compute capability 7.5).
std::unique_ptr<Device> make_cuda_device(int ordinal);

}  // namespace gpuprobe::device
