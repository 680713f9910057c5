#pragma once
// cache.l1.ways and cache.l2.ways, the conflict sets: each level's calibration and minimal
// conflict sets from independent candidate pools (sequences, or eviction sweeps over a swept
// pool for an L2 whose sets outnumber what a sequence reaches), their record, and the ways
// finding with its evidence.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/experiment.hpp"
#include "core/units.hpp"
#include "measure/cache_search.hpp"
#include "probes/cache/ways_samples.hpp"

namespace gpuprobe::probes::cache_structure {

using measure::cache::Level;
using nlohmann::json;

/// L2 candidates lie at one in-page offset of 2 MiB pages (kL2PoolPages of them): they share
/// every address bit below 2 MiB, so they fall into the few sets that the page-number bits
/// select. Random lines over a large hashed L2 almost never put ways + 1 lines into one set;

/// this pool concentrates them (collisions are still measured).
inline constexpr std::uint64_t kL2PoolPages = 2048;
inline constexpr std::uint64_t kL2PoolAlignment = 2 * units::kMiB;

struct LevelRun {
  analysis::cache::Calibration cal;
  analysis::cache::ConflictSet set;                ///< the first pool's set
  std::vector<analysis::cache::ConflictSet> sets;  ///< every pool's set (when found)
  bool agreed = false;
  std::size_t checks = 0, checks_passed = 0;  ///< over all pools
};

/// What an evicted target's re-read is judged against: the far hit, and the DRAM latency of a
/// line homed beside the SM with the finding it came from (0 and empty: the calibration's misses).
struct ServedReferences {
  double far_hit_cycles = 0, dram_cycles = 0;
  std::string dram_from;
};

/// The L1 sequences ask for no shared memory (carve-out 0 %: the largest L1), so the L1 they
/// measure is the same whatever the driver's default carve-out.
int carveout_for(Level level);

/// Pool span for a level: 8 x the L1's unified storage (at least 4 MiB); for the L2
/// kL2PoolPages pages when free memory allows, else 8 x the L2 (at least 4 MiB).
std::uint64_t span_for(device::Device& dev, Level level);

/// Candidate alignment: 1 KiB for the L1; for the L2 one page when the pool is the paged one,
/// else the smallest power of two >= 1 KiB that leaves at most 16384 candidate slots (a test of
/// that many lines takes a few consecutive calls; more would not fit the family's time budget).
std::uint64_t alignment_for(const measure::cache::Probe& p, Level level);

/// Calibration + minimal conflict set of one level, recorded in the level's samples. The set is
/// built from pools_for(level) independent candidate pools (different seeds); it counts (`agreed`)
/// only when every pool found a set of the same ways: a single pool can give a reproducible but
/// wrong set, so one pool's own minimality checks are not evidence enough.
int pools_for(Level level);

/// Candidate pool of the L2 eviction search: four times the L2's lines at 128 B, so that even
/// with only one partition's half of them landing beside the target every set receives its
/// ways twice over.
std::uint64_t sweep_pool_lines(const Context& ctx);

/// The conflict set of one pool: random lines by sequences first (cheap, enough for an L2
/// of a few thousand sets); for an L2 whose hashed sets outnumber what a sequence can reach,
/// eviction tests over a swept pool (measure/cache_search.hpp).
analysis::cache::ConflictSet pool_conflict_set(measure::cache::Probe& p, Level level,
                                               const analysis::cache::Calibration& cal,
                                               std::uint64_t align, std::uint64_t pool_lines);

/// The eviction targets of a level, from the recorded pools (analyze() recomputes it, so a
/// re-analysis of recorded samples gives the same answer): how many were swept, how many
/// evicted probabilistically, and the lower bound on the ways of the repeatable ones that
/// needed every group (a probabilistic target bounds nothing).
EvictionSummary eviction_summary(const std::vector<ConflictRecord>& pools);

/// Where an evicted target was re-read from: the nearer of the measured far-hit latency
/// (its home copy in the other partition survived: the evicted copy was a near replica) and the
/// DRAM latency (the target was homed beside the SM). Empty without a far-hit latency.
std::string served_after_eviction(double reread, double far_hit, double miss);

/// The references from earlier findings. The eviction targets are lines homed beside the SM: an
/// evicted one comes back at the near home's DRAM latency (cache.l2.far_hit), not at the
/// sweep's mean of both homes (which can lie nearer the far hit than a near home's re-read
/// does); the sweep's DRAM latency only where that was not measured.
ServedReferences served_references(const Context& ctx);

LevelRun conflict_run(measure::cache::Probe& p, Level level, WaysSamples& rec,
                      std::uint64_t pool_lines, const ServedReferences& refs = {});

Finding ways_finding(const std::string& name, const WaysSamples& rec);

/// A conclusion that k of n eviction targets support, read through the level's calibration.
double targets_confidence(std::size_t k, std::size_t n, const WaysSamples& rec);

}  // namespace gpuprobe::probes::cache_structure
