// The sector model (sectors per warp request, stream efficiency, bank conflicts, transpose
// prediction), the byte accounting of the bandwidth experiments, their data generator, their
// input validation and their analysis of recorded samples. No GPU needed.
#include <gtest/gtest.h>

#include <map>
#include <stdexcept>

#include "analysis/sector_model.hpp"
#include "cli/option_axes.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "device/device.hpp"
#include "probes/bandwidth/bandwidth_kernels.hpp"

namespace gpuprobe {
namespace {

using analysis::WarpAccess;

WarpAccess floats(std::int64_t stride, std::int64_t offset = 0, std::uint64_t base = 0) {
  return WarpAccess{4, stride, offset, base, 32};
}

// ---------------------------------------------------------------------------------------------
// Sectors per warp request

TEST(SectorModel, UnitStrideFloatIsFourSectorsOneLine) {
  EXPECT_EQ(analysis::sectors_per_request(floats(1)), 4u);
  EXPECT_EQ(analysis::lines_per_request(floats(1)), 1u);
  EXPECT_EQ(analysis::useful_bytes_per_request(floats(1)), 128u);
  EXPECT_DOUBLE_EQ(analysis::request_efficiency(floats(1)), 1.0);
}

TEST(SectorModel, StrideMultipliesSectorsUntilOnePerThread) {
  const std::map<int, std::uint64_t> want = {{2, 8},   {3, 12},  {4, 16},  {5, 20}, {8, 32},
                                             {16, 32}, {32, 32}, {33, 32}, {64, 32}};
  for (const auto& [s, sectors] : want)
    EXPECT_EQ(analysis::sectors_per_request(floats(s)), sectors) << "stride " << s;
  EXPECT_DOUBLE_EQ(analysis::request_efficiency(floats(2)), 0.5);
  EXPECT_DOUBLE_EQ(analysis::request_efficiency(floats(8)), 0.125);
  EXPECT_DOUBLE_EQ(analysis::request_efficiency(floats(32)), 0.125);
}

TEST(SectorModel, MisalignedStartAddsOneSector) {
  EXPECT_EQ(analysis::sectors_per_request(floats(1, 1)), 5u);  // 128-B aligned base, offset 1
  EXPECT_DOUBLE_EQ(analysis::request_efficiency(floats(1, 1)), 0.8);
  for (int off = 0; off <= 64; ++off)
    EXPECT_EQ(analysis::sectors_per_request(floats(1, off)), off % 8 == 0 ? 4u : 5u) << off;
  // A 32-B aligned start is still 4 sectors but straddles two lines.
  EXPECT_EQ(analysis::lines_per_request(floats(1, 8)), 2u);
  // The base address counts like the offset.
  EXPECT_EQ(analysis::sectors_per_request(floats(1, 0, 4)), 5u);
  EXPECT_EQ(analysis::sectors_per_request(floats(1, 0, 256)), 4u);
  EXPECT_EQ(analysis::sectors_per_request(floats(1, 7, 4)), 4u);  // 4 + 28 = 32 B: aligned again
}

TEST(SectorModel, VectorWidths) {
  const WarpAccess f2{8, 1, 0, 0, 32}, f4{16, 1, 0, 0, 32};
  EXPECT_EQ(analysis::sectors_per_request(f2), 8u);
  EXPECT_EQ(analysis::sectors_per_request(f4), 16u);
  EXPECT_EQ(analysis::sectors_per_request(f4) * analysis::kSectorBytes, 512u);
  EXPECT_EQ(analysis::useful_bytes_per_request(f4), 512u);
  EXPECT_DOUBLE_EQ(analysis::request_efficiency(f4), 1.0);
  EXPECT_EQ(analysis::lines_per_request(f4), 4u);
  // float4 at stride 2: every other 16 B of 32 sectors.
  EXPECT_EQ(analysis::sectors_per_request(WarpAccess{16, 2, 0, 0, 32}), 32u);
}

TEST(SectorModel, BroadcastAndPartialWarps) {
  EXPECT_EQ(analysis::sectors_per_request(floats(0)), 1u);
  EXPECT_EQ(analysis::useful_bytes_per_request(floats(0)), 4u);
  EXPECT_EQ(analysis::sectors_per_request(WarpAccess{4, 1, 0, 0, 16}), 2u);
  EXPECT_EQ(analysis::sectors_per_request(WarpAccess{4, 1, 0, 0, 1}), 1u);
}

TEST(SectorModel, RejectsWhatItDoesNotModel) {
  EXPECT_THROW(analysis::sectors_per_request(WarpAccess{3, 1, 0, 0, 32}), std::invalid_argument);
  EXPECT_THROW(analysis::sectors_per_request(WarpAccess{32, 1, 0, 0, 32}), std::invalid_argument);
  EXPECT_THROW(analysis::sectors_per_request(WarpAccess{4, -1, 0, 0, 32}), std::invalid_argument);
  EXPECT_THROW(analysis::sectors_per_request(WarpAccess{4, 1, -1, 0, 32}), std::invalid_argument);
  EXPECT_THROW(analysis::sectors_per_request(WarpAccess{4, 1, 0, 0, 0}), std::invalid_argument);
  EXPECT_THROW(analysis::sectors_per_request(WarpAccess{4, 1, 0, 0, 33}), std::invalid_argument);
  EXPECT_THROW(analysis::stream_efficiency(floats(1), 48), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Whole-stream (DRAM) efficiency

TEST(SectorModel, StreamEfficiencyCountsSharedSectorsOnce) {
  EXPECT_DOUBLE_EQ(analysis::stream_efficiency(floats(1)), 1.0);
  // Misalignment costs a sector per request, but the neighbouring request uses it.
  EXPECT_DOUBLE_EQ(analysis::stream_efficiency(floats(1, 1)), 1.0);
  EXPECT_DOUBLE_EQ(analysis::stream_efficiency(floats(2)), 0.5);
  EXPECT_NEAR(analysis::stream_efficiency(floats(3)), 1.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(analysis::stream_efficiency(floats(4)), 0.25);
  EXPECT_DOUBLE_EQ(analysis::stream_efficiency(floats(8)), 0.125);
  EXPECT_DOUBLE_EQ(analysis::stream_efficiency(floats(16)), 0.125);
  EXPECT_DOUBLE_EQ(analysis::stream_efficiency(floats(32)), 0.125);
  // In 64-byte pieces stride 16 wastes twice as much as stride 8.
  EXPECT_DOUBLE_EQ(analysis::stream_efficiency(floats(8), 64), 0.125);
  EXPECT_DOUBLE_EQ(analysis::stream_efficiency(floats(16), 64), 0.0625);
  EXPECT_DOUBLE_EQ(analysis::stream_efficiency(WarpAccess{16, 1, 0, 0, 32}), 1.0);
  EXPECT_DOUBLE_EQ(analysis::stream_efficiency(floats(0)), 0.125);
}

TEST(SectorModel, CopyEfficiencyWithReadModifyWrite) {
  // Whole pieces: no read-modify-write, the copy is as efficient as either stream.
  EXPECT_DOUBLE_EQ(analysis::copy_stream_efficiency(floats(1), 32, true), 1.0);
  EXPECT_DOUBLE_EQ(analysis::copy_stream_efficiency(floats(2), 32, false), 0.5);
  // Stride 2: reads move 2x, half-written sectors are read and written: 2 / (2 + 4).
  EXPECT_NEAR(analysis::copy_stream_efficiency(floats(2), 32, true), 1.0 / 3.0, 1e-12);
  // Stride 16 in 64-B pieces: 16x per direction, 32x for the written side.
  EXPECT_NEAR(analysis::copy_stream_efficiency(floats(16), 64, true), 2.0 / 48.0, 1e-12);
  EXPECT_NEAR(analysis::copy_stream_efficiency(floats(8), 32, true), 2.0 / 24.0, 1e-12);
}

// ---------------------------------------------------------------------------------------------
// Shared-memory banks and the transpose

TEST(SectorModel, SharedBankWays) {
  EXPECT_EQ(analysis::shared_bank_ways(1), 1);
  EXPECT_EQ(analysis::shared_bank_ways(2), 2);
  EXPECT_EQ(analysis::shared_bank_ways(4), 4);
  EXPECT_EQ(analysis::shared_bank_ways(16), 16);
  EXPECT_EQ(analysis::shared_bank_ways(32), 32);
  EXPECT_EQ(analysis::shared_bank_ways(33), 1);
  EXPECT_EQ(analysis::shared_bank_ways(3), 1);
  EXPECT_EQ(analysis::shared_bank_ways(0), 1);  // broadcast
}

TEST(SectorTranspose, NaiveWritesOneSectorPerThread) {
  const auto p = analysis::predict_transpose(analysis::TransposeKind::kNaive, 1024);
  EXPECT_EQ(p.read_sectors_per_warp, 4u);
  EXPECT_EQ(p.write_sectors_per_warp, 32u);
  EXPECT_EQ(p.useful_bytes_per_warp, 256u);
  EXPECT_EQ(p.moved_bytes_per_warp, 36u * 32u);
  EXPECT_NEAR(p.request_efficiency, 256.0 / 1152.0, 1e-12);
  EXPECT_DOUBLE_EQ(p.stream_efficiency, 1.0);
  EXPECT_EQ(p.shared_load_ways, 0);
}

TEST(SectorTranspose, TilesCoalesceAndPaddingRemovesBankConflicts) {
  const auto t = analysis::predict_transpose(analysis::TransposeKind::kTiled, 1024);
  EXPECT_EQ(t.read_sectors_per_warp, 4u);
  EXPECT_EQ(t.write_sectors_per_warp, 4u);
  EXPECT_DOUBLE_EQ(t.request_efficiency, 1.0);
  EXPECT_EQ(t.shared_store_ways, 1);
  EXPECT_EQ(t.shared_load_ways, 32);
  EXPECT_EQ(t.tile_pitch_words, 32);
  const auto p = analysis::predict_transpose(analysis::TransposeKind::kTiledPadded, 1024);
  EXPECT_EQ(p.shared_load_ways, 1);
  EXPECT_EQ(p.tile_pitch_words, 33);
  EXPECT_DOUBLE_EQ(p.request_efficiency, 1.0);
  EXPECT_THROW(analysis::predict_transpose(analysis::TransposeKind::kNaive, 1000),
               std::invalid_argument);
  EXPECT_THROW(analysis::predict_transpose(analysis::TransposeKind::kNaive, 0),
               std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Byte accounting

TEST(SectorBytes, StreamsCountReadPlusWrite) {
  const std::uint64_t a = 800ull << 20;
  const auto r = analysis::stream_bytes(analysis::StreamKind::kRead, a);
  const auto w = analysis::stream_bytes(analysis::StreamKind::kWrite, a);
  const auto c = analysis::stream_bytes(analysis::StreamKind::kCopy, a);
  EXPECT_EQ(r.read_bytes, a);
  EXPECT_EQ(r.write_bytes, 0u);
  EXPECT_EQ(r.counted_bytes(), a);
  EXPECT_EQ(w.read_bytes, 0u);
  EXPECT_EQ(w.counted_bytes(), a);
  EXPECT_EQ(c.read_bytes, a);
  EXPECT_EQ(c.write_bytes, a);
  EXPECT_EQ(c.counted_bytes(), 2 * a);
}

TEST(SectorBytes, StridedUsefulAndMovedBytes) {
  const auto s2 = analysis::strided_bytes(1000, 2, 0, true);
  EXPECT_DOUBLE_EQ(s2.useful_bytes, 8000.0);  // 1000 floats read + 1000 written
  EXPECT_DOUBLE_EQ(s2.moved_bytes_request, 16000.0);
  EXPECT_DOUBLE_EQ(s2.moved_bytes_stream, 16000.0);
  const auto r8 = analysis::strided_bytes(1000, 8, 0, false);
  EXPECT_DOUBLE_EQ(r8.useful_bytes, 4000.0);
  EXPECT_DOUBLE_EQ(r8.moved_bytes_request, 32000.0);  // a whole sector per float
  const auto o1 = analysis::strided_bytes(1000, 1, 1, true);
  EXPECT_DOUBLE_EQ(o1.moved_bytes_request, 8000.0 / 0.8);
  EXPECT_DOUBLE_EQ(o1.moved_bytes_stream, 8000.0);
}

// ---------------------------------------------------------------------------------------------
// The data generator and the expected output (shared by kernels and host checks)

TEST(SectorBandwidthData, ValuesAreRandomNonZeroFloatsInOneToTwo) {
  std::map<std::uint32_t, int> seen;
  for (std::uint64_t i = 0; i < 4096; ++i) {
    const std::uint32_t b = probes::bw::value_bits(i, 7);
    EXPECT_EQ(b & 0xff800000u, 0x3f800000u) << i;
    const float f = probes::bw::bits_to_float(b);
    EXPECT_GE(f, 1.0f);
    EXPECT_LT(f, 2.0f);
    ++seen[b];
  }
  EXPECT_GT(seen.size(), 4000u);  // not constant, barely any repeats
  EXPECT_NE(probes::bw::value_bits(5, 7), probes::bw::value_bits(5, 8));
  EXPECT_NE(probes::bw::value_bits(5, 7), probes::bw::value_bits(5 + (1ull << 32), 7));
}

TEST(SectorBandwidthData, ExpectedOutputs) {
  using probes::bw::ExpectMode;
  probes::bw::ExpectSpec w;
  w.seed_in = 1;
  w.seed_poison = 2;
  w.lo = 3;
  w.hi = 20;
  w.step = 4;
  EXPECT_EQ(probes::bw::expected_bits(w, 7), probes::bw::value_bits(7, 1));
  EXPECT_EQ(probes::bw::expected_bits(w, 8), probes::bw::value_bits(8, 2));    // not on the stride
  EXPECT_EQ(probes::bw::expected_bits(w, 23), probes::bw::value_bits(23, 2));  // past the window
  EXPECT_EQ(probes::bw::expected_bits(w, 2), probes::bw::value_bits(2, 2));    // before it
  w.src_shift = -2;  // output element i holds source element i - 2
  EXPECT_EQ(probes::bw::expected_bits(w, 7), probes::bw::value_bits(5, 1));
  EXPECT_EQ(probes::bw::expected_bits(w, 8), probes::bw::value_bits(8, 2));
  probes::bw::ExpectSpec t;
  t.mode = ExpectMode::kTranspose;
  t.seed_in = 9;
  t.n = 64;
  EXPECT_EQ(probes::bw::expected_bits(t, 1 * 64 + 5), probes::bw::value_bits(5 * 64 + 1, 9));
  probes::bw::ExpectSpec s;
  s.mode = ExpectMode::kLayoutSum;
  s.seed_in = 4;
  const float x = probes::bw::bits_to_float(probes::bw::value_bits(30, 4));
  const float y = probes::bw::bits_to_float(probes::bw::value_bits(31, 4));
  const float z = probes::bw::bits_to_float(probes::bw::value_bits(32, 4));
  EXPECT_EQ(probes::bw::expected_bits(s, 10), probes::bw::float_to_bits((x + y) + z));
}

// ---------------------------------------------------------------------------------------------
// The experiments without a GPU: registration, waiver, validation, analysis of samples

const Experiment& experiment(const std::string& id) {
  const auto* e = Registry::builtin().find(id);
  if (!e) throw std::runtime_error(id + " is not registered");
  return *e;
}

TEST(SectorBandwidthExperiments, RegisteredAndWaivedOnTheModel) {
  auto dev = device::open_device("model:h200");
  for (const char* id : {"bandwidth.read", "bandwidth.write", "bandwidth.copy", "bandwidth.stride",
                         "bandwidth.offset", "bandwidth.layout", "bandwidth.transpose"}) {
    const auto why = experiment(id).waiver(dev->info());
    ASSERT_TRUE(why.has_value()) << id;
    EXPECT_EQ(*why, "needs a CUDA GPU: the modelled GPU has no bandwidth model");
  }
  device::DeviceInfo cuda = dev->info();
  cuda.kind = "cuda";
  EXPECT_FALSE(experiment("bandwidth.read").waiver(cuda).has_value());
}

void expect_usage_error(const std::string& id, const RunOptions& o, const std::string& needle) {
  auto dev = device::open_device("model:h200");
  try {
    experiment(id).validate(*dev, o);
    ADD_FAILURE() << id << ": no UsageError (wanted one mentioning '" << needle << "')";
  } catch (const UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(needle), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

/// Options as the family flags (--strides, --offsets, --word-sizes, --array-size) set them: as
/// overrides of the axes they are aliases of.
RunOptions with_flags(const cli::FamilyOptions& f) {
  RunOptions o;
  o.array_bytes = f.array_bytes;
  o.axis_overrides = cli::family_overrides(Registry::builtin(), f);
  return o;
}

TEST(SectorBandwidthExperiments, ValidateRejectsBadOptions) {
  cli::FamilyOptions f;
  f.strides = {1, 0};
  expect_usage_error(
      "bandwidth.stride", with_flags(f),
      "--strides (bandwidth.stride.stride_elements): '0' is out of range [1.0, 64.0]");
  f.strides = {65};
  expect_usage_error("bandwidth.stride", with_flags(f), "[1.0, 64.0]");
  f = {};
  f.offsets = {65};
  expect_usage_error(
      "bandwidth.offset", with_flags(f),
      "--offsets (bandwidth.offset.offset_elements): '65' is out of range [0.0, 64.0]");
  f.offsets = {-1};
  expect_usage_error("bandwidth.offset", with_flags(f), "[0.0, 64.0]");
  f = {};
  f.word_sizes = {4, 12};
  expect_usage_error("bandwidth.read", with_flags(f),
                     "--word-sizes (bandwidth.read.width_bytes): '12' is not allowed; use 4,8,16");
  f = {};
  f.array_bytes = 1ull << 50;  // 1 PiB
  expect_usage_error("bandwidth.copy", with_flags(f), "choose --array-size at most");
  f.array_bytes = 1000;
  expect_usage_error("bandwidth.read", with_flags(f), "at least 1 MiB");
  RunOptions o;
  o.axis_overrides = {parse_axis_override("bandwidth.read.array_bytes=67108864,134217728")};
  expect_usage_error("bandwidth.read", o, "takes one value");
}

TEST(SectorBandwidthExperiments, ValidateAcceptsDefaultsAndLimits) {
  auto dev = device::open_device("model:h200");
  cli::FamilyOptions f;
  f.strides = {1, 64};
  f.offsets = {0, 64};
  f.word_sizes = {4, 8, 16};
  const RunOptions o = with_flags(f);
  for (const char* id : {"bandwidth.read", "bandwidth.write", "bandwidth.copy", "bandwidth.stride",
                         "bandwidth.offset", "bandwidth.layout", "bandwidth.transpose"}) {
    EXPECT_NO_THROW(experiment(id).validate(*dev, o)) << id;
    EXPECT_NO_THROW(experiment(id).validate(*dev, RunOptions{})) << id;
  }
}

// --array-size sets the array of every bandwidth experiment, and the recorded parameters say so.
TEST(SectorBandwidthExperiments, ArraySizeIsTheArrayBytesAxis) {
  cli::FamilyOptions f;
  f.array_bytes = 64ull << 20;
  const RunOptions o = with_flags(f);
  for (const char* id :
       {"bandwidth.read", "bandwidth.copy", "bandwidth.stride", "bandwidth.transpose"}) {
    const auto axes = experiment(id).axis_values(o);
    EXPECT_EQ(axes.ints("array_bytes"), (std::vector<std::int64_t>{64ll << 20})) << id;
    EXPECT_TRUE(experiment(id).axis_values(RunOptions{}).ints("array_bytes").empty()) << id;
  }
}

nlohmann::json stream_row(int width, double median, bool reference = false, int passes = 1) {
  return {{"stage", reference ? "driver_reference" : "cache_operator"},
          {"passes", passes},
          {"reference", reference},
          {"label", "driver"},
          {"width_bytes", width},
          {"load", "ld.global"},
          {"store", "-"},
          {"unroll", 4},
          {"scheme", "grid"},
          {"blocks_per_sm", 8},
          {"threads_per_block", 256},
          {"bytes_in_flight_per_sm", 8 * 256 * 4 * width},
          {"counted_bytes_per_launch", 1000},
          {"verified", true},
          {"gb_s",
           {{"median", median},
            {"min", median - 2},
            {"p5", median - 1},
            {"p95", median + 1},
            {"n", 5},
            // The samples: a finding's confidence is confidence::precision over them.
            {"values", {median - 2, median - 1, median, median + 1, median + 1}}}}};
}

TEST(SectorBandwidthExperiments, StreamAnalysisPicksTheBestVerifiedVariant) {
  ExperimentResult r;
  r.parameters = {{"peak_gb_s", 4000.0}};
  r.samples = {{"variants",
                {stream_row(16, 3000), stream_row(16, 3600), stream_row(4, 3100),
                 stream_row(8, 3300), stream_row(16, 3900, true)}}};
  experiment("bandwidth.read").analyze(r);
  std::map<std::string, Finding> f;
  for (const auto& x : r.findings) f[x.name] = x;
  ASSERT_TRUE(f.count("dram.read_bandwidth"));
  EXPECT_DOUBLE_EQ(f["dram.read_bandwidth"].value, 3600);  // the reference row is not a candidate
  EXPECT_EQ(f["dram.read_bandwidth"].unit, "GB/s");
  EXPECT_DOUBLE_EQ(f["dram.read_bandwidth"].extra.at("percent_of_peak").get<double>(), 90.0);
  EXPECT_DOUBLE_EQ(f["dram.read_bandwidth"].extra.at("peak_gb_s").get<double>(), 4000.0);
  EXPECT_EQ(f["dram.read_bandwidth"].extra.at("bytes_per_thread").get<int>(), 16);
  EXPECT_DOUBLE_EQ(f["dram.read_bandwidth.width_4b"].value, 3100);
  EXPECT_DOUBLE_EQ(f["dram.read_bandwidth.width_8b"].value, 3300);
  EXPECT_DOUBLE_EQ(f["dram.read_bandwidth.width_16b"].value, 3600);
  EXPECT_GT(f["dram.read_bandwidth"].confidence, 0.9);
  EXPECT_FALSE(f.count("dram.read_bandwidth.single_pass"));  // the best is a single pass
}

TEST(SectorBandwidthExperiments, MultiPassWinnerAlsoReportsTheBestSinglePass) {
  ExperimentResult r;
  r.parameters = {{"peak_gb_s", 4000.0}};
  r.samples = {{"variants", {stream_row(16, 3600), stream_row(16, 3650, false, 4)}}};
  experiment("bandwidth.copy").analyze(r);
  std::map<std::string, Finding> f;
  for (const auto& x : r.findings) f[x.name] = x;
  EXPECT_DOUBLE_EQ(f["dram.copy_bandwidth"].value, 3650);
  EXPECT_EQ(f["dram.copy_bandwidth"].extra.at("variant").at("passes").get<int>(), 4);
  ASSERT_TRUE(f.count("dram.copy_bandwidth.single_pass"));
  EXPECT_DOUBLE_EQ(f["dram.copy_bandwidth.single_pass"].value, 3600);
}

TEST(SectorBandwidthExperiments, StrideAnalysisComparesMeasuredWithPredicted) {
  auto row = [](int s, double gbs) {
    const WarpAccess a = floats(s);
    return nlohmann::json{
        {"variant", "read"},
        {"stride_elements", s},
        {"useful_gb_s", {{"median", gbs}, {"min", gbs}, {"p5", gbs}, {"p95", gbs}, {"n", 3}}},
        {"model",
         {{"sectors_per_request", analysis::sectors_per_request(a)},
          {"request_efficiency", analysis::request_efficiency(a)},
          {"dram_efficiency_32b", analysis::stream_efficiency(a, 32)},
          {"dram_efficiency_64b", analysis::stream_efficiency(a, 64)}}}};
  };
  ExperimentResult r;
  r.parameters = {{"peak_gb_s", 4000.0}};
  r.samples = {{"rows", {row(1, 3600), row(2, 1800), row(8, 450)}}};
  experiment("bandwidth.stride").analyze(r);
  std::map<std::string, Finding> f;
  for (const auto& x : r.findings) f[x.name] = x;
  ASSERT_TRUE(f.count("dram.strided_read.s2_efficiency"));
  EXPECT_DOUBLE_EQ(f["dram.strided_read.s2_efficiency"].value, 50.0);
  EXPECT_DOUBLE_EQ(f["dram.strided_read.s2_efficiency"]
                       .extra.at("predicted_request_efficiency_percent")
                       .get<double>(),
                   50.0);
  EXPECT_EQ(f["dram.strided_read.s8_efficiency"].extra.at("sectors_per_request").get<int>(), 32);
  EXPECT_DOUBLE_EQ(f["dram.strided_read.s8_efficiency"].value, 12.5);
  EXPECT_DOUBLE_EQ(
      f["dram.strided_read.s8_efficiency"].extra.at("moved_gb_s_dram_model").get<double>(), 3600);
  EXPECT_TRUE(f.count("dram.strided_read.s1_bandwidth"));
  EXPECT_EQ(f["dram.strided_read.s8_efficiency"].extra.at("closest_model"), "dram_efficiency_32b");
}

}  // namespace
}  // namespace gpuprobe
