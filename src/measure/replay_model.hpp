#pragma once
// The measuring half of `gpuprobe replay`: the model exported from a result, as a modelled
// device, chased at the recorded sweep's points as latency.sweep chases them; and the same
// model with one part changed (a replacement class, a placement, an index, a data victim) at
// one region's points: sensitivities, comparisons rather than fits. Judging the numbers is
// analysis/replay.hpp's.
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/replay.hpp"
#include "core/experiment.hpp"
#include "device/model_device.hpp"

namespace gpuprobe::measure {

/// A model file's device, chased at sweep points (one progress point each).
class ModelReplay {
 public:
  explicit ModelReplay(const nlohmann::json& model);  ///< a UsageError for an invalid model
  ModelReplay(const ModelReplay&) = delete;
  ModelReplay& operator=(const ModelReplay&) = delete;
  /// Cycles per load at the point, as latency.sweep measures it.
  double cycles_at(const analysis::replay::SweepPoint& point);
  std::vector<double> cycles_at(const std::vector<analysis::replay::SweepPoint>& points);

 private:
  device::ModelDevice device_;
  RunOptions options_;
  FindingBoard board_;
  Context ctx_;
};

/// The model with one part changed.
struct ModelVariant {
  std::string label;                            ///< the sensitivity curve's column
  std::function<void(nlohmann::json&)> change;  ///< edits the model; empty = not applicable
  std::string not_applicable;                   ///< why, when `change` is empty
};
/// Each replacement class of `level` ("l1" or "l2"); tree-PLRU only over a power of two of at
/// most 32 ways.
std::vector<ModelVariant> policy_variants(const nlohmann::json& model, const std::string& level);
/// The L2's classes, its blocks of the measured l2.mixture.placement_unit placed at random
/// (random_placement: the other placement bound to the model's contiguous modulo placement),
/// and each insertion class over LRU (insertion_lru, insertion_bimodal, insertion_dueling).
std::vector<ModelVariant> l2_variants(const nlohmann::json& model,
                                      const analysis::replay::MeasuredFindings& findings);
/// The L1's classes, LRU over a scrambled index, and, for a decoupled L1, each data victim and
/// the coupled modulo L1 its capacity alone gives.
std::vector<ModelVariant> l1_variants(const nlohmann::json& model);

/// One sensitivity: the measurement and every variant at the sweep's points in [from, to), and
/// each variant's worst |error| per region (or why it does not apply).
struct Sensitivity {
  Curve curve;
  nlohmann::json worst_by_region = nlohmann::json::object();
  std::string note;  ///< what the variants are, for the result's statistics
};
struct SensitivityRange {
  std::string name, title;
  double from = 0, to = 0;
};
Sensitivity sensitivity(const SensitivityRange& range, const std::vector<ModelVariant>& variants,
                        const nlohmann::json& model,
                        const std::vector<analysis::replay::SweepPoint>& points);

/// The L2's sensitivity past 2 x l1.capacity and the L1's from 0.9 to 2 x l1.capacity; both
/// without rows for a model that is not structural or a result without l1.capacity.
struct Sensitivities {
  Sensitivity l2_policy, l1;
};
Sensitivities replay_sensitivities(const nlohmann::json& model,
                                   const analysis::replay::MeasuredFindings& findings,
                                   const std::vector<analysis::replay::SweepPoint>& points);

}  // namespace gpuprobe::measure
