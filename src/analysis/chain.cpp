#include "analysis/chain.hpp"

#include <numeric>
#include <random>
#include <stdexcept>

namespace gpuprobe::analysis {

std::vector<std::uint32_t> random_cycle_order(std::uint32_t n, std::uint64_t seed) {
  if (n == 0) throw std::invalid_argument("a chain needs at least one node");
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(seed);
  // Shuffle everything after the fixed start node: any permutation of the rest is one cycle.
  for (std::uint32_t i = n - 1; i > 1; --i) {
    std::uniform_int_distribution<std::uint32_t> pick(1, i);
    std::swap(order[i], order[pick(rng)]);
  }
  return order;
}

std::vector<std::uint32_t> successors(const std::vector<std::uint32_t>& order) {
  std::vector<std::uint32_t> next(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) next[order[i]] = order[(i + 1) % order.size()];
  return next;
}

}  // namespace gpuprobe::analysis
