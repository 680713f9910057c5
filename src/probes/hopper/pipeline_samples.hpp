#pragma once
// hopper.pipeline's samples as a type, converted from the recorded JSON once (core/samples.hpp's
// samples_as): every configuration measured, the arrive-semantics check and the overlap's
// further replicates.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/samples.hpp"

namespace gpuprobe::probes::hopper {

/// One configuration of the TMA -> shared ring -> wgmma pipeline: what ran and, when it was
/// verified, its time per k-step and the rates from it; otherwise the error.
struct PipelinePoint {
  std::string shape;  ///< 128x256x64 or 64x256x64
  std::optional<int> bm;
  std::string mode;  ///< pipeline, wgmma_only, copy_only or sync_only
  int stages = 0;
  std::optional<bool> multicast;                 ///< absent in older results: false
  std::optional<std::string> arrive, a_operand;  ///< a_operand absent: "shared"
  std::optional<int> blocks;
  std::optional<std::uint64_t> dynamic_smem_bytes;
  bool verified = false;
  // A verified point's measurements (tflops empty for copy_only: null in the record).
  std::optional<double> ns_per_kstep;
  std::optional<RecordedSummary> ns_per_kstep_summary;
  std::optional<double> sm_clock_mhz, smem_bytes_per_kstep, smem_bytes_per_clk, tiles_per_s, gb_s,
      tflops;
  std::optional<std::string> error;  ///< an unverified point's reason

  bool uses_multicast() const { return multicast.value_or(false); }
  std::string a_from() const { return a_operand.value_or("shared"); }
};

struct PipelineSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of hopper.pipeline
  std::vector<PipelinePoint> points;
  std::optional<std::vector<PipelinePoint>> arrive_check;
  /// The overlap's further replicates, each a pass over its points (absent in results written
  /// before replicates existed).
  std::optional<std::vector<std::vector<PipelinePoint>>> overlap_replicates;
  std::optional<int> sm_count;
  /// Every verified point holds its time per k-step, its summary, tiles/s and GB/s, and a
  /// number of TFLOP/s unless it is copy_only.
  void check() const;
};

void to_json(nlohmann::json& j, const PipelinePoint& p);
void from_json(const nlohmann::json& j, PipelinePoint& p);
void to_json(nlohmann::json& j, const PipelineSamples& s);
void from_json(const nlohmann::json& j, PipelineSamples& s);

}  // namespace gpuprobe::probes::hopper
