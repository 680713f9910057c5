// The fleet report and the multi-GPU command line without a GPU: outliers by robust statistics
// in units of each GPU's own spread, mismatched results refused, failed GPUs recorded, --gpus
// and per-rank devices checked, and `fleet merge` over modelled-GPU runs flagging the slow one.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/app.hpp"
#include "cli/fleet.hpp"
#include "cli_runner.hpp"
#include "core/error.hpp"
#include "report/fleet.hpp"

namespace gpuprobe {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

/// A result with one experiment of findings name -> (value, spread).
json result(const std::vector<std::tuple<std::string, double, double>>& findings,
            const std::string& experiment = "latency.chase", int schema = 1) {
  json f = json::array();
  for (const auto& [name, value, spread] : findings)
    f.push_back({{"name", name},
                 {"value", value},
                 {"unit", "cycles"},
                 {"confidence", 0.9},
                 {"spread", spread}});
  return {{"schema_version", schema},
          {"device", {{"name", "model:h200"}}},
          {"experiments", {{{"id", experiment}, {"status", "passed"}, {"findings", f}}}}};
}

std::vector<report::FleetMember> fleet(const std::vector<double>& dram, double spread = 2.0) {
  std::vector<report::FleetMember> m;
  for (std::size_t i = 0; i < dram.size(); ++i)
    m.push_back({"gpu" + std::to_string(i), result({{"dram", dram[i], spread}, {"l2", 260, 1}})});
  return m;
}

TEST(Fleet, FlagsTheSlowGpuOnly) {
  const json r = report::fleet_report(fleet({650, 652, 649, 651, 690}), false);
  ASSERT_EQ(r["outliers"].size(), 1u) << r.dump(2);
  EXPECT_EQ(r["outliers"][0]["label"], "gpu4");
  EXPECT_EQ(r["outliers"][0]["finding"], "dram");
  EXPECT_DOUBLE_EQ(r["findings"][0]["fleet_median"].get<double>(), 651.0);
  // (690 - 651) / its own spread 2.
  EXPECT_DOUBLE_EQ(r["outliers"][0]["deviation_in_own_spreads"].get<double>(), 19.5);
  EXPECT_TRUE(r["members"][4]["outlier"].get<bool>());
  EXPECT_FALSE(r["members"][0]["outlier"].get<bool>());
}

TEST(Fleet, IdenticalGpusFlagNone) {
  const json r = report::fleet_report(fleet({650, 650, 650}), false);
  EXPECT_TRUE(r["outliers"].empty());
}

TEST(Fleet, NoisyGpuWithinItsOwnSpreadIsNotFlagged) {
  // Far out by the fleet's MAD, but within 3 of its own (large) spreads: not an outlier.
  const json r = report::fleet_report(fleet({650, 651, 649, 650, 680}, 20.0), false);
  EXPECT_TRUE(r["outliers"].empty()) << r["outliers"].dump();
  // Same distance with a small own spread: flagged.
  EXPECT_EQ(report::fleet_report(fleet({650, 651, 649, 650, 680}, 2.0), false)["outliers"].size(),
            1u);
}

TEST(Fleet, TwoGpusCannotNameAnOutlier) {
  // With two, the modified z-score of either is 0.6745: below 3.5 whatever the gap.
  EXPECT_TRUE(report::fleet_report(fleet({650, 700}), false)["outliers"].empty());
}

TEST(Fleet, MismatchedExperimentSetsRefusedOrExcluded) {
  auto m = fleet({650, 651, 652});
  m.push_back({"other", result({{"dram", 650, 1}}, "latency.sweep")});
  EXPECT_THROW(report::fleet_report(m, false), UsageError);
  const json r = report::fleet_report(m, true);
  EXPECT_EQ(r["members"][3]["status"], "excluded");
  EXPECT_EQ(r["summary"]["compared"], 3);
  // Schema 1 and 2 differ only by the typed form: they compare alike.
  m.back() = {"v2", result({{"dram", 650, 1}}, "latency.chase", 2)};
  EXPECT_NO_THROW(report::fleet_report(m, false));
}

TEST(Fleet, FailedGpuIsRecordedAndTheRestCompared) {
  auto m = fleet({650, 651, 700, 652});
  m.push_back({"rank4", json(), "cudaSetDevice failed: no device"});
  const json r = report::fleet_report(m, true);
  EXPECT_EQ(r["members"][4]["status"], "error");
  EXPECT_EQ(r["summary"]["compared"], 4);
  ASSERT_EQ(r["outliers"].size(), 1u);
  EXPECT_EQ(r["outliers"][0]["label"], "gpu2");
}

TEST(Fleet, SpreadSources) {
  auto s = report::finding_spread({{"value", 100.0}, {"spread", 3.0}});
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->value, 3.0);
  s = report::finding_spread({{"value", 100.0}, {"p5_gb_s", 90.0}, {"p95_gb_s", 122.9}});
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->value, 10.0, 1e-9);
  // Confidence 0.9 at 2 %: se = 0.02 * 100 / (sqrt(2) * erfinv(0.9)) = 1.2159.
  s = report::finding_spread({{"value", 100.0}, {"confidence", 0.9}});
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->value, 2.0 / 1.6449, 1e-3);
  EXPECT_FALSE(report::finding_spread({{"value", 1.0}}));
}

TEST(FleetCli, GpuListChecksTheNode) {
  EXPECT_EQ(cli::parse_gpu_list("all", 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(cli::parse_gpu_list("1,0", 2), (std::vector<int>{1, 0}));
  try {
    cli::parse_gpu_list("7", 2);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("this node has 2 GPUs"), std::string::npos) << e.what();
  }
  EXPECT_THROW(cli::parse_gpu_list("0,0", 2), UsageError);
  EXPECT_THROW(cli::parse_gpu_list("x", 2), UsageError);
  EXPECT_THROW(cli::parse_gpu_list("all", 0), UsageError);
}

TEST(FleetCli, RankDevices) {
  EXPECT_EQ(cli::rank_device("0", false, 3, 4, 1), "cuda:1");
  EXPECT_EQ(cli::rank_device("model:h200", true, 2, 3, 2), "model:h200");
  EXPECT_EQ(cli::rank_device("model:a,model:b,model:c", true, 1, 3, 1), "model:b");
  EXPECT_THROW(cli::rank_device("model:a,model:b", true, 0, 3, 0), UsageError);
}

using test_cli::gp;
using test_cli::Outcome;
using test_cli::temp_dir;

TEST(FleetCli, MergeOfModelRunsFlagsTheSlowModel) {
  const auto dir = temp_dir("merge");
  const std::string data = std::string(GPUPROBE_TEST_DATA_DIR) + "/fleet/";
  for (const std::string m : {"h200_seed201", "h200_seed202", "h200_slow_dram"}) {
    const auto o = gp({"--device", "model:" + data + m + ".json", "--out", (dir / m).string(),
                       "run", "latency.chase"});
    ASSERT_EQ(o.code, 0) << o.err;
  }
  const auto o = gp({"fleet", "merge", (dir / "h200_seed201/result.json").string(),
                     (dir / "h200_seed202/result.json").string(),
                     (dir / "h200_slow_dram/result.json").string(), "--out", (dir / "f").string()});
  ASSERT_EQ(o.code, 0) << o.err;
  std::ifstream in(dir / "f" / "fleet.json");
  const json r = json::parse(in);
  ASSERT_FALSE(r["outliers"].empty());
  for (const auto& x : r["outliers"]) {
    EXPECT_NE(x["label"].get<std::string>().find("h200_slow_dram"), std::string::npos) << x;
    EXPECT_EQ(x["finding"].get<std::string>().rfind("dram.latency", 0), 0u) << x;
  }
  // Merging a result with itself twice is refused; a different experiment set too.
  const auto twice =
      gp({"fleet", "merge", (dir / "h200_seed201/result.json").string(),
          (dir / "h200_seed201/result.json").string(), "--out", (dir / "g").string()});
  EXPECT_EQ(twice.code, 2);
  ASSERT_EQ(
      gp({"--device", "model:tiny", "--out", (dir / "tiny").string(), "run", "latency.shared"})
          .code,
      0);
  const auto mixed = gp({"fleet", "merge", (dir / "h200_seed201/result.json").string(),
                         (dir / "tiny/result.json").string(), "--out", (dir / "h").string()});
  EXPECT_EQ(mixed.code, 2);
  EXPECT_EQ(std::count(mixed.err.begin(), mixed.err.end(), '\n'), 1) << mixed.err;
  EXPECT_FALSE(fs::exists(dir / "h"));
  fs::remove_all(dir);
}

TEST(FleetCli, GpusOnANodeWithoutThatGpu) {
  // No CUDA GPU here (CI): one line, exit 2, nothing written.
  const auto dir = temp_dir("gpus");
  const auto o = gp({"--out", dir.string(), "characterize", "--gpus", "7"});
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--gpus 7"), std::string::npos) << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_FALSE(fs::exists(dir));
}

}  // namespace
}  // namespace gpuprobe
