#include "measure/cache_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <unordered_set>

#include "analysis/l2_partition.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "measure/cache_sequences.hpp"

namespace gpuprobe::measure::cache {

using namespace detail;
using device::LoadOp;

std::string to_string(Level l) { return l == Level::kL1 ? "l1" : "l2"; }

SequenceTiming Probe::call(const AccessSequence& s) {
  accesses += s.sequence.size() + s.place.size() +
              s.sweep.size() * static_cast<std::size_t>(std::max(s.sweep_rounds, 0));
  ++calls;
  SequenceTiming t;
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
  std::vector<double> hits, misses;
  for (std::size_t i = 0; i < t.cycles.size(); ++i) (i % 2 ? hits : misses).push_back(t.cycles[i]);
  return analysis::cache::judge_calibration(std::move(hits), std::move(misses));
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
  // (rare, isolated) fall on different lines.
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

}  // namespace gpuprobe::measure::cache
