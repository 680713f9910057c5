#pragma once
// The fleet report: many GPUs' results of the same experiments, set side by side. Per finding
// the fleet median, each GPU's deviation from it in units of that GPU's own run-to-run spread,
// and the outliers, flagged by robust statistics (docs/FLEET.md). Pure: no device, no MPI.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::report {

/// One GPU of a fleet: its result.json, or why there is none.
struct FleetMember {
  std::string label;  ///< e.g. "rank2" or "gpu1" or the file's path
  nlohmann::json result;
  std::string error;                               ///< non-empty: the GPU failed; no result
  nlohmann::json info = nlohmann::json::object();  ///< rank, host, device spec, wall_s...
};

/// What makes results comparable: the schema version and the sorted experiment ids.
std::string compatibility_key(const nlohmann::json& result);

/// A finding's run-to-run spread in its own unit and where it came from: the finding's
/// "spread" (1.4826 x MAD of its samples), its p5/p95 pair ((p95 - p5) / 3.29), or its
/// confidence read as a precision (the standard error of the median that confidence implies;
/// an upper bound, since other factors only lower a confidence). nullopt when none applies.
struct Spread {
  double value = 0;
  std::string source;
};
std::optional<Spread> finding_spread(const nlohmann::json& finding);

/// The fleet report (fleet.json's content). Members whose key differs from the most common
/// one are marked "excluded" with the reason when `exclude_mismatched`; otherwise a mismatch
/// throws UsageError naming the first member that differs.
nlohmann::json fleet_report(const std::vector<FleetMember>& members, bool exclude_mismatched);

/// The terminal table of a fleet report: members, then one row per finding (median, largest
/// deviation, outliers).
std::string fleet_table(const nlohmann::json& report);

/// The thresholds, from the literature: a modified z-score 0.6745 (x - median) / MAD above 3.5
/// is a potential outlier (Iglewicz and Hoaglin, "How to Detect and Handle Outliers", 1993),
/// and a deviation of more than 3 of the GPU's own standard deviations is beyond its noise.
inline constexpr double kModifiedZLimit = 3.5;
inline constexpr double kOwnSpreadLimit = 3.0;

}  // namespace gpuprobe::report
