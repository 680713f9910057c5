#pragma once
// Launch configurations shared by the probes that launch with cudaLaunchKernelEx.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpuprobe::device {

/// A 1-D launch of `blocks` x `threads` with `smem` dynamic bytes on the default stream, in
/// clusters of `cluster` blocks along x (`attr` holds the cluster attribute and must outlive
/// the launch). cluster 1 is a plain launch (no attribute).
inline cudaLaunchConfig_t cluster_launch_config(unsigned blocks, unsigned threads,
                                                std::uint32_t smem, unsigned cluster,
                                                cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t c{};
  c.gridDim = dim3(blocks, 1, 1);
  c.blockDim = dim3(threads, 1, 1);
  c.dynamicSmemBytes = smem;
  c.stream = nullptr;
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x = cluster;
  attr->val.clusterDim.y = 1;
  attr->val.clusterDim.z = 1;
  c.attrs = attr;
  c.numAttrs = cluster > 1 ? 1 : 0;
  return c;
}

}  // namespace gpuprobe::device
