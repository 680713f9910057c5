#pragma once
// Results on disk: one JSON per run (rewritten atomically after every experiment, so a killed
// run keeps what finished), one JSON per experiment, one CSV per curve, and an HTML report.
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/experiment.hpp"

namespace gpuprobe::report {

class OutputLock;

/// Throws UsageError when `dir` cannot be created or written (also a dangling symbolic link or
/// a loop of them); creates nothing.
void check_writable(const std::string& dir);

/// Writes `text` to a temporary file beside `path`, then renames it over `path`: a reader sees
/// the old file or the whole new one, and a failure leaves no partial file. Throws
/// std::runtime_error when it cannot, UsageError when `path` is not to be replaced
/// (files::check_output_target: a link, a device, a FIFO, an input).
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

class ResultWriter {
 public:
  /// `header` holds schema_version, tool, environment, device; experiments are appended.
  /// Locks `dir` (OutputLock) for the writer's life and removes an earlier result's files there
  /// (earlier_result_files), saying so on `notices`.
  ResultWriter(std::string dir, nlohmann::json header, std::ostream& notices = std::cerr);
  void add(const ExperimentResult& result);
  /// Writes the final result.json (with `extra` merged at the top level) and the HTML report.
  void finish(const nlohmann::json& extra);
  const nlohmann::json& result() const { return result_; }
  const std::string& dir() const { return dir_; }

 private:
  void flush();
  std::string dir_;
  nlohmann::json result_;
  std::shared_ptr<OutputLock> lock_;
};

/// CSV text of a curve (header line, then rows; strings quoted when needed).
std::string to_csv(const Curve& c);

/// What html_report drew: its charts, and the curves it found neither in result.json nor as a
/// CSV beside it ("<experiment id>.<curve name>").
struct ReportCounts {
  std::size_t charts = 0;
  std::vector<std::string> missing_curves;
};

/// Self-contained HTML report (inline SVG charts) of a result: the summary card, then one
/// section per experiment by family (its charts and its findings), every finding (grouped and
/// filterable), the environment. The curves' rows come from result.json, else from the CSV
/// files in `curves_dir` (the result's directory; results recorded before curves carried rows).
std::string html_report(const nlohmann::json& result, const std::string& curves_dir,
                        ReportCounts* counts = nullptr);

/// The terminal summary: findings as an aligned table.
std::string summary_table(const nlohmann::json& result);

}  // namespace gpuprobe::report
