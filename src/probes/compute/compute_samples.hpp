#pragma once
// compute.latency's and compute.throughput's samples as types: what their analyses read,
// converted from the recorded JSON once (a missing or wrong-typed field throws nlohmann's
// one-line error there).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/samples.hpp"

namespace gpuprobe::probes::compute {

/// A repeated measurement's summary as recorded (core/samples.hpp): its median, and the size
/// and MAD that its precision comes from (absent in a record: precision 0).
using MeasuredSummary = RecordedSummary;

/// One op's dependent chain (compute.latency).
struct LatencyPoint {
  std::string op;           ///< finding prefix: compute.<op>.latency
  std::string instruction;  ///< the PTX instruction chained
  std::uint64_t steps = 0;
  MeasuredSummary cycles_per_instruction;
  double sm_clock_mhz_measured = 0;  ///< 0 when not recorded
};
struct LatencySamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of compute.latency
  std::vector<LatencyPoint> points;
};

/// One (op, accumulators, occupancy) point of the throughput sweep (compute.throughput).
struct ThroughputPoint {
  std::string op;
  std::int64_t accumulators = 0;
  std::int64_t warps_per_sm = 0;
  MeasuredSummary ops_per_clk_per_sm;
  double ops_per_s_median = 0;
  double sm_clock_mhz_measured = 0;
};
struct ThroughputSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of compute.throughput
  std::vector<ThroughputPoint> points;
};

void to_json(nlohmann::json& j, const LatencyPoint& p);
void from_json(const nlohmann::json& j, LatencyPoint& p);
void to_json(nlohmann::json& j, const LatencySamples& s);
void from_json(const nlohmann::json& j, LatencySamples& s);
void to_json(nlohmann::json& j, const ThroughputPoint& p);
void from_json(const nlohmann::json& j, ThroughputPoint& p);
void to_json(nlohmann::json& j, const ThroughputSamples& s);
void from_json(const nlohmann::json& j, ThroughputSamples& s);

}  // namespace gpuprobe::probes::compute
