#include "probes/cache/ways_conflict_sets.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "core/confidence.hpp"
#include "core/finding_names.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"

namespace gpuprobe::probes::cache_structure {

using units::kKiB;
using units::kMiB;

namespace {

std::uint64_t pow2_at_least(std::uint64_t v) {
  std::uint64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

/// Eviction candidates sit at 1 KiB: any line size up to 1 KiB leaves them distinct lines.
constexpr std::uint64_t kSweepAlignment = 1024;
/// Lines read cold to pick near-homed eviction targets (half of them, about, are).
constexpr std::size_t kTargetCandidates = 48;
/// Pools (eviction targets) one L2 search may use. On the H200 about six targets in ten give a
/// set (44 of 73 over the eleventh session's 22 runs; 4 of 16 on GPU-298cd471), so ten give two
/// nearly always; a target costs about 1.1 to 1.9 s, with a set or without.
constexpr int kMaxEvictionPools = 10;

}  // namespace

int carveout_for(Level level) { return level == Level::kL1 ? 0 : -1; }

std::uint64_t span_for(device::Device& dev, Level level) {
  const auto& info = dev.info();
  if (level == Level::kL1)
    return pow2_at_least(std::max<std::uint64_t>(
        8 * std::max<std::uint64_t>(info.l1_shared_unified_bytes, 64 * kKiB), 4 * kMiB));
  const std::uint64_t paged = kL2PoolPages * kL2PoolAlignment;
  if (dev.free_memory() > paged + paged / 4 + 256 * kMiB) return paged;
  return pow2_at_least(std::max<std::uint64_t>(8 * info.l2_bytes, 4 * kMiB));
}

std::uint64_t alignment_for(const measure::cache::Probe& p, Level level) {
  if (level == Level::kL1) return 1024;
  if (p.buffer_bytes == kL2PoolPages * kL2PoolAlignment) return kL2PoolAlignment;
  std::uint64_t a = 1024;
  while (p.buffer_bytes / a > 16384) a *= 2;
  return a;
}

int pools_for(Level level) { return level == Level::kL1 ? 3 : 2; }

std::uint64_t sweep_pool_lines(const Context& ctx) { return 4 * ctx.device.info().l2_bytes / 128; }

analysis::cache::ConflictSet pool_conflict_set(measure::cache::Probe& p, Level level,
                                               const analysis::cache::Calibration& cal,
                                               std::uint64_t align, std::uint64_t pool_lines) {
  auto cs = measure::cache::find_conflict_set(p, level, cal, 1u << 20, align);
  if (cs.found || level != Level::kL2 || p.max_sweep == 0 || pool_lines == 0) return cs;
  auto ev = measure::cache::find_conflict_set_by_eviction(p, cal, pool_lines, kSweepAlignment);
  if (ev.found && !ev.repeatable()) {
    ev.found = false;
    ev.note += std::string(ev.note.empty() ? "" : "; ") +
               "eviction by the reduced set does not "
               "repeat (" +
               std::to_string(ev.evicted_with_set) + " of " + std::to_string(ev.repeat_trials) +
               " with it, " + std::to_string(ev.evicted_with_less) + " with one line less)";
  }
  ev.note = "sequences: " + cs.note + (ev.note.empty() ? "" : "; eviction sweeps: " + ev.note);
  ev.candidates_tried += cs.candidates_tried;
  return ev;
}

EvictionSummary eviction_summary(const std::vector<ConflictRecord>& pools) {
  EvictionSummary out;
  std::map<std::string, int> volume;  // the volume check's verdicts of the stopped searches
  for (const auto& pool : pools) {
    if (!pool.swept() || !pool.repeat) continue;
    ++out.swept;
    if (pool.volume)
      ++volume[analysis::cache::volume_verdict(pool.volume->trials, pool.volume->restored)];
    const bool random = pool.repeat->probabilistic;
    out.probabilistic += random ? 1 : 0;
    const auto b = pool.ways_at_least;
    if (b > 0 && !random && !pool.found) {
      out.ways_at_least = out.bounded == 0 ? b : std::min(out.ways_at_least, b);
      ++out.bounded;
    }
  }
  // Searches stopped with the groups kept each needed, by what the volume check said
  // (analysis::cache::volume_verdict): fresh lines of the same count restored the eviction every
  // time ("volume": a capacity eviction), at most 5 of 8 times ("not_volume"), in between
  // ("undecided"), or the check was cut short ("incomplete").
  if (!volume.empty())
    out.stopped_by =
        StoppedBy{volume["volume"], volume["not_volume"], volume["undecided"], volume[""]};
  return out;
}

std::string served_after_eviction(double reread, double far_hit, double miss) {
  if (far_hit <= 0 || reread <= 0) return "";
  return std::fabs(reread - far_hit) < std::fabs(reread - miss) ? "far_partition" : "dram";
}

ServedReferences served_references(const Context& ctx) {
  ServedReferences refs;
  if (auto f = ctx.prior.get(finding::kL2FarHitLatency)) refs.far_hit_cycles = f->value;
  for (const FindingKey& key : {finding::kDramLatencyNearHome, finding::kDramLatency})
    if (auto f = ctx.prior.get(key)) {
      refs.dram_cycles = f->value;
      refs.dram_from = key.name;
      break;
    }
  return refs;
}

LevelRun conflict_run(measure::cache::Probe& p, Level level, WaysSamples& rec,
                      std::uint64_t pool_lines, const ServedReferences& refs) {
  const double far_hit_cycles = refs.far_hit_cycles;
  LevelRun r;
  r.cal = measure::cache::calibrate(p, level);
  rec.calibration = CalibrationRecord::of(r.cal);
  rec.carveout_percent = p.carveout_percent;
  rec.max_sequence = p.max_sequence;
  if (!r.cal.ok) {
    rec.note = "hits and misses overlap: no threshold";
    return r;
  }
  const std::uint64_t align = alignment_for(p, level);
  rec.candidate_alignment_bytes = align;
  rec.pool_bytes = p.buffer_bytes;
  const std::uint64_t seed0 = p.seed;
  std::uint64_t set_seed = seed0;
  // A DRAM miss as a chase meets it (latency.sweep); the calibration's first reads also pay
  // page-translation misses and sit higher.
  const double miss_reference = refs.dram_cycles > 0 ? refs.dram_cycles : r.cal.miss_cycles;
  if (far_hit_cycles > 0)
    rec.served_references = ServedReferencesRecord{far_hit_cycles, miss_reference, refs.dram_from};
  std::vector<ConflictRecord> pools;
  std::vector<std::uint32_t> ways;
  const int n_pools = pools_for(level);
  // The eviction sweeps' targets: lines homed in the SM's own partition where DRAM misses tell
  // the two homes apart (a far-homed target's near copy is not evicted by a conflict in one
  // set; on the H200 only near-homed targets gave repeatable sets).
  measure::cache::TargetSelection targets;
  if (level == Level::kL2 && p.max_sweep > 0 && pool_lines > 0) {
    targets = measure::cache::near_home_targets(p, kTargetCandidates, kSweepAlignment);
    rec.target_selection = TargetSelectionRecord{targets.split, targets.threshold, targets.lines,
                                                 targets.cycles, targets.targets};
  }
  // An eviction target that gives no set (many do on the H200: their eviction is not a
  // conflict within one set) is recorded and replaced by the next, up to kMaxEvictionPools pools
  // in all (at most n_pools + 3 before the eleventh session: on GPU-298cd471 two of three runs
  // ended without a ways finding, their four or five targets all evicted by volume), and sets
  // count together only when their targets were served alike (measure::cache::search_pools).
  const int max_pools = level == Level::kL2 && p.max_sweep > 0 ? kMaxEvictionPools : n_pools;
  const auto search = measure::cache::search_pools(n_pools, max_pools, [&](int k) {
    measure::cache::PoolOutcome o;
    o.seed = p.seed = seed0 + static_cast<std::uint64_t>(k) * 1000003u;
    if (static_cast<std::size_t>(k) < targets.targets.size())
      p.eviction_target = targets.targets[static_cast<std::size_t>(k)];
    const auto t0 = std::chrono::steady_clock::now();
    o.set = pool_conflict_set(p, level, r.cal, align, pool_lines);
    p.eviction_target.reset();
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (o.set.repeat_trials > 0 && o.set.evicted_with_set > 0)
      o.kind = served_after_eviction(o.set.reread_cycles, far_hit_cycles, miss_reference);
    return o;
  });
  const std::string served_first = search.kind;
  for (std::size_t k = 0; k < search.pools.size(); ++k) {
    auto cs = search.pools[k].set;
    const std::string& served = search.pools[k].kind;
    const bool chosen =
        std::find(search.chosen.begin(), search.chosen.end(), k) != search.chosen.end();
    if (cs.found && !chosen) {
      // A set whose target was served unlike the counted sets' (a near replica of a far line,
      // or a line homed beside the SM): on the H200 the two are evicted differently.
      cs.found = false;
      cs.note += (cs.note.empty() ? "" : "; ") + std::string("its target was served from ") +
                 (served.empty() ? "unknown" : served) +
                 " after eviction, the counted sets' from " +
                 (served_first.empty() ? "unknown" : served_first);
    }
    pools.push_back(ConflictRecord::of(cs, search.pools[k].seed));
    pools.back().search_s = search.pools[k].seconds;
    pools.back().served_after_eviction = served_from(served);
    if (k == 0 || (chosen && r.sets.empty())) {
      r.set = cs;
      set_seed = search.pools[k].seed;
    }
    if (!chosen) continue;
    r.sets.push_back(cs);
    ways.push_back(cs.ways);
    r.checks += cs.checks;
    r.checks_passed += cs.checks_passed;
  }
  p.seed = seed0;
  rec.set_target_served_after_eviction = served_from(served_first);
  const EvictionSummary summary = eviction_summary(pools);
  if (summary.swept > 0) rec.eviction_targets = summary;
  r.agreed = static_cast<int>(ways.size()) == n_pools &&
             std::all_of(ways.begin(), ways.end(), [&](auto w) { return w == ways.front(); });
  rec.conflict_set = ConflictRecord::of(r.set, set_seed);
  rec.pools = std::move(pools);
  rec.pools_agree = r.agreed;
  if (r.set.found && !r.agreed)
    rec.note =
        "independent candidate pools disagree on the conflict set's ways (or one found "
        "none): no ways, line or policy finding";
  if (!r.set.found)
    rec.note = level == Level::kL2
                   ? "no conflict set within the budget: " + r.set.note + " (candidates at " +
                         std::to_string(align) + "-B alignment in a " +
                         std::to_string(p.buffer_bytes >> 20) + " MiB pool)"
                   : "no conflict set: " + r.set.note;
  rec.all_pools_checks = r.checks;
  rec.all_pools_checks_passed = r.checks_passed;
  return r;
}

Finding ways_finding(const std::string& name, const WaysSamples& rec) {
  const ConflictRecord& cs = *rec.conflict_set;
  // Evidence: the minimality checks of every pool's set (the pools agreed on the ways).
  const double conf =
      confidence::combine({confidence::agreement(rec.all_pools_checks_passed, rec.all_pools_checks),
                           rec.calibration.separation()});
  const bool swept = cs.swept();
  json evidence = {{"lines", cs.lines}, {"pools", rec.pools.size()}};
  if (swept) {
    evidence["eviction_tests"] = cs.eviction_tests;
    // Which copy the sets evict: a far line's near replica, or a line homed beside the SM.
    evidence["target_served_after_eviction"] =
        rec.set_target_served_after_eviction == ServedFrom::kUnknown
            ? std::string("unknown")
            : to_string(rec.set_target_served_after_eviction);
    // Every target tried: those without a set, and what the volume check said of the searches
    // that stopped with every group needed.
    evidence["eviction_targets"] = eviction_summary(rec.pools);
  }
  return {name,
          static_cast<double>(cs.ways),
          "ways",
          conf,
          swept ? "a minimal eviction set: a target line placed, a candidate pool four times the "
                  "L2 swept from the same SM, the target re-read; the shortest evicting prefix "
                  "of the pool reduced by group elimination to the lines without which the "
                  "target survives (ways of them); independent pools and targets agree"
                : "a minimal conflict set (grown from random lines until their timed re-reads "
                  "miss, cut to the shortest conflicting prefix, pruned by group elimination) "
                  "holds ways + 1 lines; every one-line removal ends the conflict; independent "
                  "candidate pools agree",
          evidence};
}

double targets_confidence(std::size_t k, std::size_t n, const WaysSamples& rec) {
  return confidence::combine({confidence::agreement(k, n), rec.calibration.separation()});
}

}  // namespace gpuprobe::probes::cache_structure
