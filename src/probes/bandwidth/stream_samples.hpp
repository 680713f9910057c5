#pragma once
// The streaming experiments' samples (bandwidth.read, .write, .copy) as types: the search rows,
// the driver's reference kernels and the confirmation passes, converted from the recorded JSON
// once and checked whole (stream_samples.cpp). The run records more than these hold (the keys,
// the verification counts, the bytes per launch of each direction); only these are read.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "probes/bandwidth/bandwidth_samples.hpp"

namespace gpuprobe::probes::bwhost {

/// A row's GB/s as to_json(Timed) writes it: the statistics a finding reads, and what the
/// variants table shows beside them.
struct StreamGbps {
  GbpsStats stats;
  std::optional<int> launches_per_sample;
  std::optional<double> percent_of_peak_median;
};

/// One row of the search (measure::Search::rows_json over variant_json and what
/// StreamRig::measure records), or a driver reference (records before "references" kept
/// them among the variants). A search row that passed (candidate()) holds its whole kernel
/// and launch; a failed one only its kernel, its status and the reason.
struct StreamRow {
  std::string stage;              ///< "" when the record has none
  std::string status = "passed";  ///< absent in records written before failed rows were kept
  bool reference = false;         ///< a driver reference (cudaMemcpy / cudaMemset)
  std::optional<std::string> reason, label;
  // The kernel (variant_json): absent on a driver reference.
  std::optional<int> width_bytes, unroll, passes;
  std::optional<std::string> load, store, scheme, grid;
  // Its launch, recorded when it was measured.
  std::optional<int> threads_per_block, blocks_per_sm;
  std::optional<std::uint64_t> blocks, dst_shift_bytes, bytes_in_flight_per_sm,
      counted_bytes_per_launch;
  std::optional<StreamGbps> gb_s;

  /// A passed search row (not a reference) with a measurement: what the winners are chosen
  /// from. check() makes sure such a row holds its whole kernel and launch.
  bool candidate() const { return status == "passed" && !reference && gb_s.has_value(); }
  /// The median GB/s of a row with a measurement.
  double median() const { return gb_s ? gb_s->stats.median : 0.0; }
  bool persistent() const { return grid.value_or("persistent") == "persistent"; }
};

/// The confirmation pass of one finding's winner (measure::to_json(Confirmation) with the
/// finding's name; a passed one holds the winner's whole record re-measured).
struct StreamConfirmation {
  std::string finding;
  std::size_t winner_row = 0;
  double search_value = 0;
  std::string status;
  std::optional<std::string> reason;
  double value = 0;             ///< a passed one's
  std::vector<double> samples;  ///< a passed one's
  std::optional<GbpsStats> gb_s;
  std::optional<int> verified_with_passes;
  bool passed() const { return status == "passed"; }
};

struct StreamSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of bandwidth.read/write/copy
  std::vector<StreamRow> variants;
  std::vector<StreamRow> references;  ///< absent in older records: none
  /// Absent in records written before the confirmation pass (the search's best then stands).
  std::optional<std::vector<StreamConfirmation>> confirmations;
  // "counters" (--counters) is read by counters::cross_check from the record itself.

  /// Every candidate holds its kernel and launch, every reference its label and measurement,
  /// every confirmation names a row, and a passed one names a candidate and holds its
  /// measurement (UsageError naming the first that does not).
  void check() const;
};

void to_json(nlohmann::json& j, const StreamGbps& s);
void from_json(const nlohmann::json& j, StreamGbps& s);
void to_json(nlohmann::json& j, const StreamRow& r);
void from_json(const nlohmann::json& j, StreamRow& r);
void to_json(nlohmann::json& j, const StreamConfirmation& c);
void from_json(const nlohmann::json& j, StreamConfirmation& c);
void to_json(nlohmann::json& j, const StreamSamples& s);
void from_json(const nlohmann::json& j, StreamSamples& s);

}  // namespace gpuprobe::probes::bwhost
