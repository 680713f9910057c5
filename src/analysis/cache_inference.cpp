#include "analysis/cache_inference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <unordered_set>

#include "core/stats.hpp"

namespace gpuprobe::analysis::cache {

Calibration judge_calibration(std::vector<double> hits, std::vector<double> misses) {
  Calibration c;
  c.hits = std::move(hits);
  c.misses = std::move(misses);
  if (c.hits.size() < 3 || c.misses.size() < 3) return c;
  c.hit_cycles = stats::median(c.hits);
  c.miss_cycles = stats::median(c.misses);
  const double hi = stats::quantile(c.hits, 0.95), lo = stats::quantile(c.misses, 0.05);
  c.ok = hi < lo;
  // Above the hits' own spread (6 robust sigmas), and at least a tenth of the way to the misses
  // (a GPU's hits can be one exact value with rare stragglers), but never past the midpoint: a
  // level in between (a far-partition hit once a near copy was evicted) must count as a miss.
  const double sd = 1.4826 * stats::summarize(c.hits).mad;
  c.threshold =
      std::min(hi + std::max({6 * sd, 0.1 * (lo - hi), 0.02 * c.hit_cycles}), (hi + lo) / 2);
  return c;
}

std::string volume_verdict(int trials, int restored) {
  if (trials != kVolumeTrials || restored < 0 || restored > trials) return "";
  if (restored == trials) return "volume";
  if (restored <= 5) return "not_volume";
  return "undecided";
}

std::optional<double> near_home_threshold(const std::vector<double>& cold_cycles) {
  if (cold_cycles.size() < 8) return std::nullopt;
  // The optimal split (not an iterated one: from the extremes, one walk left in pulls it off).
  const auto sp = stats::two_means(stats::at_most_median_multiple(cold_cycles, 1.5).kept);
  if (!sp.found) return std::nullopt;
  const std::size_t quarter = cold_cycles.size() / 4;
  if (sp.low.size() < quarter || sp.high.size() < quarter ||
      stats::median(sp.high) < 1.1 * stats::median(sp.low))
    return std::nullopt;
  return sp.threshold;
}

std::uint64_t in_page_distance_gcd(const std::vector<std::uint64_t>& lines,
                                   std::uint32_t line_bytes, std::uint64_t contiguous_bytes) {
  std::uint64_t g = 0;
  if (line_bytes == 0) return 0;
  for (std::size_t i = 0; i < lines.size(); ++i)
    for (std::size_t k = i + 1; k < lines.size(); ++k) {
      const std::uint64_t a = lines[i] / line_bytes, b = lines[k] / line_bytes;
      if (contiguous_bytes != 0 && lines[i] / contiguous_bytes != lines[k] / contiguous_bytes)
        continue;
      if (a == b) continue;
      g = std::gcd(g, a > b ? a - b : b - a);
    }
  return g;
}

void judge_set_index_kind(SetIndexResult& r, const std::vector<std::uint64_t>& lines,
                          std::uint64_t ways, std::uint32_t line_bytes,
                          std::uint64_t capacity_bytes, std::uint64_t contiguous_bytes) {
  if (line_bytes == 0) {
    r.kind = "unknown";
    return;
  }
  const std::uint64_t sets_from_capacity =
      capacity_bytes && ways ? capacity_bytes / (std::uint64_t{line_bytes} * ways) : 0;
  // The kind is judged on the physical bits; above them every flip changes the page.
  const int highest_physical = r.first_page_bit < 0 ? r.highest_bit_tested : r.first_page_bit - 1;
  std::vector<int> judged;
  for (int b : r.bits)
    if (r.first_page_bit < 0 || b < r.first_page_bit) judged.push_back(b);
  bool contiguous = !judged.empty() && judged.front() == r.lowest_bit_tested;
  for (std::size_t i = 1; i < judged.size(); ++i)
    contiguous = contiguous && judged[i] == judged[i - 1] + 1;
  const bool all_bits = contiguous && judged.back() == highest_physical;
  const bool pow2_sets = sets_from_capacity && !(sets_from_capacity & (sets_from_capacity - 1));
  // A modulo over m sets keeps a line's set only when the address moves by a multiple of
  // m lines: a pair of bits whose flip moves it by less than that (2^i + 2^j < m x line) and
  // keeps the set rules any modulo out.
  const auto in_range = [](int b) { return b >= 0 && b < 63; };
  const bool by_pair = sets_from_capacity &&
                       std::any_of(r.equal_pairs.begin(), r.equal_pairs.end(), [&](const auto& pr) {
                         return in_range(pr.first) && in_range(pr.second) &&
                                (std::uint64_t{1} << pr.first) + (std::uint64_t{1} << pr.second) <
                                    sets_from_capacity * line_bytes;
                       });
  r.member_distance_gcd_lines = in_page_distance_gcd(lines, line_bytes, contiguous_bytes);
  const bool by_distance = sets_from_capacity && r.member_distance_gcd_lines != 0 &&
                           r.member_distance_gcd_lines % sets_from_capacity != 0;
  const bool modulo_refuted = by_pair || by_distance;
  r.modulo_refuted = modulo_refuted;
  r.modulo_refuted_by = by_pair ? "equal_pair" : by_distance ? "member_distance" : "";
  if (r.bits.empty()) {
    r.kind = "single_set";
    r.sets = 1;
  } else if (contiguous && judged.size() < 63 && r.equal_pairs.empty() && r.page_bits.empty() &&
             !all_bits &&
             (!sets_from_capacity || sets_from_capacity == (std::uint64_t{1} << judged.size())) &&
             r.member_distance_gcd_lines % (std::uint64_t{1} << judged.size()) == 0) {
    r.kind = "modulo_power_of_two";
    r.sets = std::uint64_t{1} << judged.size();
  } else if (all_bits && sets_from_capacity && !pow2_sets && !modulo_refuted) {
    r.kind = "modulo_non_power_of_two";
    r.sets = sets_from_capacity;
  } else {
    r.kind = "xor_hash";
    r.sets = sets_from_capacity;
  }
}

std::vector<int> simulate_set(const std::string& policy, std::uint32_t ways,
                              const std::vector<int>& accesses) {
  // An independent reference for the hypotheses (not the model's implementation).
  std::vector<int> way_line(ways, -1);
  std::vector<std::uint64_t> stamp(ways, 0);
  std::vector<int> tree(ways, 0);  // node n (1..ways-1): 0 = victim on the left
  std::uint64_t now = 0;
  const auto plru_touch = [&](std::uint32_t w) {
    for (std::uint32_t node = w + ways; node > 1; node /= 2) tree[node / 2] = node % 2 == 0;
  };
  for (int a : accesses) {
    ++now;
    auto it = std::find(way_line.begin(), way_line.end(), a);
    if (it != way_line.end()) {
      const auto w = static_cast<std::uint32_t>(it - way_line.begin());
      if (policy == "lru") stamp[w] = now;
      if (policy == "tree_plru") plru_touch(w);
      continue;
    }
    std::uint32_t w = 0;
    auto empty = std::find(way_line.begin(), way_line.end(), -1);
    if (empty != way_line.end()) {
      w = static_cast<std::uint32_t>(empty - way_line.begin());
    } else if (policy == "tree_plru") {
      std::uint32_t node = 1;
      while (node < ways) node = 2 * node + static_cast<std::uint32_t>(tree[node]);
      w = node - ways;
    } else {
      w = static_cast<std::uint32_t>(std::min_element(stamp.begin(), stamp.end()) - stamp.begin());
    }
    way_line[w] = a;
    stamp[w] = now;
    if (policy == "tree_plru") plru_touch(w);
  }
  std::vector<int> resident;
  for (int l : way_line)
    if (l >= 0) resident.push_back(l);
  std::sort(resident.begin(), resident.end());
  return resident;
}

std::vector<std::uint64_t> out_of_set_lines(const ConflictSet& set, const std::vector<int>& bits,
                                            int first_page_bit, std::uint64_t buffer_bytes) {
  std::vector<std::uint64_t> out;
  const std::unordered_set<std::uint64_t> members(set.lines.begin(), set.lines.end());
  std::unordered_set<std::uint64_t> seen;
  for (std::uint64_t m : set.lines)
    for (int b : bits) {
      if (first_page_bit >= 0 && b >= first_page_bit) continue;
      const std::uint64_t f = m ^ (std::uint64_t{1} << b);
      if (f >= buffer_bytes || members.count(f) || !seen.insert(f).second) continue;
      out.push_back(f);
    }
  return out;
}

}  // namespace gpuprobe::analysis::cache
