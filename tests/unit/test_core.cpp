// Statistics, the stopping rule, sizes, globs and CSV: the small pieces every result rests on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/experiment.hpp"
#include "core/protocol.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "report/writer.hpp"

namespace gpuprobe {
namespace {

TEST(Stats, MedianOfEvenAndOddSizes) {
  // gpu-benches' median is off by one for even sizes; ours averages the two middle values.
  EXPECT_DOUBLE_EQ(stats::median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(stats::median({5, 1, 3}), 3.0);
  EXPECT_DOUBLE_EQ(stats::median({7}), 7.0);
  EXPECT_THROW(stats::median({}), std::invalid_argument);
}

TEST(Stats, QuantilesInterpolate) {
  const std::vector<double> v = {10, 20, 30, 40, 50};
  EXPECT_DOUBLE_EQ(stats::quantile(v, 0.0), 10);
  EXPECT_DOUBLE_EQ(stats::quantile(v, 1.0), 50);
  EXPECT_DOUBLE_EQ(stats::quantile(v, 0.25), 20);
  EXPECT_DOUBLE_EQ(stats::quantile(v, 0.1), 14);
  EXPECT_THROW(stats::quantile(v, 1.5), std::invalid_argument);
}

TEST(Stats, SummaryAndSpread) {
  const auto s = stats::summarize({1, 2, 3, 4, 100});
  EXPECT_EQ(s.n, 5u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.mad, 1);  // |1-3|,|2-3|,0,|4-3|,97 -> median 1
  EXPECT_DOUBLE_EQ(s.mean, 22);
  EXPECT_NEAR(stats::relative_spread(s), (s.p95 - s.p5) / 3.0, 1e-12);
  const auto small = stats::summarize({10, 11, 12});
  EXPECT_NEAR(stats::relative_spread(small), 2.0 / 11.0, 1e-12);  // range / median below 5
  // Alternating data has a MAD of 0 but is not stable.
  EXPECT_GT(stats::relative_spread(stats::summarize({120, 100, 120})), 0.1);
}

TEST(Protocol, StopsWhenStableAndSkipsWarmup) {
  ProtocolOptions o;
  o.warmup_runs = 2;
  o.min_repetitions = 3;
  o.max_repetitions = 20;
  o.target_spread = 0.01;
  std::vector<int> calls;
  const auto m = repeat_until_stable(
      [&](int rep) {
        calls.push_back(rep);
        return rep < 0 ? 1000.0 : 100.0;  // warm-up values must not be recorded
      },
      o);
  EXPECT_TRUE(m.converged);
  EXPECT_EQ(m.values.size(), 3u);
  EXPECT_DOUBLE_EQ(m.summary.median, 100.0);
  ASSERT_GE(calls.size(), 2u);
  EXPECT_EQ(calls[0], -2);
  EXPECT_EQ(calls[1], -1);
}

TEST(Protocol, NoisyMeasurementStopsAtTheMaximum) {
  ProtocolOptions o;
  o.warmup_runs = 0;
  o.min_repetitions = 3;
  o.max_repetitions = 9;
  o.target_spread = 0.001;
  o.budget_s = 100;
  int i = 0;
  const auto m = repeat_until_stable([&](int) { return (i++ % 2) ? 100.0 : 120.0; }, o);
  EXPECT_FALSE(m.converged);
  EXPECT_EQ(m.values.size(), 9u);
}

TEST(Units, ParsesAndRejectsSizes) {
  EXPECT_EQ(units::parse_size("4096", "x"), 4096u);
  EXPECT_EQ(units::parse_size("64K", "x"), 65536u);
  EXPECT_EQ(units::parse_size("64KiB", "x"), 65536u);
  EXPECT_EQ(units::parse_size("1.5M", "x"), 1572864u);
  EXPECT_EQ(units::parse_size("2g", "x"), 2147483648u);
  EXPECT_THROW(units::parse_size("abc", "--max-size"), UsageError);
  EXPECT_THROW(units::parse_size("-5", "--max-size"), UsageError);
  EXPECT_THROW(units::parse_size("0", "--max-size"), UsageError);
  EXPECT_THROW(units::parse_size("12Q", "--max-size"), UsageError);
  try {
    units::parse_size("abc", "--max-size");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--max-size"), std::string::npos);
  }
  EXPECT_EQ(units::format_bytes(60 * 1024 * 1024), "60 MiB");
  EXPECT_EQ(units::format_bytes(512), "512 B");
}

TEST(Registry, GlobsAndSuggestions) {
  EXPECT_TRUE(glob_match("latency.*", "latency.sweep"));
  EXPECT_TRUE(glob_match("*.sweep", "bandwidth.sweep"));
  EXPECT_TRUE(glob_match("latency.?hase", "latency.chase"));
  EXPECT_FALSE(glob_match("latency.*", "bandwidth.read"));
  EXPECT_EQ(edit_distance("latency.swep", "latency.sweep"), 1u);
  const auto& reg = Registry::builtin();
  const auto chosen = reg.select({"latency.*"});
  ASSERT_EQ(chosen.size(), 5u);  // sweep, chase, carveout, shared + tlb (cache_structure)
  EXPECT_EQ(chosen.front()->id(), "latency.sweep");  // registry order: the sweep runs first
  try {
    reg.select({"latency.swep"});
    FAIL() << "an unknown id must throw";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("latency.sweep"), std::string::npos);
  }
}

// The issue's own command, `run 'cache.*' latency.tlb`, lacks latency.sweep, without whose
// l2.near_capacity cache.l2.mixture cannot run: the selection gains it, ahead of the mixture.
TEST(Registry, RequiredExperimentsJoinASelectionThatLacksThem) {
  const auto& reg = Registry::builtin();
  auto chosen = reg.select({"cache.*", "latency.tlb"});
  const auto added = reg.add_required(chosen);
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0], "latency.sweep (needed by cache.l2.mixture)");
  std::vector<std::string> ids;
  for (const auto* e : chosen) ids.push_back(e->id());
  EXPECT_EQ(ids.front(), "latency.sweep");
  EXPECT_NE(std::find(ids.begin(), ids.end(), "cache.l2.mixture"), ids.end());
  // Nothing is added where nothing is required, or where it is already chosen.
  auto tlb = reg.select({"latency.tlb"});
  EXPECT_TRUE(reg.add_required(tlb).empty());
  EXPECT_EQ(tlb.size(), 1u);
  auto both = reg.select({"latency.sweep", "cache.l2.mixture"});
  EXPECT_TRUE(reg.add_required(both).empty());
  // Every required experiment is one the experiment declares it uses, and runs before it
  // (selections keep registry order).
  auto position = [&](const std::string& id) {
    for (std::size_t i = 0; i < reg.all().size(); ++i)
      if (reg.all()[i]->id() == id) return i;
    return reg.all().size();
  };
  for (const auto& e : reg.all())
    for (const auto& r : e->required()) {
      const auto uses = e->depends_on();
      EXPECT_NE(std::find(uses.begin(), uses.end(), r), uses.end()) << e->id() << " " << r;
      EXPECT_LT(position(r), position(e->id())) << r << " must run before " << e->id();
    }
}

TEST(Report, CsvQuotesOnlyWhenNeeded) {
  Curve c{"t", {"a", "b"}, {}};
  c.rows.push_back({nlohmann::json("x,y"), nlohmann::json(1.5)});
  c.rows.push_back({nlohmann::json("say \"hi\""), nlohmann::json(2)});
  EXPECT_EQ(report::to_csv(c), "a,b\n\"x,y\",1.5\n\"say \"\"hi\"\"\",2\n");
}

}  // namespace
}  // namespace gpuprobe
