// The cache-structure family on Sequencer: each experiment runs an adaptive inference
// from src/analysis/cache_inference.* (the same code the property test runs on modelled
// hierarchies) and records its evidence; analyze() turns the recorded conclusion and evidence
// into findings with confidences from core/confidence.hpp.
#include "probes/cache/cache_structure.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "measure/cache_search.hpp"
#include "analysis/granularity.hpp"
#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/finding_names.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "device/sequence.hpp"
#include "measure/chase_point.hpp"
#include "measure/replicates.hpp"

namespace gpuprobe::probes {
namespace {

using measure::cache::Level;
using nlohmann::json;
using units::kKiB;
using units::kMiB;

constexpr const char* kNoSequencer =
    "this device has no access-sequence primitive (Sequencer)";

std::vector<double> to_doubles(const json& j) {
  std::vector<double> v;
  for (const auto& x : j) v.push_back(x.get<double>());
  return v;
}

/// The probe buffer, the oracle over it and the budget it spent.
struct Session {
  Sequencer* seq = nullptr;
  std::unique_ptr<ProbeBuffer> buffer;
  measure::cache::Probe probe;
};

/// nullopt when the device has no sequencer (the caller waives). `span` = candidate pool.
std::optional<Session> open_session(Context& ctx, std::uint64_t bytes, std::uint64_t span,
                                    int carveout_percent = -1) {
  auto* seq = as_sequencer(ctx.device);
  if (seq == nullptr) return std::nullopt;
  Session s;
  s.seq = seq;
  if (bytes + 64 * kMiB > ctx.device.free_memory())
    throw UsageError("needs " + std::to_string(bytes) + " B of free device memory");
  s.buffer = seq->alloc_probe_buffer(bytes);
  auto* buf = s.buffer.get();
  s.probe.run = [seq, buf](const AccessSequence& a) { return seq->run_sequence(*buf, a); };
  s.probe.buffer_bytes = span;
  s.probe.seed = ctx.options.seed;
  s.probe.sm = 0;
  s.probe.carveout_percent = carveout_percent;
  // A margin below the sequencer's stated maximum: the CUDA sequencer refused launches of
  // exactly max_sequence_length() accesses on the H200 (cudaFuncSetAttribute: invalid argument).
  s.probe.max_sequence = seq->max_sequence_length() - seq->max_sequence_length() / 16;
  s.probe.max_sweep = seq->max_sweep_length();
  s.probe.contiguous_bytes = seq->physically_contiguous_bytes();
  // The L1 is read only by sequences that the sequencer stages whole (device/sequence.hpp).
  if (carveout_percent == 0)
    s.probe.max_sequence = std::min(s.probe.max_sequence, kSequenceStagedAccesses);
  return s;
}

std::uint64_t pow2_at_least(std::uint64_t v) {
  std::uint64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

/// The L1 sequences ask for no shared memory (carve-out 0 %: the largest L1), so the L1 they
/// measure is the same whatever the driver's default carve-out.
int carveout_for(Level level) { return level == Level::kL1 ? 0 : -1; }

/// L2 candidates lie at one in-page offset of 2 MiB pages (kL2PoolPages of them): they share
/// every address bit below 2 MiB, so they fall into the few sets that the page-number bits
/// select. Random lines over the whole L2 almost never put ways + 1 lines into one set (on the
/// H200 none among 16384); this pool concentrates them (collisions are still measured).
constexpr std::uint64_t kL2PoolPages = 2048;
constexpr std::uint64_t kL2PoolAlignment = 2 * kMiB;

/// Pool span for a level: 8 x the L1's unified storage (at least 4 MiB); for the L2
/// kL2PoolPages pages when free memory allows, else 8 x the L2 (at least 4 MiB).
std::uint64_t span_for(device::Device& dev, Level level) {
  const auto& info = dev.info();
  if (level == Level::kL1)
    return pow2_at_least(std::max<std::uint64_t>(
        8 * std::max<std::uint64_t>(info.l1_shared_unified_bytes, 64 * kKiB), 4 * kMiB));
  const std::uint64_t paged = kL2PoolPages * kL2PoolAlignment;
  if (dev.free_memory() > paged + paged / 4 + 256 * kMiB) return paged;
  return pow2_at_least(std::max<std::uint64_t>(8 * info.l2_bytes, 4 * kMiB));
}

/// Candidate alignment: 1 KiB for the L1; for the L2 one page when the pool is the paged one,
/// else the smallest power of two >= 1 KiB that leaves at most 16384 candidate slots (a test of
/// that many lines takes a few consecutive calls; more would not fit the family's time budget).
std::uint64_t alignment_for(const measure::cache::Probe& p, Level level) {
  if (level == Level::kL1) return 1024;
  if (p.buffer_bytes == kL2PoolPages * kL2PoolAlignment) return kL2PoolAlignment;
  std::uint64_t a = 1024;
  while (p.buffer_bytes / a > 16384) a *= 2;
  return a;
}

/// The set-index record with its kind, sets and modulo refutation judged again from its flips
/// and the conflict set's lines (analysis::cache::judge_set_index_kind), so that a recorded
/// result is judged by the current rules.
json rejudged_set_index(const json& rec) {
  json si = rec.at("set_index");
  // A record made without a line size was not judged (kind "unknown"): nothing to re-judge.
  const auto recorded_line = rec.value("line_bytes", 0u);
  if (recorded_line == 0 || !rec.contains("line") || !rec["line"].value("found", false) ||
      si.value("kind", std::string()) == "unknown")
    return si;
  const auto bit = [](int b) {
    if (b < 0 || b > 62)
      throw UsageError("set_index: bit " + std::to_string(b) + " is out of range; allowed: 0..62");
    return b;
  };
  analysis::cache::SetIndexResult r;
  r.bits = si.at("bits").get<std::vector<int>>();
  r.page_bits = si.value("page_bits", std::vector<int>{});
  for (int b : r.bits) bit(b);
  for (int b : r.page_bits) bit(b);
  for (const auto& pr : si.at("equal_pairs"))
    r.equal_pairs.emplace_back(bit(pr.at(0).get<int>()), bit(pr.at(1).get<int>()));
  r.lowest_bit_tested = si.value("lowest_bit_tested", 0);
  r.highest_bit_tested = si.value("highest_bit_tested", 0);
  r.first_page_bit = si.value("first_page_bit", -1);
  const auto& cs = rec.at("conflict_set");
  const auto lines = cs.value("lines", std::vector<std::uint64_t>{});
  const std::uint64_t contiguous =
      r.first_page_bit >= 0 && r.first_page_bit < 63 ? std::uint64_t{1} << r.first_page_bit : 0;
  analysis::cache::judge_set_index_kind(r, lines, cs.value("ways", 0u), recorded_line,
                                        rec.value("capacity_bytes_used", std::uint64_t{0}),
                                        contiguous);
  si["kind"] = r.kind;
  si["sets"] = r.sets;
  si["modulo_refuted"] = r.modulo_refuted;
  si["modulo_refuted_by"] = r.modulo_refuted_by;
  si["member_distance_gcd_lines"] = r.member_distance_gcd_lines;
  return si;
}

json calibration_json(const analysis::cache::Calibration& c) {
  return {{"ok", c.ok},
          {"hit_cycles", c.hit_cycles},
          {"miss_cycles", c.miss_cycles},
          {"threshold", c.threshold},
          {"hits", c.hits},
          {"misses", c.misses}};
}

double calibration_separation(const json& cal) {
  return confidence::separation(
      confidence::separation_z(to_doubles(cal.at("hits")), to_doubles(cal.at("misses"))));
}

/// Calibration + minimal conflict set of one level, recorded under samples[level]. The set is
/// built from pools_for(level) independent candidate pools (different seeds); it counts (`agreed`)
/// only when every pool found a set of the same ways: on the H200 a single pool once gave a
/// reproducible but wrong "109-way" L1 set, so one pool's own minimality checks are not evidence
/// enough.
int pools_for(Level level) { return level == Level::kL1 ? 3 : 2; }
struct LevelRun {
  analysis::cache::Calibration cal;
  analysis::cache::ConflictSet set;                ///< the first pool's set
  std::vector<analysis::cache::ConflictSet> sets;  ///< every pool's set (when found)
  bool agreed = false;
  std::size_t checks = 0, checks_passed = 0;  ///< over all pools
};
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

/// Candidate pool of the L2 eviction search: four times the L2's lines at 128 B, so that even
/// with only one partition's half of them landing beside the target every set receives its
/// ways twice over.
std::uint64_t sweep_pool_lines(const Context& ctx) { return 4 * ctx.device.info().l2_bytes / 128; }
/// Eviction candidates sit at 1 KiB: any line size up to 1 KiB leaves them distinct lines.
constexpr std::uint64_t kSweepAlignment = 1024;
/// Lines read cold to pick near-homed eviction targets (half of them, about, are).
constexpr std::size_t kTargetCandidates = 48;
/// Pools (eviction targets) one L2 search may use. On the H200 about six targets in ten give a
/// set (44 of 73 over the eleventh session's 22 runs; 4 of 16 on GPU-298cd471), so ten give two
/// nearly always; a target costs about 1.1 to 1.9 s, with a set or without.
constexpr int kMaxEvictionPools = 10;

/// The conflict set of one pool: random lines by sequences first (cheap, enough for an L2
/// of a few thousand sets); for an L2 whose hashed sets outnumber what a sequence can reach,
/// eviction tests over a swept pool (analysis/cache_inference.hpp).
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

/// The eviction targets of a level, from the recorded pools (analyze() recomputes it, so a
/// re-analysis of recorded samples gives the same answer): how many were swept, how many
/// evicted probabilistically, and the lower bound on the ways of the repeatable ones that
/// needed every group (a probabilistic target bounds nothing).
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

/// Where an evicted target was re-read from: the nearer of the measured far-hit latency
/// (its home copy in the other partition survived: the evicted copy was a near replica) and the
/// DRAM latency (the target was homed beside the SM). Empty without a far-hit latency.
std::string served_after_eviction(double reread, double far_hit, double miss) {
  if (far_hit <= 0 || reread <= 0) return "";
  return std::fabs(reread - far_hit) < std::fabs(reread - miss) ? "far_partition" : "dram";
}

/// What an evicted target's re-read is judged against: the far hit, and the DRAM latency of a
/// line homed beside the SM with the finding it came from (0 and empty: the calibration's misses).
struct ServedReferences {
  double far_hit_cycles = 0, dram_cycles = 0;
  std::string dram_from;
};

/// The references from earlier findings. The eviction targets are lines homed beside the SM: an
/// evicted one comes back at the near home's DRAM latency (cache.l2.far_hit), not at the
/// sweep's mean of both homes (on the H200 571.7 against 657.7 cycles: a re-read at 552.5 sat
/// nearer the far hit than that mean, and a second 16-way set was set aside as "served from
/// far_partition"); the sweep's DRAM latency only where that was not measured.
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
                      const ServedReferences& refs = {}) {
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

void waive(ExperimentResult& r, const std::string& why) {
  r.status = Status::kWaived;
  r.reason = why;
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

// ------------------------------------------------------------------------------------------

/// A conclusion that k of n eviction targets support, read through the level's calibration.
double targets_confidence(std::size_t k, std::size_t n, const json& rec) {
  return confidence::combine(
      {confidence::agreement(k, n), calibration_separation(rec.at("calibration"))});
}

/// The line size from every pool's conflict set; it counts when they all agree.
json line_record(measure::cache::Probe& p, Level level, const LevelRun& lr, json& rec) {
  json per_pool = json::array();
  std::size_t agreeing = 0, at_answer = 0;
  for (const auto& set : lr.sets) {
    const auto line = measure::cache::infer_line_size(p, level, lr.cal, set);
    per_pool.push_back({{"found", line.found},
                        {"line_bytes", line.line_bytes},
                        {"agreeing", line.agreeing},
                        {"trials_at_answer", line.trials_at_answer},
                        {"trials", line.trials}});
    agreeing += line.agreeing;
    at_answer += line.trials_at_answer;
  }
  bool same = !per_pool.empty();
  for (const auto& l : per_pool)
    same = same && l.at("found").get<bool>() &&
           l.at("line_bytes") == per_pool.front().at("line_bytes");
  if (!same) rec["line_note"] = "the pools' conflict sets give different line sizes";
  return {{"found", same},
          {"line_bytes", per_pool.empty() ? json(0) : per_pool.front().at("line_bytes")},
          {"agreeing", agreeing},
          {"trials_at_answer", at_answer},
          {"pools", per_pool}};
}

void line_finding(const std::string& lv, const json& rec, std::vector<Finding>& out) {
  if (!rec.contains("line")) return;
  const auto& line = rec["line"];
  if (!line.value("found", false)) return;
  out.push_back(
      {"cache." + lv + ".line_size",
       line.at("line_bytes").get<double>(),
       "bytes",
       confidence::combine({confidence::agreement(line.at("agreeing").get<std::size_t>(),
                                                  line.at("trials_at_answer").get<std::size_t>()),
                            calibration_separation(rec.at("calibration"))}),
       "smallest address delta that moves a conflict-set member out of its line (the conflict "
       "ends); smaller deltas keep it (same line, whatever the sector); the conflict sets of "
       "independent pools agree",
       {{"pools", line.at("pools")}}});
}

json policy_record(measure::cache::Probe& p, Level level, const LevelRun& lr) {
  const auto pol = measure::cache::infer_policy(p, level, lr.cal, lr.set);
  return {{"class", pol.policy},
          {"agreeing", pol.agreeing},
          {"tests", pol.tests},
          {"deterministic", pol.deterministic},
          {"evidence", pol.evidence}};
}

void policy_finding(const std::string& lv, const json& rec, std::vector<Finding>& out) {
  static const char* const kClasses[] = {"lru", "fifo", "tree_plru", "random", "none"};
  if (!rec.contains("policy") && rec.contains("pools")) {
    // No repeatable set, but targets whose eviction by fixed lines comes and goes. LRU and FIFO
    // evict a target once enough lines of its set were filled after it, in any order; a
    // random victim, or an order-dependent policy (tree-PLRU) under the sweep's parallel,
    // unordered loads, does not. The sequencer cannot order a sweep, so the two stay tied.
    const json et = eviction_summary(rec["pools"]);
    const auto n = et.at("swept").get<std::size_t>(), k = et.at("probabilistic").get<std::size_t>();
    if (k >= 2 && 2 * k > n)
      out.push_back(
          {"cache." + lv + ".replacement",
           -1.0,
           "class",
           confidence::combine({targets_confidence(k, n, rec), 0.5}),
           "value -1 (tied: random or tree-PLRU; not LRU, not FIFO): for most eviction "
           "targets, the same lines swept the same way evict the target in some trials "
           "and not in others (8 trials each, with the set and with one line or group "
           "less). LRU and FIFO evict after enough fills in any order; a random victim "
           "or an order-dependent tree-PLRU under the sweep's unordered parallel loads "
           "does not, and the sweeps cannot tell those two apart (confidence x 0.5: either class "
           "explains the evidence)",
           {{"policy", "random_or_tree_plru"},
            {"excluded", {"lru", "fifo"}},
            {"targets", n},
            {"probabilistic_targets", k}}});
    return;
  }
  if (!rec.contains("policy")) return;
  const auto& pol = rec["policy"];
  const std::string cls = pol.at("class");
  double code = -1;  // a tie between classes
  for (int i = 0; i < 5; ++i)
    if (cls == kClasses[i]) code = i;
  double conf = confidence::agreement(pol.at("agreeing").get<std::size_t>(),
                                      pol.at("tests").get<std::size_t>());
  if (code < 0) conf = confidence::combine({conf, 0.5});  // two classes explain the evidence
  out.push_back({"cache." + lv + ".replacement",
                 code,
                 "class",
                 confidence::combine({conf, calibration_separation(rec.at("calibration"))}),
                 "value: 0 lru, 1 fifo, 2 tree_plru, 3 random, 4 none of these, -1 tied (see "
                 "policy); victims observed per sequence against each class's prediction",
                 {{"policy", cls}, {"deterministic", pol.at("deterministic")}}});
}

json cyclic_json(const analysis::cache::CyclicResult& c) {
  if (!c.measured) return {{"measured", false}};
  json j = {
      {"measured", true},        {"retention", c.retention}, {"round_retention", c.round_retention},
      {"rounds", c.rounds},      {"orders", c.orders},       {"lines", c.lines},
      {"predicted", c.predicted}};
  if (c.fillers_per_access) {
    j["fillers"] = c.fillers;
    j["fillers_per_access"] = c.fillers_per_access;
  }
  return j;
}

json cyclic_record(measure::cache::Probe& p, Level level, const LevelRun& lr) {
  return cyclic_json(measure::cache::cyclic_retention(p, level, lr.cal, lr.set));
}

/// The cycle again with lines of other sets between its accesses (as many as one staged
/// sequence holds, at most kMaxFillersPerAccess): the one-bit flips of its members that
/// infer_set_index found to leave the set.
constexpr std::size_t kMaxFillersPerAccess = 64;
constexpr int kInterleavedRounds = 8, kInterleavedOrders = 2;
json interleaved_cyclic_record(measure::cache::Probe& p, Level level, const LevelRun& lr,
                               const analysis::cache::SetIndexResult& idx, std::uint64_t span) {
  const auto fillers =
      analysis::cache::out_of_set_lines(lr.set, idx.bits, idx.first_page_bit, span);
  const std::size_t per_round = lr.set.lines.size() * kInterleavedRounds;
  const std::size_t limit = p.max_sequence
                                ? std::min(p.max_sequence, kSequenceStagedAccesses)
                                : kSequenceStagedAccesses;
  const std::size_t fit = limit / per_round;
  if (fillers.empty() || fit < 2) return {{"measured", false}};
  return cyclic_json(measure::cache::cyclic_retention(p, level, lr.cal, lr.set, kInterleavedOrders,
                                                       kInterleavedRounds, fillers,
                                                       std::min(kMaxFillersPerAccess, fit - 1)));
}

/// cache.<level>.cyclic_retention: the share of a ways + 1 line cycle that still hits (see
/// measure::cache::cyclic_retention). Confidence: the rounds that agree with it within one
/// line of the cycle (agreement), times the calibration's hit/miss separation.
void cyclic_finding(const std::string& lv, const json& rec, std::vector<Finding>& out) {
  if (!rec.contains("cyclic") || !rec["cyclic"].value("measured", false)) return;
  const auto& c = rec["cyclic"];
  const double value = c.at("retention").get<double>();
  const double lines = c.at("lines").get<double>();
  // The rounds whose retention lies within one line of the cycle of the whole's, as agreement
  // times the calibration's separation.
  const auto round_confidence = [&](const json& cycle, double whole) {
    std::size_t agreeing = 0, rounds = 0;
    for (const auto& x : cycle.at("round_retention")) {
      ++rounds;
      agreeing += std::fabs(x.get<double>() - whole) <= 1.0 / lines ? 1 : 0;
    }
    return confidence::combine(
        {confidence::agreement(agreeing, rounds), calibration_separation(rec.at("calibration"))});
  };
  out.push_back({"cache." + lv + ".cyclic_retention",
                 value,
                 "fraction",
                 round_confidence(c, value),
                 "the conflict set's ways + 1 lines read in one fixed random order round after "
                 "round (as a chase past the cache visits each set): the share of accesses after "
                 "the first round that hit. LRU, FIFO and tree-PLRU keep none (predicted); random "
                 "victims or an insertion below the most recent place keep some. The policy "
                 "sequences see which line leaves, not where a new line is placed",
                 {{"predicted", c.at("predicted")},
                  {"round_retention", c.at("round_retention")},
                  {"lines", c.at("lines")}}});
  if (!c.contains("interleaved") || !c["interleaved"].value("measured", false)) return;
  const auto& in = c["interleaved"];
  const double iv = in.at("retention").get<double>();
  out.push_back({"cache." + lv + ".interleaved_retention",
                 iv,
                 "fraction",
                 round_confidence(in, iv),
                 "the same cycle with fillers_per_access lines of other sets (members with one "
                 "set-index bit flipped) read after each of its accesses, as a chase's other "
                 "lines come between two visits to one set: the share of the set's accesses "
                 "after the first round that hit. A policy confined to the set keeps what it "
                 "keeps without them (cyclic_retention); a different share means the sets "
                 "share their replacement state or their storage",
                 {{"predicted", in.at("predicted")},
                  {"round_retention", in.at("round_retention")},
                  {"fillers", in.at("fillers")},
                  {"fillers_per_access", in.at("fillers_per_access")},
                  {"without_fillers", value}}});
}

constexpr std::array<std::uint32_t, 4> kLineStrides = {64, 128, 256, 512};
constexpr double kLineWorkingSetFactor = 1.25;

class WaysExperiment : public Experiment {
 public:
  explicit WaysExperiment(Level level) : level_(level) {}
  std::string id() const override {
    return "cache." + measure::cache::to_string(level_) + ".ways";
  }
  std::string description() const override {
    return level_ == Level::kL1
               ? "L1 structure from one minimal conflict set per candidate pool (ld.global.ca, "
                 "random candidate lines, collisions measured): associativity, set-index bits, "
                 "line size (the smallest move that leaves a member's line) and replacement "
                 "class (victims of policy-distinguishing sequences)"
               : "L2 structure (ld.global.cg, L2 flushed before each test): a minimal conflict "
                 "set per target, by sequences or, for a hashed L2 too large for them, by "
                 "eviction sweeps over a pool four times the L2; on it associativity, the "
                 "set-index function (which address bits move a line to another set, which "
                 "pairs cancel), line size and replacement class; targets whose eviction does "
                 "not repeat name the policy random";
  }
  std::vector<Axis> typed_axes() const override {
    return {
        fixed(string_axis("level", {measure::cache::to_string(level_)}, "cache level probed"))};
  }
  std::vector<std::string> depends_on() const override {
    if (level_ == Level::kL1) return {"latency.sweep"};
    return {"latency.sweep", "cache.l2.far_hit"};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const std::uint64_t span = span_for(ctx.device, level_);
    auto s = open_session(ctx, span, span, carveout_for(level_));
    if (!s) return waive(r, kNoSequencer);
    json rec;
    auto lr = conflict_run(s->probe, level_, rec, sweep_pool_lines(ctx), served_references(ctx));
    if (lr.agreed) {
      rec["line"] = line_record(s->probe, level_, lr, rec);
      rec["policy"] = policy_record(s->probe, level_, lr);
      rec["cyclic"] = cyclic_record(s->probe, level_, lr);
      struct {
        bool found;
        std::uint32_t line_bytes;
      } line{rec["line"].value("found", false), rec["line"].value("line_bytes", 0u)};
      std::uint64_t capacity = 0;
      std::string capacity_from;
      if (level_ == Level::kL1) {
        if (auto f = ctx.prior.get(finding::kL1Capacity)) {
          capacity = static_cast<std::uint64_t>(f->value);
          capacity_from = "l1.capacity";
        }
      } else {
        // The sets of one partition (the conflict set lives in one): the whole L2 over the
        // partitions cache.l2.partition (or cache.l2.far_hit) found. The whole L2 as the device
        // reports it; else the sweep's l2.capacity, the last point on the plateau, which a soft
        // knee places below the capacity (55.4 of 60 MiB on the H200). The sweep's near knee
        // moves from run to run and is not used.
        std::size_t parts = 1;
        if (auto g = ctx.prior.get(finding::kL2PartitionSmGroupSizes))
          parts = std::max<std::size_t>(1, g->extra.value("group_sizes", json::array()).size());
        else if (ctx.prior.get(finding::kL2FarHitLatency))
          parts = 2;  // cache.l2.far_hit saw a far partition
        double whole = static_cast<double>(ctx.device.info().l2_bytes);
        capacity_from = "the device's L2 size";
        if (!(whole > 0))
          if (auto f = ctx.prior.get(finding::kL2Capacity)) {
            whole = f->value;
            capacity_from = "l2.capacity";
          }
        capacity = static_cast<std::uint64_t>(whole / static_cast<double>(parts));
        if (parts > 1) capacity_from += " / " + std::to_string(parts) + " partitions";
      }
      rec["capacity_from"] = capacity_from;
      if (!capacity && level_ == Level::kL1 && line.found) {
        const auto cap =
            measure::cache::infer_capacity(s->probe, level_, lr.cal, line.line_bytes, span);
        capacity = cap.bytes;
        rec["capacity_from_sequences_bytes"] = cap.bytes;
      }
      const auto idx = measure::cache::infer_set_index(s->probe, level_, lr.cal, lr.set,
                                                        line.found ? line.line_bytes : 0, capacity);
      rec["line_bytes"] = line.line_bytes;
      rec["capacity_bytes_used"] = capacity;
      json pairs = json::array();
      for (auto [a, b] : idx.equal_pairs) pairs.push_back({a, b});
      rec["set_index"] = {{"bits", idx.bits},
                          {"equal_pairs", pairs},
                          {"kind", idx.kind},
                          {"sets", idx.sets},
                          {"lowest_bit_tested", idx.lowest_bit_tested},
                          {"highest_bit_tested", idx.highest_bit_tested},
                          {"first_page_bit", idx.first_page_bit},
                          {"page_bits", idx.page_bits},
                          {"modulo_refuted", idx.modulo_refuted},
                          {"modulo_refuted_by", idx.modulo_refuted_by},
                          {"member_distance_gcd_lines", idx.member_distance_gcd_lines},
                          {"tests", idx.tests},
                          {"pair_tests", idx.pair_tests}};
      if (rec["cyclic"].value("measured", false))
        rec["cyclic"]["interleaved"] = interleaved_cyclic_record(s->probe, level_, lr, idx, span);
      // The XOR hash's columns (L1 only: an L2 set needs eviction sweeps to be seen).
      if (level_ == Level::kL1 && line.found && !idx.bits.empty()) {
        const auto hc = measure::cache::infer_hash_columns(
            s->probe, level_, lr.cal, lr.set, idx.bits, idx.lowest_bit_tested, idx.first_page_bit);
        json dep = json::array();
        for (const auto& [b, combo] : hc.dependent) dep.push_back({{"bit", b}, {"equals", combo}});
        // A decoupled L1 (its tags name more lines than the chase holds): which line leaves.
        const std::uint64_t tag_lines = hc.found ? (std::uint64_t{1} << hc.rank) * lr.set.ways : 0;
        if (hc.found && hc.note.empty() && capacity && line.line_bytes &&
            tag_lines * line.line_bytes > capacity) {
          const auto dv = measure::cache::infer_data_victim(s->probe, level_, lr.cal,
                                                             line.line_bytes, hc.masks, tag_lines);
          // Sets of the lines themselves: random lines of the first tag_lines lines (at most
          // `ways` per tag set, so no tag conflicts) grown until they conflict, then reduced.
          auto dp = s->probe;
          std::uint64_t span = 1;
          while (span * 2 <= tag_lines * line.line_bytes) span *= 2;
          dp.buffer_bytes = span;
          const auto ds = measure::cache::find_conflict_set(
              dp, level_, lr.cal, kSequenceStagedAccesses, line.line_bytes);
          s->probe.accesses = dp.accesses;  // dp began as a copy: its counts include ours
          s->probe.calls = dp.calls;
          rec["data_sets"] = conflict_set_json(ds, s->probe.seed);
          rec["data_sets"]["span_bytes"] = span;
          rec["data_victim"] = {{"measured", dv.measured},
                                {"note", dv.note},
                                {"lines_held", dv.lines_held},
                                {"filled", dv.filled},
                                {"filled_cycle", dv.filled_cycle},
                                {"victim", dv.victim},
                                {"groups", dv.groups},
                                {"oldest_probed", dv.oldest_probed},
                                {"oldest_evicted", dv.oldest_evicted},
                                {"own_probed", dv.own_probed},
                                {"own_evicted", dv.own_evicted},
                                {"bin_probed", dv.bin_probed},
                                {"bin_evicted", dv.bin_evicted},
                                {"misfit_z", dv.misfit_z},
                                {"rejected_z", dv.rejected_z},
                                {"probes", dv.probes},
                                {"evidence", dv.evidence}};
        }
        rec["hash_columns"] = {{"found", hc.found},
                               {"rank", hc.rank},
                               {"independent_bits", hc.independent_bits},
                               {"dependent", dep},
                               {"highest_bit_searched", hc.highest_bit_searched},
                               {"masks", hc.masks},
                               {"tests", hc.tests},
                               {"verified", hc.verified},
                               {"note", hc.note}};
      }
    }
    if (level_ == Level::kL2) rec["line_by_stride"] = line_by_stride_record(ctx);
    rec["sequences"] = s->probe.calls;
    rec["accesses"] = s->probe.accesses;
    r.parameters = {{"pool_bytes", span},
                    {"op", level_ == Level::kL1 ? "ld.global.ca" : "ld.global.cg"},
                    {"sm", 0}};
    r.samples = rec;
  }
  /// Chases (ld.global.cg, one SM) over one working set past the near-partition knee at node
  /// strides 64 ... 512 B, 3 replicates each (fresh chains): see analysis::line_by_stride.
  static json line_by_stride_record(Context& ctx) {
    // The knee of one SM's partition: the copy chases' bisection (cache.l2.far_hit) where it
    // ran, else the sweep's near knee, else half the L2.
    double knee = 0, hit = 0;
    const char* knee_from = "";
    if (auto f = ctx.prior.get(finding::kL2ReplicaCapacity)) {
      knee = f->value;
      knee_from = finding::kL2ReplicaCapacity.name;
    } else if (auto f = ctx.prior.get(finding::kL2NearCapacity)) {
      knee = f->value;
      knee_from = finding::kL2NearCapacity.name;
    } else if (auto f = ctx.prior.get(finding::kL2Capacity)) {
      knee = f->value / 2;
      knee_from = "l2.capacity / 2";
    }
    if (auto f = ctx.prior.get(finding::kL2HitLatency)) hit = f->value;
    json out = {{"strides", kLineStrides}, {"hit_cycles", hit}, {"knee_from", knee_from}};
    if (!(knee > 0)) {
      out["why"] = "needs a partition knee (l2.replica_capacity, l2.near_capacity or l2.capacity)";
      return out;
    }
    const auto ws = static_cast<std::uint64_t>(kLineWorkingSetFactor * knee) / 512 * 512;
    out["working_set_bytes"] = ws;
    // The replicates give the spread: each chain's own stopping rule is cut to the minimum.
    RunOptions o = ctx.options;
    o.protocol.min_repetitions = o.protocol.max_repetitions = kMinRepetitions;
    Context c{ctx.device, o, ctx.prior};
    json cycles = json::array();
    for (std::uint32_t stride : kLineStrides) {
      json v = json::array();
      for (int k = 0; k < measure::kReplicates; ++k)
        v.push_back(measure::chase_point_cycles(c, device::LoadOp::kCg, ws, stride,
                                                ctx.options.seed + 17 * k + stride));
      cycles.push_back(v);
    }
    out["cycles"] = cycles;
    return out;
  }

  static void line_by_stride_finding(const json& rec, std::vector<Finding>& out) {
    if (!rec.contains("line_by_stride") || !rec["line_by_stride"].contains("cycles")) return;
    const auto& lb = rec["line_by_stride"];
    const auto strides = lb.at("strides").get<std::vector<std::uint32_t>>();
    const auto cycles = lb.at("cycles").get<std::vector<std::vector<double>>>();
    // Without the sweep's hit latency, the fewest-lines stride's own (it lies below the knee).
    double hit = lb.at("hit_cycles").get<double>();
    if (!(hit > 0)) hit = stats::median(cycles.back());
    const auto a = analysis::line_by_stride(strides, cycles, hit);
    if (!a.found) return;
    double precision = 1;
    for (std::size_t i = 0; i < cycles.size(); ++i)
      precision = std::min(precision, confidence::precision(cycles[i], a.medians[i]));
    out.push_back({"cache.l2.line_size",
                   static_cast<double>(a.line_bytes),
                   "bytes",
                   confidence::combine({precision, confidence::separation(a.separation_z_below),
                                        confidence::separation(a.separation_z_above)}),
                   "random-order chases (ld.global.cg, one SM, 3 fresh chains each) over one "
                   "working set past one partition's knee (1.25 x l2.replica_capacity, else "
                   "l2.near_capacity, else l2.capacity / 2) at node "
                   "strides 64 ... 512 B: below the line a line's later nodes reuse it, above it "
                   "fewer lines are touched; the latency peaks at the line",
                   {{"medians_cycles", a.medians}, {"strides", strides}}});
  }

  void analyze(ExperimentResult& r) const override {
    if (r.status != Status::kPassed || !r.samples.contains("conflict_set")) return;
    const auto& rec = r.samples;
    const std::string lv = measure::cache::to_string(level_);
    line_finding(lv, rec, r.findings);
    if (level_ == Level::kL2 &&
        std::none_of(r.findings.begin(), r.findings.end(),
                     [](const Finding& f) { return f.name == "cache.l2.line_size"; }))
      line_by_stride_finding(rec, r.findings);
    policy_finding(lv, rec, r.findings);
    cyclic_finding(lv, rec, r.findings);
    if (!rec.value("pools_agree", false) && rec.contains("pools")) {
      // No set, but targets whose repeatable eviction needs every one of g disjoint groups of
      // the shortest evicting prefix: each group holds a line the target competes with.
      const json et = eviction_summary(rec["pools"]);
      const auto n = et.at("swept").get<std::size_t>(), k = et.at("bounded").get<std::size_t>();
      if (k >= 2)
        r.findings.push_back(
            {"cache." + lv + ".competing_lines_lower_bound",
             et.at("ways_at_least").get<double>(),
             "lines",
             targets_confidence(k, n, rec),
             "the fewest, over the targets whose eviction repeats (8 of 8 with the shortest "
             "evicting prefix, 0 of 8 with one group less), of disjoint groups of that prefix "
             "that are each needed to evict the target: the target competes with at least that "
             "many of the swept lines. Under LRU with one copy per line that bounds the ways; "
             "not where copies of far-homed lines share the sets and the sweep's parallel loads "
             "have no order (on one H200, targets of this kind needed 32 to 256 lines while two "
             "others were evicted by 16-line sets)",
             {{"targets", n}, {"bounded_targets", k}}});
    }
    if (!rec["conflict_set"].value("found", false) || !rec.value("pools_agree", false)) return;
    r.findings.push_back(ways_finding("cache." + lv + ".ways", rec));
    if (rec.contains("set_index")) {
      const json si = rejudged_set_index(rec);
      const std::size_t tests = si.at("tests").size();
      const double conf = confidence::combine(
          {confidence::agreement(tests, tests), calibration_separation(rec.at("calibration"))});
      r.findings.push_back(
          {"cache." + lv + ".set_index_bits",
           static_cast<double>(si.at("bits").size() - si.value("page_bits", json::array()).size()),
           "bits",
           conf,
           "value: the physical address bits (below first_page_bit) whose "
           "flip moves a conflict-set member to another set (the conflict "
           "ends); pairs of such bits that keep the set are equal columns of a "
           "GF(2) hash. A flip at or above first_page_bit moves the line to "
           "another page, whose physical frame user code cannot see: those "
           "(page_bits) say that the frame matters, not which bit does",
           {{"bits", si.at("bits")},
            {"equal_pairs", si.at("equal_pairs")},
            {"first_page_bit", si.value("first_page_bit", -1)},
            {"page_bits", si.value("page_bits", json::array())},
            {"modulo_refuted", si.value("modulo_refuted", false)},
            {"modulo_refuted_by", si.value("modulo_refuted_by", "")},
            {"member_distance_gcd_lines", si.value("member_distance_gcd_lines", 0)},
            {"kind", si.at("kind")}}});
      const bool hashed = rec.contains("hash_columns") &&
                          rec["hash_columns"].value("found", false) &&
                          rec["hash_columns"].value("note", std::string()).empty();
      if (hashed) {
        // The XOR hash measured column by column: its rank gives the sets of the tags; tags
        // x ways x line beyond the capacity the chase holds means the lines are stored apart
        // from the tags (fewer than the tags can name).
        const auto& hc = rec["hash_columns"];
        const auto rank = hc.at("rank").get<int>();
        const auto dependent = hc.at("dependent").size();
        const double sets = std::ldexp(1.0, rank);
        const double hconf = confidence::combine(
            {conf, dependent
                       ? confidence::agreement(hc.at("verified").get<std::size_t>(), dependent)
                       : 1.0});
        r.findings.push_back(
            {"cache." + lv + ".tag_sets",
             sets,
             "sets",
             hconf,
             "2^rank of the set index's XOR hash, measured column by column: a bit is dependent "
             "when flipping it together with some combination of the independent bits below it "
             "keeps a conflict-set member in its set (each dependent column tested again on "
             "another member); masks[k]: bit k of the set = parity(address & masks[k]) over "
             "the searched (physical) bits",
             {{"independent_bits", hc.at("independent_bits")},
              {"dependent", hc.at("dependent")},
              {"masks", hc.at("masks")},
              {"highest_bit_searched", hc.at("highest_bit_searched")},
              {"tests", hc.at("tests")}}});
        const double ways = rec["conflict_set"].value("ways", 0.0);
        const double line = rec.value("line_bytes", 0.0);
        const double cap = rec.value("capacity_bytes_used", 0.0);
        if (ways > 0 && line > 0 && cap > 0) {
          const double tags = sets * ways * line;
          r.findings.push_back(
              {"cache." + lv + ".tag_capacity",
               tags,
               "bytes",
               hconf,
               "tag_sets x ways x line: the bytes the tags can name. Above the capacity the "
               "chase holds (capacity_bytes) the lines are stored apart from the tags "
               "(decoupled): a line can leave while its set has a free tag",
               {{"capacity_bytes", cap},
                {"tags_over_capacity", tags / cap},
                {"decoupled", tags > cap * 1.03}}});
        }
      }
      if (rec.contains("data_sets")) {
        const auto& ds = rec["data_sets"];
        if (ds.value("found", false) && ds.value("checks", 0) > 0 &&
            ds.value("checks", 0) == ds.value("checks_passed", -1)) {
          r.findings.push_back(
              {"cache." + lv + ".data_ways",
               ds.at("ways").get<double>(),
               "lines",
               confidence::combine({confidence::agreement(ds.at("checks_passed").get<std::size_t>(),
                                                          ds.at("checks").get<std::size_t>()),
                                    calibration_separation(rec.at("calibration"))}),
               "a minimal conflict set among lines that share no tag set beyond its ways (random "
               "lines of the first span_bytes, which the tags' hash spreads evenly): its size "
               "less one is how many lines one set of the stored lines holds; as many as the lines "
               "held means they are stored without sets",
               {{"lines", ds.at("lines")}, {"span_bytes", ds.value("span_bytes", 0)}}});
        } else {
          r.statistics["data_sets"] =
              "no minimal conflict among lines that share no tag set beyond its ways (" +
              ds.value("note", std::string()) + ")";
        }
      }
      if (rec.contains("data_victim") && rec["data_victim"].value("measured", false)) {
        const auto& dv = rec["data_victim"];
        const std::string v = dv.at("victim").get<std::string>();
        const double code = v == "global_lru"   ? 0
                            : v == "own_set"    ? 1
                            : v == "random"     ? 2
                            : v == "random_set" ? 3
                            : v == "set_cycle"  ? 5
                                                : 4;
        r.findings.push_back(
            {"cache." + lv + ".data_victim",
             code,
             "class",
             confidence::combine({confidence::separation(dv.at("rejected_z").get<double>()),
                                  calibration_separation(rec.at("calibration"))}),
             "value: 0 global_lru, 1 own_set, 2 random, 3 random_set, 5 set_cycle, 4 none of "
             "these. Consecutive lines (at most ways per set) past the lines held (lines_held, "
             "in the sequences' carve-out) are read in order, then one line per sequence is "
             "probed: samples of the oldest lines, of the lines own-set eviction names, and of "
             "four age bins of the rest; then, after about one new line per set "
             "(filled_cycle), samples of each set's oldest and second-oldest line. Each class "
             "predicts which probes are gone (random: any held line alike, 1 - (1 - 1/held)^"
             "evictions; "
             "random_set: a set drawn more times than the line's age rank; set_cycle: each "
             "set once per sets evictions); its misfit is the largest |observed - predicted| / "
             "se over the groups; the class within 3 se, else none. Confidence: the separation "
             "of the closest class not chosen (its misfit as z)",
             {{"victim", v},
              {"lines_held", dv.at("lines_held")},
              {"filled", dv.at("filled")},
              {"oldest", {dv.at("oldest_evicted"), dv.at("oldest_probed")}},
              {"own_set", {dv.at("own_evicted"), dv.at("own_probed")}},
              {"age_bins_evicted", dv.at("bin_evicted")},
              {"age_bins_probed", dv.at("bin_probed")},
              {"groups", dv.value("groups", json::array())},
              {"misfit_z", dv.at("misfit_z")}}});
      }
      if (hashed) {
        r.findings.push_back({"cache." + lv + ".sets",
                              std::ldexp(1.0, rec["hash_columns"].at("rank").get<int>()),
                              "sets",
                              conf,
                              "the tags' sets: 2^rank of the measured XOR hash (tag_sets)",
                              {{"capacity_bytes", rec.value("capacity_bytes_used", 0)}}});
      } else if (si.at("sets").get<std::uint64_t>() > 0)
        r.findings.push_back({"cache." + lv + ".sets",
                              si.at("sets").get<double>(),
                              "sets",
                              conf,
                              si.at("kind") == "modulo_power_of_two" ? "2^(set-index bits)"
                                                                     : "capacity / (line x ways)",
                              {{"capacity_bytes", rec.value("capacity_bytes_used", 0)}}});
    }
  }

 private:
  Level level_;
};

/// 64 GiB of 2 MiB pages (bounded by free memory): published Hopper measurements (Luo et al.,
/// "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture", 2024) see TLB levels at
/// spans of GiB; the H200 walk up to 4 GiB, then up to 32 GiB, showed only one ~10-cycle step
/// (at 256 MiB, entries of 16 MiB), so a second level, if any, reaches further.
constexpr std::uint64_t kTlbMaxPages = 32768;

class TlbExperiment : public Experiment {
 public:
  std::string id() const override { return "latency.tlb"; }
  std::string description() const override {
    return "TLB levels, entries, coverage and miss penalty: one line per 2 MiB cell at a random "
           "offset, n = 1, 2, 4 ... cells walked cyclically (ld.global.cg, each line's own "
           "cache latency subtracted); every step up is a level, its entries the last n below "
           "the step (bisection); the bytes one entry translates from where that crossing "
           "stops moving as the stride grows (or shrinks) from 2 MiB";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(int_axis("page_stride_bytes", {4096, static_cast<std::int64_t>(2 * kMiB)}, "B",
                           "smallest and largest page-sized stride")),
            fixed(int_axis("max_pages", {static_cast<std::int64_t>(kTlbMaxPages)}, "pages",
                           "most pages one walk touches"))};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto& info = ctx.device.info();
    const std::uint64_t largest = 2 * kMiB;
    // The walk's lines (one per page) stay within a quarter of the L2's lines.
    const std::uint64_t l2_lines = std::max<std::uint64_t>(info.l2_bytes / 128, 64);
    std::uint64_t max_pages = std::min<std::uint64_t>(kTlbMaxPages, l2_lines / 4);
    const std::uint64_t room = ctx.device.free_memory() > 256 * kMiB
                                   ? (ctx.device.free_memory() - 256 * kMiB) / largest
                                   : 0;
    max_pages = std::min(max_pages, room);
    if (max_pages < 4) return waive(r, "not enough free memory for a TLB walk of 4 x 2 MiB pages");
    auto s = open_session(ctx, max_pages * largest, max_pages * largest);
    if (!s) return waive(r, kNoSequencer);
    const auto t = measure::cache::infer_tlb(s->probe, largest, max_pages);
    const json levels = tlb_levels_json(t);
    r.parameters = {{"largest_page_bytes", largest}, {"max_pages", t.max_pages_tried}};
    std::string note;
    if (t.levels.empty()) {
      double top = 0;
      for (const auto& c : t.curve) top = std::max(top, c["excess_cycles"].get<double>());
      note =
          "no latency step (above 2 % of the cache latency and clear of the noise, "
          "separation >= 0.9) up to " +
          std::to_string(t.max_pages_tried) + " pages; largest median excess " +
          std::to_string(top) + " cycles";
    } else if (t.page_bytes == 0) {
      note =
          "the first level's crossing still falls at the largest stride the buffer allows: "
          "an entry covers at least " +
          std::to_string(t.coverage_at_least) +
          " B; no coverage, reach or entries-at-coverage finding";
    }
    r.samples = {{"levels", levels},
                 {"page_bytes", t.page_bytes},
                 {"coverage_at_least_bytes", t.coverage_at_least},
                 {"curve", t.curve},
                 {"page_curve", t.page_curve},
                 {"note", note},
                 {"accesses", s->probe.accesses}};
    Curve cv{"walk", {"pages", "stride_bytes", "excess_cycles"}, {}};
    for (const auto& c : t.curve)
      cv.rows.push_back({c["pages"], c["stride_bytes"], c["excess_cycles"]});
    r.curves.push_back(cv);
  }
  void analyze(ExperimentResult& r) const override {
    if (r.status != Status::kPassed || !r.samples.contains("levels")) return;
    const auto& levels = r.samples["levels"];
    const std::uint64_t page = r.samples.value("page_bytes", std::uint64_t{0});
    double all_conf = 1;
    for (std::size_t i = 0; i < levels.size(); ++i) {
      const auto below = to_doubles(levels[i]["below"]), above = to_doubles(levels[i]["above"]);
      const double sep = confidence::separation(confidence::separation_z(below, above));
      all_conf = std::min(all_conf, sep);
      const std::string n = "tlb.l" + std::to_string(i + 1);
      const double entries = levels[i]["entries"].get<double>();
      // The first level is counted at its coverage stride; without a coverage its count at
      // 2 MiB cells is a reach, not entries (cells share entries), and is not emitted.
      if (i > 0 || page)
        r.findings.push_back({n + ".entries",
                              entries,
                              "entries",
                              sep,
                              "last number of cells (one line each, at the entries' coverage "
                              "for the first level) walked cyclically without a latency step "
                              "(bisection)",
                              {}});
      // The penalty from its independent replicates (results written before them: the one
      // pair of walks, the precision of the samples past the level).
      const auto reps = levels[i].value("miss_penalty_replicates", std::vector<double>{});
      const auto ses = levels[i].value("miss_penalty_standard_errors", std::vector<double>{});
      if (!reps.empty() && reps.size() == ses.size()) {
        const auto rs = confidence::summarize_replicates(reps, ses);
        r.findings.push_back(
            {n + ".miss_penalty",
             rs.value,
             "cycles",
             confidence::combine({sep, rs.precision}),
             "median excess latency just past the level minus the plateau before it (each "
             "line's own cache latency subtracted), median over " +
                 std::to_string(rs.replicates) +
                 " independent pairs of walks (the detection's, then other cells at fresh offsets)",
             {{"standard_error", rs.standard_error}, {"replicates", confidence::to_json(rs)}}});
      } else {
        const double pen = levels[i]["miss_penalty_cycles"].get<double>();
        r.findings.push_back(
            {n + ".miss_penalty",
             pen,
             "cycles",
             confidence::combine({sep, confidence::precision(above, stats::median(above))}),
             "median excess latency just past the level minus the plateau before "
             "it (each line's own cache latency subtracted)",
             {}});
      }
      if (page)
        r.findings.push_back({n + ".reach",
                              entries * static_cast<double>(page),
                              "bytes",
                              sep,
                              "entries x page size",
                              {}});
    }
    // What is not emitted, and why (a finding without evidence is not written).
    json st = json::object();
    const std::string note = r.samples.value("note", std::string());
    if (levels.empty())
      st["not_reported"] = {{"findings",
                             "tlb.levels, tlb.l1.* (entries, miss_penalty, reach), "
                             "tlb.page_size"},
                            {"why", note}};
    else if (!page)
      st["not_reported"] = {{"findings", "tlb.l1.entries, tlb.l*.reach, tlb.page_size"},
                            {"why", note}};
    r.statistics = st;
    if (!levels.empty())
      r.findings.push_back({"tlb.levels",
                            static_cast<double>(levels.size()),
                            "levels",
                            all_conf,
                            "latency steps of a page walk up to " +
                                std::to_string(r.parameters.value("max_pages", 0)) + " pages",
                            {}});
    if (page)
      r.findings.push_back({"tlb.page_size",
                            static_cast<double>(page),
                            "bytes",
                            all_conf,
                            "bytes one first-level entry translates: the stride from which the "
                            "step's crossing (in cells) stays as the stride doubles (larger "
                            "strides) or from which 1.5 x the entries stop sharing entries "
                            "(smaller strides); an entry may cover several driver pages",
                            {{"page_curve", r.samples["page_curve"]}}});
  }
};

}  // namespace

json tlb_levels_json(const analysis::cache::TlbResult& t) {
  json levels = json::array();
  for (const auto& l : t.levels)
    levels.push_back({{"entries", l.entries},
                      {"miss_penalty_cycles", l.miss_penalty_cycles},
                      {"miss_penalty_replicates", l.penalty_replicates},
                      {"miss_penalty_standard_errors", l.penalty_standard_errors},
                      {"below", l.below},
                      {"above", l.above}});
  return levels;
}

void register_cache_structure_experiments(Registry& registry) {
  registry.add(std::make_unique<WaysExperiment>(Level::kL1));
  registry.add(std::make_unique<WaysExperiment>(Level::kL2));
  registry.add(std::make_unique<TlbExperiment>());
}

}  // namespace gpuprobe::probes
