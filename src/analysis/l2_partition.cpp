#include "analysis/l2_partition.hpp"

#include <algorithm>
#include <bitset>
#include <cmath>
#include <map>
#include <stdexcept>

#include "core/stats.hpp"

namespace gpuprobe::analysis {
int parity(std::uint64_t x) { return static_cast<int>(std::bitset<64>(x).count() & 1u); }

bool solve_gf2(const std::vector<std::uint64_t>& xs, const std::vector<int>& ys,
               std::uint64_t& mask, std::size_t& rank) {
  // Gaussian elimination on rows (x | y): pivot rows kept reduced by their leading bit.
  std::vector<std::pair<std::uint64_t, int>> pivots;  // (row, rhs), distinct leading bits
  for (std::size_t k = 0; k < xs.size(); ++k) {
    std::uint64_t x = xs[k];
    int y = ys[k] & 1;
    for (const auto& [px, py] : pivots) {
      const std::uint64_t lead = std::uint64_t{1} << (63 - __builtin_clzll(px));
      if (x & lead) {
        x ^= px;
        y ^= py;
      }
    }
    if (x == 0) {
      if (y != 0) return false;  // 0 = 1: contradiction
      continue;
    }
    pivots.emplace_back(x, y);
    // keep pivots sorted by leading bit, descending, so that reduction above is complete
    std::sort(pivots.begin(), pivots.end(),
              [](const auto& a, const auto& b) { return a.first > b.first; });
  }
  rank = pivots.size();
  // Back substitution from the lowest leading bit: free bits are 0.
  mask = 0;
  for (auto it = pivots.rbegin(); it != pivots.rend(); ++it) {
    const std::uint64_t lead = std::uint64_t{1} << (63 - __builtin_clzll(it->first));
    const int rest = parity(it->first & ~lead & mask);
    if ((rest ^ it->second) & 1) mask |= lead;
  }
  return true;
}

PartitionResult analyze_l2_partition(const PartitionInput& in) {
  PartitionResult r;
  const std::size_t rows = in.latency.size(), lines = in.offsets.size();
  if (rows == 0 || lines == 0) return r;
  // Every row times every line: a row cut short (a recorded result edited or truncated) would
  // be read past its end below.
  for (std::size_t i = 0; i < rows; ++i)
    if (in.latency[i].size() != lines)
      throw std::invalid_argument("cache.l2.partition: samples.rows[" + std::to_string(i) +
                                  "].cycles has " + std::to_string(in.latency[i].size()) +
                                  " values for " + std::to_string(lines) +
                                  " offsets; every row needs one per offset");
  std::vector<double> all;
  for (const auto& row : in.latency)
    for (double v : row)
      if (std::isfinite(v) && v > 0) all.push_back(v);
  if (all.empty()) return r;
  // 1-D two-means.
  double c0 = *std::min_element(all.begin(), all.end());
  double c1 = *std::max_element(all.begin(), all.end());
  for (int it = 0; it < 50; ++it) {
    double s0 = 0, s1 = 0;
    std::size_t n0 = 0, n1 = 0;
    const double t = (c0 + c1) / 2;
    for (double v : all) {
      if (v < t) {
        s0 += v;
        ++n0;
      } else {
        s1 += v;
        ++n1;
      }
    }
    if (!n0 || !n1) break;
    c0 = s0 / static_cast<double>(n0);
    c1 = s1 / static_cast<double>(n1);
  }
  r.threshold = (c0 + c1) / 2;
  std::vector<double> lo, hi;
  for (double v : all) (v < r.threshold ? lo : hi).push_back(v);
  r.near_cycles = stats::median_or_zero(lo);
  r.far_cycles = stats::median_or_zero(hi);
  r.split = !lo.empty() && !hi.empty() && r.far_cycles >= 1.2 * r.near_cycles;
  if (!r.split) return r;

  // Near/far per cell; rows grouped by their patterns: two-means in Hamming space, started
  // from the row with the fewest far lines and the row with the most.
  std::vector<std::vector<int>> near(rows, std::vector<int>(lines, 0));
  std::vector<std::size_t> far_count(rows, 0);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < lines; ++j) {
      near[i][j] = in.latency[i][j] < r.threshold ? 1 : 0;
      far_count[i] += near[i][j] ? 0 : 1;
    }
  const std::size_t seed0 = static_cast<std::size_t>(
      std::min_element(far_count.begin(), far_count.end()) - far_count.begin());
  const std::size_t seed1 = static_cast<std::size_t>(
      std::max_element(far_count.begin(), far_count.end()) - far_count.begin());
  std::vector<std::vector<int>> centre{near[seed0], near[seed1]};
  r.row_group.assign(rows, 0);
  for (int it = 0; it < 20; ++it) {
    bool changed = false;
    for (std::size_t i = 0; i < rows; ++i) {
      std::size_t d[2] = {0, 0};
      for (int g = 0; g < 2; ++g)
        for (std::size_t j = 0; j < lines; ++j) d[g] += near[i][j] != centre[g][j] ? 1 : 0;
      const int g = d[1] < d[0] ? 1 : 0;
      changed |= g != r.row_group[i];
      r.row_group[i] = g;
    }
    for (int g = 0; g < 2; ++g) {
      std::vector<int> votes(lines, 0);
      std::size_t members = 0;
      for (std::size_t i = 0; i < rows; ++i)
        if (r.row_group[i] == g) {
          ++members;
          for (std::size_t j = 0; j < lines; ++j) votes[j] += near[i][j] ? 1 : -1;
        }
      if (members)
        for (std::size_t j = 0; j < lines; ++j) centre[g][j] = votes[j] >= 0 ? 1 : 0;
    }
    if (!changed && it > 0) break;
  }
  // Group 0 is the group of the first row (the reference SM when the caller puts it first).
  if (r.row_group[0] == 1) {
    for (auto& g : r.row_group) g ^= 1;
    std::swap(centre[0], centre[1]);
  }
  for (int g : r.row_group) ++r.group_size[g];
  // A line is on side 1 when the SMs of group 1 find it near, and on side 0 otherwise: with
  // lines placed by a group-0 SM, group 0 finds every line near and group 1 only its own;
  // with partitions that serve only their own SMs the two patterns are complements.
  r.line_partition.assign(lines, 0);
  std::size_t p0 = 0;
  const bool group1 = r.group_size[1] > 0;
  for (std::size_t j = 0; j < lines; ++j) {
    r.line_partition[j] = group1 ? centre[1][j] : (centre[0][j] ? 0 : 1);
    p0 += r.line_partition[j] == 0 ? 1 : 0;
  }
  r.partition0_fraction = static_cast<double>(p0) / static_cast<double>(lines);
  std::size_t match = 0;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < lines; ++j)
      match += near[i][j] == centre[r.row_group[i]][j] ? 1 : 0;
  r.consistency = static_cast<double>(match) / static_cast<double>(rows * lines);

  // The partition function inside a page: differences against the first line of each page.
  for (std::uint64_t page : {std::uint64_t{2} << 20, std::uint64_t{64} << 10}) {
    std::map<std::uint64_t, std::size_t> pivot;  // page index -> first line in it
    std::vector<std::uint64_t> xs;
    std::vector<int> ys;
    for (std::size_t j = 0; j < lines; ++j) {
      const std::uint64_t pg = in.offsets[j] / page;
      auto it = pivot.find(pg);
      if (it == pivot.end()) {
        pivot.emplace(pg, j);
        continue;
      }
      xs.push_back((in.offsets[j] ^ in.offsets[it->second]) & (page - 1));
      ys.push_back(r.line_partition[j] ^ r.line_partition[it->second]);
    }
    std::uint64_t mask = 0;
    std::size_t rank = 0;
    if (xs.empty() || !solve_gf2(xs, ys, mask, rank)) continue;
    std::size_t ok = 0;
    for (std::size_t j = 0; j < lines; ++j) {
      const std::size_t pj = pivot.at(in.offsets[j] / page);
      const int predicted =
          r.line_partition[pj] ^ parity(mask & (in.offsets[j] ^ in.offsets[pj]) & (page - 1));
      ok += predicted == r.line_partition[j] ? 1 : 0;
    }
    r.hash_found = true;
    r.page_bytes = page;
    r.hash_mask = mask;
    r.rank = rank;
    r.bits = static_cast<std::size_t>(std::log2(static_cast<double>(page))) - 7;
    r.hash_accuracy = static_cast<double>(ok) / static_cast<double>(lines);
    break;
  }
  return r;
}

}  // namespace gpuprobe::analysis
