// bandwidth.read / write / copy and bandwidth.hierarchy over the shared search, without a GPU:
// which row each finding reports, findings from confirmation passes only, failed rows and failed
// confirmations, and the hierarchy's L1 working set from the measured L1 capacity.
#include <gtest/gtest.h>

#include "core/experiment.hpp"
#include "finding_lookup.hpp"
#include "probes/bandwidth/bandwidth_kernels.hpp"
#include "probes/bandwidth/bandwidth_sweep.hpp"
#include "probes/bandwidth/stream_select.hpp"

namespace gpuprobe::probes {
namespace {

using nlohmann::json;

const Experiment& experiment(const std::string& id) {
  const Experiment* e = Registry::builtin().find(id);
  if (!e) throw std::runtime_error("not registered: " + id);
  return *e;
}
using test::find;

json stats(double median, double spread = 0.002) {
  std::vector<double> v;
  for (int k = -3; k <= 3; ++k) v.push_back(median * (1.0 + spread * k / 3.0));
  return {{"median", median},
          {"min", v.front()},
          {"p5", v.front()},
          {"p95", v.back()},
          {"n", v.size()},
          {"values", v},
          {"launches_per_sample", 10},
          {"percent_of_peak_median", median / 48.0}};
}

json row(int width, double median, int passes = 1, const std::string& status = "passed") {
  json r = {{"stage", "s"},
            {"status", status},
            {"width_bytes", width},
            {"load", "ld.global"},
            {"store", "st.global"},
            {"unroll", 4},
            {"scheme", "grid"},
            {"passes", passes},
            {"blocks_per_sm", 4},
            {"threads_per_block", 256},
            {"grid", "persistent"},
            {"dst_shift_bytes", 0},
            {"blocks", 528},
            {"bytes_in_flight_per_sm", 4 * 256 * 4 * width},
            {"counted_bytes_per_launch", 1e9}};
  if (status == "passed")
    r["gb_s"] = stats(median);
  else
    r["reason"] = "12 of 100 elements differ";
  return r;
}

json variants() {
  return json::array({row(16, 4200), row(16, 4300, 4), row(8, 4100), row(4, 3900),
                      row(4, 9999, 1, "error"), row(16, 4250)});
}

/// The rows as the analysis reads them (bwhost::StreamRow).
std::vector<bwhost::StreamRow> typed(const json& rows) {
  return rows.get<std::vector<bwhost::StreamRow>>();
}

TEST(BandwidthStream, WinnersComeFromPassedRowsOnly) {
  const auto w = bwhost::stream_winners(typed(variants()), "dram.copy_bandwidth");
  ASSERT_EQ(w.size(), 5u);
  EXPECT_EQ(w.at("dram.copy_bandwidth"), 1u);              // 4-pass kernel
  EXPECT_EQ(w.at("dram.copy_bandwidth.single_pass"), 5u);  // best single-pass one
  EXPECT_EQ(w.at("dram.copy_bandwidth.width_16b"), 1u);
  EXPECT_EQ(w.at("dram.copy_bandwidth.width_8b"), 2u);
  EXPECT_EQ(w.at("dram.copy_bandwidth.width_4b"), 3u);  // not the failed 9999
  EXPECT_TRUE(bwhost::stream_winners(typed(json::array({row(4, 1, 1, "error")})), "x").empty());
}

json confirmation(const std::string& finding, std::size_t winner, double search, double value) {
  json c = {{"finding", finding},       {"winner_row", winner}, {"search_value", search},
            {"status", "passed"},       {"value", value},       {"gb_s", stats(value)},
            {"verified_with_passes", 4}};
  c["samples"] = c["gb_s"]["values"];
  return c;
}

ExperimentResult copy_result(json confirmations) {
  ExperimentResult r;
  r.id = "bandwidth.copy";
  r.parameters = {{"peak_gb_s", 4814.3}};
  r.samples = {{"variants", variants()},
               {"references", json::array()},
               {"confirmations", std::move(confirmations)}};
  return r;
}

TEST(BandwidthStream, FindingsReportTheConfirmationNotTheSearch) {
  auto r = copy_result(json::array({confirmation("dram.copy_bandwidth", 1, 4300, 4210),
                                    confirmation("dram.copy_bandwidth.width_4b", 3, 3900, 3800)}));
  experiment("bandwidth.copy").analyze(r);
  EXPECT_EQ(r.status, Status::kPassed);
  const Finding* f = find(r, "dram.copy_bandwidth");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->value, 4210.0);
  EXPECT_DOUBLE_EQ(f->extra.at("search_median_gb_s").get<double>(), 4300.0);
  EXPECT_GT(f->confidence, 0.9);  // seven samples within +-0.2 %
  EXPECT_NE(f->method.find("confirmation pass"), std::string::npos);
  const Finding* w4 = find(r, "dram.copy_bandwidth.width_4b");
  ASSERT_NE(w4, nullptr);
  EXPECT_DOUBLE_EQ(w4->value, 3800.0);
  // Only confirmed findings are emitted.
  EXPECT_EQ(find(r, "dram.copy_bandwidth.width_8b"), nullptr);
}

TEST(BandwidthStream, ConfidenceFallsWithTheConfirmationsSpread) {
  auto tight = copy_result(json::array({confirmation("dram.copy_bandwidth", 1, 4300, 4210)}));
  auto loose = tight;
  loose.samples["confirmations"][0]["samples"] = stats(4210, 0.3).at("values");
  experiment("bandwidth.copy").analyze(tight);
  experiment("bandwidth.copy").analyze(loose);
  EXPECT_LT(find(loose, "dram.copy_bandwidth")->confidence,
            find(tight, "dram.copy_bandwidth")->confidence - 0.3);
}

TEST(BandwidthStream, AConfirmationWithTooFewSamplesIsNoEvidence) {
  auto c = confirmation("dram.copy_bandwidth", 1, 4300, 4210);
  c["samples"] = json::array({4210.0});
  auto r = copy_result(json::array({c}));
  experiment("bandwidth.copy").analyze(r);
  EXPECT_EQ(find(r, "dram.copy_bandwidth"), nullptr);
  ASSERT_TRUE(r.statistics.contains("findings_not_emitted"));
  EXPECT_NE(r.statistics["findings_not_emitted"][0].get<std::string>().find("1 samples"),
            std::string::npos);
}

TEST(BandwidthStream, AFailedConfirmationIsAnErrorAndNoFinding) {
  json bad = {{"finding", "dram.copy_bandwidth.width_4b"},
              {"winner_row", 3},
              {"search_value", 3900},
              {"status", "error"},
              {"reason", "bandwidth.copy 4B/...: 3 of 100 elements differ"}};
  auto r = copy_result(json::array({confirmation("dram.copy_bandwidth", 1, 4300, 4210), bad}));
  experiment("bandwidth.copy").analyze(r);
  EXPECT_EQ(r.status, Status::kError);
  EXPECT_NE(r.reason.find("3 of 100 elements differ"), std::string::npos);
  EXPECT_EQ(find(r, "dram.copy_bandwidth.width_4b"), nullptr);
  EXPECT_NE(find(r, "dram.copy_bandwidth"), nullptr);
}

TEST(BandwidthStream, OlderRecordsReportTheSearchBestAndSaySo) {
  ExperimentResult r;
  r.parameters = {{"peak_gb_s", 4814.3}};
  json rows = variants();
  for (auto& x : rows) {
    x.erase("status");
    x["reference"] = false;
    x["verified"] = true;
  }
  rows.erase(4);  // older records held no failed rows
  r.samples = {{"variants", rows}};
  experiment("bandwidth.copy").analyze(r);
  const Finding* f = find(r, "dram.copy_bandwidth");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->value, 4300.0);
  EXPECT_NE(f->method.find("without a confirmation pass"), std::string::npos);
  ASSERT_NE(find(r, "dram.copy_bandwidth.width_4b"), nullptr);
}

TEST(BandwidthStream, VariantsTableListsFailedRowsWithTheirReason) {
  const Curve c = bwhost::stream_variants_curve(typed(variants()), 4814.3);
  ASSERT_EQ(c.rows.size(), 6u);
  const auto status_col =
      std::find(c.columns.begin(), c.columns.end(), "status") - c.columns.begin();
  EXPECT_EQ(c.rows[4][status_col], "error");
  EXPECT_EQ(c.rows[4][status_col + 1], "12 of 100 elements differ");
}

// The read kernel rotates each thread's XOR accumulator before every pass; the host folds the
// XOR of one pass the same way. Rotation is linear over XOR, so folding per thread and XOR-ing
// the threads gives the host's number, and an even pass count no longer cancels to 0.
TEST(BandwidthStream, ReadFoldKeepsEveryPass) {
  EXPECT_EQ(bw::stream_read_fold(0x80000001u, 1), 0x80000001u);
  EXPECT_EQ(bw::stream_read_fold(0x80000001u, 2), 0x80000002u);  // rotl(x, 1) ^ x
  for (std::uint32_t passes : {2u, 4u}) EXPECT_NE(bw::stream_read_fold(0x1234u, passes), 0u);
  std::uint32_t threads_xor = 0, one_pass = 0;
  for (std::uint32_t t = 0; t < 1000; ++t) {
    const std::uint32_t x = bw::mix32(t + 17);  // what thread t reads in one pass
    std::uint32_t acc = 0;
    for (int p = 0; p < 4; ++p) acc = ((acc << 1) | (acc >> 31)) ^ x;  // the kernel's loop
    threads_xor ^= acc;
    one_pass ^= x;
  }
  EXPECT_EQ(threads_xor, bw::stream_read_fold(one_pass, 4));
}

Finding capacity(double bytes, double confidence) {
  return {"l1.capacity", bytes, "bytes", confidence, "test", json::object()};
}

TEST(BandwidthHierarchy, L1WorkingSetComesFromTheMeasuredCapacity) {
  device::DeviceInfo d;
  d.l1_shared_unified_bytes = 256 * 1024;
  FindingBoard none;
  auto w = bwsweep::l1_working_set(d, none);
  EXPECT_EQ(w.bytes, 128u * 1024);  // half the unified L1
  EXPECT_NE(w.source.find("unified"), std::string::npos);
  FindingBoard h200;
  h200.add(capacity(221440, 0.82));
  w = bwsweep::l1_working_set(d, h200);
  // Whole unrolled steps of every L1 variant (128 KiB per SM), within 3/4 of the capacity: half
  // of it (108 KiB) was under one step, and the variants ran only their one-load tail loops
  // (119.8 B/clk/SM on the H200 against 127.66 at 128 KiB).
  EXPECT_EQ(bwsweep::l1_variant_step_bytes(), 128u * 1024);
  EXPECT_EQ(w.bytes, 128u * 1024);
  EXPECT_NE(w.source.find("l1.capacity"), std::string::npos);
  for (const auto& v : bws::kL1Variants)
    EXPECT_EQ(w.bytes % (static_cast<std::uint64_t>(v.unroll) * v.threads * v.blocks_per_sm * 16),
              0u)
        << v.name;
  // A GPU with a smaller L1 than the old fixed 128 KiB: the point stays inside it.
  FindingBoard small;
  small.add(capacity(96 * 1024, 0.9));
  EXPECT_EQ(bwsweep::l1_working_set(d, small).bytes, 48u * 1024);
  // An unconfident capacity is not used.
  FindingBoard weak;
  weak.add(capacity(96 * 1024, 0.3));
  EXPECT_EQ(bwsweep::l1_working_set(d, weak).bytes, 128u * 1024);
  device::DeviceInfo unknown;
  EXPECT_EQ(bwsweep::l1_fallback(unknown).bytes, 16u * 1024);
  // A CUDA GPU reports its shared-memory carveout, not its unified array (the quick profile
  // runs without latency.sweep): whole steps within 3/4 of the H200's 228 KiB carveout, not the
  // 16 KiB under one step that measured 97 B/clk/SM instead of 127.7.
  device::DeviceInfo h200_cuda;
  h200_cuda.shared_per_sm_bytes = 228 * 1024;
  w = bwsweep::l1_working_set(h200_cuda, none);
  EXPECT_EQ(w.bytes, 128u * 1024);
  EXPECT_NE(w.source.find("carveout"), std::string::npos);
  // An A100's 164 KiB: no whole step within 3/4 of it, so half of it, aligned down to 4 KiB.
  device::DeviceInfo a100_cuda;
  a100_cuda.shared_per_sm_bytes = 164 * 1024;
  EXPECT_EQ(bwsweep::l1_fallback(a100_cuda).bytes, 80u * 1024);
}

json point(double bpc, double gbs, double ws, const std::string& load) {
  json m = stats(bpc);
  m["mad"] = bpc * 0.001;
  return {{"working_set_bytes", ws},
          {"measurement", m},
          {"bytes_per_clk_per_sm", {{"median", bpc}, {"mad", bpc * 0.001}}},
          {"gb_s", {{"median", gbs}, {"mad", gbs * 0.001}}},
          {"load", load},
          {"verified", true}};
}

ExperimentResult hierarchy_result(const std::string& l2_status) {
  json l1 = point(126.0, 33000, 108 * 1024, "ld.global.ca.v4.u32");
  l1["variant"] = "a";
  json l1b = {{"variant", "b"}, {"status", "error"}, {"verified", false}, {"error", "sum differs"}};
  json l2 = point(35.0, 9100, 15 << 20, "ld.global.cg.v4.u32");
  l2["variant"] = "c";
  json c1 = point(125.5, 32900, 108 * 1024, "ld.global.ca.v4.u32");
  c1.update({{"variant", "a"}, {"winner_row", 0}, {"search_value", 126.0}, {"status", "passed"}});
  json c2 = {{"variant", "c"}, {"winner_row", 0}, {"search_value", 35.0}};
  if (l2_status == "passed") {
    c2.update(point(34.8, 9050, 15 << 20, "ld.global.cg.v4.u32"));
    c2["status"] = "passed";
  } else {
    c2["status"] = "error";
    c2["reason"] = "the grid read words summing to 0x1, expected 0x2";
  }
  json m = {{"l1_variants", json::array({l1, l1b})},
            {"l2_variants", json::array({l2})},
            {"l1_confirmation", c1},
            {"l2_confirmation", c2},
            {"dram", point(16.0, 4700, 960 << 20, "ld.global.cg.v4.u32")},
            {"register", point(128.0, 33450, 0, "")}};
  ExperimentResult r;
  r.parameters = {{"sm_count", 132}};
  r.samples = {{"measured", m}, {"prior", json::object()}};
  return r;
}

TEST(BandwidthHierarchy, ReportsTheConfirmationAndListsFailedVariants) {
  auto r = hierarchy_result("passed");
  experiment("bandwidth.hierarchy").analyze(r);
  EXPECT_EQ(r.status, Status::kPassed);
  const Finding* f = find(r, "hierarchy.l1.read_bandwidth");
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->value, 125.5);
  EXPECT_DOUBLE_EQ(f->extra.at("search_median").get<double>(), 126.0);
  EXPECT_EQ(f->extra.at("variants_failed").at("b"), "sum differs");
  EXPECT_GT(f->confidence, 0.9);
  EXPECT_DOUBLE_EQ(find(r, "hierarchy.l2.read_bandwidth")->value, 9050.0);
}

TEST(BandwidthHierarchy, AFailedConfirmationMakesTheExperimentAnError) {
  auto r = hierarchy_result("error");
  experiment("bandwidth.hierarchy").analyze(r);
  EXPECT_EQ(r.status, Status::kError);
  EXPECT_NE(r.reason.find("expected 0x2"), std::string::npos);
  EXPECT_EQ(find(r, "hierarchy.l2.read_bandwidth"), nullptr);
  EXPECT_NE(find(r, "hierarchy.l1.read_bandwidth"), nullptr);
}

}  // namespace
}  // namespace gpuprobe::probes
