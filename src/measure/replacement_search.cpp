#include "measure/cache_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <unordered_set>

#include "core/error.hpp"
#include "core/stats.hpp"
#include "measure/cache_sequences.hpp"

namespace gpuprobe::measure::cache {

using namespace detail;
using device::LoadOp;

DataVictimResult infer_data_victim(Probe& p, Level level, const Calibration& cal,
                                   std::uint32_t line_bytes,
                                   const std::vector<std::uint64_t>& masks,
                                   std::uint64_t tag_lines) {
  DataVictimResult r;
  if (line_bytes == 0 || masks.empty() || tag_lines == 0) {
    r.note = "no measured tags";
    return r;
  }
  const auto set_of = [&](std::uint64_t line) {
    return xor_set_index(line * line_bytes, masks);
  };
  const std::uint64_t sets = std::uint64_t{1} << masks.size();
  const std::uint64_t ways = tag_lines / sets;
  const std::uint64_t max_seq = p.max_sequence ? p.max_sequence : 1u << 20;
  const std::uint64_t top =
      std::min<std::uint64_t>({tag_lines, max_seq / 2, p.buffer_bytes / line_bytes});
  // Whether lines 0..n-1, read in order, all survive a second pass.
  const auto all_held = [&](std::uint64_t n) {
    AccessSequence s = base_sequence(p, level);
    const auto once = consecutive_lines(n, line_bytes);
    s.sequence = once;
    s.sequence.insert(s.sequence.end(), once.begin(), once.end());
    s.timed_from = static_cast<std::uint32_t>(n);
    const auto t = p.call(s);
    return std::none_of(t.cycles.begin(), t.cycles.end(),
                        [&](double c) { return c > cal.threshold; });
  };
  if (all_held(top)) {
    r.note = "every one of " + std::to_string(top) + " lines is held: the tags are not outnumbered";
    return r;
  }
  std::uint64_t lo = 16, hi = top;
  if (hi <= lo) {
    r.note = "fewer than 17 lines can be read twice in one sequence";
    return r;
  }
  if (!all_held(lo)) {
    r.note = "16 consecutive lines are not held";
    return r;
  }
  while (hi - lo > 1) {
    const std::uint64_t mid = (lo + hi) / 2;
    (all_held(mid) ? lo : hi) = mid;
  }
  r.lines_held = lo;
  const std::uint64_t buffer_lines = p.buffer_bytes / line_bytes;
  if (lo + 4 > buffer_lines || lo + 5 > max_seq) {
    r.note = "no room above the lines held for new lines";
    return r;
  }
  const std::uint64_t d =
      std::min<std::uint64_t>({128, tag_lines - lo, max_seq - lo - 1, lo / 4, buffer_lines - lo});
  if (d < 4) {
    r.note = "no room above the lines held for new lines";
    return r;
  }
  // The second fill: about one eviction per set (a cycle over the sets evicts each set's oldest
  // line once and no second one; random sets leave e^-1 of the sets and evict a second line
  // from a quarter), no set past its ways (no tag conflict).
  std::uint64_t e2 =
      std::min<std::uint64_t>({sets, tag_lines - lo, max_seq - lo - 1, buffer_lines - lo});
  {
    std::vector<std::uint64_t> count(sets, 0);
    for (std::uint64_t i = 0; i < lo + e2; ++i)
      if (++count[set_of(i)] > ways) {
        e2 = i > lo ? i - lo : 0;
        break;
      }
  }
  const std::uint64_t k = lo + d;
  r.filled = k;
  r.filled_cycle = lo + e2;
  // Each line's age rank in its set among lines 0..lo-1 (0 = the set's oldest).
  // Ranks of every line either fill reads (an own-set victim can be a new line when a set gets
  // more new lines than it had old ones); the sampled ranks 0 and 1 are of lines 0..lo-1.
  std::vector<std::uint32_t> rank(std::max(k, lo + e2));
  std::vector<std::vector<std::uint64_t>> rank_lines(2);
  {
    std::vector<std::uint32_t> seen(sets, 0);
    for (std::uint64_t i = 0; i < rank.size(); ++i) {
      rank[i] = seen[set_of(i)]++;
      if (i < lo && rank[i] < 2) rank_lines[rank[i]].push_back(i);
    }
  }
  // Own-set eviction: each new line frees its set's oldest line still there.
  const auto own_victims = [&](std::uint64_t fill) {
    std::vector<std::uint64_t> own;
    std::map<std::uint64_t, std::vector<std::uint64_t>> by_set;
    for (std::uint64_t i = 0; i < lo; ++i) by_set[set_of(i)].push_back(i);
    for (std::uint64_t n = lo; n < fill; ++n) {
      auto& v = by_set[set_of(n)];
      if (!v.empty()) {
        own.push_back(v.front());
        v.erase(v.begin());
      }
      v.push_back(n);
    }
    return own;
  };
  const std::vector<std::uint64_t> own = own_victims(k);
  const std::unordered_set<std::uint64_t> named(own.begin(), own.end());
  const auto own2 = own_victims(lo + e2);
  const std::unordered_set<std::uint64_t> named2(own2.begin(), own2.end());
  std::mt19937_64 rng(p.seed * 2654435761u + 97);
  const auto sample = [&](std::vector<std::uint64_t> v, std::size_t n) {
    std::shuffle(v.begin(), v.end(), rng);
    if (v.size() > n) v.resize(n);
    return v;
  };
  std::vector<std::uint64_t> oldest(d);
  std::iota(oldest.begin(), oldest.end(), 0);
  constexpr int kBins = 4;
  constexpr std::size_t kPerGroup = 24, kPerCycleGroup = 32;
  struct Group {
    std::string name;
    std::uint64_t fill;
    std::vector<std::uint64_t> lines;
  };
  std::vector<Group> groups{{"oldest", k, sample(oldest, kPerGroup)},
                            {"own_set", k, sample(own, kPerGroup)}};
  for (int b = 0; b < kBins; ++b) {
    std::vector<std::uint64_t> bin;
    for (std::uint64_t i = d + (lo - d) * b / kBins; i < d + (lo - d) * (b + 1) / kBins; ++i)
      if (!named.count(i)) bin.push_back(i);
    groups.push_back({"age_bin_" + std::to_string(b), k, sample(bin, kPerGroup)});
  }
  if (e2 >= sets / 2) {
    groups.push_back({"set_oldest", lo + e2, sample(rank_lines[0], kPerCycleGroup)});
    groups.push_back({"set_second", lo + e2, sample(rank_lines[1], kPerCycleGroup)});
  }
  // Each class's chance that a probed line is gone after `fill` consecutive lines.
  const auto predicted = [&](const std::string& cls, std::uint64_t line, std::uint64_t fill) {
    const double evictions = static_cast<double>(fill - lo);
    const double x = evictions / static_cast<double>(sets);  // evictions per set
    const double r_ = rank[line];
    if (cls == "global_lru") return line < fill - lo ? 1.0 : 0.0;
    if (cls == "own_set") return (fill == k ? named : named2).count(line) ? 1.0 : 0.0;
    if (cls == "random") return 1.0 - std::pow(1.0 - 1.0 / static_cast<double>(lo), evictions);
    if (cls == "set_cycle") return std::clamp(x - r_, 0.0, 1.0);
    // random_set: gone when its set was drawn more than `rank` times (Poisson, mean x).
    double term = std::exp(-x), below = 0;
    for (int j = 0; j <= static_cast<int>(r_); ++j) {
      below += term;
      term *= x / (j + 1);
    }
    return std::clamp(1.0 - below, 0.0, 1.0);
  };
  std::vector<std::size_t> probed(groups.size(), 0), evicted(groups.size(), 0);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const auto fill = consecutive_lines(groups[g].fill, line_bytes);
    for (std::uint64_t line : groups[g].lines) {
      AccessSequence s = base_sequence(p, level);
      s.sequence = fill;
      s.sequence.push_back(line * line_bytes);
      s.timed_from = static_cast<std::uint32_t>(fill.size());
      const auto t = p.call(s);
      if (t.cycles.empty()) throw VerificationError("data victim: the probe's timing is missing");
      const bool gone = t.cycles[0] > cal.threshold;
      ++probed[g];
      evicted[g] += gone ? 1 : 0;
      r.evidence.push_back({{"line", line},
                            {"group", groups[g].name},
                            {"filled", groups[g].fill},
                            {"rank_in_set", rank[line]},
                            {"evicted", gone}});
    }
    r.groups.push_back({{"group", groups[g].name},
                        {"filled", groups[g].fill},
                        {"probed", probed[g]},
                        {"evicted", evicted[g]}});
  }
  r.oldest_probed = probed[0];
  r.oldest_evicted = evicted[0];
  r.own_probed = probed[1];
  r.own_evicted = evicted[1];
  for (int b = 0; b < kBins; ++b) {
    r.bin_probed.push_back(probed[2 + b]);
    r.bin_evicted.push_back(evicted[2 + b]);
  }
  // A class's misfit z is the largest, over the groups, of |observed - predicted rate| / se, se
  // the binomial spread of the predicted rate kept within [5 %, 95 %]: one probe is one load's
  // timing, so a prediction of certainty allows a stray probe in twenty.
  const auto misfit = [&](const std::string& cls) {
    double worst = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      if (probed[g] == 0) continue;
      double pred = 0;
      for (std::uint64_t line : groups[g].lines) pred += predicted(cls, line, groups[g].fill);
      const double n = static_cast<double>(probed[g]);
      pred /= n;
      const double q = std::clamp(pred, 0.05, 0.95);
      const double se = std::sqrt(q * (1 - q) / n);
      worst = std::max(worst, std::fabs(static_cast<double>(evicted[g]) / n - pred) / se);
    }
    return worst;
  };
  for (const char* cls : {"global_lru", "own_set", "random", "random_set", "set_cycle"})
    r.misfit_z[cls] = misfit(cls);
  std::string best;
  for (const auto& [cls, z] : r.misfit_z)
    if (best.empty() || z < r.misfit_z[best]) best = cls;
  // Consistent within 3 standard errors in every group: that class; else none of them.
  r.victim = r.misfit_z[best] <= analysis::cache::kMisfitZ ? best : "none";
  double rejected = std::numeric_limits<double>::infinity();
  for (const auto& [cls, z] : r.misfit_z)
    if (cls != r.victim) rejected = std::min(rejected, z);
  r.rejected_z = rejected;
  r.probes = r.evidence.size();
  r.measured = true;
  return r;
}

PolicyResult infer_policy(Probe& p, Level level, const Calibration& cal, const ConflictSet& set,
                          int tests) {
  PolicyResult r;
  if (!set.found || set.ways < 2) {
    r.policy = "none";
    return r;
  }
  const std::uint32_t w = set.ways;
  std::vector<std::string> candidates = {"lru", "fifo"};
  if ((w & (w - 1)) == 0) candidates.push_back("tree_plru");
  std::vector<std::size_t> matches(candidates.size(), 0);
  std::mt19937_64 rng(p.seed * 104729 + static_cast<int>(level));
  std::size_t trials = 0, differing = 0;
  // More tests while two deterministic hypotheses still explain everything (up to 4x).
  const auto tied = [&] {
    std::size_t full = 0;
    for (auto m : matches) full += m == trials ? 1 : 0;
    return differing == 0 && full > 1;
  };
  for (int t = 0; t < tests || (tied() && t < 4 * tests); ++t) {
    std::vector<int> order(w);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    const std::uint32_t reaccesses = 1 + static_cast<std::uint32_t>(rng() % (2 * w));
    for (std::uint32_t k = 0; k < reaccesses; ++k) order.push_back(static_cast<int>(rng() % w));
    order.push_back(static_cast<int>(w));  // the new line
    std::vector<std::vector<int>> observed(2);
    for (int rep = 0; rep < 2; ++rep) {
      for (std::uint32_t j = 0; j < w; ++j) {
        AccessSequence s = base_sequence(p, level);
        for (int a : order) s.sequence.push_back(set.lines[static_cast<std::size_t>(a)]);
        s.sequence.push_back(set.lines[j]);
        s.timed_from = static_cast<std::uint32_t>(s.sequence.size() - 1);
        const auto timing = p.call(s);
        if (timing.cycles.at(0) > cal.threshold) observed[rep].push_back(static_cast<int>(j));
      }
      ++trials;
    }
    if (observed[0] != observed[1]) ++differing;
    nlohmann::json ev = {
        {"accesses", order}, {"victims_run1", observed[0]}, {"victims_run2", observed[1]}};
    for (std::size_t c = 0; c < candidates.size(); ++c) {
      const auto resident = analysis::cache::simulate_set(candidates[c], w, order);
      std::vector<int> victims;
      for (int j = 0; j < static_cast<int>(w); ++j)
        if (!std::binary_search(resident.begin(), resident.end(), j)) victims.push_back(j);
      ev["predicted_" + candidates[c]] = victims;
      matches[c] += (victims == observed[0] ? 1 : 0) + (victims == observed[1] ? 1 : 0);
    }
    r.evidence.push_back(ev);
  }
  r.tests = trials;
  r.deterministic = differing == 0;
  std::vector<std::string> winners;
  for (std::size_t c = 0; c < candidates.size(); ++c)
    if (matches[c] == trials) winners.push_back(candidates[c]);
  if (r.deterministic && !winners.empty()) {
    r.policy = winners[0];
    for (std::size_t i = 1; i < winners.size(); ++i) r.policy += "|" + winners[i];
    r.agreeing = trials;
  } else if (!r.deterministic) {
    r.policy = "random";
    r.agreeing = differing;
    r.tests = trials / 2;
  } else {
    r.policy = "none";
    r.agreeing = trials;
  }
  return r;
}

CyclicResult cyclic_retention(Probe& p, Level level, const Calibration& cal, const ConflictSet& set,
                              int orders, int rounds, const std::vector<std::uint64_t>& fillers,
                              std::size_t fillers_per_access) {
  CyclicResult r;
  if (!set.found || set.lines.size() < 3 || rounds < 2 || orders < 1) return r;
  if (fillers.empty()) fillers_per_access = 0;
  const std::size_t n = set.lines.size();  // ways + 1
  const std::size_t per_call = n * static_cast<std::size_t>(rounds) * (1 + fillers_per_access);
  if (p.max_sequence != 0 && per_call > p.max_sequence) return r;
  std::mt19937_64 rng(p.seed * 7919 + 17 + static_cast<int>(level));
  std::size_t hits = 0, timed = 0;
  r.round_retention.assign(static_cast<std::size_t>(rounds - 1), 0.0);
  std::vector<int> all;
  std::size_t next_filler = 0;
  for (int o = 0; o < orders; ++o) {
    std::vector<int> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    AccessSequence s = base_sequence(p, level);
    std::vector<std::size_t> judged;  // sequence positions of the set's timed accesses
    for (int k = 0; k < rounds; ++k)
      for (int a : order) {
        if (k > 0) judged.push_back(s.sequence.size());
        s.sequence.push_back(set.lines[static_cast<std::size_t>(a)]);
        if (o == 0) all.push_back(a);
        for (std::size_t f = 0; f < fillers_per_access; ++f)
          s.sequence.push_back(fillers[next_filler++ % fillers.size()]);
      }
    // The first round fills the set.
    s.timed_from = static_cast<std::uint32_t>(n * (1 + fillers_per_access));
    const auto t = p.call(s);
    for (std::size_t i = 0; i < judged.size(); ++i) {
      const std::size_t at = judged[i] - s.timed_from;
      if (at >= t.cycles.size()) throw VerificationError("cyclic retention: a timing is missing");
      const bool hit = t.cycles[at] <= cal.threshold;
      hits += hit ? 1 : 0;
      ++timed;
      r.round_retention[i / n] += hit ? 1.0 : 0.0;
    }
  }
  r.fillers_per_access = fillers_per_access;
  r.fillers = fillers_per_access ? fillers.size() : 0;
  for (auto& x : r.round_retention) x /= static_cast<double>(n * static_cast<std::size_t>(orders));
  r.measured = timed > 0;
  r.retention = timed ? static_cast<double>(hits) / static_cast<double>(timed) : 0.0;
  r.rounds = static_cast<std::size_t>(rounds);
  r.orders = static_cast<std::size_t>(orders);
  r.lines = n;
  // What the deterministic classes give over the same cycle (all miss for LRU and FIFO).
  const std::uint32_t w = static_cast<std::uint32_t>(n - 1);
  std::vector<std::string> classes = {"lru", "fifo"};
  if ((w & (w - 1)) == 0) classes.push_back("tree_plru");
  for (const auto& c : classes) {
    std::size_t h = 0, total = 0;
    std::vector<int> prefix;
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (i >= n) {
        const auto resident = analysis::cache::simulate_set(c, w, prefix);
        h += std::binary_search(resident.begin(), resident.end(), all[i]) ? 1 : 0;
        ++total;
      }
      prefix.push_back(all[i]);
    }
    r.predicted[c] = total ? static_cast<double>(h) / static_cast<double>(total) : 0.0;
  }
  return r;
}

}  // namespace gpuprobe::measure::cache
