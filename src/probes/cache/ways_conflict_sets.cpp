#include "probes/cache/ways_conflict_sets.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "core/confidence.hpp"
#include "core/finding_names.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "probes/cache/sequence_session.hpp"

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

json conflict_set_json(const analysis::cache::ConflictSet& cs, std::uint64_t seed) {
  json j = {{"found", cs.found},
            {"lines", cs.lines},
            {"ways", cs.ways},
            {"checks", cs.checks},
            {"checks_passed", cs.checks_passed},
            {"candidates_tried", cs.candidates_tried},
            {"note", cs.note},
            {"seed", seed},
            {"method", cs.method}};
  if (cs.method == "eviction_sweeps") {
    j["target"] = cs.target;
    j["eviction_tests"] = cs.eviction_tests;
    j["ways_at_least"] = cs.ways_at_least;
    j["shortest_prefix_lines"] = cs.shortest_prefix;
    if (cs.volume_trials > 0)
      j["volume"] = {
          {"trials", cs.volume_trials},
          {"restored", cs.volume_restored},
          {"group_lines", cs.volume_group_lines},
          {"verdict", analysis::cache::volume_verdict(cs.volume_trials, cs.volume_restored)}};
    j["steps"] = cs.steps;
    j["repeat"] = {{"trials", cs.repeat_trials},
                   {"evicted_with_set", cs.evicted_with_set},
                   {"evicted_with_one_less", cs.evicted_with_less},
                   {"reread_cycles_median", cs.reread_cycles},
                   {"probabilistic", cs.probabilistic()}};
  }
  return j;
}

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

json eviction_summary(const json& pools) {
  int swept = 0, probabilistic = 0, bounded = 0;
  std::uint64_t bound = 0;
  std::map<std::string, int> volume;  // the volume check's verdicts of the stopped searches
  for (const auto& pj : pools) {
    if (pj.value("method", "") != "eviction_sweeps" || !pj.contains("repeat")) continue;
    ++swept;
    if (pj.contains("volume"))
      ++volume[analysis::cache::volume_verdict(pj["volume"].at("trials").get<int>(),
                                               pj["volume"].at("restored").get<int>())];
    const bool random = pj["repeat"].value("probabilistic", false);
    probabilistic += random ? 1 : 0;
    const auto b = pj.value("ways_at_least", std::uint64_t{0});
    if (b > 0 && !random && !pj.value("found", false)) {
      bound = bounded == 0 ? b : std::min(bound, b);
      ++bounded;
    }
  }
  json out = {{"swept", swept},
              {"probabilistic", probabilistic},
              {"bounded", bounded},
              {"ways_at_least", bound}};
  // Searches stopped with the groups kept each needed, by what the volume check said
  // (analysis::cache::volume_verdict): fresh lines of the same count restored the eviction every
  // time ("volume": a capacity eviction), at most 5 of 8 times ("not_volume"), in between
  // ("undecided"), or the check was cut short ("incomplete").
  if (!volume.empty())
    out["stopped_by"] = {{"volume", volume["volume"]},
                         {"not_volume", volume["not_volume"]},
                         {"undecided", volume["undecided"]},
                         {"incomplete", volume[""]}};
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

LevelRun conflict_run(measure::cache::Probe& p, Level level, json& rec, std::uint64_t pool_lines,
                      const ServedReferences& refs) {
  const double far_hit_cycles = refs.far_hit_cycles;
  LevelRun r;
  r.cal = measure::cache::calibrate(p, level);
  rec["calibration"] = calibration_json(r.cal);
  rec["carveout_percent"] = p.carveout_percent;
  rec["max_sequence"] = p.max_sequence;
  if (!r.cal.ok) {
    rec["note"] = "hits and misses overlap: no threshold";
    return r;
  }
  const std::uint64_t align = alignment_for(p, level);
  rec["candidate_alignment_bytes"] = align;
  rec["pool_bytes"] = p.buffer_bytes;
  const std::uint64_t seed0 = p.seed;
  std::uint64_t set_seed = seed0;
  // A DRAM miss as a chase meets it (latency.sweep); the calibration's first reads also pay
  // page-translation misses and sit higher.
  const double miss_reference = refs.dram_cycles > 0 ? refs.dram_cycles : r.cal.miss_cycles;
  if (far_hit_cycles > 0)
    rec["served_references"] = {{"far_hit_cycles", far_hit_cycles},
                                {"dram_cycles", miss_reference},
                                {"dram_from", refs.dram_from}};
  json pools = json::array();
  std::vector<std::uint32_t> ways;
  const int n_pools = pools_for(level);
  // The eviction sweeps' targets: lines homed in the SM's own partition where DRAM misses tell
  // the two homes apart (a far-homed target's near copy is not evicted by a conflict in one
  // set; on the H200 only near-homed targets gave repeatable sets).
  measure::cache::TargetSelection targets;
  if (level == Level::kL2 && p.max_sweep > 0 && pool_lines > 0) {
    targets = measure::cache::near_home_targets(p, kTargetCandidates, kSweepAlignment);
    rec["target_selection"] = {{"split", targets.split},
                               {"threshold_cycles", targets.threshold},
                               {"lines", targets.lines},
                               {"cold_cycles", targets.cycles},
                               {"near_home_targets", targets.targets}};
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
    pools.push_back(conflict_set_json(cs, search.pools[k].seed));
    pools.back()["search_s"] = search.pools[k].seconds;
    if (!served.empty()) pools.back()["served_after_eviction"] = served;
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
  if (!served_first.empty()) rec["set_target_served_after_eviction"] = served_first;
  const json summary = eviction_summary(pools);
  if (summary.at("swept").get<int>() > 0) rec["eviction_targets"] = summary;
  r.agreed = static_cast<int>(ways.size()) == n_pools &&
             std::all_of(ways.begin(), ways.end(), [&](auto w) { return w == ways.front(); });
  rec["conflict_set"] = conflict_set_json(r.set, set_seed);
  rec["pools"] = pools;
  rec["pools_agree"] = r.agreed;
  if (r.set.found && !r.agreed)
    rec["note"] =
        "independent candidate pools disagree on the conflict set's ways (or one found "
        "none): no ways, line or policy finding";
  if (!r.set.found)
    rec["note"] = level == Level::kL2
                      ? "no conflict set within the budget: " + r.set.note + " (candidates at " +
                            std::to_string(align) + "-B alignment in a " +
                            std::to_string(p.buffer_bytes >> 20) + " MiB pool)"
                      : "no conflict set: " + r.set.note;
  rec["all_pools_checks"] = r.checks;
  rec["all_pools_checks_passed"] = r.checks_passed;
  return r;
}

Finding ways_finding(const std::string& name, const json& rec) {
  const auto& cs = rec.at("conflict_set");
  // Evidence: the minimality checks of every pool's set (the pools agreed on the ways).
  const double conf = confidence::combine(
      {confidence::agreement(rec.at("all_pools_checks_passed").get<std::size_t>(),
                             rec.at("all_pools_checks").get<std::size_t>()),
       calibration_separation(rec.at("calibration"))});
  const bool swept = cs.value("method", "") == "eviction_sweeps";
  json evidence = {{"lines", cs.at("lines")}, {"pools", rec.at("pools").size()}};
  if (swept) {
    evidence["eviction_tests"] = cs.value("eviction_tests", 0);
    // Which copy the sets evict: a far line's near replica, or a line homed beside the SM.
    evidence["target_served_after_eviction"] =
        rec.value("set_target_served_after_eviction", std::string("unknown"));
    // Every target tried: those without a set, and what the volume check said of the searches
    // that stopped with every group needed.
    if (rec.contains("pools")) evidence["eviction_targets"] = eviction_summary(rec.at("pools"));
  }
  return {name,
          cs.at("ways").get<double>(),
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

double targets_confidence(std::size_t k, std::size_t n, const json& rec) {
  return confidence::combine(
      {confidence::agreement(k, n), calibration_separation(rec.at("calibration"))});
}

}  // namespace gpuprobe::probes::cache_structure
