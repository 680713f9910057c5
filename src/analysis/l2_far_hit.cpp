#include "analysis/l2_far_hit.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "analysis/l2_partition.hpp"
#include "core/stats.hpp"

namespace gpuprobe::analysis {
namespace {

constexpr std::uint64_t kPage = 2ull << 20;
// A far class must be this much slower than the near one to count as a second class.
constexpr double kMinClassRatio = 1.10;
constexpr double kMinClassShare = 0.05;
// A capacity step keeps its copies when at least this share of second reads is near.
constexpr double kKeptShare = 0.90;

}  // namespace

bool two_means_threshold(const std::vector<double>& values, double& threshold) {
  if (values.size() < 2) return false;
  double c0 = *std::min_element(values.begin(), values.end());
  double c1 = *std::max_element(values.begin(), values.end());
  if (!(c1 > c0)) return false;
  for (int it = 0; it < 100; ++it) {
    const double t = (c0 + c1) / 2;
    double s0 = 0, s1 = 0;
    std::size_t n0 = 0, n1 = 0;
    for (double v : values) (v < t ? (s0 += v, ++n0) : (s1 += v, ++n1));
    if (n0 == 0 || n1 == 0) break;
    const double a = s0 / n0, b = s1 / n1;
    if (a == c0 && b == c1) break;
    c0 = a;
    c1 = b;
  }
  threshold = (c0 + c1) / 2;
  return true;
}

FarHitResult analyze_far_hit(const FarHitInput& in) {
  FarHitResult r;
  const std::size_t lines = in.offsets.size();
  if (lines == 0 || in.rounds.empty()) return r;
  std::vector<double> all;
  for (const auto& round : in.rounds)
    for (double v : round.first) all.push_back(v);
  double t = 0;
  if (!two_means_threshold(all, t)) return r;
  const auto low = std::count_if(all.begin(), all.end(), [&](double v) { return v < t; });
  const double low_share = static_cast<double>(low) / all.size();
  std::vector<double> lo, hi;
  for (double v : all) (v < t ? lo : hi).push_back(v);
  const double lo_med = stats::median_or_zero(lo), hi_med = stats::median_or_zero(hi);
  r.threshold = t;
  r.split = low_share >= kMinClassShare && low_share <= 1 - kMinClassShare &&
            hi_med >= kMinClassRatio * lo_med;
  if (!r.split) {
    r.near_first_cycles = stats::median(all);
    return r;
  }
  r.line_far.assign(lines, 0);
  std::size_t agree = 0, cells = 0;
  for (std::size_t i = 0; i < lines; ++i) {
    std::size_t far_votes = 0;
    std::vector<double> f, s;
    for (const auto& round : in.rounds) {
      far_votes += round.first.at(i) >= t;
      f.push_back(round.first.at(i));
      s.push_back(round.second.at(i));
    }
    r.line_far[i] = 2 * far_votes > in.rounds.size();
    for (const auto& round : in.rounds) {
      agree += (round.first.at(i) >= t) == (r.line_far[i] == 1);
      ++cells;
    }
    const double fm = stats::median(f);
    if (r.line_far[i]) {
      r.far_first.push_back(fm);
      r.far_second.push_back(stats::median(s));
      r.replicated += r.far_second.back() < t;
    } else {
      r.near_first.push_back(fm);
    }
  }
  r.consistency = static_cast<double>(agree) / cells;
  r.far_lines = r.far_first.size();
  r.far_line_fraction = static_cast<double>(r.far_lines) / lines;
  r.near_first_cycles = stats::median_or_zero(r.near_first);
  r.far_first_cycles = stats::median_or_zero(r.far_first);
  r.far_second_cycles = stats::median_or_zero(r.far_second);
  if (!r.near_first.empty() && !r.far_first.empty()) {
    const auto near = stats::summarize(r.near_first), far = stats::summarize(r.far_first);
    r.near_first_mean = near.mean;
    r.far_first_mean = far.mean;
    r.difference_standard_error =
        std::sqrt(near.stddev * near.stddev / static_cast<double>(near.n) +
                  far.stddev * far.stddev / static_cast<double>(far.n));
  }
  r.difference_cycles = r.far_first_mean - r.near_first_mean;
  r.replication = 2 * r.replicated > r.far_lines;
  if (in.chase_cycles > 0) {
    // Without copies a steady chase reads far-homed lines in the far partition: its mean holds
    // that share of the difference.
    r.chase_near_cycles = r.replication
                              ? in.chase_cycles
                              : in.chase_cycles - r.far_line_fraction * r.difference_cycles;
    r.far_hit_cycles = r.chase_near_cycles + r.difference_cycles;
  }
  return r;
}

DramByHome analyze_dram_by_home(const FarHitResult& r,
                                const std::vector<std::vector<double>>& cold_rounds) {
  DramByHome d;
  if (!r.split || cold_rounds.empty()) return d;
  const std::size_t lines = r.line_far.size();
  for (std::size_t i = 0; i < lines; ++i) {
    std::vector<double> v;
    for (const auto& round : cold_rounds) {
      if (i >= round.size()) continue;
      ++d.reads;
      // A read no slower than the near/far threshold of the hot rounds was an L2 hit (the flush
      // left the line): not a DRAM miss.
      if (round[i] <= r.threshold) {
        ++d.not_cold;
        continue;
      }
      v.push_back(round[i]);
    }
    if (v.empty()) continue;
    (r.line_far[i] ? d.far_lines : d.near_lines).push_back(stats::median(v));
  }
  if (d.near_lines.size() < 3 || d.far_lines.size() < 3) return d;
  // Means, like the scale they move onto (see FarHitResult::near_first_mean).
  d.near_sequence_cycles = stats::summarize(d.near_lines).mean;
  d.far_sequence_cycles = stats::summarize(d.far_lines).mean;
  const double scale = r.chase_near_cycles - r.near_first_mean;
  d.near_cycles = d.near_sequence_cycles + scale;
  d.far_cycles = d.far_sequence_cycles + scale;
  d.found = r.chase_near_cycles > 0;
  return d;
}

SideFit fit_side(const std::vector<std::uint64_t>& offsets, const std::vector<int>& far,
                 std::uint64_t prior_mask) {
  SideFit best;
  // Equations relative to the first line of each page: the page's constant cancels.
  std::map<std::uint64_t, std::size_t> first_of_page;
  std::vector<std::uint64_t> xs;
  std::vector<int> ys;
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    const std::uint64_t page = offsets[i] / kPage;
    const auto [it, inserted] = first_of_page.emplace(page, i);
    if (inserted) continue;
    xs.push_back((offsets[i] ^ offsets[it->second]) & (kPage - 1));
    ys.push_back(far[i] ^ far[it->second]);
  }
  auto evaluate = [&](std::uint64_t mask) {
    SideFit f;
    f.found = true;
    f.mask = mask;
    // Each page's constant: the majority over its lines.
    std::map<std::uint64_t, std::pair<std::size_t, std::size_t>> votes;  // page -> (c=0, c=1)
    for (std::size_t i = 0; i < offsets.size(); ++i) {
      const int c = far[i] ^ in_page_parity(mask, offsets[i]);
      auto& v = votes[offsets[i] / kPage];
      (c ? v.second : v.first)++;
    }
    std::size_t right = 0;
    for (const auto& [page, v] : votes) {
      f.pages.push_back(page);
      f.page_constant.push_back(v.second > v.first ? 1 : 0);
      right += std::max(v.first, v.second);
    }
    f.accuracy = offsets.empty() ? 0.0 : static_cast<double>(right) / offsets.size();
    return f;
  };
  std::uint64_t mask = 0;
  std::size_t rank = 0;
  if (solve_gf2(xs, ys, mask, rank)) {
    best = evaluate(mask);
    best.rank = rank;
  }
  if (prior_mask != 0) {
    SideFit p = evaluate(prior_mask);
    if (!best.found || p.accuracy >= best.accuracy) {
      p.rank = best.rank;
      best = p;
    }
  }
  if (!best.found) {
    // Contradictory equations (noise): keep the prior if any, else report no fit.
    return best;
  }
  return best;
}

int in_page_parity(std::uint64_t mask, std::uint64_t offset) {
  return parity(mask & (offset & (kPage - 1)));
}

int predict_side(const SideFit& fit, std::uint64_t offset) {
  if (!fit.found) return -1;
  const std::uint64_t page = offset / kPage;
  for (std::size_t k = 0; k < fit.pages.size(); ++k)
    if (fit.pages[k] == page) return in_page_parity(fit.mask, offset) ^ fit.page_constant[k];
  return -1;
}

ReplicaResult analyze_replica_steps(const std::vector<ReplicaStep>& steps, double threshold) {
  ReplicaResult r;
  for (const auto& s : steps) {
    if (s.second.empty()) {
      r.near_fraction.push_back(0);
      continue;
    }
    const auto near =
        std::count_if(s.second.begin(), s.second.end(), [&](double v) { return v < threshold; });
    const double share = static_cast<double>(near) / s.second.size();
    r.near_fraction.push_back(share);
    if (share >= kKeptShare) {
      if (!r.evicted) r.kept_lines = std::max(r.kept_lines, s.lines);
      continue;
    }
    if (r.evicted) continue;
    r.evicted = true;
    r.first_evicting = s.lines;
    double pos = 0;
    const double n = static_cast<double>(s.second.size());
    for (std::size_t i = 0; i < s.second.size(); ++i)
      if (s.second[i] >= threshold) {
        pos += n > 1 ? static_cast<double>(i) / (n - 1) : 0.0;
        ++r.evicted_count;
      }
    r.evicted_position = r.evicted_count ? pos / r.evicted_count : 0.0;
  }
  return r;
}

}  // namespace gpuprobe::analysis
