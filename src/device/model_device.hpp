#pragma once
// The MODELLED GPU: a cache-hierarchy simulator behind the same Device interface as the real
// CUDA device, so every experiment runs on it and tests can check that the analysis recovers the
// model's known parameters.
//
// What is modelled: one SM's single-thread dependent chase through
//   L1 (set-associative, true LRU, capacity = unified L1/shared size - shared carve-out)
//   -> L2, either one cache, or (l2_partitioned) a "near" partition that holds a copy of every
//      line this SM touched plus the whole L2 behind it (a near miss that hits the whole L2 costs
//      the far latency)
//   -> DRAM.
// Every load costs the hit latency of the first level that holds its line; on a miss every level
// that was looked up is filled (L1 only for operators that cache in L1, see caches_in_l1). There
// is no timer overhead, no prefetching and no TLB: the timings are exactly the latencies above
// (plus optional gaussian noise per chase).
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/l2_residency.hpp"
#include "device/device.hpp"
#include "device/sequence.hpp"

namespace gpuprobe::device {

namespace detail {
struct ModelLedger;    // the device's record of live chains, shared with them
struct SequenceModel;  // the structural hierarchy behind run_sequence
class ModelChain;      // a chain the model made (model_device.cpp)
}  // namespace detail

/// Replacement policy of a cache level (used by run_sequence; the chase's fast path is LRU).
enum class Replacement { kLru, kFifo, kTreePlru, kRandom };
std::string to_string(Replacement r);
/// Parses "lru", "fifo", "tree_plru", "random"; throws UsageError naming the allowed values.
Replacement parse_replacement(const std::string& text);

/// Which line leaves when a decoupled cache's data store is full but the new line's set still
/// has a free tag (see CacheConfig::data_capacity_bytes): the least recently used line of that
/// set ("own_set"; the globally least recently used one when the set is empty), the globally
/// least recently used line ("global_lru"), a random line ("random"), the least recently used
/// line of a random set ("random_set"), or that of the next set of a pointer that cycles over
/// all sets ("set_cycle"; each set once per `sets` evictions, as measured on the H200's L1).
enum class DataVictim { kOwnSet, kGlobalLru, kRandom, kRandomSet, kSetCycle };
std::string to_string(DataVictim v);
/// Every data victim, in declaration order (the order lists and messages name them in).
const std::vector<DataVictim>& data_victims();
/// Their names, comma-separated, `last_joiner` before the last (", " or " and ").
std::string data_victim_names(const std::string& last_joiner);
/// The data victim named `text`, or nothing.
std::optional<DataVictim> find_data_victim(const std::string& text);
/// Parses a data victim's name; throws UsageError naming the allowed values.
DataVictim parse_data_victim(const std::string& text);

/// Where an LRU cache places a filled line in its set's recency order (hits always move a
/// line to the most recently used place): "mru" (the classic LRU), "lru" (LIP: a fill is the
/// next victim unless hit first, so a cyclic sweep over capacity keeps the lines it already
/// holds), "bimodal" (BIP: 1 fill in `throttle` at MRU, the others at LRU), "dueling" (DIP: a
/// few leader sets of each of mru and bimodal, the others follow whichever leaders missed less,
/// by a saturating counter).
enum class Insertion { kMru, kLru, kBimodal, kDueling };
std::string to_string(Insertion i);
/// Parses "mru", "lru", "bimodal", "dueling"; throws UsageError naming the allowed values.
Insertion parse_insertion(const std::string& text);

/// One set-associative cache level. Set index = (address / line_bytes) % sets, with
/// sets = capacity / (line_bytes * ways), or, when set_hash_masks is not empty, bit i of the set
/// index = parity(address & set_hash_masks[i]) (sets must then be 2^masks).
struct CacheConfig {
  // A constructor (not an aggregate) so that {capacity, line, ways, latency} keeps working with
  // the structural fields defaulted.
  CacheConfig(std::uint64_t capacity = 0, std::uint32_t line = 128, std::uint32_t ways_ = 0,
              double latency = 0)
      : capacity_bytes(capacity), line_bytes(line), ways(ways_), hit_latency_cycles(latency) {}
  std::uint64_t capacity_bytes = 0;  ///< 0 = no cache (every access misses)
  std::uint32_t line_bytes = 128;
  std::uint32_t ways = 0;  ///< 0 = fully associative
  double hit_latency_cycles = 0;
  Replacement policy = Replacement::kLru;     ///< run_sequence only
  std::uint32_t sector_bytes = 0;             ///< 0 = the line; run_sequence only
  std::vector<std::uint64_t> set_hash_masks;  ///< empty = modulo; run_sequence only
  /// Set index = a fixed 64-bit mix of the line number, modulo the sets (run_sequence and the
  /// structural chase only; not with set_hash_masks): a stand-in for a hash that spreads a
  /// contiguous range over the sets as a random placement would, which a modulo never does.
  bool scrambled_index = false;
  /// Placement unit (run_sequence and the structural chase only; modulo index only): 0 = the
  /// address as given. Otherwise every unit-sized, unit-aligned block of addresses is indexed
  /// as if it sat at its own pseudo-random block (a fixed 64-bit mix of the block number): the
  /// lines within a block keep their order, the blocks land at random, as physical frames
  /// handed out in that unit would. A power of two from the line to 1 GiB.
  std::uint64_t placement_unit_bytes = 0;
  /// A decoupled cache (run_sequence and the structural chase only): capacity_bytes sizes the
  /// tags (sets x ways x line) and at most this many bytes of lines are held at once; 0 = every
  /// tag holds its line. When the lines fill it, a miss whose set has a free tag evicts per
  /// data_victim.
  std::uint64_t data_capacity_bytes = 0;
  DataVictim data_victim = DataVictim::kOwnSet;
};

/// One TLB level (run_sequence only). A miss at this level costs miss_penalty_cycles on top of
/// whatever the next level costs; levels are looked up in order and all are filled (LRU).
struct TlbLevel {
  std::uint64_t entries = 0;
  std::uint64_t page_bytes = 0;
  std::uint32_t ways = 0;  ///< 0 = fully associative
  double miss_penalty_cycles = 0;
};

/// A modelled GPU. All sizes are bytes, clocks MHz, latencies SM cycles.
struct ModelConfig {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 1;
  double sm_clock_mhz = 1000, mem_clock_mhz = 1000;
  int mem_bus_width_bits = 0;
  std::uint64_t global_mem_bytes = 0;

  /// The SM's unified L1/shared storage; the L1 capacity is this minus the shared carve-out.
  std::uint64_t l1_shared_unified_bytes = 0;
  /// The shared carve-out when ChaseParams::carveout_percent == -1 (the "driver default").
  std::uint64_t default_shared_carveout_bytes = 0;
  /// The most shared memory an SM can have (the carve-out at 100 %).
  std::uint64_t shared_per_sm_bytes = 0;
  /// L1 geometry and latency; capacity_bytes is ignored (it follows from the carve-out).
  CacheConfig l1;

  bool l2_partitioned = false;
  /// The partition near the SM (used only when l2_partitioned).
  CacheConfig l2_near;
  /// The whole L2: capacity_bytes is the total. hit_latency_cycles is used only when the L2 is
  /// not partitioned; a partitioned L2 costs l2_near.hit_latency_cycles on a near hit and
  /// l2_far_hit_latency_cycles on a near miss that hits the whole L2.
  CacheConfig l2;
  double l2_far_hit_latency_cycles = 0;
  double dram_latency_cycles = 0;
  double shared_latency_cycles = 0;
  /// Relative sigma of gaussian noise multiplied onto each chase's cycles_per_step; 0 = exact.
  double noise_relative_sigma = 0;
  std::uint64_t seed = 1;  ///< seeds the noise

  // The structural hierarchy behind run_sequence (Sequencer). The chase keeps its fast
  // path above (near copy + whole L2, LRU) and ignores these.
  /// L2 partitions seen by run_sequence: 1 or 2; 0 = 2 when l2_partitioned, else 1. Each
  /// partition is a cache of l2.capacity_bytes / partitions with l2's geometry and policy.
  int l2_partitions = 0;
  /// Home partition of a line = parity(address & mask) (one mask for two partitions); empty =
  /// parity of the bit at l2.line_bytes (alternate lines).
  std::vector<std::uint64_t> l2_partition_masks;
  /// A far-homed line read by an SM is copied into the SM's partition (served there at near
  /// latency until evicted; the copy competes for the same sets as the homed lines).
  bool l2_replication = true;
  /// The L1's tag array when it outnumbers the lines it can hold (a decoupled L1): sets x ways
  /// x line bytes, the sets indexed by l1.set_hash_masks or a modulo; the carve-out then sets
  /// only how many lines are held (CacheConfig::data_capacity_bytes, l1_data_victim). 0 = one
  /// array whose capacity the carve-out sets. run_sequence and the structural chase only.
  std::uint64_t l1_tag_bytes = 0;
  DataVictim l1_data_victim = DataVictim::kOwnSet;
  /// Partition side of each SM; empty = sm % partitions.
  std::vector<int> sm_partition;
  /// TLB levels, first = closest to the SM; empty = no TLB cost. One hierarchy for all SMs.
  std::vector<TlbLevel> tlb;
  /// DRAM latency of a miss by where the line is homed, seen from the SM (2 partitions only);
  /// 0 = dram_latency_cycles. A far-homed miss crosses to the other partition first.
  double dram_near_home_latency_cycles = 0;
  double dram_far_home_latency_cycles = 0;
  /// The chase walks the structural hierarchy above (the partitions with their home hash and
  /// replication, the L1 and L2 geometry and policies, the TLB, DRAM by home) instead of the
  /// fast path (near copy + whole L2, LRU). Written by export-model for partitioned results.
  bool chase_structural = false;
  /// A stride prefetcher, off when distance_lines is 0: after two loads of one SM that advance
  /// by the same stride (0 < stride <= max_stride_bytes), the lines 1 .. distance_lines strides
  /// past the load are filled untimed into their L2 partition (and into the L1 when into_l1 and
  /// the load allocates there). run_sequence only; export-model does not write it.
  struct StridePrefetcher {
    int distance_lines = 0;
    std::uint64_t max_stride_bytes = 0;
    bool into_l1 = false;
  } prefetcher;
  /// What a kernel can ask of the L2 (L2Residency), off when max_set_aside_bytes is 0. Lines a
  /// window marks persisting, or loads mark evict_last, hold at most
  /// floor(l2.ways x set-aside / l2.capacity_bytes) ways of a set (evict_last_ways_unreserved
  /// while no set-aside is made); streaming and evict_first lines are evicted first. The bulk
  /// loads, run_sequence and export-model's JSON only.
  struct PersistingL2 {
    std::uint64_t max_set_aside_bytes = 0;  ///< persistingL2CacheMaxSize
    std::uint64_t max_window_bytes = 0;     ///< accessPolicyMaxWindowSize
    int evict_last_ways_unreserved = 0;
    /// What discard.global.L2 does to a dirty line: dropped (false, as PTX states) or written
    /// back first (true: a model of a GPU that ignores the discard's data).
    bool discard_writes_back = false;
    /// Where the cap applies: per set (false: the ways above in every set) or over the whole
    /// L2 (true: as many protected lines as those ways hold in all sets together, anywhere; a
    /// model of a GPU that counts a byte budget).
    bool byte_budget = false;
  } persisting;
  /// The L2's insertion policy (Insertion; l2.policy lru only) and bimodal insertion's throttle
  /// (1 fill in this many at MRU; 2 .. 65536). run_sequence and the structural chase.
  Insertion l2_insertion = Insertion::kMru;
  std::uint32_t l2_bimodal_throttle = 32;
};

/// The number of L2 partitions run_sequence models (l2_partitions, or its default).
int sequence_partitions(const ModelConfig& config);

/// The L1 capacity for a carve-out request: -1 = default_shared_carveout_bytes, otherwise
/// shared = round(shared_per_sm_bytes * percent / 100) (0 gives the largest L1); then
/// L1 = unified - shared, rounded down to a multiple of line * ways (line for fully associative).
/// Throws UsageError for a percent outside -1 and 0..100.
std::uint64_t l1_capacity_bytes(const ModelConfig& config, int carveout_percent);

/// Throws UsageError naming the first inconsistent parameter.
void validate(const ModelConfig& config);

/// Every parameter, snake_case keys with units in the names (e.g. "l2_capacity_bytes").
nlohmann::json to_json(const ModelConfig& config);

namespace detail {
/// Throws UsageError unless the cache geometry is consistent (CacheSim and validate()).
void check_cache(const std::string& what, const CacheConfig& c);
}  // namespace detail

/// A set-associative cache with true LRU replacement, on flat arrays: O(ways) per access for
/// ways <= kMaxScanWays (the ways of a set are kept in MRU-to-LRU order), O(1) expected with a
/// hash table and per-set LRU lists above that (e.g. large fully associative caches).
class CacheSim {
 public:
  static constexpr std::uint32_t kMaxScanWays = 32;

  /// Throws UsageError if line_bytes is 0 or the capacity is not a multiple of line * ways.
  explicit CacheSim(const CacheConfig& config);

  /// Looks up the line holding `address`. Hit: it becomes most recently used, returns true.
  /// Miss: it is filled, evicting the set's least recently used line if full; returns false.
  bool access(std::uint64_t address);
  /// A host-prefetch hint for the set `address` maps to (speed only; changes nothing).
  void prefetch(std::uint64_t address) const;
  /// Whether the line holding `address` is cached; changes nothing.
  bool contains(std::uint64_t address) const;
  /// Empties the cache and zeroes the counters.
  void clear();

  const CacheConfig& config() const { return config_; }
  std::uint64_t sets() const { return sets_; }
  std::uint32_t ways() const { return ways_; }  ///< effective: lines per set
  std::uint64_t lines() const { return sets_ * ways_; }
  std::uint64_t hits() const { return hits_; }
  std::uint64_t misses() const { return misses_; }

 private:
  static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
  static constexpr std::uint32_t kNil = ~std::uint32_t{0};

  std::uint64_t line_of(std::uint64_t address) const {
    return line_shift_ >= 0 ? address >> line_shift_ : address / config_.line_bytes;
  }
  /// line % sets_, by Lemire's multiply-based reduction when line and sets fit in 32 bits.
  std::uint64_t set_of(std::uint64_t line) const {
    if (line <= 0xffffffffu && mod_m_ != 0)
      return static_cast<std::uint64_t>((static_cast<unsigned __int128>(mod_m_ * line) * sets_) >>
                                        64);
    return line % sets_;
  }
  bool access_scan(std::uint64_t line);
  bool access_hashed(std::uint64_t line);
  std::uint64_t home(std::uint64_t line) const;
  std::uint64_t find(std::uint64_t line) const;  ///< hash index, or kEmpty
  void hash_insert(std::uint64_t line, std::uint32_t slot);
  void hash_erase(std::uint64_t index);

  CacheConfig config_;
  std::uint64_t sets_ = 0;
  std::uint32_t ways_ = 0;
  int line_shift_ = -1;      ///< log2(line_bytes) when a power of two
  std::uint64_t mod_m_ = 0;  ///< 2^64 / sets_ rounded up, when sets_ < 2^32 (else 0)
  bool hashed_ = false;
  std::uint64_t hits_ = 0, misses_ = 0;

  // Scan mode: tags_[set * ways_ + i] is the set's i-th most recently used line (kEmpty = free).
  // Hashed mode: tags_[slot] is the line in slot (set s owns slots s*ways_ .. s*ways_+ways_-1).
  std::vector<std::uint64_t> tags_;
  // Hashed mode only: per-slot LRU list links, per-set list ends and fill counts, and an
  // open-addressing (linear probing) table line+1 -> slot.
  std::vector<std::uint32_t> prev_, next_;
  std::vector<std::uint32_t> head_, tail_, used_;
  std::vector<std::uint64_t> hkeys_;
  std::vector<std::uint32_t> hslots_;
  std::uint64_t hmask_ = 0;
  int hshift_ = 0;
};

/// Where the timed loads of the last chase() were served.
struct ModelChaseStats {
  std::uint64_t l1_hits = 0;
  std::uint64_t l2_hits = 0;      ///< near-partition hits, or all L2 hits when not partitioned
  std::uint64_t l2_far_hits = 0;  ///< near misses that hit the whole L2 (partitioned only)
  std::uint64_t dram_loads = 0;
};

/// The modelled GPU. Chains live at line-aligned addresses of a simulated address space; the
/// cache state persists across chase() calls (like a real GPU), make_chain() empties every cache
/// (a fresh allocation), and a chase whose carve-out gives a different L1 capacity than the
/// previous one starts with an empty L1 (a reconfigured L1).
class ModelDevice : public Device, public Sequencer, public L2Residency {
 public:
  /// Throws UsageError if the configuration is inconsistent (see validate()).
  explicit ModelDevice(ModelConfig config);
  ~ModelDevice() override;

  const DeviceInfo& info() const override { return info_; }
  /// global_mem_bytes minus the working sets of the live chains.
  std::uint64_t free_memory() const override;
  /// valid, at the configured clocks (the model's clocks are exact), no throttling.
  ClockReading read_clocks() const override;
  /// Fixed: clock64 2 cycles, %clock 1 cycle. The chase timings do NOT include any timer
  /// overhead, so an analysis that subtracts overhead / timed_steps is off by that (negligible).
  TimerCalibration calibrate_timer() override;

  /// Throws UsageError if node_stride_bytes is 0, working_set_bytes < node_stride_bytes, the
  /// working set does not fit in free_memory(), or it has more than 2^32 - 1 nodes.
  std::unique_ptr<Chain> make_chain(const ChainSpec& spec) override;
  /// Simulates warmup_steps + timed_steps loads from node order[0]. Throws UsageError if
  /// timed_steps is 0, the chain is not this device's, or carveout_percent is invalid.
  ChaseTiming chase(Chain& chain, const ChaseParams& params) override;
  /// The chase above, one step at a time: a sampled step costs what its level costs (no timer
  /// overhead, no noise).
  SampledChase sampled_chase(Chain& chain, const ChaseParams& params, std::uint32_t every) override;
  /// shared_latency_cycles per step (plus noise). Throws UsageError unless
  /// node_stride_bytes <= bytes <= shared_per_sm_bytes, node_stride_bytes > 0, timed_steps > 0.
  ChaseTiming shared_chase(std::uint32_t bytes, std::uint32_t node_stride_bytes,
                           std::uint64_t timed_steps) override;
  nlohmann::json environment() const override;

  /// A range of the simulated address space (2 MiB aligned); counts against free_memory().
  std::unique_ptr<ProbeBuffer> alloc_probe_buffer(std::uint64_t bytes) override;
  /// Runs `place` then `sequence` through the structural hierarchy (L1 invalidated before each,
  /// TLB levels, L2 partitions with the home hash and replication, sectors, replacement); each
  /// timed access costs the TLB penalties plus the latency of the level that served it (plus
  /// noise). Always verified (the model's loads are exact).
  SequenceTiming run_sequence(ProbeBuffer& buffer, const AccessSequence& s) override;
  /// Of the order of the CUDA sequencer's (its offsets live in shared memory), so that the
  /// experiments take the same paths on the model as on the GPU.
  std::size_t max_sequence_length() const override { return std::size_t{1} << 15; }
  std::size_t max_sweep_length() const override { return std::size_t{1} << 22; }

  // L2Residency (ModelConfig::persisting). The set-aside clamps to the maximum; the flush
  // evicts every line (the experiments reset persisting lines first, as on the GPU).
  PersistingLimits persisting_limits() const override;
  bool has_eviction_hints() const override { return config_.cc_major >= 8; }
  std::uint64_t persisting_set_aside() const override { return set_aside_; }
  void set_persisting_set_aside(std::uint64_t bytes) override;
  void reset_persisting_lines() override;
  void flush_l2() override;
  /// Every line of the range through the L2 partitions (not the L1), by SMs in turn, with the
  /// window's or the hint's priority per line (a hashed share for hit ratios and fractions).
  void load_bulk(ProbeBuffer& buffer, const BulkLoads& loads) override;
  /// Stores, discards and the census keep what memory and the L2's dirty lines hold per line
  /// (a line is all one mark): flush_l2 writes the dirty lines back, a discard drops them
  /// (persisting.discard_writes_back: writes them back first).
  void store_bulk(ProbeBuffer& buffer, std::uint64_t offset, std::uint64_t bytes,
                  std::uint64_t mark) override;
  void discard_bulk(ProbeBuffer& buffer, std::uint64_t offset, std::uint64_t bytes) override;
  WordCensus census(ProbeBuffer& buffer, std::uint64_t offset, std::uint64_t bytes,
                    std::uint64_t mark) override;

  const ModelConfig& config() const { return config_; }
  /// The node the last chase() ended on.
  std::uint32_t last_final_node() const { return last_final_node_; }
  const ModelChaseStats& last_chase_stats() const { return last_stats_; }
  /// The L1 capacity the L1 is configured for now (the default carve-out's until a chase asks
  /// for another).
  std::uint64_t current_l1_capacity_bytes() const { return l1_capacity_; }

 private:
  template <bool kL1, bool kPartitioned, bool kCount>
  std::uint32_t walk(const std::vector<std::uint32_t>& order,
                     const std::vector<std::uint32_t>& next, std::uint64_t base,
                     std::uint32_t stride, std::uint32_t node, std::uint64_t first_step,
                     std::uint64_t steps, ModelChaseStats& stats);
  /// What every chase launch does first: checks the chain and the steps, configures the L1
  /// for the carve-out and invalidates it (a launch does on the GPU).
  const detail::ModelChain& begin_chase(Chain& chain, const ChaseParams& params, const char* what);
  /// `steps` steps of the chase from `node` (step `first` of its cycle); their cost is added to
  /// *cycles and their levels to *stats when given.
  std::uint32_t advance(const detail::ModelChain& chain, bool use_l1, std::uint32_t node,
                        std::uint64_t first, std::uint64_t steps, double* cycles,
                        ModelChaseStats* stats);
  /// The fast (non-structural) chase's cost of the loads counted in `stats`.
  double fast_cost(const ModelChaseStats& stats) const;
  double noise_factor();
  void reset_caches();
  /// The structural hierarchy with an L1 of `l1_capacity` (a reconfigured L1 starts empty; the
  /// L2 and TLB state are kept).
  detail::SequenceModel& structural(std::uint64_t l1_capacity);
  std::uint32_t walk_structural(const std::vector<std::uint32_t>& next, std::uint64_t base,
                                std::uint32_t stride, std::uint32_t node, bool use_l1,
                                std::uint64_t steps, double* cycles, ModelChaseStats* stats);

  ModelConfig config_;
  DeviceInfo info_;
  std::shared_ptr<detail::ModelLedger> ledger_;
  std::uint64_t next_base_ = 0;  ///< bump allocator of the simulated address space
  CacheSim l1_, l2_near_, l2_;
  std::uint64_t l1_capacity_ = 0;
  std::mt19937_64 rng_;
  std::uint32_t last_final_node_ = 0;
  ModelChaseStats last_stats_;
  std::unique_ptr<detail::SequenceModel> seq_;
  std::uint64_t set_aside_ = 0;
  /// Marks by absolute line (base + offset) / 128: what the L2 holds dirty, what memory holds
  /// (absent: the buffer's own values).
  std::map<std::uint64_t, std::uint64_t> dirty_marks_, memory_marks_;
  /// The persisting ways of each L2 set the set-aside grants (applied to seq_'s L2).
  int persisting_ways() const;
  /// Those ways (or, with persisting.byte_budget, their lines over every set) to seq's L2.
  void apply_persisting(detail::SequenceModel& seq) const;
};

/// The built-in models' configurations: "h200", "a100", "rtx5080", "tiny". Throws UsageError
/// ("unknown model 'x'; available: h200, a100, rtx5080, tiny") for any other name.
ModelConfig builtin_model_config(const std::string& name);
std::vector<std::string> model_names();
std::unique_ptr<Device> make_model_device(const std::string& name);

}  // namespace gpuprobe::device
