#pragma once
// The samples of cache.l1.ways and cache.l2.ways as a type (issue 28, "samples are structs"):
// what run() records and analyze() reads, one JSON conversion (the keys as result.json holds
// them, byte for byte), the samples version on the type. Categories (a conflict set's method,
// where an evicted target was served from, the replacement class, the set-index kind, the data
// victim) are enums here and strings only in the JSON. analyze() converts the samples once with
// core samples_as<WaysSamples>, which calls check().
//
// Evidence the analysis passes on unread (a search's steps, tests and per-probe records) stays
// JSON, as the searches (analysis/cache_inference.hpp) record it.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/cache_inference.hpp"

namespace gpuprobe::probes::cache_structure {

/// How a conflict set was searched: "sequences" or "eviction_sweeps".
enum class SetMethod { kSequences, kEvictionSweeps };
/// Where an evicted eviction target was re-read from: unknown (not written), "far_partition"
/// (its home copy in the other partition survived) or "dram".
enum class ServedFrom { kUnknown, kFarPartition, kDram };
std::string to_string(SetMethod m);
std::string to_string(ServedFrom s);
/// The ServedFrom a label names ("" unknown); UsageError for another.
ServedFrom served_from(const std::string& label);

/// A level's hit/miss calibration (analysis::cache::Calibration as recorded).
struct CalibrationRecord {
  bool ok = false;
  double hit_cycles = 0, miss_cycles = 0, threshold = 0;
  std::vector<double> hits, misses;
  static CalibrationRecord of(const analysis::cache::Calibration& c);
  /// confidence::separation of the hits from the misses.
  double separation() const;
};
void to_json(nlohmann::json& j, const CalibrationRecord& c);
/// hits and misses are required (the confidences read them); the rest default.
void from_json(const nlohmann::json& j, CalibrationRecord& c);

/// The references an evicted target's re-read is judged against (written with a far hit).
struct ServedReferencesRecord {
  double far_hit_cycles = 0, dram_cycles = 0;
  std::string dram_from;  ///< absent in results written before it
};
void to_json(nlohmann::json& j, const ServedReferencesRecord& r);
void from_json(const nlohmann::json& j, ServedReferencesRecord& r);

/// The cold reads that picked near-homed eviction targets (measure::cache::TargetSelection).
struct TargetSelectionRecord {
  bool split = false;
  double threshold_cycles = 0;
  std::vector<std::uint64_t> lines;
  std::vector<double> cold_cycles;
  std::vector<std::uint64_t> near_home_targets;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TargetSelectionRecord, split, threshold_cycles, lines,
                                   cold_cycles, near_home_targets)

/// An eviction search's volume check (analysis::cache::volume_verdict gives its verdict).
struct VolumeRecord {
  int trials = 0, restored = 0;
  std::uint64_t group_lines = 0;
};
void to_json(nlohmann::json& j, const VolumeRecord& v);  ///< with "verdict"
void from_json(const nlohmann::json& j, VolumeRecord& v);

/// Whether eviction by the search's set repeats.
struct RepeatRecord {
  int trials = 0, evicted_with_set = 0, evicted_with_one_less = 0;
  double reread_cycles_median = 0;
  bool probabilistic = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(RepeatRecord, trials, evicted_with_set, evicted_with_one_less,
                                   reread_cycles_median, probabilistic)

/// A conflict set as recorded (the level's set, each pool's, the data lines'). The eviction
/// members are written for SetMethod::kEvictionSweeps only; search_s and served_after_eviction
/// for a pool; span_bytes for the data lines' set.
struct ConflictRecord {
  bool found = false;
  std::vector<std::uint64_t> lines;
  std::uint32_t ways = 0;
  std::size_t checks = 0, checks_passed = 0;
  std::uint64_t candidates_tried = 0;
  std::string note;
  std::uint64_t seed = 0;
  SetMethod method = SetMethod::kSequences;
  // eviction_sweeps
  std::uint64_t target = 0, eviction_tests = 0, ways_at_least = 0, shortest_prefix_lines = 0;
  std::optional<VolumeRecord> volume;
  nlohmann::json steps = nlohmann::json::array();
  std::optional<RepeatRecord> repeat;
  // a pool's
  std::optional<double> search_s;
  ServedFrom served_after_eviction = ServedFrom::kUnknown;
  // the data lines'
  std::optional<std::uint64_t> span_bytes;

  static ConflictRecord of(const analysis::cache::ConflictSet& cs, std::uint64_t seed);
  bool swept() const { return method == SetMethod::kEvictionSweeps; }
};
void to_json(nlohmann::json& j, const ConflictRecord& c);
/// found, lines, ways and the minimality checks are required; method defaults to sequences.
void from_json(const nlohmann::json& j, ConflictRecord& c);

/// The eviction targets of a level (eviction_summary): stopped_by only when a search stopped
/// with every group needed.
struct StoppedBy {
  int volume = 0, not_volume = 0, undecided = 0, incomplete = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StoppedBy, volume, not_volume, undecided, incomplete)
struct EvictionSummary {
  int swept = 0, probabilistic = 0, bounded = 0;
  std::uint64_t ways_at_least = 0;
  std::optional<StoppedBy> stopped_by;
};
void to_json(nlohmann::json& j, const EvictionSummary& e);
void from_json(const nlohmann::json& j, EvictionSummary& e);

/// One pool's line size (analysis::cache::LineSizeResult), and all pools'.
struct LinePool {
  bool found = false;
  std::uint32_t line_bytes = 0;
  std::size_t agreeing = 0, trials_at_answer = 0;
  nlohmann::json trials = nlohmann::json::array();
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LinePool, found, line_bytes, agreeing, trials_at_answer, trials)
struct LineRecord {
  bool found = false;  ///< every pool found one, the same
  std::uint32_t line_bytes = 0;
  std::size_t agreeing = 0, trials_at_answer = 0;
  std::vector<LinePool> pools;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(LineRecord, found, line_bytes, agreeing, trials_at_answer, pools)

/// The replacement class (analysis::cache::PolicyResult): its classes, "a|b" when tied.
struct PolicyRecord {
  std::vector<analysis::cache::PolicyClass> classes{analysis::cache::PolicyClass::kNone};
  std::size_t agreeing = 0, tests = 0;
  bool deterministic = true;
  nlohmann::json evidence = nlohmann::json::array();
  static PolicyRecord of(const analysis::cache::PolicyResult& p);
  std::string label() const;
};
void to_json(nlohmann::json& j, const PolicyRecord& p);
void from_json(const nlohmann::json& j, PolicyRecord& p);  ///< class by name, "a|b" when tied

/// One cyclic-retention measurement (analysis::cache::CyclicResult): {"measured": false} when
/// not measured; fillers for the interleaved cycle only.
struct CyclicRun {
  bool measured = false;
  double retention = 0;
  std::vector<double> round_retention;
  std::size_t rounds = 0, orders = 0, lines = 0;
  std::size_t fillers_per_access = 0, fillers = 0;
  nlohmann::json predicted = nlohmann::json::object();
  static CyclicRun of(const analysis::cache::CyclicResult& c);
};
void to_json(nlohmann::json& j, const CyclicRun& c);
void from_json(const nlohmann::json& j, CyclicRun& c);
/// The cycle, and the same with fillers of other sets between its accesses.
struct CyclicRecord : CyclicRun {
  std::optional<CyclicRun> interleaved;
};
void to_json(nlohmann::json& j, const CyclicRecord& c);
void from_json(const nlohmann::json& j, CyclicRecord& c);

/// The XOR hash's columns (analysis::cache::HashColumnsResult).
struct DependentColumn {
  int bit = 0;
  std::vector<int> equals;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DependentColumn, bit, equals)
struct HashColumnsRecord {
  bool found = false;
  int rank = 0;
  std::vector<int> independent_bits;
  std::vector<DependentColumn> dependent;
  int highest_bit_searched = -1;
  std::vector<std::uint64_t> masks;
  std::size_t tests = 0, verified = 0;
  std::string note;
  static HashColumnsRecord of(const analysis::cache::HashColumnsResult& h);
  /// Found with no note: the tags' sets are 2^rank.
  bool hashed() const { return found && note.empty(); }
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(HashColumnsRecord, found, rank, independent_bits, dependent,
                                   highest_bit_searched, masks, tests, verified, note)

/// cache.l2.ways's chases at node strides 64 ... 512 B: `why` when they did not run.
struct LineByStrideRecord {
  std::vector<std::uint32_t> strides;
  double hit_cycles = 0;
  std::string knee_from;
  std::optional<std::string> why;
  std::optional<std::uint64_t> working_set_bytes;
  std::optional<std::vector<std::vector<double>>> cycles;  ///< per stride, the replicates
};
void to_json(nlohmann::json& j, const LineByStrideRecord& l);
void from_json(const nlohmann::json& j, LineByStrideRecord& l);

/// cache.l1.ways / cache.l2.ways samples. The conflict sets (conflict_set, pools, pools_agree,
/// all_pools_checks*) are written together once the calibration held; line, policy, cyclic,
/// capacity_from, line_bytes, capacity_bytes_used and set_index once the pools agreed.
struct WaysSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of cache.*.ways

  CalibrationRecord calibration;
  int carveout_percent = -1;
  std::size_t max_sequence = 0;
  std::optional<std::string> note;
  std::optional<std::uint64_t> candidate_alignment_bytes, pool_bytes;
  std::optional<ServedReferencesRecord> served_references;
  std::optional<TargetSelectionRecord> target_selection;
  ServedFrom set_target_served_after_eviction = ServedFrom::kUnknown;
  std::optional<EvictionSummary> eviction_targets;
  std::optional<ConflictRecord> conflict_set;
  std::vector<ConflictRecord> pools;
  bool pools_agree = false;
  std::size_t all_pools_checks = 0, all_pools_checks_passed = 0;

  std::optional<LineRecord> line;
  std::optional<std::string> line_note;
  std::optional<PolicyRecord> policy;
  std::optional<CyclicRecord> cyclic;
  std::optional<std::string> capacity_from;
  std::optional<std::uint64_t> capacity_from_sequences_bytes;
  std::optional<std::uint32_t> line_bytes;
  std::optional<std::uint64_t> capacity_bytes_used;
  std::optional<analysis::cache::SetIndexResult> set_index;
  std::optional<HashColumnsRecord> hash_columns;
  std::optional<ConflictRecord> data_sets;
  std::optional<analysis::cache::DataVictimResult> data_victim;

  std::optional<LineByStrideRecord> line_by_stride;
  std::uint64_t sequences = 0, accesses = 0;

  /// What the conversion cannot see (each a UsageError): a calibration with a threshold but no
  /// hits or misses; target reads not one per line; a found conflict set (the level's, a
  /// pool's, the data lines') that does not hold ways + 1 lines; a measured cycle without one
  /// retention per round after the first; found hash columns without one mask and one
  /// independent bit per rank; data-victim age bins of unequal length; more set_index page
  /// bits than bits (the finding counts the difference); line_by_stride's cycles not one
  /// non-empty row per stride.
  void check() const;
};
void to_json(nlohmann::json& j, const WaysSamples& s);
void from_json(const nlohmann::json& j, WaysSamples& s);

}  // namespace gpuprobe::probes::cache_structure
