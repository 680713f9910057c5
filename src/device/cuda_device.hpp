#pragma once
// The real GPU behind the Device seam.
#include <cstdint>
#include <memory>

#include "device/device.hpp"

namespace gpuprobe {
class ProbeBuffer;
}

namespace gpuprobe::device {

/// Opens CUDA device `ordinal`. Throws UsageError when there is no such device, no CUDA device
/// at all, or the GPU is older than the tool supports (compute capability 7.5).
std::unique_ptr<Device> make_cuda_device(int ordinal);

/// The device address of a probe buffer of the CUDA device (for kernels that read it in bulk);
/// nullptr when the buffer belongs to another device kind.
const std::uint64_t* cuda_probe_base(const ProbeBuffer& buffer);

}  // namespace gpuprobe::device
