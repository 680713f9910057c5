#pragma once
// The commands that read a recorded result.json (analyze, report, export-model; compare is in
// compare_command.hpp). Each loads it through json_input (typed, path-naming shape checks),
// turns any failure caused by the file's content into a one-line UsageError, and writes its
// output by temporary file + rename, so a bad input leaves nothing behind.
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace gpuprobe::cli {

/// Re-runs each passed experiment's analysis on its recorded samples; prints the summary table.
int analyze_command(const std::string& path, const std::string& format, std::ostream& out);
/// `gpuprobe summary <result.json>`: the summary card (and every finding with --verbose).
int summary_command(const std::string& path, bool verbose, std::ostream& out);
/// Writes report.html for a recorded result into `dir` (default: beside the result).
int report_command(const std::string& path, std::string dir, std::ostream& out);
/// Writes the model file the result measured to `model_path` (stdout when empty).
int export_model_command(const std::string& path, const std::string& model_path,
                         const std::string& format, std::ostream& out);

/// Exports the model a recorded result measured, measures it at every working set of the
/// result's latency.sweep, and writes the comparison (curves, worst error per region) as a
/// result with its report into `dir`. `runs`: other results of the GPU (e.g. repeat's runs)
/// whose sweeps give, at the working sets they share, the range the replay is also judged by.
int replay_command(const std::string& path, const std::string& dir, std::ostream& out,
                   const std::vector<std::string>& runs = {});

}  // namespace gpuprobe::cli
