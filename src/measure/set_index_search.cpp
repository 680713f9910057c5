#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <unordered_set>

#include "core/error.hpp"
#include "measure/cache_search.hpp"
#include "measure/cache_sequences.hpp"

namespace gpuprobe::measure::cache {

using namespace detail;
using device::LoadOp;

SetIndexResult infer_set_index(Probe& p, Level level, const Calibration& cal,
                               const ConflictSet& set, std::uint32_t line_bytes,
                               std::uint64_t capacity_bytes) {
  SetIndexResult r;
  if (!set.found || line_bytes == 0) {
    r.kind = analysis::cache::SetIndexKind::kUnknown;
    return r;
  }
  r.lowest_bit_tested = log2_floor(line_bytes);
  r.highest_bit_tested = log2_floor(p.buffer_bytes) - 1;
  const std::unordered_set<std::uint64_t> members(set.lines.begin(), set.lines.end());
  // The member to move: one whose flipped address is not another member.
  const auto flipped_conflict = [&](std::uint64_t flip) {
    for (std::size_t j = 0; j < set.lines.size(); ++j) {
      if (members.count(set.lines[j] ^ flip)) continue;
      auto moved = set.lines;
      moved[j] ^= flip;
      return conflicts(p, level, cal, moved);
    }
    return true;
  };
  if (p.contiguous_bytes != 0 && log2_floor(p.contiguous_bytes) <= r.highest_bit_tested)
    r.first_page_bit = log2_floor(p.contiguous_bytes);
  const auto physical = [&](int b) { return r.first_page_bit < 0 || b < r.first_page_bit; };
  std::vector<int> physical_bits;
  for (int b = r.lowest_bit_tested; b <= r.highest_bit_tested; ++b) {
    const bool same = flipped_conflict(std::uint64_t{1} << b);
    r.tests.push_back({{"flip_bits", {b}}, {"same_set", same}, {"within_page", physical(b)}});
    if (same) continue;
    r.bits.push_back(b);
    (physical(b) ? physical_bits : r.page_bits).push_back(b);
  }
  for (std::size_t i = 0; i < physical_bits.size(); ++i)
    for (std::size_t k = i + 1; k < physical_bits.size(); ++k) {
      const bool same = flipped_conflict((std::uint64_t{1} << physical_bits[i]) |
                                         (std::uint64_t{1} << physical_bits[k]));
      r.pair_tests.push_back(
          {{"flip_bits", {physical_bits[i], physical_bits[k]}}, {"same_set", same}});
      if (same) r.equal_pairs.emplace_back(physical_bits[i], physical_bits[k]);
    }
  judge_set_index_kind(r, set.lines, set.ways, line_bytes, capacity_bytes, p.contiguous_bytes);
  return r;
}

HashColumnsResult infer_hash_columns(Probe& p, Level level, const Calibration& cal,
                                     const ConflictSet& set, const std::vector<int>& index_bits,
                                     int lowest_bit, int first_page_bit, int max_rank) {
  HashColumnsResult r;
  if (!set.found || set.lines.size() < 2 || lowest_bit < 0) {
    r.note = "no conflict set";
    return r;
  }
  const int top = std::min(first_page_bit >= 0 ? first_page_bit : 63, log2_floor(p.buffer_bytes));
  const std::unordered_set<std::uint64_t> members(set.lines.begin(), set.lines.end());
  const std::unordered_set<int> in_index(index_bits.begin(), index_bits.end());
  // Whether moving one member (from the `first`-th that can move) by `flip` keeps it in the
  // set (the moved set still conflicts).
  const auto same_set = [&](std::uint64_t flip, std::size_t first = 0) {
    for (std::size_t j = first; j < set.lines.size(); ++j) {
      const std::uint64_t moved = set.lines[j] ^ flip;
      if (members.count(moved) || moved >= p.buffer_bytes) continue;
      auto lines = set.lines;
      lines[j] = moved;
      ++r.tests;
      return conflicts(p, level, cal, lines);
    }
    return false;
  };
  std::vector<std::vector<int>> column_of;  // per searched bit: independent bits (empty = 0)
  std::vector<int> searched;
  for (int b = lowest_bit; b < top; ++b) {
    r.highest_bit_searched = b;
    searched.push_back(b);
    if (!in_index.count(b)) {
      column_of.emplace_back();  // its flip alone keeps the set
      continue;
    }
    const std::size_t n = r.independent_bits.size();
    bool dependent = false;
    for (std::uint64_t v = 1; v < (std::uint64_t{1} << n); ++v) {
      std::uint64_t flip = std::uint64_t{1} << b;
      std::vector<int> combo;
      for (std::size_t k = 0; k < n; ++k)
        if ((v >> k) & 1) {
          flip ^= std::uint64_t{1} << r.independent_bits[k];
          combo.push_back(r.independent_bits[k]);
        }
      if (same_set(flip)) {
        r.dependent.emplace_back(b, combo);
        column_of.push_back(combo);
        dependent = true;
        break;
      }
    }
    if (dependent) continue;
    if (static_cast<int>(n) >= max_rank) {
      r.note = "rank above " + std::to_string(max_rank) + " at bit " + std::to_string(b) +
               ": not searched further";
      r.highest_bit_searched = b - 1;
      r.rank = static_cast<int>(n);
      return r;
    }
    r.independent_bits.push_back(b);
    column_of.push_back({b});
  }
  r.rank = static_cast<int>(r.independent_bits.size());
  r.found = r.rank > 0;
  for (const auto& [b, combo] : r.dependent) {
    std::uint64_t flip = std::uint64_t{1} << b;
    for (int k : combo) flip ^= std::uint64_t{1} << k;
    r.verified += same_set(flip, 1) ? 1 : 0;
  }
  for (int k : r.independent_bits) {
    std::uint64_t m = 0;
    for (std::size_t i = 0; i < searched.size(); ++i)
      if (std::find(column_of[i].begin(), column_of[i].end(), k) != column_of[i].end())
        m |= std::uint64_t{1} << searched[i];
    r.masks.push_back(m);
  }
  return r;
}

}  // namespace gpuprobe::measure::cache
