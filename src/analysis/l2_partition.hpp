#pragma once
// cache.l2.partition's inference: which L2 partition each probed line lives in, which SMs sit
// near which partition, and which address bits choose the partition, from a matrix of per-SM
// L2 hit latencies. Pure host code (tested on synthetic hierarchies).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuprobe::analysis {

struct PartitionInput {
  /// Byte offset of each probed line from a base aligned to the largest page size tried.
  std::vector<std::uint64_t> offsets;
  /// latency[row][line]: L2 hit latency (cycles) of `line` seen from the SM of `row`.
  std::vector<std::vector<double>> latency;
};

struct PartitionResult {
  bool split = false;  ///< two latency classes were found (a near and a far partition)
  double threshold = 0, near_cycles = 0, far_cycles = 0;  ///< medians of the two classes
  std::vector<int> row_group;  ///< per row: 0 or 1 (rows that find the same lines near)
  std::size_t group_size[2] = {0, 0};
  double consistency = 0;           ///< fraction of cells equal to their group's majority
  std::vector<int> line_partition;  ///< per line: 1 when group 1 finds it near, else 0
  double partition0_fraction = 0;
  // The partition as a GF(2)-linear function of the address bits inside a page: for lines a, b
  // of one page, partition(a) ^ partition(b) == parity(hash_mask & (a ^ b)).
  bool hash_found = false;
  std::uint64_t page_bytes = 0;  ///< page size the fit holds for (bits below it are physical)
  std::uint64_t hash_mask = 0;
  std::size_t rank = 0;      ///< rank of the difference equations (bits determined)
  std::size_t bits = 0;      ///< bits 7 .. log2(page_bytes) - 1 that could take part
  double hash_accuracy = 0;  ///< fraction of lines the fitted function predicts
};

/// Splits the latencies into two classes (1-D two-means; "split" when the far class is at
/// least 20% slower), groups the rows by the lines they find near (two-means over the
/// near/far patterns), puts a line on side 1 when group 1's majority finds it near, and fits
/// that side as a function of the address bits inside pages of 2 MiB, then 64 KiB (the
/// largest page for which the fit is consistent wins).
PartitionResult analyze_l2_partition(const PartitionInput& in);

/// The parity of x's set bits (its GF(2) sum): parity(mask & address) is one bit of an XOR hash.
int parity(std::uint64_t x);

/// Finds mask with parity(mask & xs[k]) == ys[k] for every k over GF(2). Returns false when
/// the equations contradict each other; `rank` is the rank of xs.
bool solve_gf2(const std::vector<std::uint64_t>& xs, const std::vector<int>& ys,
               std::uint64_t& mask, std::size_t& rank);

}  // namespace gpuprobe::analysis
