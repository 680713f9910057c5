#pragma once
// The pattern experiments' samples (bandwidth.stride, .offset, .layout, .transpose) as types: what
// their analyses read, converted from the recorded JSON once (a missing or wrong-typed field throws
// nlohmann's one-line error there; typed_*_samples in stride.cpp turn it into a UsageError).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::probes::bwhost {

/// One GB/s measurement as to_json(Timed) writes it: what a finding reads of it.
struct GbpsStats {
  double median = 0, min = 0, p5 = 0, p95 = 0;
  std::size_t n = 0;
  std::optional<std::vector<double>> values;  ///< the samples (precision 0 without them)
};

/// The sector model's prediction for one warp access (model_json).
struct SectorModel {
  std::uint64_t sectors_per_request = 0;
  double request_efficiency = 0, dram_efficiency_32b = 0, dram_efficiency_64b = 0;
  std::optional<double> copy_dram_efficiency_rmw_32b, copy_dram_efficiency_rmw_64b;
};

/// One (variant, stride) row of bandwidth.stride.
struct StrideRow {
  std::string variant;  ///< copy, read
  int stride_elements = 0;
  GbpsStats useful_gb_s;
  SectorModel model;
};
struct StrideSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of bandwidth.stride
  std::vector<StrideRow> rows;
};

/// One (variant, offset) row of bandwidth.offset.
struct OffsetRow {
  std::string variant;  ///< copy, copy_src_misaligned, copy_dst_misaligned, read
  int offset_elements = 0;
  GbpsStats useful_gb_s;
  double request_efficiency = 0;             ///< useful / (sectors per warp x 32 B), both sides
  std::uint64_t read_lines_per_request = 0;  ///< the read side's model (read_model)
};
struct OffsetSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of bandwidth.offset
  std::vector<OffsetRow> rows;
};

/// One layout of bandwidth.layout, with the sector model's prediction for it.
struct LayoutRow {
  std::string layout;  ///< aos, soa
  GbpsStats useful_gb_s;
  struct Model {
    std::uint64_t load_sectors_per_warp = 0;
    double request_efficiency = 0, dram_efficiency_32b = 0;
  } model;
};
struct LayoutSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of bandwidth.layout
  std::vector<LayoutRow> rows;
};

/// One kernel of bandwidth.transpose (copy, naive, tiled, ...), with the model's prediction.
struct TransposeRow {
  std::string kernel;
  GbpsStats useful_gb_s;
  struct Model {
    std::uint64_t read_sectors_per_warp = 0, write_sectors_per_warp = 0;
    int shared_load_ways = 0;
    double request_efficiency = 0, dram_efficiency_32b = 0;
  } model;
};
struct TransposeSamples {
  static constexpr int kVersion = 1;  ///< Experiment::samples_version of bandwidth.transpose
  std::vector<TransposeRow> rows;
};

void to_json(nlohmann::json& j, const GbpsStats& s);
void from_json(const nlohmann::json& j, GbpsStats& s);
void from_json(const nlohmann::json& j, SectorModel& m);
void from_json(const nlohmann::json& j, StrideRow& r);
void from_json(const nlohmann::json& j, StrideSamples& s);
void from_json(const nlohmann::json& j, OffsetRow& r);
void from_json(const nlohmann::json& j, OffsetSamples& s);
void from_json(const nlohmann::json& j, LayoutRow& r);
void from_json(const nlohmann::json& j, LayoutSamples& s);
void from_json(const nlohmann::json& j, TransposeRow& r);
void from_json(const nlohmann::json& j, TransposeSamples& s);

}  // namespace gpuprobe::probes::bwhost
