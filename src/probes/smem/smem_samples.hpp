#pragma once
// smem.bank_conflicts' and smem.bandwidth's samples as types: what their analyses read,
// converted from the recorded JSON once (a missing or wrong-typed field throws nlohmann's
// one-line error there; smem.cpp checks the values whole before judging them).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::probes::smem {

/// A repeated measurement's summary (to_json(Measurement)): its median, and the size and MAD
/// that its precision comes from (absent in a record: precision 0, as precision_of_summary).
struct MeasuredSummary {
  double median = 0;
  std::optional<std::size_t> n;
  std::optional<double> mad;
  /// confidence::precision_of_summary of the recorded summary.
  double precision() const;
};

/// One (word size, stride, mode) case of smem.bank_conflicts.
struct BankCase {
  int word_bytes = 0;
  int stride = 0;    ///< in words
  std::string mode;  ///< block, warp_stream, warp_chain
  int threads = 0;
  int chains_per_thread = 0;
  std::uint32_t loads_per_chain = 0;
  MeasuredSummary cycles_per_access;
};
struct BankSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of smem.bank_conflicts
  std::vector<BankCase> cases;
};

/// One word size of smem.bandwidth.
struct BandwidthPoint {
  int word_bytes = 0;
  MeasuredSummary bytes_per_clk_per_sm;
  double bytes_per_s_median = 0;
  double sm_clock_mhz_measured = 0;
};
struct BandwidthSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of smem.bandwidth
  std::vector<BandwidthPoint> points;
};

void to_json(nlohmann::json& j, const MeasuredSummary& s);
void from_json(const nlohmann::json& j, MeasuredSummary& s);
void to_json(nlohmann::json& j, const BankCase& c);
void from_json(const nlohmann::json& j, BankCase& c);
void to_json(nlohmann::json& j, const BankSamples& s);
void from_json(const nlohmann::json& j, BankSamples& s);
void to_json(nlohmann::json& j, const BandwidthPoint& p);
void from_json(const nlohmann::json& j, BandwidthPoint& p);
void to_json(nlohmann::json& j, const BandwidthSamples& s);
void from_json(const nlohmann::json& j, BandwidthSamples& s);

}  // namespace gpuprobe::probes::smem
