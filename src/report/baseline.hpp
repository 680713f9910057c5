#pragma once
// A baseline: what cards of one GPU model measure, per finding, so that one card's result can be
// judged against its family (report/check.hpp). Built from result.json files of several cards
// (and several runs of a card, grouped by device.uuid): per number the median across cards of
// each card's median, the card-to-card spread (1.4826 x MAD of those per-card medians), the
// run-to-run spread (pooled over the cards with two or more runs), the span of the per-card
// medians; per category, yes/no or mask the value most cards show and how many agree. It keeps
// no samples: only per-finding statistics, the experiments' samples_version, the sources and
// the conditions (gpuprobe versions and SHAs, drivers, max clocks) they were taken under.
// Pure: no device, no files.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuprobe::report {

/// The baseline file format this build writes and reads.
inline constexpr int kBaselineSchemaVersion = 1;
inline constexpr const char* kBaselineKind = "gpuprobe.baseline";

/// One result a baseline rests on, with where it came from.
struct BaselineSource {
  std::string path;        ///< as given on the command line
  nlohmann::json result;   ///< the loaded result.json
  std::string git_commit;  ///< the repository commit the file was taken from ("" = unknown)
  std::string repo_path;   ///< the file's path in that repository ("" = unknown)
};

/// The baseline of these results (all of one GPU model: throws UsageError naming the models
/// otherwise, or when no result has a passed experiment with a finding).
nlohmann::json build_baseline(const std::vector<BaselineSource>& sources);

/// Checks a loaded baseline field by field (kind, schema_version, gpu_model, findings with the
/// fields check reads); throws UsageError "<file>: <path>: ..." (one line) for the first bad one.
void check_baseline_shape(const nlohmann::json& baseline, const std::string& file);

/// One line for `baseline list`: model, cards, runs, findings.
std::string baseline_line(const nlohmann::json& baseline);

/// The findings of a result as compared (first of each name in a passed experiment, with a
/// numeric value), each with "experiment" added; in result order.
std::vector<nlohmann::json> comparable_findings(const nlohmann::json& result);

}  // namespace gpuprobe::report
