// bandwidth.sweep / bandwidth.hierarchy without a GPU: the plateau analysis on synthetic
// bandwidth curves (falling, unlike latency curves), the per-SM byte and cycle accounting of the
// block records, the host's word sums used for verification, and the hierarchy table.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/levels.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "finding_lookup.hpp"
#include "measure/adaptive_sweep.hpp"
#include "probes/bandwidth/bandwidth_kernels.hpp"
#include "probes/bandwidth/bandwidth_sweep.hpp"

namespace gpuprobe::probes {
namespace {

using nlohmann::json;
constexpr double kKiB = 1024, kMiB = 1024 * 1024;

const Experiment& experiment(const std::string& id) {
  const Experiment* e = Registry::builtin().find(id);
  if (!e) throw std::runtime_error("not registered: " + id);
  return *e;
}

// A smooth step from `hi` to `lo` over a factor `width` in x, centred just past `knee`.
double step_down(double x, double knee, double hi, double lo, double width = 1.25) {
  if (x <= knee) return hi;
  if (x >= knee * width) return lo;
  const double f = std::log(x / knee) / std::log(width);
  return hi + (lo - hi) * f;
}

// Deterministic +-0.3 % noise.
double jitter(double x) {
  const auto h = bw::mix32(static_cast<std::uint32_t>(std::fmod(x, 4294967296.0)));
  return 1.0 + 0.006 * (static_cast<double>(h % 1000) / 1000.0 - 0.5);
}

json point(double ws, double primary, double bpc, double gbs) {
  const json s = {{"median", primary},
                  {"mad", primary * 0.002},
                  {"n", 5},
                  {"p5", primary * 0.997},
                  {"p95", primary * 1.003}};
  return {{"working_set_bytes", ws},
          {"working_set_total_bytes", ws},
          {"measurement", s},
          {"bytes_per_clk_per_sm", {{"median", bpc}, {"mad", bpc * 0.002}}},
          {"bytes_per_clk_per_sm_slowest_sm", {{"median", bpc * 0.99}}},
          {"gb_s", {{"median", gbs}, {"mad", gbs * 0.002}}},
          {"sm_clock_mhz_measured", 1980.0},
          {"timed_passes_per_launch", 10}};
}

// An H200-like device: 132 SMs, 60 MiB L2; L1 bandwidth 127 B/clk/SM up to 208 KiB per SM, then
// the L2 (a share of ~12 TB/s), DRAM past ~48 MiB in total; the L2 regime at 12.5 TB/s up to
// 28 MiB, 9 TB/s (far partition) up to 50 MiB, 4.5 TB/s DRAM past it.
constexpr double kSms = 132, kClockGhz = 1.98, kL2 = 60 * kMiB;
double l1_regime(double w) {
  const double l2_bpc = 12500.0 / kSms / kClockGhz;
  const double dram_bpc = 4500.0 / kSms / kClockGhz;
  return step_down(w, 208 * kKiB, 127.0, step_down(w * kSms, 48 * kMiB, l2_bpc, dram_bpc)) *
         jitter(w);
}
double l2_regime(double w) {
  return step_down(w, 28 * kMiB, 12500.0, step_down(w, 50 * kMiB, 9000.0, 4500.0)) * jitter(w);
}

ExperimentResult synthetic_sweep() {
  ExperimentResult r;
  r.id = "bandwidth.sweep";
  r.parameters = {{"sm_count", kSms}, {"l2_bytes_reported", kL2}};
  json a = json::array(), b = json::array();
  analysis::SweepOptions s1;
  s1.x_min = 16 * kKiB;
  s1.x_max = std::floor(4 * kL2 / kSms / 4096) * 4096;
  s1.coarse_per_octave = 3;
  s1.resolution = 0.03;
  s1.max_points = 40;
  s1.align = 4096;
  measure::adaptive_sweep(
      [&](double x) {
        const double y = l1_regime(x);
        a.push_back(point(x, y, y, y * kSms * kClockGhz));
        return analysis::CurvePoint{x, y, y * 0.002};
      },
      s1);
  analysis::SweepOptions s2 = s1;
  s2.x_min = std::floor(16 * kKiB * kSms / 65536) * 65536;
  s2.x_max = 4 * kL2;
  s2.align = 65536;
  measure::adaptive_sweep(
      [&](double x) {
        const double y = l2_regime(x);
        b.push_back(point(x, y, y / kSms / kClockGhz, y));
        return analysis::CurvePoint{x, y, y * 0.002};
      },
      s2);
  r.samples = {{"l1_regime", {{"points", a}}}, {"l2_regime", {{"points", b}}}};
  return r;
}

using test::find;

TEST(BandwidthSweep, FindLevelsSegmentsAFallingBandwidthCurve) {
  std::vector<analysis::CurvePoint> pts;
  for (double x = 16 * kKiB; x <= 2 * kMiB; x *= std::pow(2.0, 1.0 / 3.0)) {
    const double y = step_down(x, 200 * kKiB, 127.0, 40.0);
    pts.push_back({x, y, 0.1});
  }
  const auto L = analysis::find_levels(pts);
  ASSERT_EQ(L.plateaus.size(), 2u);
  EXPECT_NEAR(L.plateaus[0].level, 127.0, 0.5);
  EXPECT_NEAR(L.plateaus[1].level, 40.0, 0.5);
  ASSERT_EQ(L.transitions.size(), 1u);
  EXPECT_LE(L.transitions[0].x_last_on, 200 * kKiB * 1.0001);
  EXPECT_GT(L.transitions[0].x_first_off, 200 * kKiB);
}

TEST(BandwidthSweep, AnalyzeFindsLevelsAndCapacities) {
  ExperimentResult r = synthetic_sweep();
  experiment("bandwidth.sweep").analyze(r);
  const Finding* l1 = find(r, "l1.read_bandwidth");
  ASSERT_NE(l1, nullptr);
  EXPECT_EQ(l1->unit, "B/clk/SM");
  EXPECT_NEAR(l1->value, 127.0, 127.0 * 0.004);
  EXPECT_NEAR(l1->extra.at("gb_s_total").get<double>(), 127.0 * kSms * kClockGhz,
              127.0 * kSms * kClockGhz * 0.004);
  const Finding* c1 = find(r, "bandwidth.l1_capacity");
  ASSERT_NE(c1, nullptr);
  EXPECT_NEAR(c1->value, 208 * kKiB, 208 * kKiB * 0.04);
  EXPECT_GT(c1->confidence, 0.3);

  const Finding* l2 = find(r, "l2.read_bandwidth");
  ASSERT_NE(l2, nullptr);
  EXPECT_EQ(l2->unit, "GB/s");
  EXPECT_NEAR(l2->value, 12500.0, 12500.0 * 0.004);
  EXPECT_NEAR(l2->extra.at("bytes_per_clk_per_sm").get<double>(), 12500.0 / kSms / kClockGhz, 0.2);
  const Finding* c2 = find(r, "bandwidth.l2_capacity");
  ASSERT_NE(c2, nullptr);
  EXPECT_NEAR(c2->value, 50 * kMiB, 50 * kMiB * 0.04);
  ASSERT_TRUE(c2->extra.contains("earlier_knees_inside_l2"));
  EXPECT_NEAR(c2->extra["earlier_knees_inside_l2"][0]["last_on_bytes"].get<double>(), 28 * kMiB,
              28 * kMiB * 0.04);
  // The sweep ends at 4 x L2, where repeated passes still hit the L2: no DRAM level is claimed.
  EXPECT_EQ(find(r, "dram.read_bandwidth_sweep"), nullptr);
}

TEST(BandwidthSweep, RatesGroupBlocksBySm) {
  using bws::BlockRecord;
  // SM 3 holds two blocks (one starts later, one ends later), SM 7 one block.
  std::vector<BlockRecord> recs(3);
  recs[0].smid = 3, recs[0].clock_start = 1000, recs[0].clock_end = 2000;
  recs[0].ns_start = 500, recs[0].ns_end = 1000;
  recs[1].smid = 3, recs[1].clock_start = 1100, recs[1].clock_end = 3000;
  recs[1].ns_start = 550, recs[1].ns_end = 1500;
  recs[2].smid = 7, recs[2].clock_start = 50, recs[2].clock_end = 1050;
  recs[2].ns_start = 510, recs[2].ns_end = 1010;
  const auto r = bwsweep::rates_of(recs, {100000, 150000, 64000});
  EXPECT_EQ(r.sms, 2);
  EXPECT_EQ(r.max_blocks_on_an_sm, 2);
  // SM 3: 250000 B over 2000 cycles = 125; SM 7: 64000 / 1000 = 64. Median of two = mean.
  EXPECT_DOUBLE_EQ(r.bytes_per_clk_per_sm, (125.0 + 64.0) / 2);
  EXPECT_DOUBLE_EQ(r.bytes_per_clk_per_sm_min, 64.0);
  // All bytes over the global span 500 .. 1500 ns.
  EXPECT_DOUBLE_EQ(r.gb_s, 314000.0 / 1000.0);
  EXPECT_DOUBLE_EQ(r.span_ns, 1000.0);
  // SM 3: 2000 cycles / 1000 ns = 2000 MHz; SM 7: 1000 / 500 = 2000 MHz.
  EXPECT_DOUBLE_EQ(r.clock_mhz, 2000.0);
  EXPECT_THROW(bwsweep::rates_of(recs, {1.0}), std::invalid_argument);
}

TEST(BandwidthSweep, ByteAccounting) {
  // 64 KiB per SM shared by 2 blocks, 10 timed passes: each block reads 32 KiB x 10.
  EXPECT_DOUBLE_EQ(bwsweep::slices_block_bytes(64 * 1024, 2, 10), 327680.0);
  EXPECT_DOUBLE_EQ(bwsweep::shared_grid_bytes(16ull << 20, 3), 3.0 * (16 << 20));
  EXPECT_DOUBLE_EQ(bwsweep::kRegisterBytesReadPerFfma, 12.0);
}

TEST(BandwidthSweep, WordSumsMatchTheDirectSum) {
  const std::uint32_t seed = 12345;
  const std::uint64_t words = 5 * bwsweep::WordSums::kChunkWords + 77;
  bwsweep::WordSums sums(words, seed);
  for (auto [first, count] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {0, words}, {3, 9000}, {4096, 4096}, {4095, 2}, {100, 0}, {words - 5, 5}}) {
    std::uint32_t want = 0;
    for (std::uint64_t i = first; i < first + count; ++i) want += bw::value_bits(i, seed);
    EXPECT_EQ(sums.sum(first, count), want) << first << " " << count;
  }
  EXPECT_THROW(sums.sum(words - 1, 2), std::out_of_range);
}

TEST(BandwidthSweep, WordSumsOverManyChunksMatchTheDirectFolds) {
  // Enough chunks for the constructor to split them among threads where the host has cores.
  const std::uint32_t seed = 99;
  const std::uint64_t words = 70 * bwsweep::WordSums::kChunkWords + 13;
  bwsweep::WordSums sums(words, seed);
  for (auto [first, count] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {0, words}, {17 * 4096 + 3, 40 * 4096 + 9}, {69 * 4096, 4096 + 13}}) {
    std::uint32_t sum = 0, x = 0;
    for (std::uint64_t i = first; i < first + count; ++i) {
      sum += bw::value_bits(i, seed);
      x ^= bw::value_bits(i, seed);
    }
    EXPECT_EQ(sums.sum(first, count), sum) << first << " " << count;
    EXPECT_EQ(sums.xor_of(first, count), x) << first << " " << count;
  }
}

json measured(double bpc, double gbs, double ws, const std::string& load) {
  json p = point(ws, bpc, bpc, gbs);
  p["load"] = load;
  return p;
}

TEST(BandwidthSweep, WordXorsMatchTheDirectXor) {
  const std::uint32_t seed = 777;
  const std::uint64_t words = 3 * bwsweep::WordSums::kChunkWords + 5;
  bwsweep::WordSums sums(words, seed);
  for (auto [first, count] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {0, words}, {1, 8191}, {4096, 4096}, {words - 3, 3}}) {
    std::uint32_t want = 0;
    for (std::uint64_t i = first; i < first + count; ++i) want ^= bw::value_bits(i, seed);
    EXPECT_EQ(sums.xor_of(first, count), want) << first << " " << count;
  }
  // XOR and sum differ on the same words (the data is not all zero).
  EXPECT_NE(sums.xor_of(0, words), sums.sum(0, words));
}

// Two 16-B vectors with carries and repeated words, folded by hand.
const std::vector<std::uint32_t> kWords = {1, 2, 0xffffffffu, 5, 0x80000000u, 0x80000000u, 7, 9};

template <bws::Fold F>
std::uint32_t device_fold(std::uint32_t one) {
  bws::FoldAcc<F> acc;
  for (std::size_t i = 0; i < kWords.size(); i += 4)
    acc.add(uint4{kWords[i], kWords[i + 1], kWords[i + 2], kWords[i + 3]}, one);
  return acc.total();
}

TEST(BandwidthHierarchy, DeviceFoldsMatchTheHostFold) {
  // Hand-computed: the wrapping sum is 0x100000007 + 0x100000000 + 16 -> 23; the XOR cancels
  // the two 0x80000000 and leaves 1 ^ 2 ^ ~0 ^ 5 ^ 7 ^ 9.
  EXPECT_EQ(bwsweep::fold_words(bws::Fold::kSum4, kWords), 23u);
  EXPECT_EQ(bwsweep::fold_words(bws::Fold::kAdd3, kWords), 23u);
  EXPECT_EQ(bwsweep::fold_words(bws::Fold::kMixed, kWords), 23u);
  EXPECT_EQ(bwsweep::fold_words(bws::Fold::kXor3, kWords), 0xfffffff7u);
  // The accumulators the kernels run (same code on the host) agree with the host fold.
  EXPECT_EQ(device_fold<bws::Fold::kSum4>(1), 23u);
  EXPECT_EQ(device_fold<bws::Fold::kAdd3>(1), 23u);
  EXPECT_EQ(device_fold<bws::Fold::kMixed>(1), 23u);
  EXPECT_EQ(device_fold<bws::Fold::kXor3>(1), 0xfffffff7u);
  // The mixed fold's multiplier matters: a multiplier other than 1 is caught.
  EXPECT_EQ(device_fold<bws::Fold::kMixed>(3), 0x3fu);
  EXPECT_TRUE(bws::fold_is_xor(bws::Fold::kXor3));
  EXPECT_FALSE(bws::fold_is_xor(bws::Fold::kMixed));
}

TEST(BandwidthHierarchy, RepeatedFolds) {
  EXPECT_EQ(bwsweep::repeat_fold(false, 0x80000001u, 5), 0x80000005u);  // wraps
  EXPECT_EQ(bwsweep::repeat_fold(true, 0x1234u, 5), 0x1234u);
  // An even number of XOR passes cancels whatever was read: no check, so it is refused.
  EXPECT_THROW(bwsweep::repeat_fold(true, 0x1234u, 4), std::invalid_argument);
}

TEST(BandwidthHierarchy, VariantTablesAreConsistent) {
  // Index 0 of each table is the sweep's kernel; names are unique; counts stay modest.
  EXPECT_LE(bws::kL1VariantCount, 13);
  EXPECT_LE(bws::kL2VariantCount, 10);
  EXPECT_EQ(bws::kL1Variants[0].fold, bws::Fold::kSum4);
  EXPECT_FALSE(bws::kL1Variants[0].linear);
  EXPECT_EQ(bws::kL2Variants[0].load, bws::Load::kCg);
  std::set<std::string> names;
  for (const auto& v : bws::kL1Variants) {
    EXPECT_TRUE(names.insert(v.name).second) << v.name;
    EXPECT_LE(v.threads * static_cast<unsigned>(v.blocks_per_sm), 2048u) << v.name;
    // At the hierarchy's 128 KiB per SM, a thread owns at least `unroll` vectors per pass, so a
    // linear variant really has `unroll` loads in flight.
    const unsigned sub_vectors = 128u * 1024 / 16 / static_cast<unsigned>(v.blocks_per_sm);
    EXPECT_EQ(sub_vectors % v.threads, 0u) << v.name;
    if (v.linear) EXPECT_GE(sub_vectors / v.threads, static_cast<unsigned>(v.unroll)) << v.name;
  }
  for (const auto& v : bws::kL2Variants) {
    EXPECT_TRUE(names.insert(v.name).second) << v.name;
    EXPECT_LE(v.threads * static_cast<unsigned>(v.blocks_per_sm), 2048u) << v.name;
    EXPECT_GE(v.rotations, v.unroll) << v.name;
  }
}

json variant_row(const std::string& name, double median, bool verified) {
  json row = point(128 * kKiB, median, median, median * kSms * kClockGhz);
  row["variant"] = name;
  row["load"] = "ld.global.ca.v4.u32";
  row["verified"] = verified;
  row["blocks_per_sm"] = 2;
  row["max_blocks_on_one_sm"] = 2;
  row["primary"] = "bytes_per_clk_per_sm";
  if (!verified) {
    row.erase("measurement");
    row["error"] = "read words folding (sum) to 0x1, expected 0x2";
  }
  return row;
}

TEST(BandwidthHierarchy, BestVariantIgnoresUnverifiedRows) {
  json rows = json::array({variant_row("a", 119.0, true), variant_row("b", 127.9, false),
                           variant_row("c", 125.0, true), variant_row("d", 121.0, true)});
  // A failed row keeping a large number must still not win.
  rows[1]["measurement"] = {{"median", 200.0}};
  using Rows = std::vector<bandwidth_rig::RigPoint>;
  EXPECT_EQ(bwsweep::best_variant(rows.get<Rows>()), 2);
  json none = json::array({variant_row("x", 1.0, false), variant_row("y", 2.0, false)});
  EXPECT_EQ(bwsweep::best_variant(none.get<Rows>()), -1);
  EXPECT_EQ(bwsweep::best_variant(Rows{}), -1);
}

TEST(BandwidthHierarchy, AnalyzeReportsTheBestVerifiedVariant) {
  ExperimentResult r;
  r.parameters = {{"sm_count", 132}};
  json l1 = json::array({variant_row("sum4.rot.u4.1024x2", 119.4, true),
                         variant_row("add3.lin.u4.1024x2", 126.9, true),
                         variant_row("xor3.lin.u4.1024x2", 127.5, false)});
  json l2 = json::array({measured(33.0, 8700, 15 << 20, "ld.global.cg.v4.u32"),
                         measured(36.0, 9500, 15 << 20, "ld.global.nc.v4.u32")});
  l2[0]["variant"] = "cg.u4.r4.1024x2";
  l2[1]["variant"] = "nc.u4.r8.1024x2";
  for (auto& row : l2) row["verified"] = true;
  json m = {{"l1_variants", l1},
            {"l2_variants", l2},
            {"dram", measured(16.0, 4200, 480 << 20, "ld.global.cg.v4.u32")},
            {"register", measured(128.0, 33450, 0, "")}};
  r.samples = {{"measured", m}, {"prior", json::object()}};
  experiment("bandwidth.hierarchy").analyze(r);
  const Finding* f1 = find(r, "hierarchy.l1.read_bandwidth");
  ASSERT_NE(f1, nullptr);
  EXPECT_DOUBLE_EQ(f1->value, 126.9);  // not the unverified 127.5
  EXPECT_EQ(f1->extra.at("variant"), "add3.lin.u4.1024x2");
  EXPECT_EQ(f1->extra.at("variants_verified"), 2);
  EXPECT_TRUE(f1->extra.at("variants_failed").contains("xor3.lin.u4.1024x2"));
  EXPECT_FALSE(f1->extra.at("variant_medians").contains("xor3.lin.u4.1024x2"));
  EXPECT_NEAR(f1->extra.at("gain_over_baseline_percent").get<double>(), (126.9 / 119.4 - 1) * 100,
              1e-9);
  const Finding* f2 = find(r, "hierarchy.l2.read_bandwidth");
  ASSERT_NE(f2, nullptr);
  EXPECT_DOUBLE_EQ(f2->value, 9500.0);
  EXPECT_EQ(f2->extra.at("variant"), "nc.u4.r8.1024x2");
  // The table names the chosen kernel; one curve per regime lists every variant.
  const Curve* table = nullptr;
  const Curve* c1 = nullptr;
  const Curve* c2 = nullptr;
  for (const auto& c : r.curves) {
    if (c.name == "table") table = &c;
    if (c.name == "l1_variants") c1 = &c;
    if (c.name == "l2_variants") c2 = &c;
  }
  ASSERT_NE(table, nullptr);
  EXPECT_NE(table->rows[2][3].get<std::string>().find("add3.lin.u4.1024x2"), std::string::npos);
  ASSERT_NE(c1, nullptr);
  ASSERT_NE(c2, nullptr);
  ASSERT_EQ(c1->rows.size(), 3u);
  EXPECT_EQ(c2->rows.size(), 2u);
  std::size_t med = 0, verified = 0, error = 0;
  for (std::size_t i = 0; i < c1->columns.size(); ++i) {
    if (c1->columns[i] == "bytes_per_clk_per_sm_median") med = i;
    if (c1->columns[i] == "verified") verified = i;
    if (c1->columns[i] == "error") error = i;
  }
  EXPECT_DOUBLE_EQ(c1->rows[1][med].get<double>(), 126.9);
  EXPECT_EQ(c1->rows[2][med], "");  // a failed variant has no number
  EXPECT_EQ(c1->rows[2][verified], false);
  EXPECT_NE(c1->rows[2][error].get<std::string>().find("expected"), std::string::npos);

  // No verified L1 variant: nothing is reported as a number.
  r.samples["measured"]["l1_variants"] = json::array({variant_row("a", 120.0, false)});
  r.findings.clear();
  r.curves.clear();
  EXPECT_THROW(experiment("bandwidth.hierarchy").analyze(r), VerificationError);
}

TEST(BandwidthSweep, ModelledGpuIsWaived) {
  device::DeviceInfo info;
  info.kind = "model";
  for (const char* id : {"bandwidth.sweep", "bandwidth.hierarchy"}) {
    const auto w = experiment(id).waiver(info);
    ASSERT_TRUE(w.has_value()) << id;
    EXPECT_EQ(*w, "needs a CUDA GPU: the modelled GPU has no bandwidth model");
  }
}

TEST(BandwidthHierarchy, TableLeavesMissingPriorsEmptyAndUsesPresentOnes) {
  ExperimentResult r;
  r.parameters = {{"sm_count", 132}};
  json m = {{"l1", measured(126.8, 33000, 32768, "ld.global.ca.v4.u32")},
            {"l2", measured(47.0, 12300, 16 << 20, "ld.global.cg.v4.u32")},
            {"dram", measured(16.0, 4200, 480 << 20, "ld.global.cg.v4.u32")},
            {"register", measured(128.0, 33450, 0, "")}};
  r.samples = {{"measured", m}, {"prior", json::object()}};
  experiment("bandwidth.hierarchy").analyze(r);
  ASSERT_EQ(r.curves.size(), 1u);
  const auto& rows = r.curves[0].rows;
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0][0], "register");
  EXPECT_DOUBLE_EQ(rows[0][1].get<double>(), 128.0 * 12);
  EXPECT_EQ(rows[1][0], "shared");
  EXPECT_EQ(rows[1][1], "");  // smem.bandwidth absent: empty cell with a note
  EXPECT_NE(rows[1][3].get<std::string>().find("absent"), std::string::npos);
  EXPECT_EQ(rows[2][4], "");  // l1.hit_latency absent

  // As to_json(Finding) writes them: extra fields beside the value.
  json prior = {{"smem.bandwidth", {{"value", 127.5}, {"total_tb_per_s", 33.2}}},
                {"l1.hit_latency", {{"value", 32.0}, {"value_ns", 16.2}}},
                {"shared.latency", {{"value", 29.0}, {"extra", {{"value_ns", 14.6}}}}}};
  r.samples["prior"] = prior;
  r.curves.clear();
  r.findings.clear();
  experiment("bandwidth.hierarchy").analyze(r);
  const auto& rows2 = r.curves[0].rows;
  EXPECT_DOUBLE_EQ(rows2[1][1].get<double>(), 127.5);
  EXPECT_DOUBLE_EQ(rows2[1][2].get<double>(), 33200.0);
  EXPECT_DOUBLE_EQ(rows2[1][4].get<double>(), 29.0);
  EXPECT_DOUBLE_EQ(rows2[2][4].get<double>(), 32.0);
  EXPECT_DOUBLE_EQ(rows2[2][5].get<double>(), 16.2);
  bool has_register = false;
  for (const auto& f : r.findings) has_register |= f.name == "register.read_bandwidth";
  EXPECT_TRUE(has_register);
}

}  // namespace
}  // namespace gpuprobe::probes
