#pragma once
// Commands over several GPUs: `characterize --gpus all|0,1,..` (every GPU of this node, one
// result each plus a node summary), `fleet merge RESULTS.. --out DIR` (a fleet report from
// files) and, built with -DGPUPROBE_MPI=ON, `mpirun -n N gpuprobe fleet [ids..] --out DIR` (one
// rank per GPU, results gathered at rank 0). Kept out of app.cpp; app.cpp only hooks them in.
#include <CLI/CLI.hpp>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "core/experiment.hpp"

namespace gpuprobe::cli {

/// Runs experiments with these options (as `gpuprobe run/characterize` does), writing the
/// result into options.out_dir; returns the exit code. May throw UsageError.
using Runner = std::function<int(const RunOptions&, const std::vector<const Experiment*>&,
                                 std::ostream&, const std::string& command)>;

struct FleetCommands {
  CLI::App* characterize = nullptr;
  CLI::App* fleet = nullptr;
  CLI::App* merge = nullptr;
  std::string gpus;              ///< characterize --gpus
  std::vector<std::string> ids;  ///< fleet [ids..]
  std::vector<std::string> merge_paths;
  /// --baseline NAME|FILE: each GPU is also judged against the baseline of its model
  /// (cli/health_commands.hpp); exit 3 when any is out of family.
  std::string baseline;
};

/// Adds `--gpus` to `characterize` and the `fleet` command (with `fleet merge`) to `app`.
void add_fleet_commands(CLI::App& app, CLI::App* characterize, FleetCommands& c);

/// Runs the fleet command or characterize --gpus when one was given; -1 when neither was.
int run_fleet_commands(const FleetCommands& c, RunOptions options, bool device_given,
                       const Runner& run, std::ostream& out, std::ostream& err);

/// Parses --gpus ("all" or a comma-separated list of ordinals) for a node of `count` GPUs;
/// throws UsageError (one line) for an ordinal the node does not have, a repeat or bad text.
std::vector<int> parse_gpu_list(const std::string& text, int count);

/// The device of fleet rank `rank` of `ranks` from --device: one spec for every rank, or a
/// comma-separated list with one per rank; without --device, cuda:<local rank>. Throws
/// UsageError when a list's length is neither 1 nor `ranks`.
std::string rank_device(const std::string& device_option, bool device_given, int rank, int ranks,
                        int local_rank);

}  // namespace gpuprobe::cli
