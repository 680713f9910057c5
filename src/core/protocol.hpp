#pragma once
// The measurement protocol: warm-up, repetitions and the stopping rule.
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/stats.hpp"

namespace gpuprobe {

/// A measurement gave a value that cannot be reported (e.g. a median of 0): an error of the
/// experiment (or of that row of a search), with this reason.
class MeasurementError : public std::runtime_error {
 public:
  explicit MeasurementError(const std::string& what) : std::runtime_error(what) {}
};

/// Fewer samples than this give no spread worth the name (confidence::precision is 0 below 3):
/// the stopping rule never stops before, whatever the options ask.
inline constexpr int kMinRepetitions = 3;

struct ProtocolOptions {
  int warmup_runs = 1;  ///< untimed runs before the first repetition
  int min_repetitions = 3;
  int max_repetitions = 15;
  double target_spread = 0.01;  ///< stop when relative_spread <= this (after min_repetitions)
  double budget_s = 2.0;        ///< or when one measurement has taken this long
};
nlohmann::json to_json(const ProtocolOptions& p);

struct Measurement {
  std::vector<double> values;
  stats::Summary summary;
  bool converged = false;  ///< the spread target was met (not the budget or the maximum)
  double wall_s = 0;
};
nlohmann::json to_json(const Measurement& m);

/// Calls `once(repetition)` until the stopping rule holds; `once` returns one sample value.
/// Warm-up calls get negative repetition numbers (-warmup_runs .. -1) and are not recorded.
/// At least kMinRepetitions are taken (and max_repetitions is raised to that). Throws
/// MeasurementError when the median is 0 (a spread relative to 0 means nothing: a measurement
/// that reads 0 is broken, not converged) or not finite.
Measurement repeat_until_stable(const std::function<double(int)>& once,
                                const ProtocolOptions& options);

}  // namespace gpuprobe
