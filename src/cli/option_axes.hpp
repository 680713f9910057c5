#pragma once
// The family options are aliases of experiments' axes: --strides, --offsets, --word-sizes,
// --carveouts and --array-size each become an --axis override of every experiment that declares
// an overridable axis the option feeds (option_aliases()). They are checked here against the
// widest range any experiment accepts (one line naming the option, whatever is selected); an
// experiment whose axis is narrower refuses the value when it is chosen to run.
#include <cstdint>
#include <string>
#include <vector>

#include "core/experiment.hpp"

namespace gpuprobe::cli {

/// One family option and the names of the axes it sets.
struct OptionAlias {
  std::string option;
  std::vector<std::string> axes;
};
/// Every family option, in the order its overrides are added.
const std::vector<OptionAlias>& option_aliases();

/// The family options as given on the command line, parsed (empty / 0: not given).
struct FamilyOptions {
  std::vector<int> strides, offsets, word_sizes, carveouts;
  std::uint64_t array_bytes = 0;
};

/// Throws UsageError naming the option for a value no experiment could accept.
void check_family_options(const FamilyOptions& family);

/// The overrides the given family options stand for, for every experiment of `registry` that
/// declares an axis they feed; an --axis given for the same axis comes after them and wins.
std::vector<AxisOverride> family_overrides(const Registry& registry, const FamilyOptions& family);

}  // namespace gpuprobe::cli
