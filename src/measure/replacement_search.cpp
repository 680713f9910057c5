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
#include "measure/cache_search.hpp"
#include "measure/cache_sequences.hpp"

namespace gpuprobe::measure::cache {

using namespace detail;
using device::LoadOp;

namespace {

using analysis::cache::PolicyClass;
using analysis::cache::VictimClass;
using analysis::cache::VictimFills;
using analysis::cache::VictimGroup;

/// The data-victim search's geometry: lines of the buffer, their sets, and the sequence's room.
struct VictimGeometry {
  std::uint32_t line_bytes = 0;
  const std::vector<std::uint64_t>* masks = nullptr;
  std::uint64_t tag_lines = 0, sets = 0, ways = 0, max_seq = 0, top = 0;
  std::uint64_t set_of(std::uint64_t line) const {
    return xor_set_index(line * line_bytes, *masks);
  }
};

/// Whether lines 0..n-1, read in order, all survive a second pass.
bool all_held(Probe& p, Level level, const Calibration& cal, std::uint32_t line_bytes,
              std::uint64_t n) {
  AccessSequence s = base_sequence(p, level);
  const auto once = consecutive_lines(n, line_bytes);
  s.sequence = once;
  s.sequence.insert(s.sequence.end(), once.begin(), once.end());
  s.timed_from = static_cast<std::uint32_t>(n);
  const auto t = p.call(s);
  return std::none_of(t.cycles.begin(), t.cycles.end(),
                      [&](double c) { return c > cal.threshold; });
}

/// The most consecutive lines held (bisection between 16 and g.top); 0 with r.note set when the
/// tags are not outnumbered or too few lines fit.
std::uint64_t lines_held(Probe& p, Level level, const Calibration& cal, const VictimGeometry& g,
                         DataVictimResult& r) {
  if (all_held(p, level, cal, g.line_bytes, g.top)) {
    r.note =
        "every one of " + std::to_string(g.top) + " lines is held: the tags are not outnumbered";
    return 0;
  }
  std::uint64_t lo = 16, hi = g.top;
  if (hi <= lo) {
    r.note = "fewer than 17 lines can be read twice in one sequence";
    return 0;
  }
  if (!all_held(p, level, cal, g.line_bytes, lo)) {
    r.note = "16 consecutive lines are not held";
    return 0;
  }
  while (hi - lo > 1) {
    const std::uint64_t mid = (lo + hi) / 2;
    (all_held(p, level, cal, g.line_bytes, mid) ? lo : hi) = mid;
  }
  return lo;
}

/// Own-set eviction: each new line of lines lo..fill-1 frees its set's oldest line still there.
std::vector<std::uint64_t> own_set_victims(const VictimGeometry& g, std::uint64_t lo,
                                           std::uint64_t fill) {
  std::vector<std::uint64_t> own;
  std::map<std::uint64_t, std::vector<std::uint64_t>> by_set;
  for (std::uint64_t i = 0; i < lo; ++i) by_set[g.set_of(i)].push_back(i);
  for (std::uint64_t n = lo; n < fill; ++n) {
    auto& v = by_set[g.set_of(n)];
    if (!v.empty()) {
      own.push_back(v.front());
      v.erase(v.begin());
    }
    v.push_back(n);
  }
  return own;
}

/// The groups to probe: the d oldest lines, the lines own-set eviction names, four age bins of
/// the rest (after the first fill), and each set's oldest and second-oldest line (after the
/// second fill, when it reaches half the sets). `own` is own_set_victims of the first fill.
std::vector<VictimGroup> victim_groups(const Probe& p, const VictimFills& f, std::uint64_t d,
                                       const std::vector<std::uint64_t>& own) {
  const std::uint64_t lo = f.lines_held, k = f.filled;
  // Ranks 0 and 1 of lines 0..lo-1: each set's oldest and second-oldest line.
  std::vector<std::vector<std::uint64_t>> rank_lines(2);
  for (std::uint64_t i = 0; i < lo; ++i)
    if (f.rank[i] < 2) rank_lines[f.rank[i]].push_back(i);
  std::mt19937_64 rng(p.seed * 2654435761u + 97);
  const auto sample = [&](std::vector<std::uint64_t> v, std::size_t n) {
    std::shuffle(v.begin(), v.end(), rng);
    if (v.size() > n) v.resize(n);
    return v;
  };
  std::vector<std::uint64_t> oldest(d);
  std::iota(oldest.begin(), oldest.end(), 0);
  constexpr std::size_t kPerGroup = 24, kPerCycleGroup = 32;
  std::vector<VictimGroup> groups{{"oldest", k, sample(oldest, kPerGroup)},
                                  {"own_set", k, sample(own, kPerGroup)}};
  for (int b = 0; b < analysis::cache::kVictimAgeBins; ++b) {
    std::vector<std::uint64_t> bin;
    for (std::uint64_t i = d + (lo - d) * b / analysis::cache::kVictimAgeBins;
         i < d + (lo - d) * (b + 1) / analysis::cache::kVictimAgeBins; ++i)
      if (!f.own_victims.count(i)) bin.push_back(i);
    groups.push_back({"age_bin_" + std::to_string(b), k, sample(bin, kPerGroup)});
  }
  if (f.filled_cycle - lo >= f.sets / 2) {
    groups.push_back({"set_oldest", f.filled_cycle, sample(rank_lines[0], kPerCycleGroup)});
    groups.push_back({"set_second", f.filled_cycle, sample(rank_lines[1], kPerCycleGroup)});
  }
  return groups;
}

/// Probes every line of every group, one sequence each (the group's fill, then the line,
/// timed); counts the evicted ones and records the evidence in r.
void probe_victim_groups(Probe& p, Level level, const Calibration& cal, std::uint32_t line_bytes,
                         const VictimFills& f, std::vector<VictimGroup>& groups,
                         DataVictimResult& r) {
  for (auto& g : groups) {
    const auto fill = consecutive_lines(g.fill, line_bytes);
    for (std::uint64_t line : g.lines) {
      AccessSequence s = base_sequence(p, level);
      s.sequence = fill;
      s.sequence.push_back(line * line_bytes);
      s.timed_from = static_cast<std::uint32_t>(fill.size());
      const auto t = p.call(s);
      if (t.cycles.empty()) throw VerificationError("data victim: the probe's timing is missing");
      const bool gone = t.cycles[0] > cal.threshold;
      ++g.probed;
      g.evicted += gone ? 1 : 0;
      r.evidence.push_back({{"line", line},
                            {"group", g.name},
                            {"filled", g.fill},
                            {"rank_in_set", f.rank[line]},
                            {"evicted", gone}});
    }
    r.groups.push_back(
        {{"group", g.name}, {"filled", g.fill}, {"probed", g.probed}, {"evicted", g.evicted}});
  }
}

}  // namespace

DataVictimResult infer_data_victim(Probe& p, Level level, const Calibration& cal,
                                   std::uint32_t line_bytes,
                                   const std::vector<std::uint64_t>& masks,
                                   std::uint64_t tag_lines) {
  DataVictimResult r;
  if (line_bytes == 0 || masks.empty() || tag_lines == 0) {
    r.note = "no measured tags";
    return r;
  }
  VictimGeometry g;
  g.line_bytes = line_bytes;
  g.masks = &masks;
  g.tag_lines = tag_lines;
  g.sets = std::uint64_t{1} << masks.size();
  g.ways = tag_lines / g.sets;
  g.max_seq = p.max_sequence ? p.max_sequence : 1u << 20;
  g.top = std::min<std::uint64_t>({tag_lines, g.max_seq / 2, p.buffer_bytes / line_bytes});
  const std::uint64_t lo = lines_held(p, level, cal, g, r);
  if (lo == 0) return r;
  r.lines_held = lo;
  const std::uint64_t buffer_lines = p.buffer_bytes / line_bytes;
  if (lo + 4 > buffer_lines || lo + 5 > g.max_seq) {
    r.note = "no room above the lines held for new lines";
    return r;
  }
  const std::uint64_t d =
      std::min<std::uint64_t>({128, tag_lines - lo, g.max_seq - lo - 1, lo / 4, buffer_lines - lo});
  if (d < 4) {
    r.note = "no room above the lines held for new lines";
    return r;
  }
  // The second fill: about one eviction per set (a cycle over the sets evicts each set's oldest
  // line once and no second one; random sets leave e^-1 of the sets and evict a second line
  // from a quarter), no set past its ways (no tag conflict).
  std::uint64_t e2 =
      std::min<std::uint64_t>({g.sets, tag_lines - lo, g.max_seq - lo - 1, buffer_lines - lo});
  {
    std::vector<std::uint64_t> count(g.sets, 0);
    for (std::uint64_t i = 0; i < lo + e2; ++i)
      if (++count[g.set_of(i)] > g.ways) {
        e2 = i > lo ? i - lo : 0;
        break;
      }
  }
  VictimFills f;
  f.lines_held = lo;
  f.sets = g.sets;
  f.filled = lo + d;
  f.filled_cycle = lo + e2;
  r.filled = f.filled;
  r.filled_cycle = f.filled_cycle;
  // Each line's age rank in its set, over every line either fill reads (an own-set victim can
  // be a new line when a set gets more new lines than it had old ones).
  f.rank.resize(std::max(f.filled, f.filled_cycle));
  {
    std::vector<std::uint32_t> seen(g.sets, 0);
    for (std::uint64_t i = 0; i < f.rank.size(); ++i) f.rank[i] = seen[g.set_of(i)]++;
  }
  const std::vector<std::uint64_t> own = own_set_victims(g, lo, f.filled);
  f.own_victims.insert(own.begin(), own.end());
  const auto own_cycle = own_set_victims(g, lo, f.filled_cycle);
  f.own_victims_cycle.insert(own_cycle.begin(), own_cycle.end());
  auto groups = victim_groups(p, f, d, own);
  probe_victim_groups(p, level, cal, line_bytes, f, groups, r);
  analysis::cache::judge_data_victim(r, groups, f);
  r.probes = r.evidence.size();
  r.measured = true;
  return r;
}

PolicyResult infer_policy(Probe& p, Level level, const Calibration& cal, const ConflictSet& set,
                          int tests) {
  PolicyResult r;
  if (!set.found || set.ways < 2) {
    r.classes = {PolicyClass::kNone};
    return r;
  }
  const std::uint32_t w = set.ways;
  std::vector<PolicyClass> candidates = {PolicyClass::kLru, PolicyClass::kFifo};
  if ((w & (w - 1)) == 0) candidates.push_back(PolicyClass::kTreePlru);
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
      ev["predicted_" + analysis::cache::to_string(candidates[c])] = victims;
      matches[c] += (victims == observed[0] ? 1 : 0) + (victims == observed[1] ? 1 : 0);
    }
    r.evidence.push_back(ev);
  }
  r.tests = trials;
  r.deterministic = differing == 0;
  std::vector<PolicyClass> winners;
  for (std::size_t c = 0; c < candidates.size(); ++c)
    if (matches[c] == trials) winners.push_back(candidates[c]);
  if (r.deterministic && !winners.empty()) {
    r.classes = winners;
    r.agreeing = trials;
  } else if (!r.deterministic) {
    r.classes = {PolicyClass::kRandom};
    r.agreeing = differing;
    r.tests = trials / 2;
  } else {
    r.classes = {PolicyClass::kNone};
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
  std::vector<PolicyClass> classes = {PolicyClass::kLru, PolicyClass::kFifo};
  if ((w & (w - 1)) == 0) classes.push_back(PolicyClass::kTreePlru);
  for (PolicyClass c : classes) {
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
    r.predicted[analysis::cache::to_string(c)] =
        total ? static_cast<double>(h) / static_cast<double>(total) : 0.0;
  }
  return r;
}

}  // namespace gpuprobe::measure::cache
