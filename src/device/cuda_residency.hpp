#pragma once
// The CUDA device's L2 controls (core/l2_residency.hpp): the driver's persisting limits and the
// bulk loads, under an access-policy window or an eviction priority. CudaDevice forwards here.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/l2_residency.hpp"

namespace gpuprobe::device {

/// persistingL2CacheMaxSize and accessPolicyMaxWindowSize of CUDA device `ordinal`.
PersistingLimits cuda_persisting_limits(int ordinal);

/// Loads `l` over the buffer at `base` (`buffer_bytes` long) and waits for them. A windowed
/// pass runs on `window_stream` with its access-policy window set for the launch and cleared
/// after it (so no later launch inherits it); a plain one runs on `stream`. Throws what
/// check_bulk_loads throws, and VerificationError when a loaded word does not hold its offset.
void cuda_load_bulk(const std::uint64_t* base, std::uint64_t buffer_bytes, const BulkLoads& l,
                    const PersistingLimits& limits, int sm_count, cudaStream_t stream,
                    cudaStream_t window_stream);

/// store_bulk, discard_bulk and census of L2Residency over the buffer at `base`; each waits for
/// its kernel. Throw what check_line_range throws.
void cuda_store_bulk(std::uint64_t* base, std::uint64_t buffer_bytes, std::uint64_t offset,
                     std::uint64_t bytes, std::uint64_t mark, int sm_count, cudaStream_t stream);
void cuda_discard_bulk(std::uint64_t* base, std::uint64_t buffer_bytes, std::uint64_t offset,
                       std::uint64_t bytes, int sm_count, cudaStream_t stream);
WordCensus cuda_census(const std::uint64_t* base, std::uint64_t buffer_bytes, std::uint64_t offset,
                       std::uint64_t bytes, std::uint64_t mark, int sm_count, cudaStream_t stream);

}  // namespace gpuprobe::device
