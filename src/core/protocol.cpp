#include "core/protocol.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "core/error.hpp"

#include "core/progress.hpp"

namespace gpuprobe {

nlohmann::json to_json(const ProtocolOptions& p) {
  const int min_reps = std::max(kMinRepetitions, p.min_repetitions);
  return {{"warmup_runs", p.warmup_runs},
          {"min_repetitions", min_reps},
          {"max_repetitions", std::max(min_reps, p.max_repetitions)},
          {"target_relative_spread", p.target_spread},
          {"spread_definition", "(p95 - p5) / median for n >= 5, (max - min) / median below"},
          {"budget_per_measurement_s", p.budget_s}};
}

nlohmann::json to_json(const Measurement& m) {
  auto j = stats::to_json(m.summary);
  j["converged"] = m.converged;
  j["wall_s"] = m.wall_s;
  return j;
}

Measurement repeat_until_stable(const std::function<double(int)>& once,
                                const ProtocolOptions& options) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  progress::point();
  auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - start).count(); };
  for (int w = options.warmup_runs; w > 0; --w) once(-w);
  Measurement m;
  const int min_reps = std::max(kMinRepetitions, options.min_repetitions);
  const int max_reps = std::max(min_reps, options.max_repetitions);
  for (int rep = 0; rep < max_reps; ++rep) {
    m.values.push_back(once(rep));
    if (static_cast<int>(m.values.size()) < min_reps) continue;
    m.summary = stats::summarize(m.values);
    if (!std::isfinite(m.summary.median) || m.summary.median == 0)
      throw MeasurementError("the median of " + std::to_string(m.values.size()) +
                             " repetitions is " + std::to_string(m.summary.median) +
                             "; a measurement that reads 0 is broken, not converged");
    if (stats::relative_spread(m.summary) <= options.target_spread) {
      m.converged = true;
      break;
    }
    if (elapsed() >= options.budget_s) break;
  }
  m.summary = stats::summarize(m.values);
  m.wall_s = elapsed();
  return m;
}

}  // namespace gpuprobe
