#pragma once
// The samples of bandwidth.sweep and bandwidth.hierarchy as types: the Rig's points (one
// working set of the L1 or L2 regime, or register FFMA throughput), the hierarchy's kernel
// variants and confirmations (a point with what it is and how it was chosen), and the earlier
// findings the hierarchy copied. Converted from the recorded JSON once and checked whole
// (rig_samples.cpp); the Rig records more (blocks, SMs seen, the fold's description), only
// these are read.
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::probes::bandwidth_rig {

/// A secondary rate of a point (summary_json: an empty object when nothing was measured).
struct RigStat {
  std::optional<double> median, mad;
};

/// The primary measurement of a point (to_json(Measurement) with its samples).
struct RigMeasurement {
  double median = 0;
  std::optional<double> mad;
  std::optional<std::size_t> n;
  std::optional<std::vector<double>> values;
};

/// One Rig point, one hierarchy kernel variant (a search row: a point when it verified, its
/// error when not) or one confirmation (the winner re-measured, or its reason).
struct RigPoint {
  std::optional<std::uint64_t> working_set_bytes;  ///< absent on the register point
  std::optional<std::uint64_t> working_set_total_bytes;
  std::optional<RigMeasurement> measurement;  ///< absent on a variant that did not verify
  std::optional<RigStat> bytes_per_clk_per_sm, bytes_per_clk_per_sm_slowest_sm, gb_s;
  std::optional<double> sm_clock_mhz_measured;
  std::optional<std::uint64_t> timed_passes_per_launch;
  std::optional<std::string> primary, load;
  // A kernel variant of the hierarchy (describe_l1_variant / describe_l2_variant).
  std::optional<std::string> variant, fold, addressing;
  std::optional<int> unroll, rotations, threads_per_block, blocks_per_sm_requested, blocks_per_sm,
      max_blocks_on_one_sm;
  bool verified = false;
  std::optional<std::string> error;
  // A confirmation (measure::to_json(Confirmation)).
  std::optional<std::size_t> winner_row;
  std::optional<double> search_value;
  std::optional<std::string> status, reason;

  /// The primary median (measurement.median; 0 without a measurement).
  double primary_median() const { return measurement ? measurement->median : 0.0; }
  /// A rate's median, 0 when the point lacks it (the readers' default).
  static double median_of(const std::optional<RigStat>& s) {
    return s && s->median ? *s->median : 0.0;
  }
  /// What a finding or a table row reads of a measured point.
  bool measured() const { return measurement && bytes_per_clk_per_sm && gb_s; }
};

/// An earlier experiment's finding as to_json(Finding) wrote it: its value and the extra
/// fields the hierarchy's table reads (beside the value, or under "extra" in older records).
struct PriorFinding {
  double value = 0;
  std::optional<double> value_ns, total_tb_per_s;
};

struct SweepSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of bandwidth.sweep
  std::vector<RigPoint> l1_points;    ///< l1_regime.points
  std::vector<RigPoint> l2_points;    ///< l2_regime.points
  /// Every point holds its working set and its measurement with the MAD.
  void check() const;
};

/// bandwidth.hierarchy's measured points: per cache level the kernel variants and the
/// confirmation of the winner, or (older records) the variants alone or one point.
struct HierarchyMeasured {
  std::optional<std::vector<RigPoint>> l1_variants, l2_variants;
  std::optional<RigPoint> l1_confirmation, l2_confirmation;
  std::optional<RigPoint> l1, l2;  ///< records before the variants
  RigPoint dram, reg;              ///< dram, register
};

struct HierarchySamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of bandwidth.hierarchy
  HierarchyMeasured measured;
  std::map<std::string, PriorFinding> prior;  ///< earlier findings by name
  /// Each point a finding or the table may read is a whole measured point (the working set
  /// beside it for the memory levels), each variant names itself, and a passed confirmation
  /// holds its search value (UsageError naming the first that does not).
  void check() const;
};

void to_json(nlohmann::json& j, const RigStat& s);
void from_json(const nlohmann::json& j, RigStat& s);
void to_json(nlohmann::json& j, const RigMeasurement& m);
void from_json(const nlohmann::json& j, RigMeasurement& m);
void to_json(nlohmann::json& j, const RigPoint& p);
void from_json(const nlohmann::json& j, RigPoint& p);
void to_json(nlohmann::json& j, const PriorFinding& f);
void from_json(const nlohmann::json& j, PriorFinding& f);
void to_json(nlohmann::json& j, const SweepSamples& s);
void from_json(const nlohmann::json& j, SweepSamples& s);
void to_json(nlohmann::json& j, const HierarchyMeasured& m);
void from_json(const nlohmann::json& j, HierarchyMeasured& m);
void to_json(nlohmann::json& j, const HierarchySamples& s);
void from_json(const nlohmann::json& j, HierarchySamples& s);

}  // namespace gpuprobe::probes::bandwidth_rig
