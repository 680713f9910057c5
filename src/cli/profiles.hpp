#pragma once
// Named experiment profiles for `characterize --profile NAME` and `list --profile NAME`. A
// profile is a list of experiments and the options that cut them short (fewer load operators,
// fewer variants) through the existing axes and options: the kernels, the verification and the
// confidence rules are those of a full run. `quick` is what a fleet health check needs
// (docs/CLUSTER.md).
#include <ostream>
#include <string>
#include <vector>

#include "core/experiment.hpp"

namespace gpuprobe::cli {

struct Profile {
  std::string name;
  std::string description;
  /// Experiment ids, each with why it is in the profile.
  std::vector<std::pair<std::string, std::string>> experiments;
  /// --loads for the profile (empty: the experiments' defaults).
  std::vector<std::string> loads;
  /// --axis overrides the profile applies (a user's --axis for the same axis wins).
  std::vector<std::string> axes;
};

/// Every named profile.
const std::vector<Profile>& profiles();
/// The profile of that name; throws UsageError naming the known ones.
const Profile& find_profile(const std::string& name);

/// The experiments of the profile (in registry order; those waived on a device are waived as in
/// characterize), with the profile's options applied to `options` where the user did not set
/// them (`loads_given`: --loads was given).
std::vector<const Experiment*> apply_profile(const Profile& p, RunOptions& options,
                                             bool loads_given);

/// `list --profile NAME`: the profile's experiments, options and why each is in it.
void list_profile(const Profile& p, std::ostream& out);

}  // namespace gpuprobe::cli
