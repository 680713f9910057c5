#pragma once
// The Hopper family's samples as types (hopper.wgmma.throughput, hopper.dsmem, hopper.tma.*),
// converted from
// the recorded JSON once (core/samples.hpp's samples_as). Members the analyses read are
// required; members only recorded (for the reader of result.json) are optional.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/samples.hpp"

namespace gpuprobe::probes::hopper {

/// One descriptor encoding tried on one tile (hopper.wgmma.throughput).
struct WgmmaCheck {
  std::string type, encoding;
  std::uint64_t wrong = 0, of = 0;
  std::string first_wrong;
  bool passed = false;
};
/// One point of the wgmma sweep.
struct WgmmaPoint {
  std::string type;  ///< bf16 or f16
  int warpgroups_per_sm = 0, wgmma_per_group = 0, wait_group = 0;
  std::optional<double> wgmma_per_warpgroup;
  std::optional<int> blocks;
  RecordedSummary tflops;
  double flop_per_clk_per_sm_median = 0;
  double sm_clock_mhz_measured = 0;
  std::optional<double> distinct_sms_min;
};
struct WgmmaSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of hopper.wgmma.throughput
  std::vector<WgmmaCheck> checks;     ///< absent: none
  std::vector<WgmmaPoint> points;
  int sm_count = 0;
};

/// A dependent chase through shared memory at one cluster size (hopper.dsmem).
struct DsmemChase {
  RecordedSummary cycles_per_load;
  std::uint64_t wrong_end_nodes = 0;  ///< absent: 0
  bool verified = false;
};
/// Every block of a full wave reading its peer's shared memory.
struct DsmemBandwidth {
  std::optional<int> blocks, threads_per_block, bytes_per_block_buffer, reps;
  RecordedSummary gb_s;
  std::optional<double> gb_s_events_median;
  std::uint64_t launches_failing_verification = 0;  ///< absent: 0
  bool verified = false;
};
/// One cluster size: launched (with its three measurements) or not (with the reason).
struct DsmemRow {
  int cluster_size = 0;
  std::optional<int> max_active_clusters;
  bool launched = false;
  std::optional<std::string> reason;
  std::optional<DsmemChase> latency_peer, latency_self;
  std::optional<DsmemBandwidth> bandwidth;
};
struct DsmemSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of hopper.dsmem
  /// Absent: the analysis concludes nothing (not even an empty list of failing rows).
  std::optional<std::vector<DsmemRow>> cluster_sizes;
  /// A launched row holds latency_peer, latency_self and bandwidth.
  void check() const;
};

/// One replicate of one (copy, regime, size) of hopper.tma.latency.
struct TmaLatencyPoint {
  std::optional<int> replicate;
  std::string copy, regime;  ///< bulk / tensor / warp_load; l2 / dram
  int bytes = 0;
  RecordedSummary cycles;
  /// Each repetition's cycles (absent in results written before they were kept).
  std::optional<std::vector<double>> cycles_samples;
  std::optional<std::vector<std::uint64_t>> sample_offsets;
  std::optional<std::vector<double>> sample_smids;
  std::optional<std::uint64_t> words_checked, words_wrong;
  std::optional<std::string> first_wrong;
  bool verified = false;
  std::optional<double> smid;
};
struct TmaLatencySamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of hopper.tma.latency
  std::optional<std::vector<TmaLatencyPoint>> points;  ///< absent: nothing concluded
};

/// One (direction, source, tile, stages) point of hopper.tma.bandwidth.
struct TmaBandwidthPoint {
  std::string direction;              ///< load or store
  std::optional<std::string> source;  ///< dram or l2; absent: dram
  std::optional<std::uint64_t> source_bytes;
  int tile_bytes = 0, stages = 0;
  std::optional<std::uint64_t> passes_per_launch;
  std::optional<double> bytes_per_launch;
  RecordedSummary gb_s;
  std::optional<double> percent_of_peak_median;
  std::optional<std::uint64_t> launches, launches_failing_verification;
  std::optional<std::string> first_failure;
  bool verified = false;
};
struct TmaBandwidthSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of hopper.tma.bandwidth
  std::optional<std::vector<TmaBandwidthPoint>> points;  ///< absent: nothing concluded
};

void to_json(nlohmann::json& j, const TmaLatencyPoint& p);
void from_json(const nlohmann::json& j, TmaLatencyPoint& p);
void to_json(nlohmann::json& j, const TmaLatencySamples& s);
void from_json(const nlohmann::json& j, TmaLatencySamples& s);
void to_json(nlohmann::json& j, const TmaBandwidthPoint& p);
void from_json(const nlohmann::json& j, TmaBandwidthPoint& p);
void to_json(nlohmann::json& j, const TmaBandwidthSamples& s);
void from_json(const nlohmann::json& j, TmaBandwidthSamples& s);
void to_json(nlohmann::json& j, const WgmmaCheck& c);
void from_json(const nlohmann::json& j, WgmmaCheck& c);
void to_json(nlohmann::json& j, const WgmmaPoint& p);
void from_json(const nlohmann::json& j, WgmmaPoint& p);
void to_json(nlohmann::json& j, const WgmmaSamples& s);
void from_json(const nlohmann::json& j, WgmmaSamples& s);
void to_json(nlohmann::json& j, const DsmemChase& c);
void from_json(const nlohmann::json& j, DsmemChase& c);
void to_json(nlohmann::json& j, const DsmemBandwidth& b);
void from_json(const nlohmann::json& j, DsmemBandwidth& b);
void to_json(nlohmann::json& j, const DsmemRow& r);
void from_json(const nlohmann::json& j, DsmemRow& r);
void to_json(nlohmann::json& j, const DsmemSamples& s);
void from_json(const nlohmann::json& j, DsmemSamples& s);

}  // namespace gpuprobe::probes::hopper
