// The cache-structure experiments (probes/cache/cache_structure.cpp) on modelled GPUs: the L1
// is measured at its largest carve-out, conflict sets need independent pools that agree, the
// L2 pool concentrates candidates on one in-page offset, and the TLB walk's wide-stride curve.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/app.hpp"
#include "device/model_device.hpp"
#include "measure/cache_search.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
constexpr std::uint64_t kKiB = 1024, kMiB = 1024 * kKiB;

json run_model(const std::string& model, const std::string& id, const std::string& tag) {
  const auto dir =
      fs::temp_directory_path() / ("gpuprobe_test_cs_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  std::vector<std::string> args = {"gpuprobe", "--device", model, "--out", dir.string(), "run", id};
  std::vector<const char*> argv;
  for (auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = cli::run(static_cast<int>(argv.size()), argv.data(), out, err);
  EXPECT_EQ(code, 0) << err.str();
  std::ifstream in(dir / "result.json");
  const auto r = json::parse(in);
  fs::remove_all(dir);
  for (const auto& e : r.at("experiments"))
    if (e.at("id") == id) return e;
  ADD_FAILURE() << id << " not in the result";
  return json::object();
}

const json* finding(const json& e, const std::string& name) {
  for (const auto& f : e.at("findings"))
    if (f.at("name") == name) return &f;
  return nullptr;
}

TEST(CacheStructure, ProbeGivesItsCarveoutToSequencesThatStateNone) {
  std::vector<int> seen;
  measure::cache::Probe p;
  p.run = [&](const AccessSequence& s) {
    seen.push_back(s.carveout_percent);
    SequenceTiming t;
    t.verified = true;
    t.cycles.assign(s.sequence.size() - s.timed_from, 1.0);
    return t;
  };
  p.carveout_percent = 0;
  AccessSequence s;
  s.sequence = {0, 8};
  p.call(s);
  s.carveout_percent = 50;
  p.call(s);
  p.carveout_percent = -1;
  s.carveout_percent = -1;
  p.call(s);
  EXPECT_EQ(seen, (std::vector<int>{0, 50, -1}));
}

// model:tiny has 64 KiB of unified L1/shared storage and a 48 KiB default carve-out: at the
// default the L1 has 16 KiB (32 sets of 4 x 128 B); the L1 experiments must measure the 64 KiB
// L1 (128 sets) of carve-out 0, from three pools that agree, with sequences the sequencer stages
// whole.
TEST(CacheStructure, L1IsMeasuredAtTheLargestL1WithAgreeingPools) {
  const auto e = run_model("model:tiny", "cache.l1.ways", "l1");
  ASSERT_EQ(e.at("status"), "passed") << e.dump();
  const auto& s = e.at("samples");
  EXPECT_EQ(s.at("carveout_percent"), 0);
  EXPECT_TRUE(s.at("pools_agree").get<bool>());
  ASSERT_EQ(s.at("pools").size(), 3u);
  EXPECT_LE(s.at("max_sequence").get<std::size_t>(), kSequenceStagedAccesses);
  EXPECT_NE(s.at("pools")[0].at("seed"), s.at("pools")[1].at("seed"));
  EXPECT_NE(s.at("pools")[0].at("lines"), s.at("pools")[1].at("lines"));
  const auto* ways = finding(e, "cache.l1.ways");
  ASSERT_NE(ways, nullptr);
  EXPECT_EQ(ways->at("value").get<double>(), 4.0);
  const auto* sets = finding(e, "cache.l1.sets");
  ASSERT_NE(sets, nullptr);
  EXPECT_EQ(sets->at("value").get<double>(), 64.0 * kKiB / (128 * 4));
}

// model:h200 (141 GiB): the L2 pool is 2048 lines at one in-page offset of 2 MiB pages, and the
// ways found are the model's 16.
TEST(CacheStructure, L2PoolConcentratesOnOneInPageOffset) {
  const auto e = run_model("model:h200", "cache.l2.ways", "l2");
  ASSERT_EQ(e.at("status"), "passed") << e.dump();
  const auto& s = e.at("samples");
  EXPECT_EQ(s.at("candidate_alignment_bytes"), 2 * kMiB);
  EXPECT_EQ(s.at("pool_bytes"), 2048 * 2 * kMiB);
  EXPECT_TRUE(s.at("pools_agree").get<bool>()) << s.dump();
  for (const auto& l : s.at("conflict_set").at("lines"))
    EXPECT_EQ(l.get<std::uint64_t>() % (2 * kMiB), 0u);
  const auto* ways = finding(e, "cache.l2.ways");
  ASSERT_NE(ways, nullptr);
  EXPECT_EQ(ways->at("value").get<double>(), 16.0);
}

// The bytes one TLB entry translates, from the midpoint of the step at growing strides: with
// entries of 2 MiB the midpoint stays at 8 cells from 2 MiB on; with entries of 16 MiB (as the
// H200's walks suggest: the step sits at the same span, not the same cell count, from 2 to
// 16 MiB strides) it falls with every doubling up to 16 MiB, where the 8 entries are counted.
// A modelled walk over `cells` cells of 2 MiB with the given TLB levels, up to `max_cells`;
// `bounded`: the probe holds what the model's sequencer holds less a sixteenth (as
// open_session does), else sequences of any length.
analysis::cache::TlbResult tlb_walk(const decltype(device::ModelConfig::tlb)& levels,
                                    std::uint64_t cells, std::uint64_t max_cells,
                                    bool bounded = false) {
  device::ModelConfig c = device::builtin_model_config("tiny");
  c.global_mem_bytes = cells * 2 * kMiB + 4ull * 1024 * kMiB;
  c.tlb = levels;
  // An L2 that holds every walk's lines (one per cell), so that only the TLB steps.
  c.l2_partitioned = false;
  c.l2_partitions = 1;
  c.l2 = {16 * 1024 * kKiB, 128, 16, 300};
  device::ModelDevice dev(c);
  auto buf = dev.alloc_probe_buffer(cells * 2 * kMiB);
  measure::cache::Probe p;
  p.buffer_bytes = buf->bytes();
  if (bounded) p.max_sequence = dev.max_sequence_length() - dev.max_sequence_length() / 16;
  // Every sequence within what the probe says the sequencer holds.
  p.run = [&](const AccessSequence& s) {
    if (p.max_sequence) EXPECT_LE(s.sequence.size() + s.place.size(), p.max_sequence);
    return dev.run_sequence(*buf, s);
  };
  return measure::cache::infer_tlb(p, 2 * kMiB, max_cells);
}
analysis::cache::TlbResult tlb_of(std::uint64_t entries, std::uint64_t page) {
  return tlb_walk({{entries, page, 0, 40}}, 1024, 512);
}

TEST(CacheStructure, TlbCoverageOfPageSizedEntries) {
  const auto t = tlb_of(8, 2 * kMiB);
  ASSERT_EQ(t.levels.size(), 1u);
  EXPECT_EQ(t.levels[0].entries, 8u);
  EXPECT_EQ(t.page_bytes, 2 * kMiB) << t.page_curve.dump();
}

TEST(CacheStructure, TlbCoverageOfEntriesLargerThanThePage) {
  const auto t = tlb_of(8, 16 * kMiB);
  ASSERT_EQ(t.levels.size(), 1u);
  EXPECT_EQ(t.levels[0].entries, 8u);  // counted at 16 MiB strides
  EXPECT_EQ(t.page_bytes, 16 * kMiB) << t.page_curve.dump();
}

TEST(CacheStructure, TlbCoverageOfEntriesSmallerThanTheStride) {
  const auto t = tlb_of(8, 512 * kKiB);
  ASSERT_EQ(t.levels.size(), 1u);
  EXPECT_EQ(t.levels[0].entries, 8u);
  EXPECT_EQ(t.page_bytes, 512 * kKiB) << t.page_curve.dump();
}

// A second level whose reach lies past a fifth of the sequencer's accesses (the old bound on a
// walk's cells, walks of four rounds): the walks of two timed rounds reach it. The model's
// sequencer holds 32768 accesses; the probe keeps a sixteenth back, as open_session does.
TEST(CacheStructure, TlbSecondLevelPastAFifthOfTheSequencer) {
  const std::size_t held =
      device::ModelDevice(device::builtin_model_config("tiny")).max_sequence_length() * 15 / 16;
  ASSERT_GT(7000u, held / 5);  // out of reach of walks of four rounds
  const auto t = tlb_walk({{16, 2 * kMiB, 0, 12}, {7000, 2 * kMiB, 0, 100}}, 16384, 16384, true);
  ASSERT_EQ(t.levels.size(), 2u) << t.curve.dump();
  EXPECT_EQ(t.levels[0].entries, 16u);
  EXPECT_NEAR(static_cast<double>(t.levels[1].entries), 7000.0, 7000.0 * 0.02);
  EXPECT_NEAR(t.levels[1].miss_penalty_cycles, 100.0, 10.0);
}

}  // namespace
}  // namespace gpuprobe
