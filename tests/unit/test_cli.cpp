// The command line: bad input gets one line and exit code 2, and nothing is written.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/app.hpp"
#include "cli_runner.hpp"
#include "core/finding_value.hpp"
#include "core/json_input.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

using test_cli::expect_one_line_error;
using test_cli::gp;
using test_cli::Outcome;
using test_cli::temp_dir;

TEST(Cli, ListShowsTheLatencyExperiments) {
  const auto o = gp({"list"});
  EXPECT_EQ(o.code, 0);
  for (const char* id : {"latency.sweep", "latency.chase", "latency.shared", "latency.carveout"})
    EXPECT_NE(o.out.find(id), std::string::npos) << id;
}

TEST(Cli, UnknownSubcommandAndFlag) {
  expect_one_line_error(gp({"frobnicate"}), "frobnicate");
  expect_one_line_error(gp({"list", "--bogus"}), "--bogus");
}

TEST(Cli, UnknownExperimentSuggestsClosest) {
  const auto o = gp({"--device", "model:tiny", "run", "latency.swep"});
  expect_one_line_error(o, "latency.sweep");
}

TEST(Cli, RunAddsWhatAChosenExperimentCannotRunWithout) {
  const auto dir = temp_dir("required");
  const auto o =
      gp({"--device", "model:tiny", "--quiet", "--out", dir.string(), "run", "cache.l2.mixture"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("also running latency.sweep (needed by cache.l2.mixture)"),
            std::string::npos)
      << o.out;
  std::ifstream in(dir / "result.json");
  const auto r = nlohmann::json::parse(in);
  ASSERT_EQ(r.at("experiments").size(), 2u);
  EXPECT_EQ(r["experiments"][0]["id"], "latency.sweep");
  EXPECT_EQ(r["experiments"][1]["id"], "cache.l2.mixture");
  fs::remove_all(dir);
}

// cache.l2.ways reads the L2's sets per partition: run alone, it brings cache.l2.partition
// (waived on the modelled GPU, which has no CUDA partition probe, so the ways still run).
TEST(Cli, RunOfTheL2WaysAddsThePartition) {
  const auto dir = temp_dir("ways_required");
  const auto o =
      gp({"--device", "model:h200", "--quiet", "--out", dir.string(), "run", "cache.l2.ways"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("also running cache.l2.partition (needed by cache.l2.ways)"),
            std::string::npos)
      << o.out;
  std::ifstream in(dir / "result.json");
  const auto r = nlohmann::json::parse(in);
  ASSERT_EQ(r.at("experiments").size(), 2u);
  EXPECT_EQ(r["experiments"][0]["id"], "cache.l2.partition");
  EXPECT_EQ(r["experiments"][1]["id"], "cache.l2.ways");
  fs::remove_all(dir);
}

// A --max-size that stops the sweep below the L2 leaves the mixture nothing to be drawn around:
// the mixture is waived with that reason. `run` of the mixture alone is then refused before
// anything runs (the sweep it requires could run, but nothing chosen would measure), without
// the "also running" line; characterize runs the rest and records the waiver.
TEST(Cli, MixtureIsWaivedForASweepStoppedBelowTheL2) {
  const auto dir = temp_dir("mixture_max");
  const auto o = gp({"--device", "model:tiny", "--quiet", "--out", dir.string(), "--max-size",
                     "64K", "run", "cache.l2.mixture"});
  expect_one_line_error(o, "at least the L2");
  EXPECT_EQ(o.out.find("also running"), std::string::npos) << o.out;
  EXPECT_FALSE(fs::exists(dir));
  expect_one_line_error(gp({"--device", "model:tiny", "--quiet", "--out", dir.string(),
                            "--min-size", "1G", "run", "cache.l2.mixture"}),
                        "--min-size");
  EXPECT_FALSE(fs::exists(dir));
  // The sweep alone may stop wherever the user likes.
  const auto alone = gp({"--device", "model:tiny", "--quiet", "--out", dir.string(), "--max-size",
                         "64K", "run", "latency.sweep"});
  EXPECT_EQ(alone.code, 0) << alone.err;
  fs::remove_all(dir);
  const auto all = gp({"--device", "model:tiny", "--quiet", "--out", dir.string(), "--max-size",
                       "64K", "characterize"});
  ASSERT_EQ(all.code, 0) << all.err;
  std::ifstream in(dir / "result.json");
  const auto r = nlohmann::json::parse(in);
  bool seen = false;
  for (const auto& e : r.at("experiments"))
    if (e.at("id") == "cache.l2.mixture") {
      seen = true;
      EXPECT_EQ(e.at("status"), "waived");
      EXPECT_NE(e.value("reason", std::string()).find("--max-size"), std::string::npos) << e.dump();
    }
  EXPECT_TRUE(seen);
  fs::remove_all(dir);
}

// replay --runs: a run without a latency.sweep, or no file at all, is refused before anything
// is written.
TEST(Cli, ReplayRunsMustHoldASweep) {
  const auto dir = temp_dir("replay_runs");
  const std::string res = std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/";
  expect_one_line_error(gp({"replay", res + "result.json", "--out", dir.string(), "--runs",
                            res + "replay/result.json"}),
                        "no passed latency.sweep");
  EXPECT_FALSE(fs::exists(dir));
  expect_one_line_error(
      gp({"replay", res + "result.json", "--out", dir.string(), "--runs", "/nonexistent.json"}),
      "cannot read");
  EXPECT_FALSE(fs::exists(dir));
}

TEST(Cli, BadSizes) {
  const auto dir = temp_dir("sizes");
  expect_one_line_error(gp({"--device", "model:tiny", "--out", dir.string(), "--max-size", "abc",
                            "run", "latency.sweep"}),
                        "--max-size");
  expect_one_line_error(gp({"--device", "model:tiny", "--out", dir.string(), "--min-size", "-5",
                            "run", "latency.sweep"}),
                        "--min-size");
  EXPECT_FALSE(fs::exists(dir));
}

TEST(Cli, WorkingSetLargerThanFreeMemoryWritesNothing) {
  const auto dir = temp_dir("toolarge");
  const auto o = gp({"--device", "model:tiny", "--out", dir.string(), "--max-size", "64G", "run",
                     "latency.sweep"});
  expect_one_line_error(o, "does not fit");
  EXPECT_FALSE(fs::exists(dir));
}

TEST(Cli, ReportAndAnalyzeNeedAResult) {
  expect_one_line_error(gp({"report", "/nonexistent/result.json"}), "cannot read");
  expect_one_line_error(gp({"analyze", "/nonexistent/result.json"}), "cannot read");
}

TEST(Cli, UnwritableOutput) {
  expect_one_line_error(gp({"--device", "model:tiny", "--out", "/proc/gpuprobe/x", "characterize"}),
                        "cannot be created");
}

TEST(Cli, UnknownModelAndDevice) {
  expect_one_line_error(gp({"--device", "model:nope", "characterize"}), "available");
  expect_one_line_error(gp({"--device", "gpu7", "characterize"}), "model:");
}

TEST(Cli, ExperimentThatDoesNotApplyIsRefusedWithItsReason) {
  const auto dir = temp_dir("waived");
  expect_one_line_error(
      gp({"--device", "model:a100", "--out", dir.string(), "run", "hopper.wgmma.throughput"}),
      "needs sm_90a");
  EXPECT_FALSE(fs::exists(dir));
}

TEST(Cli, NoCudaDeviceSuggestsModel) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) GTEST_SKIP() << "a GPU is present";
  expect_one_line_error(gp({"characterize", "--out", temp_dir("nogpu").string()}), "model:");
}

TEST(Cli, ModelCharacterizeWritesCompleteResult) {
  const auto dir = temp_dir("characterize");
  const auto o = gp({"--device", "model:tiny", "--out", dir.string(), "characterize"});
  ASSERT_EQ(o.code, 0) << o.err;
  std::ifstream in(dir / "result.json");
  const auto r = nlohmann::json::parse(in);
  EXPECT_EQ(r["schema_version"], gpuprobe::kResultSchemaVersion);
  EXPECT_TRUE(r["complete"].get<bool>());
  EXPECT_TRUE(r["tool"].contains("git_sha"));
  std::set<std::string> names, passed;
  for (const auto& e : r["experiments"]) {
    // The modelled GPU has only a cache model: other families are waived, with a reason.
    if (e["status"] == "waived") {
      EXPECT_FALSE(e["reason"].get<std::string>().empty()) << e["id"];
      continue;
    }
    EXPECT_EQ(e["status"], "passed") << e["id"];
    passed.insert(e["id"].get<std::string>());
    for (const auto& f : e["findings"]) {
      names.insert(f["name"].get<std::string>());
      for (const char* key : {"name", "value", "unit", "confidence", "method"})
        EXPECT_TRUE(f.contains(key)) << key;
    }
  }
  for (const char* n : {"l1.hit_latency", "l2.hit_latency", "l2.mixed_latency", "dram.latency",
                        "shared.latency", "l1.capacity", "l2.near_capacity", "l2.capacity"})
    EXPECT_TRUE(names.count(n)) << n;
  for (const char* id : {"latency.sweep", "latency.chase", "latency.shared", "latency.carveout"})
    EXPECT_TRUE(passed.count(id)) << id;
  EXPECT_TRUE(fs::exists(dir / "latency.sweep.curve.csv"));
  EXPECT_TRUE(fs::exists(dir / "report.html"));
  EXPECT_TRUE(fs::exists(dir / "experiments" / "latency.chase.json"));
  // The recorded samples re-analyse to the same findings.
  const auto again = gp({"analyze", (dir / "result.json").string()});
  EXPECT_EQ(again.code, 0);
  EXPECT_NE(again.out.find("l2.near_capacity"), std::string::npos);
  // ... and a report can be written again from the recorded result alone.
  const auto rep = temp_dir("report");
  const auto made = gp({"report", (dir / "result.json").string(), "--out", rep.string()});
  EXPECT_EQ(made.code, 0) << made.err;
  std::ifstream html(rep / "report.html");
  const std::string text((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("<svg"), std::string::npos);
  EXPECT_NE(text.find("l2.capacity"), std::string::npos);
  fs::remove_all(rep);
  // Compared with itself, every finding is there twice with no change.
  const auto same = gp({"compare", (dir / "result.json").string(), (dir / "result.json").string()});
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("l2.capacity"), std::string::npos);
  EXPECT_NE(same.out.find(" 0% "), std::string::npos);
  EXPECT_EQ(same.out.find("%+"), std::string::npos);
  expect_one_line_error(gp({"compare", (dir / "result.json").string()}), "required");
  fs::remove_all(dir);
}

// analyze re-derives the curves its analysis draws (a stale row replaced, the CSV beside the
// result no longer named) and keeps the curves it does not draw as recorded.
TEST(Cli, AnalyzeRederivesTheAnalysisCurvesAndKeepsTheOthers) {
  auto recorded = json_input::load_result(std::string(GPUPROBE_SOURCE_DIR) +
                                          "/results/h100/l2_cap_rule/result.json.gz");
  nlohmann::json* cap = nullptr;
  for (auto& e : recorded["experiments"]) {
    if (e["id"] != "cache.l2.eviction_priority") continue;
    for (auto& c : e["curves"])
      if (c["name"] == "cap_rule") cap = &c;
    e["curves"].push_back({{"name", "measured_only"}, {"columns", {"x"}}, {"rows", {{1}}}});
  }
  ASSERT_NE(cap, nullptr);
  const auto truth = (*cap)["rows"];
  (*cap)["rows"][0][4] = 0.123;  // a stale predicted_per_set
  const auto dir = temp_dir("analyze_curves");
  fs::create_directories(dir);
  std::ofstream(dir / "result.json") << recorded.dump();
  const auto out = gp({"analyze", (dir / "result.json").string(), "--format", "json"});
  ASSERT_EQ(out.code, 0) << out.err;
  const auto again = nlohmann::json::parse(out.out);
  bool kept = false, rederived = false;
  for (const auto& e : again["experiments"]) {
    if (e["id"] != "cache.l2.eviction_priority") continue;
    for (const auto& c : e["curves"]) {
      kept = kept || (c["name"] == "measured_only" && c["rows"] == nlohmann::json{{1}});
      if (c["name"] != "cap_rule") continue;
      rederived = true;
      EXPECT_FALSE(c.contains("file"));
      EXPECT_NE(c["rows"][0][4], 0.123);
      EXPECT_EQ(c["rows"][0][3], truth[0][3]);  // a measured share, as recorded
    }
  }
  EXPECT_TRUE(kept);
  EXPECT_TRUE(rederived);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuprobe
