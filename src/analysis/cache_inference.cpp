#include "analysis/cache_inference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <unordered_set>

#include "analysis/l2_far_hit.hpp"
#include "analysis/l2_partition.hpp"
#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"

namespace gpuprobe::analysis::cache {
namespace {

using device::AccessSequence;
using device::LoadOp;

/// The tests run each sequence of a conflict check this many times over; the first round is
/// untimed (it fills an empty set: the L1 is invalidated by the launch, the L2 flushed).
constexpr int kRounds = 4;
/// Misses a conflict needs: one could be a stray slow access on real hardware. (Not a fraction
/// of the accesses: a capacity test just past the capacity overflows a single set.)
int min_misses(std::size_t) { return 2; }

AccessSequence base_sequence(const Probe& p, Level level) {
  AccessSequence s;
  s.op = level == Level::kL1 ? LoadOp::kCa : LoadOp::kCg;
  s.sm = p.sm;
  s.flush_l2 = level == Level::kL2;
  return s;
}

int log2_floor(std::uint64_t v) { return 63 - __builtin_clzll(v); }

/// The offsets of lines 0 .. n-1 from the buffer's start.
std::vector<std::uint64_t> consecutive_lines(std::uint64_t n, std::uint32_t line_bytes) {
  std::vector<std::uint64_t> v(n);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = i * line_bytes;
  return v;
}

std::vector<std::uint64_t> random_lines(std::mt19937_64& rng, std::uint64_t span,
                                        std::uint64_t alignment, std::size_t n,
                                        std::unordered_set<std::uint64_t>& used) {
  std::vector<std::uint64_t> out;
  const std::uint64_t slots = span / alignment;
  while (out.size() < n && used.size() < slots) {
    const std::uint64_t o = (rng() % slots) * alignment;
    if (used.insert(o).second) out.push_back(o);
  }
  return out;
}

/// Runs a sequence longer than one call may hold as consecutive calls (the L2 keeps its state
/// between launches; only the first call flushes). The L1 is invalidated by every launch, so an
/// L1 sequence must fit in one call.
device::SequenceTiming run_long(Probe& p, Level level, const AccessSequence& s) {
  if (p.max_sequence == 0 || s.sequence.size() <= p.max_sequence) return p.call(s);
  if (level == Level::kL1)
    throw UsageError("an L1 test needs " + std::to_string(s.sequence.size()) +
                     " accesses in one launch; the sequencer holds " +
                     std::to_string(p.max_sequence));
  device::SequenceTiming all;
  all.verified = true;
  for (std::size_t a = 0; a < s.sequence.size(); a += p.max_sequence) {
    const std::size_t b = std::min(s.sequence.size(), a + p.max_sequence);
    AccessSequence part = s;
    part.sequence.assign(s.sequence.begin() + static_cast<std::ptrdiff_t>(a),
                         s.sequence.begin() + static_cast<std::ptrdiff_t>(b));
    part.flush_l2 = s.flush_l2 && a == 0;
    part.place.clear();
    part.timed_from = static_cast<std::uint32_t>(
        s.timed_from <= a ? 0 : std::min<std::size_t>(s.timed_from - a, b - a));
    const auto t = p.call(part);
    all.cycles.insert(all.cycles.end(), t.cycles.begin(), t.cycles.end());
    all.smid = t.smid;
  }
  return all;
}

}  // namespace

std::string to_string(Level l) { return l == Level::kL1 ? "l1" : "l2"; }

device::SequenceTiming Probe::call(const AccessSequence& s) {
  accesses += s.sequence.size() + s.place.size() +
              s.sweep.size() * static_cast<std::size_t>(std::max(s.sweep_rounds, 0));
  ++calls;
  device::SequenceTiming t;
  if (s.carveout_percent < 0 && carveout_percent >= 0) {
    auto with = s;
    with.carveout_percent = carveout_percent;
    t = run(with);
  } else {
    t = run(s);
  }
  if (!t.verified) throw VerificationError("an access sequence returned wrong values");
  if (t.cycles.size() != s.sequence.size() - s.timed_from)
    throw VerificationError("an access sequence returned the wrong number of timings");
  return t;
}

Calibration calibrate(Probe& p, Level level, int samples) {
  std::mt19937_64 rng(p.seed * 31 + static_cast<int>(level));
  std::unordered_set<std::uint64_t> used;
  const auto lines = random_lines(rng, std::min<std::uint64_t>(p.buffer_bytes, 1u << 20), 1024,
                                  static_cast<std::size_t>(samples), used);
  AccessSequence s = base_sequence(p, level);
  for (auto l : lines) {
    s.sequence.push_back(l);
    s.sequence.push_back(l);
  }
  const auto t = p.call(s);
  Calibration c;
  for (std::size_t i = 0; i < t.cycles.size(); ++i)
    (i % 2 ? c.hits : c.misses).push_back(t.cycles[i]);
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

bool conflicts(Probe& p, Level level, const Calibration& cal,
               const std::vector<std::uint64_t>& lines, int* misses) {
  std::vector<std::uint64_t> order = lines;
  std::mt19937_64 rng(p.seed + lines.size() * 1000003u + (lines.empty() ? 0 : lines.front()));
  std::shuffle(order.begin(), order.end(), rng);
  AccessSequence s = base_sequence(p, level);
  for (int r = 0; r < kRounds; ++r) s.sequence.insert(s.sequence.end(), order.begin(), order.end());
  s.timed_from = static_cast<std::uint32_t>(order.size());
  const auto t = run_long(p, level, s);
  int m = 0;
  std::vector<int> per_line(order.size(), 0);
  int repeated = 0;  // lines that missed in two or more timed rounds
  for (std::size_t k = 0; k < t.cycles.size(); ++k)
    if (t.cycles[k] > cal.threshold) {
      ++m;
      if (++per_line[k % order.size()] == 2) ++repeated;
    }
  if (misses) *misses = m;
  // A real conflict makes the same lines miss round after round (or, under random
  // replacement in a large set, misses beyond the stray rate); the GPU's stray slow accesses
  // (about 1 in 150 on the H200's L1) fall on different lines.
  return m >= min_misses(t.cycles.size()) &&
         (repeated >= 1 || m >= static_cast<int>(t.cycles.size() / 50));
}

ConflictSet find_conflict_set(Probe& p, Level level, const Calibration& cal,
                              std::uint64_t max_candidates, std::uint64_t alignment) {
  ConflictSet out;
  std::mt19937_64 rng(p.seed * 7919 + static_cast<int>(level));
  std::unordered_set<std::uint64_t> used;
  std::vector<std::uint64_t> pool;
  if (p.max_sequence && level == Level::kL1)
    max_candidates = std::min<std::uint64_t>(max_candidates, p.max_sequence / kRounds);
  std::size_t n = 16;
  bool hit = false;
  while (n <= max_candidates) {
    if (pool.size() < n) {
      auto more = random_lines(rng, p.buffer_bytes, alignment, n - pool.size(), used);
      pool.insert(pool.end(), more.begin(), more.end());
    }
    if (pool.size() < n) break;
    if (conflicts(p, level, cal, pool)) {
      hit = true;
      break;
    }
    n *= 2;
  }
  out.candidates_tried = pool.size();
  if (!hit) {
    out.note = "no conflict among " + std::to_string(pool.size()) + " random lines";
    return out;
  }
  // The shortest conflicting prefix: its last line belongs to the one set that overflowed.
  std::size_t lo = n / 2 >= 16 ? n / 2 : 0, hi = n;
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    std::vector<std::uint64_t> prefix(pool.begin(),
                                      pool.begin() + static_cast<std::ptrdiff_t>(mid));
    (conflicts(p, level, cal, prefix) ? hi : lo) = mid;
  }
  std::vector<std::uint64_t> e(pool.begin(), pool.begin() + static_cast<std::ptrdiff_t>(hi));
  // Group elimination: drop any chunk whose removal keeps the conflict; more chunks when none
  // can go (ways + 1 chunks always leave one without a member of the overflowing set).
  std::size_t chunks = 2;
  while (e.size() > 2) {
    chunks = std::min(chunks, e.size());
    bool removed = false;
    for (std::size_t c = 0; c < chunks && !removed; ++c) {
      const std::size_t a = e.size() * c / chunks, b = e.size() * (c + 1) / chunks;
      std::vector<std::uint64_t> rest(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(a));
      rest.insert(rest.end(), e.begin() + static_cast<std::ptrdiff_t>(b), e.end());
      if (conflicts(p, level, cal, rest)) {
        e = std::move(rest);
        removed = true;
      }
    }
    if (!removed) {
      if (chunks >= e.size()) break;
      chunks *= 2;
    }
  }
  out.lines = e;
  out.ways = static_cast<std::uint32_t>(e.size() - 1);
  out.found = e.size() >= 2;
  // Minimality check: every member is needed.
  for (std::size_t i = 0; i < e.size(); ++i) {
    std::vector<std::uint64_t> rest = e;
    rest.erase(rest.begin() + static_cast<std::ptrdiff_t>(i));
    out.checks_passed += conflicts(p, level, cal, rest) ? 0 : 1;
    ++out.checks;
  }
  out.checks_passed += conflicts(p, level, cal, e) ? 1 : 0;
  ++out.checks;
  out.minimal_verified = out.checks_passed == out.checks;
  return out;
}

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

/// Two agreeing tests of three: a single stray slow re-read (about 1 in 150 accesses on the
/// H200) never decides alone.
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

/// Trials of the volume check (ConflictSet::volume_trials).
constexpr int kVolumeTrials = 8;

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
  // threshold (on the H200 the last eight halvings of about 200,000 lines cost about a sixth
  // of a target's search).
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
      // kMaxEvictionGroups^2 lines: on the H200 about 120,000 to 240,000 lines, where a pass
      // of 64 cost about a second and never gave a set) that is not worth the time: the search
      // stops here with its bound.
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
                      volume_verdict(out.volume_trials, out.volume_restored) + ")";
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

std::string volume_verdict(int trials, int restored) {
  if (trials != kVolumeTrials || restored < 0 || restored > trials) return "";
  if (restored == trials) return "volume";
  if (restored <= 5) return "not_volume";
  return "undecided";
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
  const auto th = near_home_threshold(t.cycles);
  if (!th) return t;
  t.split = true;
  t.threshold = *th;
  for (std::size_t i = 0; i < t.lines.size(); ++i)
    if (t.cycles[i] < *th) t.targets.push_back(t.lines[i]);
  return t;
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

LineSizeResult infer_line_size(Probe& p, Level level, const Calibration& cal,
                               const ConflictSet& set) {
  LineSizeResult r;
  if (!set.found) return r;
  const std::size_t members = std::min<std::size_t>(set.lines.size(), 3);
  for (std::uint32_t delta = 16; delta <= 512; delta *= 2) {
    std::size_t separate = 0;
    for (std::size_t j = 0; j < members; ++j) {
      auto moved = set.lines;
      moved[j] += delta;  // members are 1024-aligned, so this stays in the buffer
      const bool c = conflicts(p, level, cal, moved);
      r.trials.push_back({{"delta_bytes", delta}, {"member", j}, {"conflict", c}});
      separate += c ? 0 : 1;
    }
    if (2 * separate > members) {
      r.found = true;
      r.line_bytes = delta;
      r.agreeing = separate;
      r.trials_at_answer = members;
      break;
    }
  }
  return r;
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

SetIndexResult infer_set_index(Probe& p, Level level, const Calibration& cal,
                               const ConflictSet& set, std::uint32_t line_bytes,
                               std::uint64_t capacity_bytes) {
  SetIndexResult r;
  if (!set.found || line_bytes == 0) {
    r.kind = "unknown";
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
    return device::xor_set_index(line * line_bytes, masks);
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
  r.victim = r.misfit_z[best] <= kMisfitZ ? best : "none";
  double rejected = std::numeric_limits<double>::infinity();
  for (const auto& [cls, z] : r.misfit_z)
    if (cls != r.victim) rejected = std::min(rejected, z);
  r.rejected_z = rejected;
  r.probes = r.evidence.size();
  r.measured = true;
  return r;
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
      const auto resident = simulate_set(candidates[c], w, order);
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
        const auto resident = simulate_set(c, w, prefix);
        h += std::binary_search(resident.begin(), resident.end(), all[i]) ? 1 : 0;
        ++total;
      }
      prefix.push_back(all[i]);
    }
    r.predicted[c] = total ? static_cast<double>(h) / static_cast<double>(total) : 0.0;
  }
  return r;
}

CapacityResult infer_capacity(Probe& p, Level level, const Calibration& cal,
                              std::uint32_t line_bytes, std::uint64_t max_bytes, double precision) {
  CapacityResult r;
  if (line_bytes == 0) return r;
  const auto lines_of = [&](std::uint64_t n) { return consecutive_lines(n, line_bytes); };
  std::uint64_t limit = std::min(max_bytes, p.buffer_bytes) / line_bytes;
  if (p.max_sequence && level == Level::kL1)
    limit = std::min<std::uint64_t>(limit, p.max_sequence / kRounds);
  std::uint64_t lo = 0, hi = 0;
  for (std::uint64_t n = 16; n <= limit; n *= 2) {
    if (conflicts(p, level, cal, lines_of(n))) {
      hi = n;
      break;
    }
    lo = n;
  }
  if (hi == 0) return r;
  while (hi - lo > 1 && static_cast<double>(hi - lo) > precision * static_cast<double>(lo)) {
    const std::uint64_t mid = (lo + hi) / 2;
    (conflicts(p, level, cal, lines_of(mid)) ? hi : lo) = mid;
  }
  r.found = lo > 0;
  r.lines_fit = lo;
  r.lines_conflict = hi;
  r.bytes = lo * line_bytes;
  return r;
}

PartitionInference infer_partitions(Probe& p, int sm_count, std::uint32_t line_bytes, int lines) {
  PartitionInference r;
  // Lines of one 1 MiB region (a partition hash over in-page bits up to 19 is visible, and the
  // region stays within one large page of the translation).
  const std::uint64_t region = std::min<std::uint64_t>(p.buffer_bytes, 1u << 20);
  std::mt19937_64 rng(p.seed * 6151);
  std::unordered_set<std::uint64_t> used;
  const auto probe_lines =
      random_lines(rng, region, line_bytes, static_cast<std::size_t>(lines), used);
  for (int b = 1; b < std::min(sm_count, 9); ++b) {
    AccessSequence s;
    s.op = LoadOp::kCg;
    s.flush_l2 = true;
    s.place = probe_lines;
    s.place_sm = 0;
    s.sequence = probe_lines;
    s.sm = b;
    const auto t = p.call(s);
    const auto split = stats::two_means(t.cycles);
    // Two classes only when they are apart by more than their own spreads (a split of one
    // noisy class has no gap between its halves).
    if (!stats::classes_apart(split)) continue;
    r.two_partitions = true;
    r.other_sm = b;
    r.threshold = split.threshold;
    r.near_samples = split.low;
    r.far_samples = split.high;
    r.near_cycles = stats::median(split.low);
    r.far_cycles = stats::median(split.high);
    std::vector<std::uint64_t> xs;
    std::vector<int> ys;
    const int y0 = t.cycles[0] > split.threshold ? 1 : 0;
    for (std::size_t i = 1; i < probe_lines.size(); ++i) {
      xs.push_back(probe_lines[i] ^ probe_lines[0]);
      ys.push_back((t.cycles[i] > split.threshold ? 1 : 0) ^ y0);
    }
    std::uint64_t mask = 0;
    r.hash_found = analysis::solve_gf2(xs, ys, mask, r.rank);
    r.hash_mask = mask;
    r.evidence = {
        {"lines", probe_lines}, {"first_read_cycles", t.cycles}, {"sm", b}, {"place_sm", 0}};
    // Replication: a far line read twice from b, after a flush.
    AccessSequence rep;
    rep.op = LoadOp::kCg;
    rep.flush_l2 = true;
    rep.sm = b;
    for (std::size_t i = 0; i < probe_lines.size() && rep.sequence.size() < 32; ++i)
      if (t.cycles[i] > split.threshold) {
        rep.sequence.push_back(probe_lines[i]);
        rep.sequence.push_back(probe_lines[i]);
      }
    const auto rt = p.call(rep);
    std::size_t near = 0, n = 0;
    for (std::size_t i = 1; i < rt.cycles.size(); i += 2) {
      r.second_read_cycles.push_back(rt.cycles[i]);
      near += rt.cycles[i] < split.threshold ? 1 : 0;
      ++n;
    }
    if (n) {
      r.replication = 2 * near > n;
      r.replication_agreeing = *r.replication ? near : n - near;
      r.replication_trials = n;
    }
    r.evidence["replication_second_read_cycles"] = r.second_read_cycles;
    return r;
  }
  return r;
}

TlbResult infer_tlb(Probe& p, std::uint64_t largest_page, std::uint64_t max_pages,
                    std::uint64_t smallest_page) {
  TlbResult r;
  // A walk over n cells is n x (rounds + 1) accesses in one sequence, at least 3 n (two timed
  // rounds after the untimed one).
  const std::uint64_t cap_cells =
      p.max_sequence ? static_cast<std::uint64_t>(p.max_sequence / 3) : max_pages;
  max_pages = std::min({max_pages, p.buffer_bytes / largest_page, cap_cells});
  r.max_pages_tried = max_pages;
  std::mt19937_64 rng(p.seed * 2654435761u);
  // One line per `stride` cell at a random 1 KiB-aligned offset inside it, in the cells from
  // `first` on.
  const auto lines_for = [&](std::uint64_t n, std::uint64_t stride, std::uint64_t first = 0) {
    std::vector<std::uint64_t> v(n);
    const std::uint64_t slots = std::max<std::uint64_t>(stride / 1024, 1);
    for (std::uint64_t k = 0; k < n; ++k)
      v[k] = (first + k) * stride + (rng() % slots) * 1024 % stride;
    return v;
  };
  // Excess latency of a cyclic walk over `lines` above each line's own cache latency (the
  // median of its re-reads right after the first read, when every TLB level holds its page).
  // A walk over few lines subtracts few own latencies from every sample: with one re-read each,
  // one noisy read shifted a whole plateau by a few cycles (enough, in one of three H200 runs,
  // to hide the 10-cycle step the other two found), so few lines are re-read more often.
  double own_median = 0;
  const auto excess = [&](const std::vector<std::uint64_t>& lines) {
    AccessSequence base;
    base.op = LoadOp::kCg;
    base.sm = p.sm;
    const std::size_t rereads = std::clamp<std::size_t>(
        kTlbOwnReads / std::max<std::size_t>(lines.size(), 1), 1, kTlbOwnReads);
    for (auto l : lines)
      for (std::size_t k = 0; k <= rereads; ++k) base.sequence.push_back(l);
    const auto bt = p.call(base);
    std::vector<double> own(lines.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const auto at = bt.cycles.begin() + static_cast<std::ptrdiff_t>(i * (rereads + 1));
      own[i] =
          stats::median(std::vector<double>(at + 1, at + static_cast<std::ptrdiff_t>(rereads + 1)));
    }
    std::vector<std::size_t> order(lines.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    // Three timed rounds (at least 96 samples); two where the sequencer holds no more (walks
    // over more than a quarter of its accesses: the largest walks, where every step misses).
    int rounds = std::max<int>(3, static_cast<int>(96 / lines.size()) + 1);
    if (p.max_sequence && (static_cast<std::size_t>(rounds) + 1) * lines.size() > p.max_sequence)
      rounds = 2;
    AccessSequence s;
    s.op = LoadOp::kCg;
    s.sm = p.sm;
    for (int k = 0; k <= rounds; ++k)
      for (auto i : order) s.sequence.push_back(lines[i]);
    s.timed_from = static_cast<std::uint32_t>(lines.size());
    const auto t = p.call(s);
    std::vector<double> ex;
    for (std::size_t k = 0; k < t.cycles.size(); ++k)
      ex.push_back(t.cycles[k] - own[order[k % order.size()]]);
    if (own_median == 0) own_median = stats::median(own);
    return ex;
  };
  const auto walk = [&](std::uint64_t n, std::uint64_t stride) {
    auto e = excess(lines_for(n, stride));
    nlohmann::json row = {
        {"pages", n}, {"stride_bytes", stride}, {"excess_cycles", stats::median(e)}};
    r.curve.push_back(row);
    return e;
  };
  // A step: above 2 % of the cache latency and clear of both sides' noise.
  const auto stepped = [&](const std::vector<double>& below, const std::vector<double>& e) {
    const double d = stats::median(e) - stats::median(below);
    return d > 0.02 * own_median &&
           confidence::separation(confidence::separation_z(below, e)) >= 0.9;
  };
  // The last cell count in [lo, hi) whose walk does not step above `below` (lo does not, hi
  // does): where the rise first clears the criterion. A midpoint of the rise would move with
  // whatever else the walks past the level add (cache misses of the walk's own lines).
  const auto crossing = [&](std::uint64_t lo, std::uint64_t hi, std::uint64_t stride,
                            const std::vector<double>& below) {
    while (hi - lo > 1) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      (stepped(below, excess(lines_for(mid, stride))) ? hi : lo) = mid;
    }
    return lo;
  };
  // The plateau before any level: the walks over 1 and 2 cells pooled (one walk's median alone
  // can sit a few cycles off, enough to hide a 10-cycle step: one of three H200 runs found no
  // level that the other two found).
  std::vector<double> base = excess(lines_for(1, largest_page));
  {
    const auto two = walk(2, largest_page);
    base.insert(base.end(), two.begin(), two.end());
  }
  std::uint64_t prev = 2;
  for (std::uint64_t n = 4; n <= max_pages; n *= 2) {
    auto e = walk(n, largest_page);
    if (!stepped(base, e)) {
      prev = n;
      continue;
    }
    // The rise goes on while each doubling adds less than the step so far (a gradual rise of
    // one level; a next level adds a step of its own at once).
    const double plateau = stats::median(base);
    std::vector<double> above = e;
    std::uint64_t top = n;
    for (std::uint64_t m = 2 * n; m <= std::min(4 * n, max_pages); m *= 2) {
      auto e2 = walk(m, largest_page);
      const double rise = stats::median(e2) - stats::median(above);
      if (rise <= 0 || rise >= stats::median(above) - plateau) break;
      above = e2;
      top = m;
    }
    TlbLevelResult level;
    level.entries = crossing(prev, n, largest_page, base);
    level.below = base;
    level.above = above;
    // The penalty from independent replicates: the detection's own walks, then walks over
    // other cells at fresh offsets (other pages, other lines, their own re-read latencies),
    // each a plateau walk over as many cells as the plateau before the level and one over as
    // many as past it; each replicate's penalty carries both medians' errors.
    level.penalty_replicates.push_back(stats::median(above) - plateau);
    level.penalty_standard_errors.push_back(std::hypot(confidence::median_standard_error(above),
                                                       confidence::median_standard_error(base)));
    // The plateau of the first level is the walks over 1 and 2 cells; of a later one, the walk
    // past the level before.
    const std::uint64_t below_cells = r.levels.empty() ? 2 : prev;
    for (int j = 1; j < kTlbPenaltyReplicates; ++j) {
      const std::uint64_t ju = static_cast<std::uint64_t>(j);
      const std::uint64_t b0 = (ju + 1) * below_cells <= max_pages ? ju * below_cells : 0;
      const std::uint64_t a0 = (ju + 1) * top <= max_pages ? ju * top : 0;
      const auto eb = excess(lines_for(below_cells, largest_page, b0));
      const auto ea = excess(lines_for(top, largest_page, a0));
      level.penalty_replicates.push_back(stats::median(ea) - stats::median(eb));
      level.penalty_standard_errors.push_back(
          std::hypot(confidence::median_standard_error(ea), confidence::median_standard_error(eb)));
    }
    level.miss_penalty_cycles = stats::median(level.penalty_replicates);
    r.levels.push_back(level);
    base = above;
    prev = top;
    n = top;
  }
  if (r.levels.empty()) return r;
  // Coverage of a first-level entry: the crossing at growing strides.
  const auto& l1 = r.levels.front();
  const auto steps_at = [&](std::uint64_t n, std::uint64_t stride) {
    return stepped(l1.below, excess(lines_for(n, stride)));
  };
  std::uint64_t prev_cells = l1.entries;
  r.page_curve.push_back({{"stride_bytes", largest_page},
                          {"crossing_cells", l1.entries},
                          {"reach_bytes", l1.entries * largest_page}});
  for (std::uint64_t stride = 2 * largest_page;; stride *= 2) {
    const std::uint64_t cells_max = std::min(p.buffer_bytes / stride, cap_cells);
    if (cells_max < 4 || cells_max < prev_cells) break;
    // The crossing sits between prev_cells / 4 and prev_cells (it falls by half while the
    // stride is below the coverage and stays once it is not).
    std::uint64_t lo = std::max<std::uint64_t>(prev_cells / 4, 1);
    if (steps_at(lo, stride)) lo = 1;
    const std::uint64_t hi = std::min(cells_max, 2 * prev_cells + 2);
    if (!steps_at(hi, stride)) break;  // no step within reach
    const std::uint64_t cells = crossing(lo, hi, stride, l1.below);
    r.page_curve.push_back(
        {{"stride_bytes", stride}, {"crossing_cells", cells}, {"reach_bytes", cells * stride}});
    r.coverage_at_least = stride / 2;
    // Stays within a quarter: the previous stride already gave each cell its own entry.
    if (4 * cells >= 3 * prev_cells) {
      r.page_bytes = stride / 2;
      r.coverage_at_least = 0;
      // Counted where each cell has an entry of its own: below the coverage a random-order
      // walk's cells share entries and its crossing overstates the entries.
      r.levels.front().entries = prev_cells;
      break;
    }
    prev_cells = cells;
  }
  if (r.page_bytes != largest_page) return r;
  // Coverage at or below the largest page: halve the stride while 1.5 x the entries still sit
  // past the crossing (each cell still needs its own entry); once they do not step, two
  // cells share an entry and the coverage is twice that stride.
  const auto n15 = (3 * l1.entries + 1) / 2;
  for (std::uint64_t stride = largest_page / 2; stride >= smallest_page; stride /= 2) {
    if (n15 > cap_cells) break;
    const bool stays = steps_at(n15, stride);
    r.page_curve.push_back({{"stride_bytes", stride}, {"cells", n15}, {"steps", stays}});
    if (!stays) break;
    r.page_bytes = stride;
  }
  return r;
}

}  // namespace gpuprobe::analysis::cache
