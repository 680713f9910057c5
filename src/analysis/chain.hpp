#pragma once
// Random cyclic chains for pointer chasing: one cycle through every node, so a chase visits all
// of them before repeating, in an order no prefetcher can follow.
#include <cstdint>
#include <vector>

namespace gpuprobe::analysis {

/// Visit order of a uniformly random single cycle over n nodes, starting at node 0:
/// order[0] == 0 and the chase goes order[i] -> order[(i + 1) % n]. Deterministic in seed.
std::vector<std::uint32_t> random_cycle_order(std::uint32_t n, std::uint64_t seed);

/// Successor table of the cycle given by `order`: next[order[i]] = order[(i + 1) % n].
std::vector<std::uint32_t> successors(const std::vector<std::uint32_t>& order);

/// The node a chase starting at order[0] stands on after `steps` steps.
inline std::uint32_t node_after(const std::vector<std::uint32_t>& order, std::uint64_t steps) {
  return order[steps % order.size()];
}

}  // namespace gpuprobe::analysis
