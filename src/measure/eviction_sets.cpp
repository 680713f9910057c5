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

/// Sweep rounds of an eviction test: a second pass re-touches the pool's lines after the first
/// pass's own misses, so a policy that needs a line touched twice still evicts the target.
constexpr int kEvictionSweepRounds = 2;
constexpr std::size_t kEvictionGroups = 32;
/// Tests one search may run: on the modelled L2s of the property test (up to 24 ways) a
/// deterministic policy needed at most 1,680.
constexpr std::uint64_t kEvictionTestBudget = 6000;
/// Groups one elimination pass may use: more congruent lines than this are reported as a
/// lower bound on the ways.
constexpr std::size_t kMaxEvictionGroups = 64;

/// The line read, untimed, just before an eviction test re-reads its target, so that the re-read
/// finds its page's translation warm (a sweep over a 4 GiB pool touches thousands of pages;
/// without this read a translation lost to the sweep looks like an evicted line). Bits 7, 8 and
/// 10 flipped: within the target's 2 KiB, so in its page for any page size; never in its line
/// for lines up to 1 KiB (the candidates' alignment); 5 or 11 lines of 128 B away, an odd count,
/// so never in its set under a modulo index of 128-B lines (the candidates all share their low
/// 10 bits: a distance of whole KiB could be congruent). Under a hashed index it shares the
/// target's set with the chance of any line (one in the sets) and would then hold one of its ways.
std::uint64_t translation_warmer(std::uint64_t target) { return target ^ 0x580u; }

/// One eviction test as a sequence: flush, place the target, sweep `pool`, read another line of
/// the target's page (untimed), re-read the target (timed). Built once per decision, run as
/// often as the decision needs.
AccessSequence eviction_test(const Probe& p, std::uint64_t target,
                             const std::vector<std::uint64_t>& pool) {
  AccessSequence s = base_sequence(p, Level::kL2);
  s.place = {target};
  s.place_sm = p.sm;
  s.sweep = pool;
  s.sweep_rounds = kEvictionSweepRounds;
  s.sequence = {translation_warmer(target), target};
  s.timed_from = 1;
  return s;
}

double reread_cycles(Probe& p, const AccessSequence& test) { return p.call(test).cycles.at(0); }

/// Thrown when an eviction search used up its tests (a policy that evicts at random makes the
/// reduction wander); the caller reports "not found".
struct BudgetSpent {};

/// Two agreeing tests of three: a single stray slow re-read never decides alone.
bool evicts(Probe& p, const Calibration& cal, std::uint64_t target,
            const std::vector<std::uint64_t>& pool, std::uint64_t& tests) {
  if (pool.empty()) return false;
  if (tests >= kEvictionTestBudget) throw BudgetSpent{};
  const AccessSequence test = eviction_test(p, target, pool);
  int yes = 0, no = 0;
  while (yes < 2 && no < 2) {
    ++tests;
    ++(reread_cycles(p, test) > cal.threshold ? yes : no);
  }
  return yes == 2;
}

/// Trials of the repeatability check after a search (each one test, no vote).
constexpr int kRepeatTrials = 8;

void repeat_check(Probe& p, const Calibration& cal, std::uint64_t x,
                  const std::vector<std::uint64_t>& set, const std::vector<std::uint64_t>& less,
                  ConflictSet& out) {
  out.repeat_trials = kRepeatTrials;
  const AccessSequence with = eviction_test(p, x, set), without = eviction_test(p, x, less);
  std::vector<double> with_set;
  for (int t = 0; t < kRepeatTrials; ++t) {
    with_set.push_back(reread_cycles(p, with));
    out.evicted_with_set += with_set.back() > cal.threshold ? 1 : 0;
    out.evicted_with_less += !less.empty() && reread_cycles(p, without) > cal.threshold ? 1 : 0;
  }
  out.reread_cycles = stats::median(with_set);
  out.eviction_tests += 2 * kRepeatTrials;
}

using analysis::cache::kVolumeTrials;

using Groups = std::vector<std::vector<std::uint64_t>>;

/// The lines of the groups `keep` marks, in group order, without group `skip` (none by default).
std::vector<std::uint64_t> joined(const Groups& groups, const std::vector<bool>& keep,
                                  std::size_t skip = SIZE_MAX) {
  std::vector<std::uint64_t> out;
  for (std::size_t k = 0; k < groups.size(); ++k)
    if (keep[k] && k != skip) out.insert(out.end(), groups[k].begin(), groups[k].end());
  return out;
}

/// The volume check of a search that stopped with the groups `keep` marks (each needed): trial
/// t drops the t-th of them (cyclically) and adds as many fresh random lines of the buffer.
void volume_check(Probe& p, const Calibration& cal, std::uint64_t x, const Groups& groups,
                  const std::vector<bool>& keep, std::mt19937_64& rng,
                  std::unordered_set<std::uint64_t>& used, std::uint64_t alignment,
                  std::uint64_t& tests, ConflictSet& out) {
  std::vector<std::size_t> kept;
  std::uint64_t lines = 0;
  for (std::size_t k = 0; k < groups.size(); ++k)
    if (keep[k]) {
      kept.push_back(k);
      lines += groups[k].size();
    }
  if (kept.size() < 2) return;
  out.volume_group_lines = lines / kept.size();
  for (int t = 0; t < kVolumeTrials; ++t) {
    const std::size_t drop = kept[static_cast<std::size_t>(t) % kept.size()];
    std::vector<std::uint64_t> trial = joined(groups, keep, drop);
    const auto fresh = random_lines(rng, p.buffer_bytes, alignment, groups[drop].size(), used);
    if (fresh.size() < groups[drop].size()) return;  // the buffer has no more unused lines
    trial.insert(trial.end(), fresh.begin(), fresh.end());
    ++out.volume_trials;
    out.volume_restored += evicts(p, cal, x, trial, tests) ? 1 : 0;
  }
}

std::vector<std::uint64_t> prefix_of(const std::vector<std::uint64_t>& v, std::size_t n) {
  return {v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(n, v.size()))};
}

void reduce_eviction_set(Probe& p, const Calibration& cal, std::uint64_t x, std::mt19937_64& rng,
                         std::unordered_set<std::uint64_t>& used, std::uint64_t pool_lines,
                         std::uint64_t alignment, ConflictSet& out) {
  const auto pool = random_lines(rng, p.buffer_bytes, alignment, pool_lines, used);
  out.candidates_tried = pool.size();
  std::uint64_t& tests = out.eviction_tests;
  const auto step = [&](const char* what, std::size_t size, bool ev) {
    out.steps.push_back({{"step", what}, {"lines", size}, {"evicts", ev}});
  };
  const bool all = evicts(p, cal, x, pool, tests);
  step("pool", pool.size(), all);
  if (!all) {
    out.note = "a pool of " + std::to_string(pool.size()) + " lines does not evict the target";
    return;
  }
  // Shortest evicting prefix: doubling, then bisection.
  std::size_t lo = 0, hi = std::min<std::size_t>(64, pool.size());
  while (hi < pool.size()) {
    const bool ev = evicts(p, cal, x, prefix_of(pool, hi), tests);
    step("double", hi, ev);
    if (ev) break;
    lo = hi;
    hi = std::min(pool.size(), 2 * hi);
  }
  // To within 1/256 of the prefix: the group elimination removes what lies past the
  // threshold, and the last halvings of a long prefix cost a sizeable part of a search.
  while (hi - lo > std::max<std::size_t>(1, hi / 256)) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const bool ev = evicts(p, cal, x, prefix_of(pool, mid), tests);
    step("bisect", mid, ev);
    (ev ? hi : lo) = mid;
  }
  std::vector<std::uint64_t> e = prefix_of(pool, hi);
  out.shortest_prefix = hi;
  // Group elimination against the current set: a group goes when the rest still evicts.
  std::size_t groups = kEvictionGroups;
  while (e.size() > 1) {
    const std::size_t g = std::min(groups, e.size());
    Groups chunks(g);
    for (std::size_t i = 0; i < e.size(); ++i) chunks[i * g / e.size()].push_back(e[i]);
    std::vector<bool> keep(g, true);
    bool removed = false;
    for (std::size_t c = 0; c < g; ++c) {
      if (evicts(p, cal, x, joined(chunks, keep, c), tests)) {
        keep[c] = false;
        removed = true;
      }
    }
    std::vector<std::uint64_t> next = joined(chunks, keep);
    step("groups", next.size(), true);
    // With ways congruent lines among g groups, about g (1 - 1/g)^ways groups hold none. A
    // pass that frees under a twentieth of many lines is checked once for repeatability: a
    // probabilistic eviction (a random policy) ends the search; a repeatable one means more
    // congruent lines than groups (every group holds one), so the groups double, up to
    // kMaxEvictionGroups, and the count of needed groups bounds the ways from below.
    if (e.size() > 8 * g && 20 * (e.size() - next.size()) < e.size()) {
      if (out.repeat_trials == 0) {
        std::vector<std::uint64_t> less(e.begin() + static_cast<std::ptrdiff_t>(chunks[0].size()),
                                        e.end());
        repeat_check(p, cal, x, e, less, out);
      }
      if (!out.repeatable()) {
        out.note = "removing any one of " + std::to_string(g) + " groups of " +
                   std::to_string(e.size()) +
                   " lines ends the target's eviction, and that "
                   "eviction does not repeat: not a conflict within one set of a deterministic "
                   "policy";
        return;
      }
      // Each group kept was needed (its removal, tried against the rest, ended the eviction),
      // so each holds a competing line.
      const auto kept = static_cast<std::uint64_t>(std::count(keep.begin(), keep.end(), true));
      out.ways_at_least = std::max<std::uint64_t>(out.ways_at_least, kept);
      // A pass of g groups frees about g (1 - 1/g)^W of them for W congruent lines; under a
      // twentieth means W of about 3 g or more. Finer groups could go on for a while (a pass
      // of 64 frees a twentieth up to W of about 190), but over a large set (more than
      // kMaxEvictionGroups^2 lines, where a pass of 64 costs about a second) that is not worth the
      // time: the search stops here with its bound.
      if (2 * g > kMaxEvictionGroups || e.size() > kMaxEvictionGroups * kMaxEvictionGroups) {
        volume_check(p, cal, x, chunks, keep, rng, used, alignment, tests, out);
        out.note = (kept == g ? "every one of " + std::to_string(g)
                              : std::to_string(kept) + " of " + std::to_string(g)) +
                   " groups of " + std::to_string(e.size()) +
                   " lines are needed to evict the target, repeatably: at least " +
                   std::to_string(out.ways_at_least) + " competing lines";
        if (out.volume_trials > 0)
          out.note += "; " + std::to_string(out.volume_restored) + " of " +
                      std::to_string(out.volume_trials) +
                      " groups replaced by as many fresh lines evicted it again (" +
                      analysis::cache::volume_verdict(out.volume_trials, out.volume_restored) + ")";
        return;
      }
      e = std::move(next);
      groups = 2 * g;  // a pass that freed almost nothing is not repeated at the same size
      continue;
    }
    e = std::move(next);
    if (!removed) {
      out.ways_at_least = std::max<std::uint64_t>(out.ways_at_least, g);
      if (g >= e.size()) break;
      groups = std::min(e.size(), 2 * g);
    }
  }
  // Minimality: the set evicts, and removing any one line ends it.
  out.checks_passed += evicts(p, cal, x, e, tests) ? 1 : 0;
  ++out.checks;
  for (std::size_t i = 0; i < e.size(); ++i) {
    auto rest = e;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
    out.checks_passed += evicts(p, cal, x, rest, tests) ? 0 : 1;
    ++out.checks;
  }
  out.minimal_verified = out.checks_passed == out.checks;
  out.repeat_trials = out.evicted_with_set = out.evicted_with_less = 0;
  repeat_check(p, cal, x, e, std::vector<std::uint64_t>(e.begin() + 1, e.end()), out);
  out.lines = e;
  out.lines.push_back(x);
  out.ways = static_cast<std::uint32_t>(e.size());
  out.found = !e.empty();
  if (!out.minimal_verified)
    out.note = "the reduced set is not minimal (" + std::to_string(out.checks_passed) + " of " +
               std::to_string(out.checks) + " checks)";
}

}  // namespace

ConflictSet find_conflict_set_by_eviction(Probe& p, const Calibration& cal,
                                          std::uint64_t pool_lines, std::uint64_t alignment) {
  ConflictSet out;
  out.method = "eviction_sweeps";
  if (p.max_sweep == 0) {
    out.note = "the device runs no sweeps";
    return out;
  }
  pool_lines = std::min<std::uint64_t>(pool_lines, p.max_sweep);
  std::mt19937_64 rng(p.seed * 6151 + 17);
  std::unordered_set<std::uint64_t> used;
  std::vector<std::uint64_t> target_v;
  if (p.eviction_target) {
    target_v = {*p.eviction_target};
    used.insert(*p.eviction_target);
  } else {
    target_v = random_lines(rng, p.buffer_bytes, alignment, 1, used);
  }
  if (target_v.empty()) {
    out.note = "no room for a target line";
    return out;
  }
  const std::uint64_t x = target_v.front();
  out.target = x;
  try {
    reduce_eviction_set(p, cal, x, rng, used, pool_lines, alignment, out);
  } catch (const BudgetSpent&) {
    out.found = false;
    out.lines.clear();
    out.ways = 0;
    out.note = "no minimal eviction set within " + std::to_string(kEvictionTestBudget) +
               " tests (a replacement that evicts at random never gives one)" +
               (out.ways_at_least ? "; at least " + std::to_string(out.ways_at_least) +
                                        " ways (every group needed, repeatably)"
                                  : "");
  }
  return out;
}

PoolSearch search_pools(int needed, int max_pools, const std::function<PoolOutcome(int)>& search) {
  PoolSearch out;
  std::map<std::string, std::vector<std::size_t>> found;  // kind -> pools with a set
  std::vector<std::string> order;                         // kinds by their first set
  for (int k = 0; k < max_pools; ++k) {
    out.pools.push_back(search(k));
    const PoolOutcome& o = out.pools.back();
    if (!o.set.found) {
      if (o.set.method == "eviction_sweeps") continue;
      break;
    }
    auto& of_kind = found[o.kind];
    if (of_kind.empty()) order.push_back(o.kind);
    of_kind.push_back(static_cast<std::size_t>(k));
    if (static_cast<int>(of_kind.size()) >= needed) {
      out.chosen = of_kind;
      out.kind = o.kind;
      return out;
    }
  }
  for (const auto& kind : order)  // none reached `needed`: the most sets, earliest first
    if (found[kind].size() > out.chosen.size()) {
      out.chosen = found[kind];
      out.kind = kind;
    }
  return out;
}

TargetSelection near_home_targets(Probe& p, std::size_t n, std::uint64_t alignment) {
  TargetSelection t;
  std::mt19937_64 rng(p.seed * 7919 + 3);
  std::unordered_set<std::uint64_t> used;
  t.lines = random_lines(rng, p.buffer_bytes, alignment, n, used);
  if (t.lines.size() < 8) return t;
  AccessSequence s = base_sequence(p, Level::kL2);
  s.sequence = t.lines;
  const auto r = p.call(s);
  t.cycles.assign(r.cycles.begin(), r.cycles.end());
  if (t.cycles.size() != t.lines.size()) return t;
  const auto th = analysis::cache::near_home_threshold(t.cycles);
  if (!th) return t;
  t.split = true;
  t.threshold = *th;
  for (std::size_t i = 0; i < t.lines.size(); ++i)
    if (t.cycles[i] < *th) t.targets.push_back(t.lines[i]);
  return t;
}

}  // namespace gpuprobe::measure::cache
