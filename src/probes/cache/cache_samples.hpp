#pragma once
// The cache family's samples as types (issue 28 item 1): what run() records and analyze()
// reads, one JSON conversion each (the keys as result.json holds them), the samples version on
// the type, and problem(), which core samples_as<T> (core/samples.hpp) calls after converting a
// result's samples once, so that a ragged, empty or wrong-typed sample is one line (exit 2),
// never a read past an end.
// cache.cold_capacity, cache.fetch_granularity, cache.l2.partition, cache.l2.far_hit,
// cache.l2.mixture, cache.l2.sharing and latency.tlb.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/experiment.hpp"

namespace gpuprobe::probes::cache_samples {

// ---- cache.cold_capacity -------------------------------------------------------------------

/// One probe of the bisection: [working-set bytes, second-pass cycles per load].
using CapacityProbe = std::pair<std::uint64_t, double>;
/// One confirmation chain: [bytes, second-pass cycles per load, whether it lies inside].
using ConfirmProbe = std::tuple<std::uint64_t, double, bool>;
struct ColdCapacityLevel {
  std::string level;  ///< "l1" or "l2": the findings' prefix
  std::string op;     ///< the load operator (device::to_string)
  int carveout_percent = -1;
  std::vector<CapacityProbe> probes;  ///< in the order measured
  double hit_cycles = 0, miss_cycles = 0;
  /// The chains just inside and outside the final bracket; absent when hit and miss levels
  /// were too close for a bracket.
  std::optional<std::vector<ConfirmProbe>> confirm;
};
struct ColdCapacitySamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of cache.cold_capacity
  std::vector<ColdCapacityLevel> levels;
  std::string problem() const;
};
void to_json(nlohmann::json& j, const ColdCapacityLevel& l);
void from_json(const nlohmann::json& j, ColdCapacityLevel& l);
void to_json(nlohmann::json& j, const ColdCapacitySamples& s);
void from_json(const nlohmann::json& j, ColdCapacitySamples& s);

// ---- cache.fetch_granularity ---------------------------------------------------------------

/// One (operator, offset): the second load's cycles over the cold lines probed.
struct FetchRow {
  std::string op;  ///< "ld.global.ca" or "ld.global.cg" (key "operator")
  std::uint32_t offset_bytes = 0;
  std::vector<std::uint32_t> cycles;
};
struct FetchGranularitySamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of cache.fetch_granularity
  std::vector<FetchRow> rows;
  std::string problem() const;  ///< a row without cycles
};
void to_json(nlohmann::json& j, const FetchRow& r);
void from_json(const nlohmann::json& j, FetchRow& r);
void to_json(nlohmann::json& j, const FetchGranularitySamples& s);
void from_json(const nlohmann::json& j, FetchGranularitySamples& s);

// ---- cache.l2.partition --------------------------------------------------------------------

/// One SM's round: its first-load latency of every probed line, in the order of `offsets`.
struct PartitionRow {
  std::uint32_t smid = 0;
  std::vector<std::uint32_t> cycles;
};
struct L2PartitionSamples {
  static constexpr int kVersion = 1;   ///< Experiment::samples_version of cache.l2.partition
  std::vector<std::uint64_t> offsets;  ///< probed lines, bytes from a 2 MiB-aligned base
  std::vector<PartitionRow> rows;
  std::string problem() const;  ///< no lines or rows, or a row not one cycle count per line
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PartitionRow, smid, cycles)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(L2PartitionSamples, offsets, rows)

// ---- cache.l2.far_hit ----------------------------------------------------------------------

/// One round: the measured SM's first and second read of every probed line (cycles).
struct FarHitRound {
  std::vector<double> first, second;
};
/// The hot chase that gives the chase's own scale.
struct FarHitChase {
  std::uint64_t working_set_bytes = 0;
  double cycles_per_step = 0;
  std::int64_t smid = -1;
  std::uint64_t steps = 0;
};
/// One copy-capacity step: `lines` far-homed lines read once, then again.
struct CapacityStep {
  std::size_t lines = 0;
  std::vector<double> first, second;
};
/// One capacity bisection of the copy chases.
struct ChaseSearch {
  std::vector<CapacityProbe> probes;
  bool valid = false;
  std::uint64_t lo = 0, hi = 0;
};
struct ChaseSides {
  ChaseSearch near_homed, far_homed;
};
struct ColdChases {
  std::vector<double> near_homed, far_homed;  ///< replicates, cycles per load
};
/// The CUDA device's chases over one home's lines (absent on the modelled GPU); the fit's
/// fields only when the page lines split, the chases only when the fit held.
struct CopyChases {
  std::size_t page_lines = 0;
  bool split = false;
  std::optional<std::string> mask;
  std::optional<double> fit_accuracy;
  std::optional<ColdChases> cold_chases;
  std::optional<ChaseSides> searches;
};
struct FarHitSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of cache.l2.far_hit
  std::vector<std::uint64_t> offsets;
  std::vector<FarHitRound> rounds;
  FarHitChase chase;
  std::optional<std::vector<std::vector<double>>> cold_rounds;
  std::optional<std::vector<CapacityStep>> capacity_steps;
  std::optional<CopyChases> copy_chases;
  std::string problem() const;  ///< no lines or rounds, or a round not one read per line
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FarHitRound, first, second)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FarHitChase, working_set_bytes, cycles_per_step, smid, steps)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(CapacityStep, lines, first, second)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ChaseSearch, probes, valid, lo, hi)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ChaseSides, near_homed, far_homed)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ColdChases, near_homed, far_homed)
void to_json(nlohmann::json& j, const CopyChases& c);
void from_json(const nlohmann::json& j, CopyChases& c);
void to_json(nlohmann::json& j, const FarHitSamples& s);
void from_json(const nlohmann::json& j, FarHitSamples& s);

// ---- latency.tlb ---------------------------------------------------------------------------

/// One TLB level as the walk found it.
struct TlbLevel {
  std::uint64_t entries = 0;
  double miss_penalty_cycles = 0;
  /// Absent (empty) in results written before the replicates.
  std::vector<double> miss_penalty_replicates, miss_penalty_standard_errors;
  std::vector<double> below, above;  ///< excess latency either side of the step
};
struct TlbSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of latency.tlb
  std::vector<TlbLevel> levels;
  std::uint64_t page_bytes = 0;  ///< 0: no coverage found
  std::uint64_t coverage_at_least_bytes = 0;
  nlohmann::json curve = nlohmann::json::array();       ///< {pages, stride_bytes, excess_cycles}
  nlohmann::json page_curve = nlohmann::json::array();  ///< {stride_bytes, crossing_cells, ...}
  std::string note;                                     ///< why a finding is not reported
  std::uint64_t accesses = 0;                           ///< accesses the walks made
  std::string problem() const;  ///< a level without samples either side of its step
};
void to_json(nlohmann::json& j, const TlbLevel& l);
void from_json(const nlohmann::json& j, TlbLevel& l);
void to_json(nlohmann::json& j, const TlbSamples& s);
void from_json(const nlohmann::json& j, TlbSamples& s);

// ---- cache.l2.mixture ----------------------------------------------------------------------

/// One sampled chase (the reference, or a point): every 32nd load of one warm pass timed.
struct MixtureChase {
  std::uint64_t working_set_bytes = 0;  ///< 0 in a reference written without it
  std::vector<std::uint32_t> cycles;
  /// The line each sample read; results before it recorded the sample's 2 MiB page instead.
  std::optional<std::vector<std::uint64_t>> node, page;
  std::optional<int> smid;
  std::optional<bool> verified;
};
/// One more allocation of a point's working set, its samples as a histogram.
struct MixtureDraw {
  std::uint64_t working_set_bytes = 0, offset_bytes = 0;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> cycles_histogram;  ///< [cycles, count]
  std::optional<int> smid;
  std::optional<bool> verified;
};
struct MixtureSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of cache.l2.mixture
  MixtureChase reference;
  std::vector<MixtureChase> points;
  std::optional<std::vector<MixtureDraw>> draws;
  /// A point that records neither nodes nor pages, or not one per sample.
  std::string problem() const;
};
/// The conversions check what the analysis relies on beyond the JSON types, with a
/// UsageError: a node (page) or a count that is no non-negative integer, a histogram bin that
/// is not a pair, a draw's working set that is not a positive size.
void to_json(nlohmann::json& j, const MixtureChase& c);
void from_json(const nlohmann::json& j, MixtureChase& c);
void to_json(nlohmann::json& j, const MixtureDraw& d);
void from_json(const nlohmann::json& j, MixtureDraw& d);
void to_json(nlohmann::json& j, const MixtureSamples& s);
void from_json(const nlohmann::json& j, MixtureSamples& s);

// ---- cache.l2.sharing ----------------------------------------------------------------------

/// One sharing point: every line of `working_set_bytes` read by about k SMs at once.
struct SharingRow {
  std::uint64_t working_set_bytes = 0;
  int k = 0, groups = 0;
  double sms_per_line = 0;
  std::string mode;  ///< "all", "near" or "far"
  std::uint64_t bytes_per_launch = 0;
  std::vector<double> gb_s;  ///< the timed launches
  double gb_s_median = 0;
};
/// One point of gpu-l2-cache's pattern.
struct L2CacheRow {
  std::uint32_t chunks = 0;
  std::uint64_t footprint_bytes = 0;
  std::optional<int> load_bytes;  ///< 8 in results written before 16-byte loads
  std::uint64_t blocks = 0;
  std::vector<double> gb_s;
  double gb_s_median = 0;
};
/// A fresh confirmation of a reported point: `of` ("rows" or "gpu_l2_cache") and `index` name
/// it; the measurement is a SharingRow or an L2CacheRow like the one it confirms.
struct SharingConfirm {
  std::string of;
  std::size_t index = 0;
  std::optional<int> replicate;  ///< absent in results written before replicates
  std::optional<bool> fresh_buffer;
  std::optional<SharingRow> row;
  std::optional<L2CacheRow> l2c;
  const std::vector<double>& gb_s() const { return row ? row->gb_s : l2c->gb_s; }
};
/// First touch of one home's units by the other side's SMs, then a second read.
struct FirstTouch {
  std::string homed;  ///< "near" or "far"
  std::uint64_t bytes = 0;
  int readers = 0, placers = 0;
  std::vector<double> gb_s_first, gb_s_second;
};
struct SharingSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of cache.l2.sharing
  std::vector<SharingRow> rows;
  std::vector<L2CacheRow> gpu_l2_cache;
  std::vector<SharingConfirm> confirm;
  std::optional<std::vector<FirstTouch>> first_touch;
  /// A point without launches, a confirmation of a point that is not there, a first touch
  /// without trials.
  std::string problem() const;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SharingRow, working_set_bytes, k, groups, sms_per_line, mode,
                                   bytes_per_launch, gb_s, gb_s_median)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FirstTouch, homed, bytes, readers, placers, gb_s_first,
                                   gb_s_second)
void to_json(nlohmann::json& j, const L2CacheRow& r);
void from_json(const nlohmann::json& j, L2CacheRow& r);
void to_json(nlohmann::json& j, const SharingConfirm& c);
void from_json(const nlohmann::json& j, SharingConfirm& c);
void to_json(nlohmann::json& j, const SharingSamples& s);
void from_json(const nlohmann::json& j, SharingSamples& s);

}  // namespace gpuprobe::probes::cache_samples
