#pragma once
// Checks of the shared options that hold whatever experiments are selected: a value no
// experiment could accept is an error even when the experiment that would use it is not run
// (the family options' ranges are checked in cli/option_axes.hpp).
#include <string>
#include <vector>

#include "core/experiment.hpp"

namespace gpuprobe::cli {

/// Which options were given on the command line (an empty value given is an error).
struct OptionsGiven {
  bool loads = false;
  bool out = false;
  std::vector<std::string> empty;  ///< options given with an empty value ("--min-size ''")
};

/// Throws UsageError naming the option for any value outside what gpuprobe accepts anywhere.
void check_common_options(const RunOptions& options, const OptionsGiven& given);

}  // namespace gpuprobe::cli
