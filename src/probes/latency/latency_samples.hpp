#pragma once
// The latency family's samples as types (latency.sweep, latency.shared, latency.carveout): what
// their analyses read, converted from the recorded JSON once (a missing or wrong-typed field
// throws nlohmann's one-line error there). The conversions are in latency_samples.cpp.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/samples.hpp"

namespace gpuprobe::probes::latency {

/// One chase point: its working set and the median and MAD of its cycles per load. The run
/// records measure::to_json's whole point (load, plan, clock, SM, ...); only these are read.
struct ChaseSample {
  double working_set_bytes = 0;
  double cycles_median = 0;  ///< cycles_per_load.median
  double cycles_mad = 0;     ///< cycles_per_load.mad
};

/// One replicate of the near-partition knee's bisection (its seed and offset are not read).
struct KneeReplicate {
  std::vector<ChaseSample> points;
};

/// The L1 knee refined to one node (refine_l1_knee), held only when it found the knee.
struct L1KneeRefinement {
  double node_stride_bytes = 0;
  double nodes_held = 0;
  double nodes_not_held = 0;
};

struct SweepSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of latency.sweep
  std::vector<ChaseSample> points;
  std::vector<KneeReplicate> near_knee_replicates;  ///< absent in the record: none
  /// An optional record: one that is not an object with "found": true reads as none, and a
  /// count that is not a number as 0 (the sweep's own bracket then stands).
  std::optional<L1KneeRefinement> l1_knee_refinement;
};

/// latency.shared: the median cycles per load of each working set's chase.
struct SharedChaseSample {
  double cycles_median = 0;  ///< cycles_per_load.median
};
struct SharedSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of latency.shared
  std::vector<SharedChaseSample> points;
};

/// latency.carveout: one carveout's adaptive sweep.
struct CarveoutSweep {
  int carveout_percent = -1;  ///< -1: the driver's default
  std::vector<ChaseSample> points;
};
struct CarveoutSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of latency.carveout
  std::vector<CarveoutSweep> carveouts;
};

/// A chase point as a table row reads it (measure::to_json's point: its working set, the whole
/// summary of its cycles per load and the SM clock during it).
struct ChaseRow {
  double working_set_bytes = 0;
  RecordedSummary cycles_per_load;
  double sm_clock_mhz_measured = 0;
};

/// latency.chase: one load operator at one level's working set (a measure::to_json point with
/// the level and why its working set was chosen).
struct LevelChase {
  std::string load;   ///< device::to_string of the load operator
  std::string level;  ///< l1, l2_near, l2_mixed or dram
  std::uint64_t working_set_bytes = 0;
  RecordedSummary cycles_per_load;
  std::optional<std::string> working_set_chosen_by;
};
struct ChaseSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of latency.chase
  std::vector<LevelChase> points;
  // "counters" (--counters) is read by counters::cross_check from the record itself.
};

void to_json(nlohmann::json& j, const ChaseRow& s);
void from_json(const nlohmann::json& j, ChaseRow& s);
void to_json(nlohmann::json& j, const LevelChase& s);
void from_json(const nlohmann::json& j, LevelChase& s);
void to_json(nlohmann::json& j, const ChaseSamples& s);
void from_json(const nlohmann::json& j, ChaseSamples& s);
void to_json(nlohmann::json& j, const ChaseSample& s);
void from_json(const nlohmann::json& j, ChaseSample& s);
void to_json(nlohmann::json& j, const KneeReplicate& k);
void from_json(const nlohmann::json& j, KneeReplicate& k);
void to_json(nlohmann::json& j, const SweepSamples& s);
void from_json(const nlohmann::json& j, SweepSamples& s);
void to_json(nlohmann::json& j, const SharedChaseSample& s);
void from_json(const nlohmann::json& j, SharedChaseSample& s);
void to_json(nlohmann::json& j, const SharedSamples& s);
void from_json(const nlohmann::json& j, SharedSamples& s);
void to_json(nlohmann::json& j, const CarveoutSweep& s);
void from_json(const nlohmann::json& j, CarveoutSweep& s);
void to_json(nlohmann::json& j, const CarveoutSamples& s);
void from_json(const nlohmann::json& j, CarveoutSamples& s);

}  // namespace gpuprobe::probes::latency
