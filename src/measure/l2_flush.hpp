#pragma once
// The one L2 flush every family uses: streaming reads and writes over a buffer larger than the
// L2 evicts whatever an earlier launch left there (the CUDA device's chase uses the same kernel).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "device/device_buffer.hpp"

namespace gpuprobe::measure {

class L2Flush {
 public:
  /// A zeroed buffer of `bytes` (2 x L2 evicts it all; see bytes_for), streamed by `sm_count`
  /// x 4 blocks.
  L2Flush(std::uint64_t bytes, int sm_count);
  /// 2 x max(l2_bytes, min_l2_bytes): what to stream for a full eviction.
  static std::uint64_t bytes_for(std::uint64_t l2_bytes, std::uint64_t min_l2_bytes = 0);
  /// Streams the buffer on `stream`, then waits for the device.
  void flush(cudaStream_t stream = nullptr);
  std::uint64_t bytes() const { return buffer_.size() * sizeof(std::uint64_t); }
  /// What a flush does, for the result's protocol.
  std::string protocol() const;

 private:
  device::DeviceArray<std::uint64_t> buffer_;
  int sm_count_;
};

}  // namespace gpuprobe::measure
