#include "measure/l2_flush.hpp"

#include <algorithm>

#include "core/cuda_check.hpp"
#include "device/chase_kernels.hpp"

namespace gpuprobe::measure {

L2Flush::L2Flush(std::uint64_t bytes, int sm_count)
    : buffer_(bytes / sizeof(std::uint64_t)), sm_count_(sm_count) {
  buffer_.zero();
}

std::uint64_t L2Flush::bytes_for(std::uint64_t l2_bytes, std::uint64_t min_l2_bytes) {
  return 2 * std::max(l2_bytes, min_l2_bytes);
}

void L2Flush::flush(cudaStream_t stream) {
  device::kernels::launch_flush(buffer_.get(), bytes(), sm_count_, stream);
  GP_CUDA_CHECK(cudaDeviceSynchronize());
}

std::string L2Flush::protocol() const {
  return "L2 flushed by streaming reads and writes over " + std::to_string(bytes()) +
         " B before the timed launch";
}

}  // namespace gpuprobe::measure
