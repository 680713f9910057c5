// Trust in the input/output path: the stopping rule, loaders that never abort and name the
// field at fault, options checked whatever is selected, outputs written whole or not at all,
// and compare in human units judged against both runs' stated spread.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "cli/app.hpp"
#include "cli/result_commands.hpp"
#include "cli_runner.hpp"
#include "core/error.hpp"
#include "core/json_input.hpp"
#include "core/noise.hpp"
#include "core/protocol.hpp"
#include "core/repeatability.hpp"
#include "report/compare.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using test_cli::expect_one_line_error;
using test_cli::gp;
using test_cli::Outcome;
using test_cli::temp_dir;

// ---- stopping rule ---------------------------------------------------------------------------

TEST(TrustProtocol, AtLeastThreeRepetitionsWhateverTheOptionsSay) {
  ProtocolOptions o;
  o.warmup_runs = 0;
  o.min_repetitions = 1;
  o.max_repetitions = 1;
  const auto m = repeat_until_stable([](int) { return 100.0; }, o);
  EXPECT_EQ(m.values.size(), 3u);
  EXPECT_EQ(m.summary.n, 3u);
  EXPECT_EQ(to_json(o)["min_repetitions"], 3);
  EXPECT_EQ(to_json(o)["max_repetitions"], 3);
}

TEST(TrustProtocol, AZeroMedianIsAnErrorNotConverged) {
  ProtocolOptions o;
  o.warmup_runs = 0;
  EXPECT_THROW(repeat_until_stable([](int) { return 0.0; }, o), MeasurementError);
  int i = 0;  // two zeros of three: the median is 0 too
  EXPECT_THROW(repeat_until_stable([&](int) { return (i++ == 1) ? 5.0 : 0.0; }, o),
               MeasurementError);
}

TEST(TrustProtocol, MinRepsOneOnTheModelRecordsThreeRepetitions) {
  const auto dir = temp_dir("minreps");
  const auto o = gp({"--device", "model:tiny", "--out", dir.string(), "--min-reps", "1",
                     "--max-reps", "1", "run", "latency.shared"});
  ASSERT_EQ(o.code, 0) << o.err;
  std::ifstream in(dir / "result.json");
  const auto r = json::parse(in);
  EXPECT_EQ(r["experiments"][0]["protocol"]["min_repetitions"], 3);
  fs::remove_all(dir);
}

// ---- noise, human units, compare -------------------------------------------------------------

TEST(TrustNoise, HumanUnits) {
  EXPECT_EQ(noise::human(27052300, "bytes"),
            std::make_pair(std::string("25.80"), std::string("MiB")));
  EXPECT_EQ(noise::human(512, "bytes"), std::make_pair(std::string("512"), std::string("B")));
  EXPECT_EQ(noise::human(233472, "bytes").second, "KiB");
  EXPECT_EQ(noise::human(3212.52, "GB/s").first, "3212.52");
  EXPECT_EQ(noise::human(27052300, "lines").first, "27052300");
  EXPECT_EQ(noise::human_as(2 * 1024 * 1024, "bytes", "KiB"), "2048.00");
}

TEST(TrustNoise, ConfidenceStatesASpreadThatJudgesDifferences) {
  // Confidence 1 is a clamped 0.999: a standard error of ~0.6 % of the value, so 0.5 % is
  // within and 5 % is beyond.
  EXPECT_NEAR(noise::implied_standard_error(100, 1.0), 0.608, 0.01);
  EXPECT_FALSE(noise::judge(100, 1.0, 100.5, 1.0).beyond);
  EXPECT_TRUE(noise::judge(100, 1.0, 105, 1.0).beyond);
  // Confidence 0 states nothing: no difference is beyond it.
  EXPECT_FALSE(noise::judge(100, 0.0, 200, 0.0).beyond);
  // Lower confidence, wider stated spread: the same step moves from beyond to within.
  const double se_high = noise::implied_standard_error(100, 0.99);
  const double se_low = noise::implied_standard_error(100, 0.5);
  EXPECT_LT(se_high, se_low);
  EXPECT_TRUE(noise::judge(100, 0.99, 104, 0.99).beyond);
  EXPECT_FALSE(noise::judge(100, 0.5, 104, 0.5).beyond);
  // The definition read backwards: precision 0.5 at 2 % means se = 0.02 v / (sqrt(2) erfinv .5).
  EXPECT_NEAR(se_low, 0.02 * 100 / (std::sqrt(2.0) * 0.476936), 1e-4);
}

json synthetic_result(double capacity, double capacity_conf, double latency, double latency_conf) {
  return {{"schema_version", 1},
          {"tool", {{"git_sha", "abc"}, {"version", "0"}}},
          {"started_utc", "2026-12-01T00:00:00Z"},
          {"device", {{"name", "GPU"}, {"compute_capability", "9.0"}, {"uuid", "U"}}},
          {"experiments",
           {{{"id", "latency.sweep"},
             {"status", "passed"},
             {"parameters", json::object()},
             {"samples", json::object()},
             {"findings",
              {{{"name", "l2.capacity"},
                {"value", capacity},
                {"unit", "bytes"},
                {"confidence", capacity_conf},
                {"method", "m"}},
               {{"name", "dram.latency"},
                {"value", latency},
                {"unit", "cycles"},
                {"confidence", latency_conf},
                {"method", "m"}}}}}}}};
}

std::string line_of(const std::string& text, const std::string& name) {
  const auto at = text.find("\n" + name + " ");
  if (at == std::string::npos) return "";
  return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

TEST(TrustCompare, HumanUnitsAndEachDifferenceJudged) {
  const auto a = synthetic_result(27052300, 0.99, 660, 0.5);
  const auto b = synthetic_result(30000000, 0.99, 670, 0.5);
  const auto t = report::compare_text(report::compare(a, b), false);
  EXPECT_EQ(t.find("e+07"), std::string::npos) << t;
  const auto cap = line_of(t, "l2.capacity");
  EXPECT_NE(cap.find("25.80"), std::string::npos) << t;
  EXPECT_NE(cap.find("28.61"), std::string::npos) << t;
  EXPECT_NE(cap.find("MiB"), std::string::npos) << t;
  EXPECT_NE(cap.find("beyond noise"), std::string::npos) << t;
  const auto lat = line_of(t, "dram.latency");
  EXPECT_NE(lat.find("within noise"), std::string::npos) << t;
}

// ---- typed loading -----------------------------------------------------------------------------

TEST(TrustJsonInput, NamesThePathOfTheFieldAtFault) {
  auto r = synthetic_result(1, 1, 1, 1);
  r["experiments"][0]["findings"][1]["value"] = "660";
  try {
    json_input::check_result_shape(r, "result.json");
    FAIL() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(),
                 "result.json: experiments[0].findings[1].value: expected a number, got a string");
  }
  r = synthetic_result(1, 1, 1, 1);
  r["device"]["compute_capability"] = "x.y";
  EXPECT_THROW(json_input::check_result_shape(r, "r"), UsageError);
  r = synthetic_result(1, 1, 1, 1);
  r["schema_version"] = "1";
  EXPECT_THROW(json_input::check_result_shape(r, "r"), UsageError);
  r = synthetic_result(1, 1, 1, 1);
  r["experiments"] = json::object();
  EXPECT_THROW(json_input::check_result_shape(r, "r"), UsageError);
  EXPECT_NO_THROW(json_input::check_result_shape(synthetic_result(1, 1, 1, 1), "r"));
}

TEST(TrustJsonInput, RefusesDeepNestingAndDirectories) {
  const auto dir = temp_dir("deep");
  fs::create_directories(dir);
  std::ofstream(dir / "deep.json") << std::string(100000, '[') << std::string(100000, ']');
  EXPECT_THROW(json_input::load_file((dir / "deep.json").string(), "x"), UsageError);
  EXPECT_THROW(json_input::load_file(dir.string(), "x"), UsageError);
  fs::remove_all(dir);
}

// ---- the commands that read results --------------------------------------------------------

class TrustLoaders : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_dir("loaders");
    fs::create_directories(dir_);
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  static inline fs::path dir_;
};

TEST_F(TrustLoaders, WrongShapeIsOneLineExitTwoNeverAnAbort) {
  const auto good = synthetic_result(1, 1, 1, 1);
  std::vector<json> bad;
  auto m = good;
  m["experiments"] = "x";
  bad.push_back(m);
  m = good;
  m["schema_version"] = "1";
  bad.push_back(m);
  m = good;
  m["experiments"][0]["samples"] = json::object({{"points", "x"}});
  bad.push_back(m);
  m = good;
  m.erase("device");
  bad.push_back(m);
  m = good;
  m["device"]["compute_capability"] = "x.y";
  bad.push_back(m);
  for (std::size_t i = 0; i < bad.size(); ++i) {
    const auto f = write("bad" + std::to_string(i) + ".json", bad[i].dump()).string();
    const auto report_dir = dir_ / ("report" + std::to_string(i));
    const auto model = dir_ / ("model" + std::to_string(i) + ".json");
    for (const auto& o : {gp({"analyze", f}), gp({"compare", f, f}),
                          gp({"report", f, "--out", report_dir.string()}),
                          gp({"export-model", f, model.string()})}) {
      EXPECT_TRUE(o.code == 2 || o.code == 0) << i << ": " << o.err;
      if (o.code == 2) EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
    }
    EXPECT_FALSE(fs::exists(report_dir / "report.html")) << i;
    EXPECT_FALSE(fs::exists(model)) << i;
  }
}

TEST_F(TrustLoaders, ReportOfABadResultLeavesNoFile) {
  auto r = synthetic_result(1, 1, 1, 1);
  r["experiments"][0]["id"] = "latency.sweep";
  r["experiments"][0]["samples"] = {{"points", "x"}};
  const auto f = write("badsamples.json", r.dump()).string();
  const auto out = dir_ / "rep";
  const auto o = gp({"report", f, "--out", out.string()});
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_FALSE(fs::exists(out / "report.html"));
}

TEST_F(TrustLoaders, AnalyzeOfADirectoryIsAUsageError) {
  expect_one_line_error(gp({"analyze", dir_.string()}), "is a directory");
}

TEST_F(TrustLoaders, ModelFileWithTheWrongShapeNamesTheKey) {
  const auto o = gp({"--device", "model:tiny", "info"});
  ASSERT_EQ(o.code, 0);
  auto model = json::parse(o.out)["environment"]["model"];
  model["l1_line_bytes"] = -128;
  const auto f = write("neg.json", model.dump()).string();
  expect_one_line_error(gp({"--device", "model:" + f, "list"}), "l1_line_bytes");
  model["l1_line_bytes"] = 128;
  model["compute_capability"] = "x.y";
  const auto g = write("cc.json", model.dump()).string();
  expect_one_line_error(gp({"--device", "model:" + g, "list"}), "compute_capability");
}

// ---- options checked whatever experiments are selected ---------------------------------------

TEST(TrustOptions, CheckedEvenWhenTheExperimentThatUsesThemIsNotSelected) {
  const auto dir = temp_dir("opts");
  const std::vector<std::vector<std::string>> cases = {
      {"--strides", "0"}, {"--offsets", "-1"}, {"--word-sizes", "3"}, {"--carveouts", "150"},
      {"--loads", ""},    {"--strides", "65"}, {"--carveouts", "-2"}};
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--device", "model:tiny", "--out", dir.string()};
    args.insert(args.end(), c.begin(), c.end());
    args.insert(args.end(), {"run", "latency.shared"});
    expect_one_line_error(gp(args), c[0]);
    EXPECT_FALSE(fs::exists(dir)) << c[0];
  }
  expect_one_line_error(gp({"--device", "model:tiny", "--out", "", "run", "latency.shared"}),
                        "--out");
}

}  // namespace
}  // namespace gpuprobe

namespace gpuprobe {
namespace {

json run_with(const std::vector<std::tuple<std::string, double, double>>& findings) {
  json f = json::array();
  for (const auto& [name, value, conf] : findings)
    f.push_back({{"name", name},
                 {"value", value},
                 {"unit", "GB/s"},
                 {"confidence", conf},
                 {"method", "m"}});
  return {{"experiments", {{{"id", "x"}, {"status", "passed"}, {"findings", f}}}}};
}

TEST(TrustRepeat, TableJudgesEachFindingAgainstItsOwnStatedSpread) {
  // The copy-bandwidth case of issue 9: 3212, 3746, 3754 GB/s, each run confident.
  const std::vector<json> runs = {
      run_with({{"stable", 100.0, 0.9}, {"moving", 3212, 0.99}, {"sometimes", 5, 0.9}}),
      run_with({{"stable", 100.1, 0.9}, {"moving", 3746, 0.99}}),
      run_with({{"stable", 99.9, 0.9}, {"moving", 3754, 0.99}, {"sometimes", 5, 0.9}})};
  const auto t = repeatability::table(runs);
  EXPECT_EQ(t["runs"], 3);
  std::map<std::string, json> by;
  for (const auto& r : t["findings"]) by[r["name"]] = r;
  EXPECT_FALSE(by["stable"]["beyond_stated_spread"].get<bool>());
  EXPECT_TRUE(by["moving"]["beyond_stated_spread"].get<bool>());
  EXPECT_NEAR(by["moving"]["run_to_run_relative_spread"].get<double>(), (3754.0 - 3212) / 3746,
              1e-12);
  EXPECT_EQ(by["moving"]["values"], json({3212.0, 3746.0, 3754.0}));
  EXPECT_TRUE(by["sometimes"]["values"][1].is_null());
  EXPECT_EQ(by["sometimes"]["runs_with_finding"], 2);
  EXPECT_EQ(t["beyond"], 1);
  // The same movement with a confidence that states it (0.3) is within its spread.
  const auto honest =
      repeatability::table({run_with({{"moving", 3212, 0.3}}), run_with({{"moving", 3746, 0.3}})});
  EXPECT_FALSE(honest["findings"][0]["beyond_stated_spread"].get<bool>());
  const auto text = repeatability::format(t);
  EXPECT_LT(text.find("moving"), text.find("stable")) << text;  // worst first
  EXPECT_NE(text.find("1 of 3 findings moved beyond"), std::string::npos) << text;
}

// cache.l2.ways_lower_bound on the H200: 64, 32, 32 ways at confidence 0.25. Bounds do not
// contradict each other (the tightest holds for both): not beyond, the tightest recorded.
TEST(TrustRepeat, BoundsAreNotJudgedAsEstimates) {
  const auto t = repeatability::table({run_with({{"c.ways_lower_bound", 64, 0.25}}),
                                       run_with({{"c.ways_lower_bound", 32, 0.25}}),
                                       run_with({{"c.ways_lower_bound", 32, 0.25}})});
  const auto& row = t["findings"][0];
  EXPECT_FALSE(row["beyond_stated_spread"].get<bool>());
  EXPECT_EQ(row["bound"], "lower");
  EXPECT_EQ(row["tightest"], 64.0);
  EXPECT_GT(row["max_z"].get<double>(), 1.0);  // an estimate this far apart would be beyond
  EXPECT_TRUE(repeatability::table({run_with({{"c.ways_estimate", 64, 0.25}}),
                                    run_with({{"c.ways_estimate", 32,
                                               0.25}})})["findings"][0]["beyond_stated_spread"]
                  .get<bool>());
  EXPECT_NE(repeatability::format(t).find("lower bound"), std::string::npos);
}

TEST(TrustRepeat, CommandWritesRepeatJson) {
  const auto dir = temp_dir("repeat");
  const auto o =
      gp({"--device", "model:tiny", "--out", dir.string(), "repeat", "2", "latency.shared"});
  ASSERT_EQ(o.code, 0) << o.err;
  std::ifstream in(dir / "repeat.json");
  const auto t = json::parse(in);
  EXPECT_EQ(t["runs"], 2);
  EXPECT_FALSE(t["findings"].empty());
  EXPECT_TRUE(fs::exists(dir / "run2" / "result.json"));
  expect_one_line_error(gp({"--device", "model:tiny", "--out", (dir / "x").string(), "repeat", "1",
                            "latency.shared"}),
                        "1");
  EXPECT_FALSE(fs::exists(dir / "x"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuprobe
