#pragma once
// The judging half of `gpuprobe replay`: a recorded latency.sweep against the same sweep
// replayed on the model exported from that result. Pure: numbers in (the sweep's points, the
// replayed latencies, the GPU's own ranges from other allocations and other runs), errors per
// region, ranges, placement bounds and findings out. Measuring the model lives in
// measure/replay_model.hpp, reading and writing files in cli/replay_command.cpp.
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/load_op.hpp"
#include "core/finding.hpp"

namespace gpuprobe::analysis::replay {

/// A replayed point is "within" when its error, or its distance outside a range, is at most this.
inline constexpr double kWithinPercent = 3.0;

/// Finding values of a result by name (the last one of a name wins).
using MeasuredFindings = std::map<std::string, double>;
MeasuredFindings measured_findings(const nlohmann::json& result);

/// Which measured level a working set falls in, from the result's own capacities: "l1",
/// "l2_near", "l2_mixed" (between the near partition's and the whole L2's capacity) or "dram".
std::string region_of(double working_set_bytes, const MeasuredFindings& findings);

/// The passed latency.sweep of a loaded result; a UsageError naming `file` when there is none.
const nlohmann::json& passed_sweep(const nlohmann::json& result, const std::string& file,
                                   const char* for_what);

/// One point of a recorded sweep, checked: a positive working set and median latency.
struct SweepPoint {
  double working_set_bytes = 0;
  double measured_cycles = 0;               ///< the median of cycles_per_load
  device::LoadOp op = device::LoadOp::kCa;  ///< the load operator the sweep recorded
  std::string region;                       ///< region_of the working set (empty until assigned)
  nlohmann::json summary;  ///< the point's cycles_per_load summary (median, spread, ...)
};

/// The points of a sweep in order, each with its load operator and its region from
/// `findings`; a UsageError naming `file` for an empty list, a point without a positive working
/// set and latency, or an unknown load operator.
std::vector<SweepPoint> sweep_points(const nlohmann::json& sweep, const std::string& file,
                                     const MeasuredFindings& findings);

/// (replayed - measured) / measured, in percent.
double error_percent(double replayed, double measured);

/// How far `value` lies outside [low, high], in percent of `measured` (0 inside).
double outside_percent(double value, double low, double high, double measured);

/// Lowest and highest latency the GPU gives at one working set.
struct Range {
  double low = 0, high = 0;
};

/// cache.l2.mixture's other allocations of the slope's working sets: lowest and highest latency
/// per drawn working set, linear between them.
class AllocationEnvelope {
 public:
  struct Drawn {
    double working_set_bytes = 0, low_cycles = 0, high_cycles = 0;
  };
  AllocationEnvelope() = default;
  explicit AllocationEnvelope(std::vector<Drawn> drawn);  ///< any order
  /// Adds the rows of a re-analysed cache.l2.mixture's "allocations" curve (other curves: none).
  void add_allocations(const Curve& curve);
  /// The range at `working_set_bytes`, interpolated; nothing outside the drawn working sets.
  std::optional<Range> at(double working_set_bytes) const;
  bool empty() const { return drawn_.empty(); }

 private:
  std::vector<Drawn> drawn_;  ///< sorted by working set, then low, then high
};

/// Another run's sweep: each working set's cycles_per_load summary.
using RunCurve = std::map<double, nlohmann::json>;
/// The sweep's points, checked as sweep_points checks them (their load operators unread).
RunCurve run_curve(const nlohmann::json& sweep, const std::string& file);

/// The range the GPU's runs give at one point: this result's own measurement and every other
/// run that measured the same working set, with the summaries of the two extremes.
struct RunsRange {
  Range range;
  const nlohmann::json* low_summary = nullptr;
  const nlohmann::json* high_summary = nullptr;
  std::size_t runs_at_point = 0;  ///< this result included
};
/// Nothing when no other run measured the point's working set.
std::optional<RunsRange> runs_range_at(const SweepPoint& point, const std::vector<RunCurve>& runs);

/// One replayed point, judged against the measurement and the GPU's own ranges.
struct JudgedPoint {
  const SweepPoint* point = nullptr;
  double replayed_cycles = 0;
  double error_percent = 0;
  std::optional<Range> allocations;  ///< on the L2's slope, the sweep's own point included
  double beyond_allocations_percent = 0;
  std::optional<RunsRange> runs;
  double beyond_runs_percent = 0;
};
/// Judges `replayed` at `point`: its error, and (on the L2's slope, "l2_mixed") its distance
/// outside the allocations' range and (where other runs measured the point) the runs' range.
JudgedPoint judge_point(const SweepPoint& point, double replayed,
                        const AllocationEnvelope& allocations, const std::vector<RunCurve>& runs);
/// The point as samples.points records it.
nlohmann::json to_json(const JudgedPoint& judged);

/// The worst of a measure over points: the value, where, and the measurement's summary there.
struct Worst {
  double error = -1;
  double working_set_bytes = 0;
  std::string region;
  nlohmann::json summary;
  /// Takes `value` at `point` when it exceeds the worst so far.
  bool take(double value, const SweepPoint& point);
};

/// What the judged points add up to.
struct ReplaySummary {
  std::size_t points = 0, within = 0;  ///< within kWithinPercent of the measurement
  std::map<std::string, Worst> worst;  ///< |error| per region, and over "all"
  std::size_t enveloped = 0;           ///< points judged against the allocations' range
  Worst beyond_allocations;
  std::size_t other_runs = 0;  ///< the --runs results
  std::size_t runs_judged = 0, within_runs = 0;
  Worst beyond_runs;
  Worst runs_spread;         ///< (highest - lowest) / lowest of the runs at one working set
  double runs_spread_z = 0;  ///< the two extremes' separation in their standard errors
  void add(const JudgedPoint& judged);
};

/// Every point judged (`replayed[i]` is points[i] replayed), and what they add up to.
struct ReplayJudgement {
  std::vector<JudgedPoint> points;
  ReplaySummary summary;
};
ReplayJudgement judge_replay(const std::vector<SweepPoint>& points,
                             const std::vector<double>& replayed,
                             const AllocationEnvelope& allocations,
                             const std::vector<RunCurve>& runs);

/// The points that miss by more than kWithinPercent in one region, against the L2's other
/// placement bound (random_placement): between the replay and the bound, without a bound, or
/// unexplained by placement.
struct OffRegion {
  std::size_t off = 0, between = 0, without_bound = 0;
  nlohmann::json unexplained = nlohmann::json::array();  ///< one object per point
  nlohmann::json bounds = nlohmann::json::object();      ///< bound label -> points between
};
/// The value of column `label` at `working_set_bytes` in a curve whose first column is the
/// working set; nothing when the curve has no such column or row, or a null there.
std::optional<double> column_value_at(const Curve& curve, const std::string& label,
                                      double working_set_bytes);
/// Every off point by region, judged against the "random_placement" column of `placement`
/// (the L2's sensitivity curve; an empty curve gives no bound).
std::map<std::string, OffRegion> classify_off_points(const std::vector<JudgedPoint>& points,
                                                     const Curve& placement);

/// The worst |error| per region of a model variant: {region: {error_percent, working_set_bytes}}.
void note_worst_by_region(nlohmann::json& worst_by_region, const SweepPoint& point,
                          double replayed);

/// The replay's findings: the worst error per region and overall, against the allocations'
/// range, against the other runs, the off points' placement verdicts, the fraction within 3 %.
std::vector<Finding> replay_findings(const ReplaySummary& summary,
                                     const std::map<std::string, OffRegion>& off_regions);

}  // namespace gpuprobe::analysis::replay
