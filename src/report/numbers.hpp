#pragma once
// Small number helpers the fleet report and the baseline check share.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace gpuprobe::report {

/// Equal up to rounding (relative 1e-9).
inline bool same(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

/// The number, or null where it is not finite (JSON has no infinity).
inline nlohmann::json num_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace gpuprobe::report
