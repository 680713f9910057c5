#include "measure/gpu.hpp"

#include <string>

#include "core/cuda_check.hpp"

namespace gpuprobe::probes {

Gpu open_gpu(const device::Device& dev) {
  Gpu g;
  g.ordinal = dev.info().ordinal;
  GP_CUDA_CHECK(cudaSetDevice(g.ordinal));
  auto attr = [&](cudaDeviceAttr a) { return cuda::device_attribute(a, g.ordinal); };
  g.sm_count = attr(cudaDevAttrMultiProcessorCount);
  g.max_threads_per_sm = attr(cudaDevAttrMaxThreadsPerMultiProcessor);
  g.shared_per_sm = attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
  g.shared_per_block_optin = attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
  g.reserved_shared_per_block = attr(cudaDevAttrReservedSharedMemoryPerBlock);
  g.cc_major = attr(cudaDevAttrComputeCapabilityMajor);
  g.cc_minor = attr(cudaDevAttrComputeCapabilityMinor);
  g.clock_max_mhz = dev.info().sm_clock_max_mhz > 0 ? dev.info().sm_clock_max_mhz : 1500.0;
  return g;
}

void synchronize() { GP_CUDA_CHECK(cudaDeviceSynchronize()); }

nlohmann::json to_json(const Gpu& g) {
  return {{"sm_count", g.sm_count},
          {"max_threads_per_sm", g.max_threads_per_sm},
          {"shared_per_sm_bytes", g.shared_per_sm},
          {"shared_per_block_optin_bytes", g.shared_per_block_optin},
          {"reserved_shared_per_block_bytes", g.reserved_shared_per_block},
          {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
          {"sm_clock_max_mhz_reported", g.clock_max_mhz}};
}

}  // namespace gpuprobe::probes
