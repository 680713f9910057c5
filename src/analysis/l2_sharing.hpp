#pragma once
// cache.l2.sharing's bookkeeping (pure host code): which units of a working set each SM reads
// when every unit is read by k SMs, near- or far-homed only or all of them; the bytes moved and
// the sum the kernel must return; the gpu-l2-cache access pattern's bytes and sum.
#include <cstdint>
#include <vector>

namespace gpuprobe::analysis {

/// What an SM reads of its group's units.
enum class SharingMode { kAll = 0, kNear = 1, kFar = 2 };

/// The units (each `unit_bytes`, offsets from the buffer start) of a working set split into
/// `groups` interleaved slices (unit i belongs to group i % groups), each slice split by the
/// partition side of its units: lists[g * 2 + side].
struct SharingPlan {
  std::uint64_t unit_bytes = 0;
  int groups = 1;
  std::vector<std::vector<std::uint64_t>> lists;  ///< [groups * 2]: unit offsets
};

/// groups = max(1, sm_count / k): SM s reads group s % groups, so each unit is read by about k
/// SMs. unit_side[i]: the partition side (0/1) of unit i (offset i * unit_bytes).
SharingPlan plan_sharing(const std::vector<int>& unit_side, std::uint64_t unit_bytes,
                         int sm_count, int k);

/// The lists SM `sm` (on partition side `sm_side`) reads under `mode`: indices into plan.lists.
std::vector<int> lists_of_sm(const SharingPlan& plan, int sm, int sm_side, SharingMode mode);

/// Sum (mod 2^64) of the 8-byte words of a unit whose words hold their own byte offsets.
std::uint64_t unit_word_sum(std::uint64_t unit_offset, std::uint64_t unit_bytes);

struct SharingExpectation {
  std::uint64_t bytes = 0;  ///< bytes all SMs read over `reps` passes
  std::uint64_t sum = 0;    ///< the kernel's sum of every word read (mod 2^64)
};
/// What a launch must read and return: every SM reads its lists `reps` times.
SharingExpectation expect_sharing(const SharingPlan& plan, const std::vector<int>& sm_side,
                                  SharingMode mode, std::uint32_t reps);

/// gpu-l2-cache's pattern: `blocks` blocks of `threads` threads; block b reads, for i in
/// 0..n/2-1, the 8-byte elements (threads * block_run * i + (b % block_run) * threads) * 2 + t
/// and that + threads, t = 0..threads-1 (footprint: block_run * threads * n * 8 bytes).
SharingExpectation expect_gpu_l2_cache(std::uint64_t blocks, std::uint32_t threads,
                                       std::uint32_t block_run, std::uint32_t n);

/// Bandwidth in GB/s (1e9 B/s) of `bytes` read in `ms` milliseconds; 0 when ms <= 0.
double gb_per_s(std::uint64_t bytes, double ms);

}  // namespace gpuprobe::analysis
