#pragma once
// The cache-structure searches: adaptive sequences of timed loads (core/sequence.hpp) that find
// conflict sets (by sequences, or by eviction sweeps over a large pool), line size, set index
// bits and hash columns, replacement policy, data victims, capacity, L2 partitions and TLB
// levels. Every search talks to the hardware only through a Probe's Oracle, so the same code runs
// on the modelled GPU in tests and on the real GPU in experiments. What each result holds and
// how it is judged: analysis/cache_inference.hpp (the pure part, which a recorded result is
// judged by again).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "analysis/cache_inference.hpp"
#include "core/sequence.hpp"

namespace gpuprobe::measure::cache {

// The searches fill the analysis' result types.
using analysis::cache::Calibration;
using analysis::cache::CapacityResult;
using analysis::cache::ConflictSet;
using analysis::cache::CyclicResult;
using analysis::cache::DataVictimResult;
using analysis::cache::HashColumnsResult;
using analysis::cache::LineSizeResult;
using analysis::cache::PartitionInference;
using analysis::cache::PolicyResult;
using analysis::cache::SetIndexResult;
using analysis::cache::TlbLevelResult;
using analysis::cache::TlbResult;

/// Runs one access sequence on a probe buffer and returns its timings.
using Oracle = std::function<SequenceTiming(const AccessSequence&)>;

/// Which level an inference looks at: the L1 (ld.global.ca, fills untimed in the same
/// sequence, invalidated by every launch) or the L2 (ld.global.cg, flushed before each test).
enum class Level { kL1, kL2 };
std::string to_string(Level l);

/// The oracle plus what the inferences need to know about the buffer; counts what it spends.
struct Probe {
  Oracle run;
  std::uint64_t buffer_bytes = 0;  ///< a power of two; candidates lie below it
  int sm = 0;                      ///< the SM every sequence runs on
  std::uint64_t seed = 1;
  std::size_t max_sequence = 0;  ///< the sequencer's max_sequence_length (0 = unlimited)
  std::size_t max_sweep = 0;     ///< the sequencer's max_sweep_length (0 = no sweeps)
  /// The sequencer's physically_contiguous_bytes (0 = every address bit is physical).
  std::uint64_t contiguous_bytes = 0;
  /// Carve-out given to every sequence that states none (-1 = the driver's default); the L1
  /// inferences use 0 (the largest L1) so that their answer names the L1 they measured.
  int carveout_percent = -1;
  /// The line find_conflict_set_by_eviction evicts; unset = a random line of the buffer.
  std::optional<std::uint64_t> eviction_target;
  std::uint64_t accesses = 0;  ///< loads issued so far (budget accounting)
  std::uint64_t calls = 0;     ///< sequences run so far
  SequenceTiming call(const AccessSequence& s);
};

/// The calibration of a level (analysis::cache::Calibration): `samples` random lines, each read
/// twice in one sequence (a miss, then a hit).
Calibration calibrate(Probe& p, Level level, int samples = 32);

/// Whether `lines` evict each other: accessed in one fixed random order for 4 rounds, the first
/// untimed; true when at least 2 later accesses are slower than the
/// threshold. L2 tests longer than one call run as consecutive calls. Out: the misses counted.
bool conflicts(Probe& p, Level level, const Calibration& cal,
               const std::vector<std::uint64_t>& lines, int* misses = nullptr);

/// A minimal conflict set (analysis::cache::ConflictSet says how it is grown and pruned).
ConflictSet find_conflict_set(Probe& p, Level level, const Calibration& cal,
                              std::uint64_t max_candidates, std::uint64_t alignment = 1024);

/// An L2 conflict set for a cache whose sets outnumber what one sequence can reach (tens of
/// thousands of sets behind a hashed index): eviction tests over a candidate
/// pool `pool_lines` random lines at `alignment`, far larger than the cache, swept in bulk by
/// the probe's SM (device/sequence.hpp `sweep`). One test: flush, place the target, sweep a
/// subset twice, re-read the target; evicted = slower than the threshold (two agreeing tests of
/// three decide). The shortest evicting prefix of the pool is found by doubling and bisection
/// (to within 1/256 of its length), then reduced by group elimination (32 groups,
/// every group whose removal still evicts goes) to a set that stops evicting when any one line
/// is removed: those lines and the target are ways + 1 lines of one set. Needs
/// p.max_sweep >= pool_lines; `found` false with a note otherwise.
ConflictSet find_conflict_set_by_eviction(Probe& p, const Calibration& cal,
                                          std::uint64_t pool_lines, std::uint64_t alignment);

/// One pool's search for search_pools: its set, and the kind of its target (where an evicted
/// target was re-read from: "dram" for a line homed beside the SM, "far_partition" for a far
/// line's near copy, "" when unknown or never evicted).
struct PoolOutcome {
  ConflictSet set;
  std::string kind;
  std::uint64_t seed = 0;  ///< the seed the pool was drawn with
  double seconds = 0;      ///< how long its search took
};
/// The pools of one level: pool k = search(k) for k = 0, 1, ... until `needed` pools whose
/// targets are of one kind found a set, or `max_pools` were searched. A pool of the eviction
/// sweeps that finds no set is replaced by the next (a target whose eviction needs every group
/// of a large prefix gives none); a pool of sequences that finds
/// none ends the search (its pools draw from the same candidates). Sets count together only when
/// their targets are of one kind (the two kinds are evicted differently): the first kind to
/// reach `needed` sets, else the kind with the most sets (fewer than needed: no agreement).
struct PoolSearch {
  std::vector<PoolOutcome> pools;   ///< every pool searched, in order
  std::vector<std::size_t> chosen;  ///< the pools whose sets count, in order (one kind)
  std::string kind;                 ///< the kind of the chosen pools' targets
};
PoolSearch search_pools(int needed, int max_pools, const std::function<PoolOutcome(int)>& search);

/// Eviction targets homed in the probe's SM's own L2 partition. On a two-partition L2 a DRAM miss
/// of a line homed in the other partition crosses to it first (a slower miss), and the eviction
/// of such a line's near copy is not a conflict in one set (its home copy stays). `n` random lines
/// (`alignment`) are read once after a flush; a two-means split of the cold latencies (upper class
/// at least 10 % slower, each class at least a quarter of the lines) keeps the lower class, in draw
/// order.
struct TargetSelection {
  bool split = false;
  double threshold = 0;
  std::vector<std::uint64_t> lines;    ///< every line read, in draw order
  std::vector<double> cycles;          ///< their cold reads
  std::vector<std::uint64_t> targets;  ///< the lower class (empty without a split)
};
TargetSelection near_home_targets(Probe& p, std::size_t n, std::uint64_t alignment);

/// Line size (analysis::cache::LineSizeResult).
LineSizeResult infer_line_size(Probe& p, Level level, const Calibration& cal,
                               const ConflictSet& set);

/// Set indexing (analysis::cache::SetIndexResult), judged by analysis::cache::judge_set_index_kind.
SetIndexResult infer_set_index(Probe& p, Level level, const Calibration& cal,
                               const ConflictSet& set, std::uint32_t line_bytes,
                               std::uint64_t capacity_bytes);

/// The columns of an XOR set index (analysis::cache::HashColumnsResult).
HashColumnsResult infer_hash_columns(Probe& p, Level level, const Calibration& cal,
                                     const ConflictSet& set, const std::vector<int>& index_bits,
                                     int lowest_bit, int first_page_bit, int max_rank = 10);

/// Which line leaves a decoupled cache (analysis::cache::DataVictimResult says how).
DataVictimResult infer_data_victim(Probe& p, Level level, const Calibration& cal,
                                   std::uint32_t line_bytes,
                                   const std::vector<std::uint64_t>& masks,
                                   std::uint64_t tag_lines);

/// Replacement policy class (analysis::cache::PolicyResult).
PolicyResult infer_policy(Probe& p, Level level, const Calibration& cal, const ConflictSet& set,
                          int tests = 6);

/// Cyclic retention (analysis::cache::CyclicResult).
CyclicResult cyclic_retention(Probe& p, Level level, const Calibration& cal, const ConflictSet& set,
                              int orders = 2, int rounds = 8,
                              const std::vector<std::uint64_t>& fillers = {},
                              std::size_t fillers_per_access = 0);

/// Capacity (analysis::cache::CapacityResult).
CapacityResult infer_capacity(Probe& p, Level level, const Calibration& cal,
                              std::uint32_t line_bytes, std::uint64_t max_bytes,
                              double precision = 0.005);

/// L2 partitions (analysis::cache::PartitionInference).
PartitionInference infer_partitions(Probe& p, int sm_count, std::uint32_t line_bytes,
                                    int lines = 48);

/// Independent replicates of a TLB level's miss penalty.
inline constexpr int kTlbPenaltyReplicates = 3;
/// Re-reads that give a walk's lines their own cache latency, shared among its lines (at least
/// one each).
inline constexpr std::size_t kTlbOwnReads = 16;
/// TLB levels (analysis::cache::TlbResult says how they are walked).
TlbResult infer_tlb(Probe& p, std::uint64_t largest_page, std::uint64_t max_pages,
                    std::uint64_t smallest_page = 4096);

}  // namespace gpuprobe::measure::cache
