#pragma once
// The bulk loads behind L2Residency::load_bulk on the CUDA device, and the stores, discards and
// census behind store_bulk, discard_bulk and census (residency_kernels.cu).
#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/l2_residency.hpp"

namespace gpuprobe::device::kernels {

/// Every SM loads [base, base + bytes) once, 16 B per thread (ld.global.cg, with an L2 cache
/// policy createpolicy.fractional.<hint> of `fraction` unless hint is kNone) and counts into
/// `*bad` the words that do not hold their own offset from `buffer_base`. bytes: a multiple of
/// 16. Only the lines line_select::selected(line, select_seed, select_threshold) picks are
/// loaded (line_select::kAll: every one). Asynchronous on `stream`.
void launch_bulk_loads(const std::uint64_t* buffer_base, std::uint64_t offset, std::uint64_t bytes,
                       EvictionHint hint, float fraction, std::uint64_t select_seed,
                       std::uint64_t select_threshold, int sm_count, unsigned long long* bad,
                       cudaStream_t stream);

/// st.global.v2.u64 of (word offset) ^ mark to every word of [offset, offset + bytes).
void launch_store_marks(std::uint64_t* buffer_base, std::uint64_t offset, std::uint64_t bytes,
                        std::uint64_t mark, int sm_count, cudaStream_t stream);
/// discard.global.L2 [line], 128 for every 128-B line of [offset, offset + bytes).
void launch_discard_lines(std::uint64_t* buffer_base, std::uint64_t offset, std::uint64_t bytes,
                          int sm_count, cudaStream_t stream);
/// counts[0], [1], [2] += the words of the range that hold their own offset, their offset ^
/// mark, anything else (ld.global.cg; counts must start at zero).
void launch_census(const std::uint64_t* buffer_base, std::uint64_t offset, std::uint64_t bytes,
                   std::uint64_t mark, int sm_count, unsigned long long* counts,
                   cudaStream_t stream);

}  // namespace gpuprobe::device::kernels
