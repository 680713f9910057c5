#pragma once
// The bulk loads behind L2Residency::load_bulk on the CUDA device (residency_kernels.cu).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/l2_residency.hpp"

namespace gpuprobe::device::kernels {

/// Every SM loads [base, base + bytes) once, 16 B per thread (ld.global.cg, with an L2 cache
/// policy createpolicy.fractional.<hint> of `fraction` unless hint is kNone) and counts into
/// `*bad` the words that do not hold their own offset from `buffer_base`. bytes: a multiple of
/// 16. Asynchronous on `stream`.
void launch_bulk_loads(const std::uint64_t* buffer_base, std::uint64_t offset, std::uint64_t bytes,
                       EvictionHint hint, float fraction, int sm_count,
                       unsigned long long* bad, cudaStream_t stream);

}  // namespace gpuprobe::device::kernels
