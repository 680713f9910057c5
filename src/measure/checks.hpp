#pragma once
// What every probe does with its host checks and its confidences (issue 9): a failed check is an
// error of the experiment, listed row by row in its statistics and its reason, never a point
// that silently drops out of the findings; and a summary's confidence comes from the one
// definition in core/confidence.hpp.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/confidence.hpp"
#include "core/experiment.hpp"

namespace gpuprobe::probes {

/// One row of a sweep (or the whole experiment) whose output did not pass its host check.
struct FailedRow {
  std::string row;     ///< which row, e.g. "bulk l2 4096 B"
  std::string reason;  ///< what the check found
};

/// Lists the failed rows in r.statistics["rows_failing_verification"] (an empty list when none
/// failed) and, when any failed, makes r an error whose reason names the count and the first.
inline void report_failed_rows(ExperimentResult& r, const std::vector<FailedRow>& failed,
                               std::size_t rows) {
  nlohmann::json list = nlohmann::json::array();
  for (const FailedRow& f : failed) list.push_back({{"row", f.row}, {"reason", f.reason}});
  r.statistics["rows_failing_verification"] = list;
  if (failed.empty()) return;
  r.status = Status::kError;
  r.reason = std::to_string(failed.size()) + " of " + std::to_string(rows) +
             " rows failed verification; first: " + failed.front().row + ": " +
             failed.front().reason;
}

/// The samples of a summary as stats::to_json writes it (n, median, mad), rebuilt so that
/// confidence::precision sees exactly its n, median and MAD: half the values at median - MAD,
/// half at median + MAD (and the median itself when n is odd). The raw samples are not kept in
/// result.json, and this keeps a single formula for the precision.
inline std::vector<double> samples_of_summary(const nlohmann::json& summary) {
  const auto n = summary.at("n").get<std::size_t>();
  const double m = summary.at("median").get<double>(), mad = summary.at("mad").get<double>();
  std::vector<double> v;
  for (std::size_t i = 0; i < n / 2; ++i) {
    v.push_back(m - mad);
    v.push_back(m + mad);
  }
  if (n % 2 == 1) v.push_back(m);
  return v;
}

/// confidence::precision of a summary's median (from its n and MAD: core/confidence's
/// precision_of_summary; the name the probes use).
inline double summary_precision(const nlohmann::json& summary,
                                double tolerance = confidence::kDefaultTolerance) {
  return confidence::precision_of_summary(summary, tolerance);
}

/// confidence::separation of two summaries' medians.
inline double summary_separation(const nlohmann::json& a, const nlohmann::json& b) {
  return confidence::separation(
      confidence::separation_z(samples_of_summary(a), samples_of_summary(b)));
}

}  // namespace gpuprobe::probes
