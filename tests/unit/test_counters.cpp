// --counters: the declaration API, the waiver path and the cross-check, with a stand-in for
// CUPTI so that the whole path runs on a machine without a GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/app.hpp"
#include "cli_runner.hpp"
#include "core/error.hpp"
#include "core/finding_names.hpp"
#include "core/progress.hpp"
#include "counters/counters.hpp"
#include "counters/profiler_error.hpp"
#include "device/device.hpp"
#include "finding_lookup.hpp"

namespace gpuprobe {
namespace {

using nlohmann::json;

/// Returns fixed metric values per launch; counts launches and preparations.
class FakeReader : public counters::Reader {
 public:
  std::map<std::string, double> values;
  bool fail = false;
  int launched = 0, prepared = 0;
  std::optional<std::string> unavailable(const device::DeviceInfo&) override {
    return std::nullopt;
  }
  std::vector<std::map<std::string, double>> read(
      const device::DeviceInfo&, const std::vector<std::string>& metrics,
      const std::vector<std::function<void()>>& launches,
      const std::vector<std::function<void()>>& prepares) override {
    if (fail)
      throw counters::ProfilerError("cuptiRangeProfilerEnable failed: insufficient privileges");
    std::vector<std::map<std::string, double>> out;
    for (std::size_t i = 0; i < launches.size(); ++i) {
      if (prepares[i]) prepares[i]();
      launches[i]();
      std::map<std::string, double> m;
      for (const auto& k : metrics) m[k] = values.at(k);
      out.push_back(m);
    }
    return out;
  }
  std::string method() const override { return "fake reader"; }
};

struct CountersFixture : ::testing::Test {
  std::unique_ptr<device::Device> dev = device::open_device("model:tiny");
  RunOptions options;
  FindingBoard board;
  FakeReader fake;
  void SetUp() override {
    options.counters = true;
    counters::set_reader_for_testing(&fake);
  }
  void TearDown() override { counters::set_reader_for_testing(nullptr); }
  counters::Declaration declaration(int* launches, int* prepares) {
    counters::Declaration d;
    d.probes.push_back(
        {"stride 1",
         {{"stride", 1}},
         [launches] { ++*launches; },
         {{"sectors per request", "sectors.sum", "requests.sum", "sectors/request", 4.0, 0.05, true,
           "sector model"},
          {"DRAM bytes read", "dram.sum", "", "bytes", 1000.0, 20.0, false, "intended bytes"}},
         [prepares] { ++*prepares; }});
    return d;
  }
};

TEST(CountersJudge, RelativeAndAbsoluteTolerances) {
  counters::Expectation rel{"q", "m", "", "", 100.0, 0.02, true, ""};
  EXPECT_TRUE(counters::judge(rel, {101.5, 99, 102}).agrees);
  EXPECT_FALSE(counters::judge(rel, {103, 104, 97}).agrees);
  EXPECT_EQ(counters::judge(rel, {101, 105, 99}).agreeing_reads, 2u);
  counters::Expectation abs{"q", "m", "", "%", 0.0, 5.0, false, ""};
  EXPECT_TRUE(counters::judge(abs, {4.9}).agrees);
  EXPECT_FALSE(counters::judge(abs, {5.1}).agrees);
  EXPECT_DOUBLE_EQ(counters::judge(abs, {1, 9, 3}).measured, 3);
}

TEST_F(CountersFixture, AgreeingCountersGiveOneAgreementFinding) {
  fake.values = {{"sectors.sum", 400}, {"requests.sum", 100}, {"dram.sum", 1010}};
  int launches = 0, prepares = 0;
  Context ctx{*dev, options, board};
  ExperimentResult r;
  r.id = "bandwidth.stride";
  r.samples["counters"] = counters::collect(ctx, declaration(&launches, &prepares));
  EXPECT_EQ(launches, 3);  // three separate reads
  EXPECT_EQ(prepares, 3);
  const auto& rec = r.samples["counters"];
  ASSERT_EQ(rec["status"], "read") << rec.dump();
  EXPECT_DOUBLE_EQ(rec["probes"][0]["checks"][0]["measured"].get<double>(), 4.0);
  counters::cross_check(r);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].name, "bandwidth.stride.counters.agreement");
  EXPECT_DOUBLE_EQ(r.findings[0].value, 100);
  EXPECT_GT(r.findings[0].confidence, 0.3);
}

TEST_F(CountersFixture, DisagreementIsAFindingWithBothNumbers) {
  fake.values = {{"sectors.sum", 800}, {"requests.sum", 100}, {"dram.sum", 1010}};
  int launches = 0, prepares = 0;
  Context ctx{*dev, options, board};
  ExperimentResult r;
  r.id = "bandwidth.stride";
  r.samples["counters"] = counters::collect(ctx, declaration(&launches, &prepares));
  counters::cross_check(r);
  ASSERT_EQ(r.findings.size(), 2u);
  const auto& d = r.findings[0];
  EXPECT_EQ(d.name, "bandwidth.stride.counters.disagreement.1");
  EXPECT_DOUBLE_EQ(d.value, 8.0);
  EXPECT_DOUBLE_EQ(d.extra["expected"].get<double>(), 4.0);
  EXPECT_NE(d.method.find("model 4"), std::string::npos) << d.method;
  EXPECT_DOUBLE_EQ(r.findings[1].value, 50);  // one of two checks agrees
}

// A hit rate of 366 % (the H200's L2 counters around a one-thread chase) is no fraction of the
// chase's sectors: the check is left unjudged, neither a disagreement nor an agreement, and the
// statistics say which and why; a rate inside 0..100 is judged as before.
TEST_F(CountersFixture, AReadOutsideTheValidRangeLeavesTheCheckUnjudged) {
  fake.values = {{"hit.pct", 365.9}, {"dram.sum", 1010}};
  counters::Declaration d;
  counters::Expectation hit{"L2 sector hit rate", "hit.pct", "", "%", 100.0, 10.0, false, "fits"};
  hit.valid_min = 0;
  hit.valid_max = 100.5;
  d.probes.push_back(
      {"l2 3 MiB",
       {},
       [] {},
       {hit, {"DRAM bytes read", "dram.sum", "", "bytes", 1000.0, 20.0, false, "i"}}});
  Context ctx{*dev, options, board};
  ExperimentResult r;
  r.id = "latency.chase";
  r.samples["counters"] = counters::collect(ctx, d);
  EXPECT_FALSE(r.samples["counters"]["probes"][0]["checks"][0]["judged"].get<bool>());
  EXPECT_EQ(r.samples["counters"]["probes"][0]["checks"][0]["valid_max"].get<double>(), 100.5);
  counters::cross_check(r);
  ASSERT_EQ(r.findings.size(), 1u);  // no disagreement finding
  EXPECT_EQ(r.findings[0].name, "latency.chase.counters.agreement");
  EXPECT_DOUBLE_EQ(r.findings[0].value, 100);  // the one judged check agrees
  EXPECT_EQ(r.statistics["counters"]["unjudged"], 1);
  EXPECT_EQ(r.statistics["counters_unjudged"]["checks"][0]["read"].get<double>(), 365.9);
  // Inside the range the same check is judged: 60 % disagrees with 100 +- 10.
  fake.values["hit.pct"] = 60;
  ExperimentResult q;
  q.id = "latency.chase";
  q.samples["counters"] = counters::collect(ctx, d);
  counters::cross_check(q);
  ASSERT_EQ(q.findings.size(), 2u);
  EXPECT_EQ(q.findings[0].name, "latency.chase.counters.disagreement.1");
}

TEST_F(CountersFixture, ManyProbesAreReadInBoundedSessionsInOrder) {
  class Counting : public FakeReader {
   public:
    std::vector<std::size_t> sessions;
    int next = 0;
    std::vector<std::map<std::string, double>> read(
        const device::DeviceInfo& info, const std::vector<std::string>& metrics,
        const std::vector<std::function<void()>>& launches,
        const std::vector<std::function<void()>>& prepares) override {
      sessions.push_back(launches.size());
      std::vector<std::map<std::string, double>> out;
      for (std::size_t i = 0; i < launches.size(); ++i) out.push_back({{"m", next++}});
      (void)info, (void)metrics, (void)prepares;
      return out;
    }
  } counting;
  counters::set_reader_for_testing(&counting);
  counters::Declaration d;
  for (int i = 0; i < 40; ++i)
    d.probes.push_back({"p" + std::to_string(i),
                        json::object(),
                        [] {},
                        {{"q", "m", "", "", 0.0, 1e9, false, ""}}});
  Context ctx{*dev, options, board};
  const auto rec = counters::collect(ctx, d);
  ASSERT_EQ(rec["status"], "read") << rec.dump();
  EXPECT_EQ(counting.sessions, (std::vector<std::size_t>{32, 32, 32, 24}));
  // Read r of probe i is launch r * 40 + i: the values come back to the right probe.
  EXPECT_EQ(rec["probes"][3]["values"]["m"], json({3, 43, 83}));
}

// Two L2 partitions (the tiny model's: the sweep finds a near-partition knee, so latency.chase
// has a mixed level): the L2 hit rate is checked at the near level only; at the mixed and DRAM
// levels it is listed as not checked, with the reason, and gives no disagreement whatever it
// reads. The L1 checks stay at every level.
TEST_F(CountersFixture, TwoPartitionsLeaveTheL2HitRatePastTheNearPartitionUnchecked) {
  fake.values = {{"l1tex__t_sector_hit_rate.pct", 0}, {"lts__t_sector_hit_rate.pct", 51.7}};
  options.counters = false;  // the sweep without counters, to give latency.chase its levels
  Context ctx{*dev, options, board};
  const auto& reg = Registry::builtin();
  test::run_and_post(ctx, board, "latency.sweep");
  ASSERT_TRUE(board.get(finding::kL2MixedLatency, 0.0));
  options.counters = true;
  options.loads = {device::LoadOp::kCa};
  ExperimentResult chase;
  reg.find("latency.chase")->run(ctx, chase);
  reg.find("latency.chase")->analyze(chase);
  const auto& rec = chase.samples.at("counters");
  ASSERT_EQ(rec.at("status"), "read") << rec.dump();
  std::map<std::string, std::vector<std::string>> checked;
  for (const auto& p : rec.at("probes"))
    for (const auto& c : p.at("checks"))
      checked[p.at("where").at("level")].push_back(c.at("quantity"));
  EXPECT_EQ(checked["l2_near"],
            (std::vector<std::string>{"L1 sector hit rate", "L2 sector hit rate"}));
  EXPECT_EQ(checked["l2_mixed"], (std::vector<std::string>{"L1 sector hit rate"}));
  EXPECT_EQ(checked["dram"], (std::vector<std::string>{"L1 sector hit rate"}));
  ASSERT_TRUE(chase.statistics.contains("counters_not_checked"));
  const auto& nc = chase.statistics.at("counters_not_checked");
  ASSERT_EQ(nc.size(), 2u);
  EXPECT_EQ(nc[0].at("at"), "l2_mixed");
  EXPECT_EQ(nc[1].at("at"), "dram");
  EXPECT_NE(nc[0].at("why").get<std::string>().find("two L2 partitions"), std::string::npos);
  // 51.7 % disagrees with the near level's 100 +- 10, and only there.
  std::vector<std::string> l2_disagreements;
  for (const auto& f : chase.findings)
    if (f.name.find("counters.disagreement") != std::string::npos &&
        f.extra.at("quantity") == "L2 sector hit rate")
      l2_disagreements.push_back(f.extra.at("configuration").at("level"));
  EXPECT_EQ(l2_disagreements, std::vector<std::string>{"l2_near"});
  // A recorded list that is no array is the file's fault.
  ExperimentResult corrupt = chase;
  corrupt.findings.clear();
  corrupt.samples["counters"]["not_checked"] = "x";
  EXPECT_THROW(counters::cross_check(corrupt), UsageError);
  // Without a profiler no check runs, and none is listed as not checked.
  counters::set_reader_for_testing(nullptr);
  ExperimentResult waived;
  reg.find("latency.chase")->run(ctx, waived);
  reg.find("latency.chase")->analyze(waived);
  EXPECT_EQ(waived.samples.at("counters").at("status"), "waived");
  EXPECT_FALSE(waived.samples.at("counters").contains("not_checked"));
  EXPECT_FALSE(waived.statistics.contains("counters_not_checked"));
}

TEST_F(CountersFixture, ProfilerFailureWaivesWithTheReason) {
  fake.fail = true;
  int launches = 0, prepares = 0;
  Context ctx{*dev, options, board};
  ExperimentResult r;
  r.id = "x";
  r.samples["counters"] = counters::collect(ctx, declaration(&launches, &prepares));
  EXPECT_EQ(r.samples["counters"]["status"], "waived");
  EXPECT_NE(r.samples["counters"]["reason"].get<std::string>().find("insufficient privileges"),
            std::string::npos);
  counters::cross_check(r);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_NE(r.statistics["counters"].get<std::string>().find("waived"), std::string::npos);
}

TEST_F(CountersFixture, CuptiReaderWaivesOnTheModelledGpu) {
  counters::set_reader_for_testing(nullptr);
  int launches = 0, prepares = 0;
  Context ctx{*dev, options, board};
  const auto rec = counters::collect(ctx, declaration(&launches, &prepares));
  EXPECT_EQ(rec["status"], "waived");
  EXPECT_NE(rec["reason"].get<std::string>().find("modelled"), std::string::npos);
  EXPECT_EQ(launches, 0);
}

TEST(CountersCli, FlagRecordsTheWaiverBesideTheTimingsAndOnlyWhenAsked) {
  namespace fs = std::filesystem;
  const auto dir = fs::temp_directory_path() / ("gpuprobe_counters_" + std::to_string(::getpid()));
  auto run = [&](bool counters) {
    // --verbose: the waiver line is in the full table, which the summary card alone leaves out.
    std::vector<std::string> args = {"--device", "model:tiny", "--quiet", "--verbose",
                                     "--out",    dir.string(), "run",     "latency.chase"};
    if (counters) args.push_back("--counters");
    const auto o = test_cli::gp(args);
    EXPECT_EQ(o.code, 0) << o.err;
    std::ifstream in(dir / "result.json");
    return std::make_pair(json::parse(in), o.out);
  };
  const auto [with, text] = run(true);
  const auto& chase = with["experiments"][0];
  ASSERT_EQ(chase["id"], "latency.chase");
  EXPECT_EQ(chase["samples"]["counters"]["status"], "waived");
  EXPECT_NE(text.find("counters not read for latency.chase: a modelled GPU"), std::string::npos)
      << text;
  const auto [without, plain] = run(false);
  EXPECT_FALSE(without["experiments"][0]["samples"].contains("counters"));
  // The timings are the same with and without (the modelled GPU is deterministic).
  auto medians = [](const json& r) {
    std::vector<double> m;
    for (const auto& p : r["experiments"][0]["samples"]["points"])
      m.push_back(p["cycles_per_load"]["median"].get<double>());
    return m;
  };
  EXPECT_EQ(medians(with), medians(without));
  EXPECT_FALSE(medians(with).empty());
  fs::remove_all(dir);
}

TEST(Progress, ShowsExperimentPointAndTimesOnlyWhenEnabled) {
  progress::enable(nullptr);
  progress::begin(1, 3, "latency.sweep");
  EXPECT_EQ(progress::line(), "");
  std::ostringstream out;
  progress::enable(&out);
  progress::begin(2, 5, "bandwidth.read");
  progress::point();
  progress::point();
  const auto l = progress::line();
  EXPECT_NE(l.find("[2/5] bandwidth.read"), std::string::npos) << l;
  EXPECT_NE(l.find("point 2"), std::string::npos) << l;
  EXPECT_NE(l.find("elapsed"), std::string::npos) << l;
  EXPECT_NE(l.find("left"), std::string::npos) << l;  // one experiment done: an estimate
  progress::end();
  progress::enable(nullptr);
}

}  // namespace
}  // namespace gpuprobe
