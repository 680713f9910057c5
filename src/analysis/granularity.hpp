#pragma once
// cache.fetch_granularity's inference: the smallest offset from a just-missed address whose load
// misses too is the size of what the miss fetched.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace gpuprobe::analysis {

/// `latency` holds (offset in bytes, median latency) pairs. Returns the smallest offset whose
/// latency exceeds `factor` x the latency at the smallest offset, provided every larger offset
/// does too (a clean step); nullopt when there is no step, or it is not clean.
std::optional<std::uint32_t> fetch_granularity(
    std::vector<std::pair<std::uint32_t, double>> latency, double factor = 1.5);

}  // namespace gpuprobe::analysis
