#pragma once
// Fleet health: `baseline build RESULTS.. --out FILE`, `baseline list`, `check RESULT
// [--baseline NAME|FILE] [--format text|json|prometheus|junit] [--any-model]`, and the
// `--profile` of characterize and list (cli/profiles.hpp). Kept out of app.cpp; app.cpp only
// hooks them in. Exit codes of check: 0 in family, 3 out of family, 2 bad input.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "core/experiment.hpp"

namespace gpuprobe::cli {

/// The exit code of a check (and of a fleet merge with --baseline) that finds a GPU out of
/// family.
inline constexpr int kOutOfFamilyExit = 3;

struct HealthCommands {
  CLI::App* baseline = nullptr;
  CLI::App* build = nullptr;
  CLI::App* list_baselines = nullptr;
  CLI::App* check = nullptr;
  CLI::App* characterize = nullptr;
  CLI::App* list = nullptr;
  std::vector<std::string> build_paths;
  std::string source_commits;  ///< baseline build --source-commits FILE
  std::string check_path;
  std::string baseline_spec;  ///< check --baseline NAME|FILE
  std::string format = "text";
  bool any_model = false;
  std::string profile;  ///< characterize / list --profile NAME
};

/// Adds `baseline`, `check`, and --profile to `characterize` and `list`.
void add_health_commands(CLI::App& app, CLI::App* characterize, CLI::App* list, HealthCommands& h);

/// Runs baseline / check / list --profile when one was given; -1 when none was.
/// `options.out_dir` is baseline build's output file.
int run_health_commands(const HealthCommands& h, const RunOptions& options, std::ostream& out);

/// The folders shipped baselines are looked for in, existing ones only, in this order:
/// $GPUPROBE_BASELINE_DIR, <exe>/../share/gpuprobe/baselines (installed), <exe>/../baselines
/// (a build folder inside the source tree), the source tree's baselines/ compiled in.
std::vector<std::filesystem::path> baseline_directories();

/// A baseline for `result`: `spec` a file (it contains '/' or ends in .json) or a shipped name
/// (h200); empty: the shipped one whose gpu_model is the result's device.name. Loaded and
/// validated; one of another model is refused unless `any_model`. Throws UsageError (one line).
/// `name` receives what the report calls it.
nlohmann::json load_baseline_for(const std::string& spec, const nlohmann::json& result,
                                 bool any_model, std::string& name);

}  // namespace gpuprobe::cli
