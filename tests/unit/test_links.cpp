// The link family without a GPU: the analysis of synthetic host and peer samples (values,
// names, confidence from core/confidence), the peer waiver, the matrix, and the waivers on the
// modelled GPU.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/confidence.hpp"
#include "core/experiment.hpp"
#include "device/model_device.hpp"
#include "finding_lookup.hpp"
#include "probes/link/link.hpp"
#include "probes/link/link_common.hpp"
#include "probes/link/link_kernels.hpp"

namespace gpuprobe {
namespace {

using nlohmann::json;

using test::find;

json point(const std::string& dir, const std::string& mem, const std::string& method,
           std::uint64_t bytes, std::vector<double> seconds) {
  return {{"direction", dir}, {"memory", mem},      {"method", method},
          {"bytes", bytes},   {"seconds", seconds}, {"verified", true}};
}

TEST(LinkHost, BandwidthLatencyAndRatioFromSamples) {
  ExperimentResult r;
  const std::uint64_t big = 64ull << 20;
  // 64 MiB in 1.25 ms = 53.687 GB/s by the copy engine; cudaMemcpy 1.5 ms; SM kernel 1.3 ms.
  r.samples = {
      {"points",
       {point("h2d", "pinned", "copy_engine", 16, {10e-6, 10e-6, 11e-6, 10e-6}),
        point("h2d", "pinned", "copy_engine", big, {1.25e-3, 1.25e-3, 1.26e-3, 1.24e-3}),
        point("h2d", "pinned", "cuda_memcpy", 16, {20e-6, 21e-6, 20e-6}),
        point("h2d", "pinned", "cuda_memcpy", big, {1.5e-3, 1.5e-3, 1.5e-3}),
        point("h2d", "pinned", "sm_kernel", big, {1.3e-3, 1.3e-3, 1.31e-3})}},
      {"host_chase", {{"ns_per_load", {800.0, 810.0, 805.0}}, {"cycles_per_load", {1580.0}}}}};
  probes::analyze_link_host(r);
  const auto* ce = find(r, "link.host.h2d.pinned.copy_engine.bandwidth");
  ASSERT_NE(ce, nullptr);
  EXPECT_NEAR(ce->value, static_cast<double>(big) / 1.25e-3 / 1e9, 1e-6);
  EXPECT_EQ(ce->unit, "GB/s");
  std::vector<double> gb;
  for (double s : {1.25e-3, 1.25e-3, 1.26e-3, 1.24e-3}) gb.push_back(big / s / 1e9);
  EXPECT_DOUBLE_EQ(ce->confidence, confidence::precision(gb, ce->value));
  const auto* lat = find(r, "link.host.h2d.pinned.copy_engine.latency");
  ASSERT_NE(lat, nullptr);
  EXPECT_NEAR(lat->value, 10.0, 1e-9);
  EXPECT_EQ(lat->unit, "us");
  // One size only: a bandwidth, no latency.
  EXPECT_EQ(find(r, "link.host.h2d.pinned.sm_kernel.latency"), nullptr);
  const auto* ratio = find(r, "link.host.h2d.best_over_cuda_memcpy");
  ASSERT_NE(ratio, nullptr);
  EXPECT_NEAR(ratio->value, 1.5 / 1.25, 1e-9);
  EXPECT_EQ(ratio->extra.at("best_method"), "h2d.pinned.copy_engine");
  const auto* chase = find(r, "link.host.pinned.sm_load_latency");
  ASSERT_NE(chase, nullptr);
  EXPECT_DOUBLE_EQ(chase->value, 805.0);
  EXPECT_EQ(find(r, "link.host.d2h.best_over_cuda_memcpy"), nullptr);
  ASSERT_EQ(r.curves.size(), 1u);
  EXPECT_EQ(r.curves[0].rows.size(), 5u);
}

TEST(LinkHost, AFailedRowIsRecordedAndItsNeighboursKept) {
  ExperimentResult r;
  json bad = point("h2d", "pageable", "cuda_memcpy", 1 << 20, {});
  bad["status"] = "error";
  bad["reason"] = "81654 wrong words";
  r.samples = {{"points",
                {point("h2d", "pageable", "cuda_memcpy", 16, {20e-6, 20e-6, 21e-6}), bad,
                 point("h2d", "pageable", "cuda_memcpy", 4 << 20, {1e-3, 1e-3, 1e-3})}}};
  probes::analyze_link_host(r);
  ASSERT_EQ(r.statistics.at("points_failing_verification").size(), 1u);
  const auto* bw = find(r, "link.host.h2d.pageable.cuda_memcpy.bandwidth");
  ASSERT_NE(bw, nullptr);
  EXPECT_EQ(bw->extra.at("bytes"), 4 << 20);
  EXPECT_EQ(r.curves[0].rows.size(), 2u);
}

TEST(LinkPeer, WaivedOnOneGpuAndWithoutPeerAccess) {
  auto one = probes::peer_waiver(1, {{false}});
  ASSERT_TRUE(one.has_value());
  EXPECT_NE(one->find("two or more GPUs"), std::string::npos) << *one;
  auto off = probes::peer_waiver(2, {{false, false}, {false, false}});
  ASSERT_TRUE(off.has_value());
  EXPECT_NE(off->find("peer access is off"), std::string::npos) << *off;
  EXPECT_FALSE(probes::peer_waiver(2, {{false, true}, {false, false}}).has_value());
}

TEST(LinkPeer, ModelledGpuWaivesBothLinkExperiments) {
  device::ModelDevice dev(device::builtin_model_config("h200"));
  for (const char* id : {"link.host", "link.peer"}) {
    const auto* e = Registry::builtin().find(id);
    ASSERT_NE(e, nullptr) << id;
    EXPECT_TRUE(e->waiver(dev.info()).has_value()) << id;
  }
  EXPECT_TRUE(Registry::builtin().find("link.peer")->whole_node());
  EXPECT_FALSE(Registry::builtin().find("link.host")->whole_node());
}

TEST(LinkPeer, MatrixFromTwoGpuSamples) {
  ExperimentResult r;
  const double bytes = 256.0 * (1 << 20);
  auto pair = [&](int a, int b, const std::string& m, double s, double mult = 1) {
    return json{{"src", a},
                {"dst", b},
                {"metric", m},
                {"bytes", bytes * mult},
                {"seconds", {s, s * 1.001, s * 0.999}}};
  };
  r.samples = {{"gpus", 2},
               {"topology", json::array({json::array({"", "NV18"}), json::array({"NV18", ""})})},
               {"pairs", json::array({pair(0, 1, "copy_engine", bytes / 396e9),
                                      pair(0, 1, "cuda_memcpy_peer", bytes / 390e9),
                                      pair(0, 1, "sm_write", bytes / 372e9),
                                      pair(0, 1, "copy_engine_bidir", 2 * bytes / 783e9, 2),
                                      pair(1, 0, "copy_engine", bytes / 395e9)})},
               {"latency", json::array({json{{"src", 0},
                                             {"dst", 1},
                                             {"ns_per_load", {900.0, 905.0, 910.0}},
                                             {"cycles_per_load", {1800.0}}}})}};
  probes::analyze_link_peer(r);
  const auto& m = r.statistics.at("matrix");
  EXPECT_NEAR(m.at("copy_engine")[0][1].get<double>(), 396.0, 1e-6);
  EXPECT_NEAR(m.at("copy_engine")[1][0].get<double>(), 395.0, 1e-6);
  EXPECT_TRUE(m.at("copy_engine")[0][0].is_null());
  // Both ways at once is one measurement per pair, shown in both cells.
  EXPECT_NEAR(m.at("copy_engine_bidir")[1][0].get<double>(), 783.0, 1e-6);
  EXPECT_NEAR(m.at("latency_ns")[0][1].get<double>(), 905.0, 1e-9);
  const auto* ratio = find(r, "link.peer.0_1.best_over_cuda_memcpy_peer");
  ASSERT_NE(ratio, nullptr);
  EXPECT_NEAR(ratio->value, 396.0 / 390.0, 1e-9);
  EXPECT_EQ(ratio->extra.at("best_metric"), "copy_engine");
  EXPECT_EQ(find(r, "link.peer.0_1.sm_write.bandwidth")->extra.at("topology"), "NV18");
  const std::string text = probes::peer_matrix_text(r.statistics, "copy_engine");
  EXPECT_NE(text.find("396.0"), std::string::npos) << text;
  EXPECT_NE(text.find("NV18"), std::string::npos) << text;
  EXPECT_TRUE(probes::peer_matrix_text(r.statistics, "nonexistent").empty());
}

TEST(LinkCommon, ChaseImageIsOneCycleThroughEveryNode) {
  const auto order = probes::link::cycle_order(64, 7);
  const std::uint64_t base = 0x10000, stride = 4096;
  const auto words = probes::link::chase_image(order, base, stride);
  std::uint64_t p = base + order[0] * stride;
  std::set<std::uint64_t> seen;
  for (int i = 0; i < 64; ++i) {
    seen.insert(p);
    p = words.at((p - base) / 8);
  }
  EXPECT_EQ(seen.size(), 64u);
  EXPECT_EQ(p, base + order[0] * stride);
}

TEST(LinkCommon, PatternNeverEqualsPoison) {
  for (std::uint64_t i = 0; i < 100000; ++i)
    ASSERT_NE(probes::link::pattern_word(i, 0x1234), 0xffffffffu);
  EXPECT_NE(probes::link::pattern_word(5, 1), probes::link::pattern_word(5, 2));
}

TEST(LinkEnvironment, MulticastStaysOff) {
  std::map<std::string, std::string> env(probes::multicast_off_environment().begin(),
                                         probes::multicast_off_environment().end());
  EXPECT_EQ(env.at("NCCL_NVLS_ENABLE"), "0");
  EXPECT_EQ(env.at("TORCH_SYMM_MEM_DISABLE_MULTICAST"), "1");
  EXPECT_EQ(env.at("NVSHMEM_DISABLE_NVLS"), "1");
}

}  // namespace
}  // namespace gpuprobe
