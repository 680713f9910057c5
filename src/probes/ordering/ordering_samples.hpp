#pragma once
// ordering.fence's, ordering.atomic's and ordering.litmus's samples as types, converted from
// the recorded JSON once (core/samples.hpp's samples_as). Members the analyses read are
// required; members only recorded (for the reader of result.json) are optional.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/samples.hpp"

namespace gpuprobe::probes::ordering {

/// One (config, fence) loop of ordering.fence.
struct FenceCase {
  std::string config;  ///< warp or sm
  int threads = 0;
  std::string fence;  ///< "none" is the baseline of its config
  std::optional<std::uint64_t> steps_per_thread;
  RecordedSummary cycles_per_step;
  double slowest_warp_cycles_per_step_median = 0;
  double sm_clock_mhz_measured = 0;
};
struct FenceSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of ordering.fence
  std::vector<FenceCase> cases;
};

/// One (scope, order) dependent chain of ordering.atomic.
struct AtomicLatency {
  std::string scope, order;
  std::optional<std::uint64_t> steps;
  RecordedSummary cycles_per_op;
  double ns_per_op_median = 0;
};
/// One (mode, scope, order) full-occupancy run of ordering.atomic.
struct AtomicThroughput {
  std::string mode, scope, order;
  std::optional<std::uint64_t> steps_per_thread;
  std::optional<double> ops_per_launch;
  RecordedSummary ops_per_s;  ///< pooled over the replicates
  /// Each replicate's summary; absent in results written before replicates existed.
  std::optional<std::vector<RecordedSummary>> ops_per_s_replicates;
  double ops_per_clk_gpu_median = 0;
  double sm_clock_mhz_measured = 0;
};
struct AtomicSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of ordering.atomic
  std::vector<AtomicLatency> latency;
  std::vector<AtomicThroughput> throughput;
  /// A replicate list must not be empty (its summary is the finding's).
  void check() const;
};

/// One message-passing variant of ordering.litmus.
struct LitmusRun {
  std::string variant, protocol;
  bool synchronizing = false;
  std::optional<std::uint64_t> iterations;
  std::uint64_t completed = 0;
  std::uint64_t stale_reads = 0;
  bool timed_out = false;
  std::optional<std::uint64_t> first_stale_iteration, first_stale_value;
  std::int64_t producer_smid = 0, consumer_smid = 0;
  std::optional<std::uint64_t> final_data, final_flag, final_ack;
  double ns_per_iteration = 0;
};
struct LitmusSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of ordering.litmus
  std::vector<LitmusRun> variants;
};

void to_json(nlohmann::json& j, const FenceCase& c);
void from_json(const nlohmann::json& j, FenceCase& c);
void to_json(nlohmann::json& j, const FenceSamples& s);
void from_json(const nlohmann::json& j, FenceSamples& s);
void to_json(nlohmann::json& j, const AtomicLatency& l);
void from_json(const nlohmann::json& j, AtomicLatency& l);
void to_json(nlohmann::json& j, const AtomicThroughput& t);
void from_json(const nlohmann::json& j, AtomicThroughput& t);
void to_json(nlohmann::json& j, const AtomicSamples& s);
void from_json(const nlohmann::json& j, AtomicSamples& s);
void to_json(nlohmann::json& j, const LitmusRun& v);
void from_json(const nlohmann::json& j, LitmusRun& v);
void to_json(nlohmann::json& j, const LitmusSamples& s);
void from_json(const nlohmann::json& j, LitmusSamples& s);

}  // namespace gpuprobe::probes::ordering
