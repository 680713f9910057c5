#include "cli/options_check.hpp"

#include <string>

#include "core/error.hpp"

namespace gpuprobe::cli {
void check_common_options(const RunOptions& o, const OptionsGiven& given) {
  for (const auto& name : given.empty) throw UsageError(name + " is empty; give a value");
  // CLI11's range check lets NaN through (every comparison with it is false).
  const double spread = o.protocol.target_spread;
  if (!(spread >= 0.0 && spread <= 1.0))
    throw UsageError("--spread " + std::to_string(spread) +
                     " is not allowed; give a number in 0..1");
  if (given.out && o.out_dir.empty())
    throw UsageError("--out is empty; give the directory for the results");
  if (given.loads && o.loads.empty())
    throw UsageError("--loads is empty; allowed: default, ca, cg, cv, nc, all");
}

}  // namespace gpuprobe::cli
