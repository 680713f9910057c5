#pragma once
// What the cache-structure searches (measure/cache_search.hpp) find, and the judgements of it
// that need no GPU: line size, associativity and set indexing by conflict-set construction,
// replacement policy class, L2 partitions (home hash, far-hit latency, replication), TLB levels,
// and capacity. The results below say how each search finds them; the functions here are pure
// (numbers in, conclusions out), so a recorded result can be judged again without a device.
// Hits and misses are told apart by a threshold derived from measured hit and miss latencies,
// never from fixed cycle numbers.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace gpuprobe::analysis::cache {

/// Hit and miss latency of a level (the second and first read of 32 random lines) and the
/// threshold between them: p95 of the hits + max(6 robust sigmas, a tenth of the gap to the
/// misses' p5, 2 % of the hit latency), never past the midpoint of that gap, so that an
/// intermediate level counts as a miss.
struct Calibration {
  bool ok = false;  ///< hits and misses are separated (p95 of hits < p5 of misses)
  double hit_cycles = 0, miss_cycles = 0, threshold = 0;
  std::vector<double> hits, misses;
};
/// The calibration judged from the two reads of each line: `hits` (second reads) and `misses`
/// (first reads); ok false, with no threshold, below 3 of either.
Calibration judge_calibration(std::vector<double> hits, std::vector<double> misses);

/// A minimal conflict set: lines of one set, ways + 1 of them. Grown from random candidates
/// (aligned to `alignment`, never a planned stride) until they conflict, cut to the shortest
/// conflicting prefix, then pruned by group elimination. Candidates share their address bits
/// below `alignment` (1 KiB for the L1; larger for an L2 whose sets outnumber what one sequence
/// can hold: collisions are still measured, only the pool is narrowed).
struct ConflictSet {
  bool found = false;
  std::vector<std::uint64_t> lines;  ///< ways + 1 lines when found
  std::uint32_t ways = 0;
  bool minimal_verified = false;              ///< removing any one line ends the conflict
  std::size_t checks = 0, checks_passed = 0;  ///< the minimality checks (each removal + all)
  std::uint64_t candidates_tried = 0;
  std::string note;
  std::string method = "sequences";  ///< "sequences" or "eviction_sweeps"
  std::uint64_t target = 0;          ///< eviction_sweeps: the line the set evicts (a member)
  std::uint64_t eviction_tests = 0;  ///< eviction_sweeps: tests run (each a flush + 3 launches)
  nlohmann::json steps = nlohmann::json::array();  ///< eviction_sweeps: the reduction's trace
  /// eviction_sweeps: whether eviction by a fixed set of lines repeats. kRepeatTrials tests
  /// with the final set (or, when no group could go, the shortest evicting prefix) and as many
  /// with one line (one group) less. A deterministic policy gives all and none; anything in
  /// between means the victim is not a function of the access order alone.
  int repeat_trials = 0, evicted_with_set = 0, evicted_with_less = 0;
  /// Median re-read latency of the target in the trials with the set: where an evicted target
  /// is served from (a far partition's home copy, or DRAM).
  double reread_cycles = 0;
  /// eviction_sweeps: needed groups of a repeatable pass that could free none (each holds a
  /// congruent line): a lower bound on the ways when the search stops before a set.
  std::uint64_t ways_at_least = 0;
  /// eviction_sweeps: the shortest evicting prefix of the pool (lines; 0 = none found).
  std::uint64_t shortest_prefix = 0;
  /// eviction_sweeps, a search that stopped with the groups it kept each needed (repeatably):
  /// the volume check. Each trial drops one kept group and adds as many fresh random lines of
  /// the buffer; `volume_restored` counts the trials whose set evicted the target again. A
  /// capacity eviction needs only the count; a conflict within one set needs the dropped
  /// group's congruent lines back (volume_verdict).
  int volume_trials = 0, volume_restored = 0;
  std::uint64_t volume_group_lines = 0;  ///< lines dropped and added per trial (the mean group)
  bool probabilistic() const {
    return repeat_trials > 0 && ((evicted_with_set > 0 && evicted_with_set < repeat_trials) ||
                                 (evicted_with_less > 0 && evicted_with_less < repeat_trials));
  }
  bool repeatable() const {
    return repeat_trials > 0 && evicted_with_set == repeat_trials && evicted_with_less == 0;
  }
};

/// Trials of the volume check (ConflictSet::volume_trials).
inline constexpr int kVolumeTrials = 8;
/// The volume check's verdict (ConflictSet::volume_trials / volume_restored), given only for a
/// complete check (8 trials): "volume" when every trial restored the eviction (any lines of the
/// same count do: a capacity eviction, which restores every time), "not_volume" at 5 or fewer
/// (the dropped lines are not interchangeable with others), "undecided" at 6 or 7; "" otherwise.
/// A conflict within one set over many lines restores only when the fresh group brings as many
/// congruent lines as the dropped one held, which was kept for holding them: about half the
/// time or less, so 8 of 8 comes under 1 % of such targets, and 6 or 7 of 8 is common.
std::string volume_verdict(int trials, int restored);

/// The split near_home_targets makes of cold reads: reads above 1.5 x the median (page walks:
/// the far class lies about 1.3 x above the near one) are left out, then the two-means
/// threshold of the rest; nullopt unless both classes hold a quarter of the reads and the upper
/// is at least 10 % slower.
std::optional<double> near_home_threshold(const std::vector<double>& cold_cycles);

/// Line size: the smallest delta (16..512 B) for which replacing a conflict-set member by the
/// address delta further ends the conflict (the moved access left the member's line).
struct LineSizeResult {
  bool found = false;
  std::uint32_t line_bytes = 0;
  nlohmann::json trials = nlohmann::json::array();  ///< {delta, member, conflict}
  std::size_t agreeing = 0, trials_at_answer = 0;
};

/// Set indexing: which address bits change a line's set (flipping bit b of one member of a
/// conflict set ends the conflict), and which pairs of such bits cancel (flipping both keeps the
/// set: equal columns of a GF(2) hash). Only bits below Probe::contiguous_bytes are physical:
/// a flip at or above it moves the line to another page, so it shows that the page's frame
/// matters, not which physical bit does; pairs are tested only among the physical bits, and the
/// kind is judged from them.
enum class SetIndexKind { kUnknown, kSingleSet, kModuloPowerOfTwo, kModuloNonPowerOfTwo, kXorHash };
/// "unknown", "single_set", "modulo_power_of_two", "modulo_non_power_of_two", "xor_hash".
std::string to_string(SetIndexKind k);
struct SetIndexResult {
  std::vector<int> bits;                         ///< bits that change the set
  std::vector<std::pair<int, int>> equal_pairs;  ///< pairs of physical such bits that cancel
  int lowest_bit_tested = 0, highest_bit_tested = 0;
  int first_page_bit = -1;  ///< log2(contiguous_bytes) when a flip there leaves the page, else -1
  std::vector<int> page_bits;  ///< tested bits at or above first_page_bit that change the set
  /// An equal pair moves the line by fewer lines than the sets (capacity / (line x ways)): no
  /// modulo can keep its set, so the index is a hash ("xor_hash") whatever the set count.
  /// Also refuted when two members of the conflict set that lie in one page (their physical
  /// distance is their offsets') are not a multiple of the sets apart: a modulo puts lines m
  /// apart, and only them, in one set.
  bool modulo_refuted = false;
  /// What refuted it: "equal_pair", "member_distance" or "" (not refuted).
  std::string modulo_refuted_by;
  /// The greatest common divisor of the in-page distances between conflict-set members, in
  /// lines (0 = no two members share a page): a modulo over m sets needs m to divide it.
  std::uint64_t member_distance_gcd_lines = 0;
  SetIndexKind kind = SetIndexKind::kUnknown;
  std::uint64_t sets = 0;  ///< 2^bits for modulo_power_of_two, else from capacity (0 = unknown)
  nlohmann::json tests = nlohmann::json::array();       ///< one-bit flips
  nlohmann::json pair_tests = nlohmann::json::array();  ///< two-bit flips of physical bits
};
/// The record's form (the 13 keys cache.l2.ways writes; kind by name). from_json throws on a
/// missing bits, equal_pairs, kind or tests, on a kind it does not name, and on a pair that is
/// not two bits; the other keys default as in a record written before they existed.
void to_json(nlohmann::json& j, const SetIndexResult& r);
void from_json(const nlohmann::json& j, SetIndexResult& r);
/// The greatest common divisor of the distances, in lines, between lines that lie in one block of
/// `contiguous_bytes` (0 = every address is physical: all are compared); 0 when no two do.
std::uint64_t in_page_distance_gcd(const std::vector<std::uint64_t>& lines,
                                   std::uint32_t line_bytes, std::uint64_t contiguous_bytes);
/// Judges r.kind, r.sets and the modulo refutation from the flips already in r (bits,
/// page_bits, equal_pairs, lowest/highest_bit_tested, first_page_bit) and the conflict set's
/// lines: the part of infer_set_index that needs no GPU, so a recorded result can be re-judged.
void judge_set_index_kind(SetIndexResult& r, const std::vector<std::uint64_t>& lines,
                          std::uint64_t ways, std::uint32_t line_bytes,
                          std::uint64_t capacity_bytes, std::uint64_t contiguous_bytes);

/// The columns of a GF(2)-linear set index (an XOR hash): bits are taken from the line upward;
/// a bit whose flip, together with the flip of some combination v of the bits found independent
/// before it, keeps a conflict-set member in its set has the column of v (dependent: found by
/// trying every such v, one conflict test each); a bit for which no v does is independent (a
/// new column). The sets are 2^rank. Only bits below the page (physical) are searched, and the
/// search stops once the rank passes `max_rank` (2^rank tests per later bit). A bit whose flip
/// alone keeps the set (not in `index_bits`) has column 0.
struct HashColumnsResult {
  bool found = false;  ///< every searched bit was resolved
  int rank = 0;        ///< independent bits: the sets are 2^rank
  std::vector<int> independent_bits;
  /// Dependent bits and the independent bits whose combined flip undoes theirs.
  std::vector<std::pair<int, std::vector<int>>> dependent;
  int highest_bit_searched = -1;
  /// bit k of the set = parity(address & masks[k]) over the searched bits (independent bit k
  /// plus every dependent bit whose combination holds it): the model's set_hash_masks.
  std::vector<std::uint64_t> masks;
  std::size_t tests = 0;
  /// Each dependent column tested again on another member: how many kept the set.
  std::size_t verified = 0;
  std::string note;
};

/// Which line leaves a decoupled cache (tags naming more lines than it holds) when its lines
/// are full and the new line's set still has a free tag. Consecutive lines from the buffer's
/// start fill at most `ways` lines of any set up to tag_lines (the hash is balanced over a
/// contiguous range: each aligned block of sets x line holds one line of every set), so a miss
/// there is no set conflict. Lines held: the largest n whose lines 0..n-1, read in order and
/// again, give no miss on the second pass (bisection). Then lines 0..n+d-1 are read in order
/// and one line is probed per sequence: a sample of the d oldest (global LRU leaves them),
/// a sample of the lines own-set eviction names (each new line's oldest set-mate, from
/// `masks`), and samples of four age bins of the rest. A second fill of about one new line per
/// set (n + sets lines, no set past its ways) is probed at each set's oldest and second-oldest
/// line (by `masks`): a pointer cycling over the sets evicts every set's oldest line once and
/// no second one; random sets leave e^-1 of the oldest and take a second line from a quarter.
/// Classes: global_lru, own_set, random (a random line), random_set (the oldest line of a
/// random set), set_cycle (the oldest line of the next set of a cycle over all sets), none
/// (evictions no class predicts). Each probe is one sequence.
inline constexpr double kMisfitZ = 3.0;
/// The classes a data victim is judged against; kNotJudged ("") before a search measured one.
enum class VictimClass { kNotJudged, kGlobalLru, kOwnSet, kRandom, kRandomSet, kSetCycle, kNone };
/// "", "global_lru", "own_set", "random", "random_set", "set_cycle", "none".
std::string to_string(VictimClass v);
struct DataVictimResult {
  bool measured = false;
  std::string note;
  std::uint64_t lines_held = 0, filled = 0;
  std::uint64_t filled_cycle = 0;  ///< lines of the second fill (about one new line per set)
  VictimClass victim = VictimClass::kNotJudged;
  std::size_t oldest_probed = 0, oldest_evicted = 0, own_probed = 0, own_evicted = 0;
  std::vector<std::size_t> bin_probed, bin_evicted;  ///< by age, oldest bin first
  nlohmann::json groups = nlohmann::json::array();   ///< per group: name, filled, probed, evicted
  std::size_t probes = 0;
  /// Per class, the largest |observed - predicted eviction rate| / se over the probe groups;
  /// the class is the one within kMisfitZ, else none; rejected_z = the smallest misfit of the
  /// classes not chosen (the confidence's separation).
  std::map<std::string, double> misfit_z;
  double rejected_z = 0;
  nlohmann::json evidence = nlohmann::json::array();  ///< per probe: line, group, evicted
};
/// The record's form (its 17 keys; victim by name). from_json throws on a missing measured,
/// victim, lines_held, filled, oldest/own counts, bins, misfit_z or rejected_z, and on a victim
/// it does not name; note, filled_cycle, groups, probes and evidence default.
void to_json(nlohmann::json& j, const DataVictimResult& r);
void from_json(const nlohmann::json& j, DataVictimResult& r);

/// The age bins the data-victim search samples (oldest first).
inline constexpr int kVictimAgeBins = 4;
/// The data-victim search's two fills, and what the classes' predictions need of them.
struct VictimFills {
  std::uint64_t lines_held = 0;     ///< lines 0..lines_held-1 fill the cache first
  std::uint64_t sets = 0;           ///< the tags' sets
  std::uint64_t filled = 0;         ///< the first fill: lines_held + the new lines
  std::uint64_t filled_cycle = 0;   ///< the second fill: about one new line per set
  std::vector<std::uint32_t> rank;  ///< each line's age rank in its set (0 = its oldest)
  /// The lines own-set eviction names after the first and after the second fill.
  std::unordered_set<std::uint64_t> own_victims, own_victims_cycle;
};
/// One probed group: lines 0..fill-1 read in order, then each of `lines` probed on its own.
struct VictimGroup {
  std::string name;
  std::uint64_t fill = 0;
  std::vector<std::uint64_t> lines;
  std::size_t probed = 0, evicted = 0;
};
/// The chance, under class `cls`, that `line` is gone after lines 0..fill-1 were read.
double predicted_eviction(VictimClass cls, std::uint64_t line, std::uint64_t fill,
                          const VictimFills& f);
/// Judges the probed groups (the first two "oldest" and "own_set", then the age bins): r's
/// counts, misfit_z per class, victim and rejected_z.
void judge_data_victim(DataVictimResult& r, const std::vector<VictimGroup>& groups,
                       const VictimFills& f);

/// Replacement policy class from sequences over one conflict set (fill in a random order,
/// random re-accesses, one new line, then a timed probe of each member in its own sequence),
/// compared with what LRU, FIFO and tree-PLRU predict; identical sequences repeated to detect
/// randomness.
enum class PolicyClass { kLru, kFifo, kTreePlru, kRandom, kNone };
/// "lru", "fifo", "tree_plru", "random", "none".
std::string to_string(PolicyClass c);
struct PolicyResult {
  /// The class; the deterministic classes that all explain the evidence when they tie.
  std::vector<PolicyClass> classes{PolicyClass::kNone};
  /// The classes by name, "a|b" when tied (the record's form).
  std::string label() const;
  std::size_t agreeing = 0, tests = 0;
  bool deterministic = true;
  nlohmann::json evidence = nlohmann::json::array();  ///< per test: order, victims, predictions
};

/// Cyclic retention: the conflict set's ways + 1 lines read in one fixed random order, round
/// after round (the order a chase over a working set past the cache gives each set). LRU, FIFO
/// and tree-PLRU miss every access of this cycle (each line is evicted just before its turn);
/// a policy that does not (random victims, an insertion below the most recent place) keeps some.
/// The policy sequences above judge which line leaves when one new line arrives, and cannot see
/// where the new line is placed; this test can. `retention` = hits / timed accesses over the
/// rounds after the first, `round_hits` per timed round, `predicted` what each deterministic
/// class gives (simulate_set).
///
/// Interleaved (`fillers_per_access` > 0): after every access to the cycle, that many accesses
/// to `fillers`, lines outside the set (taken in turn), as a chase's other lines come between
/// two visits to one set; only the set's accesses are judged. A policy confined to the set
/// keeps what it keeps without them (the same prediction); a policy or a storage that is shared
/// between sets can keep more or less.
struct CyclicResult {
  bool measured = false;
  double retention = 0;
  std::vector<double> round_retention;  ///< per timed round, over the orders
  std::size_t rounds = 0, orders = 0, lines = 0;
  std::size_t fillers_per_access = 0, fillers = 0;
  nlohmann::json predicted = nlohmann::json::object();
};
/// Lines outside a conflict set: each member with one set-index bit flipped (`bits`, the
/// physical ones below `first_page_bit`, -1 = all), other members left out. Every such flip
/// ended the conflict in infer_set_index, so these lines lie in other sets.
std::vector<std::uint64_t> out_of_set_lines(const ConflictSet& set, const std::vector<int>& bits,
                                            int first_page_bit, std::uint64_t buffer_bytes);

/// Capacity: the largest number of consecutive lines (from a 2 MiB-aligned start, random order)
/// that do not conflict, by doubling then bisection to `precision`.
struct CapacityResult {
  bool found = false;
  std::uint64_t bytes = 0;
  std::uint64_t lines_fit = 0, lines_conflict = 0;
};

/// L2 partitions: lines placed by SM 0 then read first by SM b; two latency classes mean two
/// partitions (near = homed at b's side). The home of a line is a GF(2) function of its
/// address (hash_mask); far_hit_cycles is the median of the far class; replication: a far line
/// read twice by b is served the second time at near latency.
struct PartitionInference {
  bool two_partitions = false;
  int other_sm = -1;  ///< the SM that found two classes
  double near_cycles = 0, far_cycles = 0, threshold = 0;
  std::vector<double> near_samples, far_samples;
  bool hash_found = false;
  std::uint64_t hash_mask = 0;
  std::size_t rank = 0;
  std::optional<bool> replication;
  std::size_t replication_agreeing = 0, replication_trials = 0;
  std::vector<double> second_read_cycles;
  nlohmann::json evidence = nlohmann::json::object();
};

/// TLB levels from one line per cell of `largest_page` (random in-cell offsets, cache latency
/// of each line subtracted), n cells for n = 1, 2, 4, ... walked cyclically. A level is a step
/// up that clears 2 % of the cache latency and its own noise (separation >= 0.9); a rise that
/// keeps climbing over the next doublings by less than the step itself (a set-associative TLB
/// under random offsets rises gradually) belongs to the same level (its penalty). Entries: the
/// last n whose walk does not step (bisection). Coverage (the bytes one first-level entry
/// translates): the same crossing at strides of 2, 4, ... x largest_page; while the stride is
/// below the coverage the crossing falls as the stride grows (the reach stays), from the
/// coverage on it stays (the entries stay); below largest_page, 1.5 x the entries stop
/// stepping once two cells share an entry.
struct TlbLevelResult {
  std::uint64_t entries = 0;
  double miss_penalty_cycles = 0;    ///< median of penalty_replicates
  std::vector<double> below, above;  ///< excess latency samples either side of the step
  /// The penalty from kTlbPenaltyReplicates independent pairs of walks (the detection's, then
  /// pairs over other cells at fresh offsets), each with its standard error.
  std::vector<double> penalty_replicates, penalty_standard_errors;
};
struct TlbResult {
  std::vector<TlbLevelResult> levels;
  /// Bytes one first-level entry translates: the smallest stride from which the crossing's
  /// cell count stays (within a quarter); 0 = not determined (it still falls at the largest
  /// stride the buffer allows: coverage_at_least says how far that went).
  std::uint64_t page_bytes = 0;
  std::uint64_t coverage_at_least = 0;
  std::uint64_t max_pages_tried = 0;
  nlohmann::json curve = nlohmann::json::array();  ///< {pages, stride, excess_cycles}
  /// {stride_bytes, crossing_cells, reach_bytes}: the first level's crossing at each stride.
  nlohmann::json page_curve = nlohmann::json::array();
};

/// A reference single-set simulator of the deterministic policies (the hypotheses infer_policy
/// tests): the way order of misses in an initially empty set of `ways` ways; returns the
/// members (indices into the access alphabet) resident after `accesses`.
std::vector<int> simulate_set(PolicyClass policy, std::uint32_t ways,
                              const std::vector<int>& accesses);

}  // namespace gpuprobe::analysis::cache
