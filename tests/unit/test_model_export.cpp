// Measurement -> model -> measurement: the hierarchy exported from the committed H200 result,
// replayed on the modelled GPU, gives the same findings back.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli/result_commands.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "device/model_export.hpp"

namespace gpuprobe {
namespace {

nlohmann::json committed_h200() {
  std::ifstream in(std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/result.json");
  EXPECT_TRUE(in.good());
  return nlohmann::json::parse(in);
}

/// `gpuprobe replay` of `result`, written to `dir` (emptied first): the replay's result.json.
nlohmann::json replay_of(const nlohmann::json& result, const std::filesystem::path& dir) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto file = (dir / "result_in.json").string();
  std::ofstream(file) << result.dump();
  std::ostringstream out;
  EXPECT_EQ(cli::replay_command(file, (dir / "replay").string(), out), 0);
  std::ifstream in(dir / "replay" / "result.json");
  return nlohmann::json::parse(in);
}

/// Sets cache.l2.mixture's l2.mixture.placement_unit in its record `e` to `bytes`, adding the
/// finding when the record has none.
void set_placement_unit(nlohmann::json& e, double bytes) {
  for (auto& x : e["findings"])
    if (x.at("name") == "l2.mixture.placement_unit") {
      x["value"] = bytes;
      return;
    }
  e["findings"].push_back({{"name", "l2.mixture.placement_unit"},
                           {"value", bytes},
                           {"unit", "bytes"},
                           {"confidence", 0.99},
                           {"method", "test"}});
}

/// A curve's CSV as its header and rows of numbers ("null" and text read as NaN).
struct Csv {
  std::vector<std::string> head;
  std::vector<std::vector<double>> rows;
  std::size_t col(const std::string& name) const {
    return static_cast<std::size_t>(std::find(head.begin(), head.end(), name) - head.begin());
  }
};
Csv read_csv(const std::filesystem::path& file) {
  Csv c;
  std::ifstream in(file);
  std::string line, cell;
  if (!std::getline(in, line)) return c;
  for (std::stringstream h(line); std::getline(h, cell, ',');) c.head.push_back(cell);
  while (std::getline(in, line)) {
    std::vector<double> v;
    for (std::stringstream row(line); std::getline(row, cell, ',');) {
      char* end = nullptr;
      const double x = std::strtod(cell.c_str(), &end);
      v.push_back(end != cell.c_str() && *end == '\0' ? x : std::nan(""));
    }
    c.rows.push_back(v);
  }
  return c;
}

/// A replayed point judged against a range (`kind` = "allocations" or "runs"): the range holds
/// the measurement, and the distance outside it is 0 exactly where the replay lies inside.
void expect_range_holds(const nlohmann::json& p, const std::string& kind) {
  const double lo = p.at(kind + "_low_cycles"), hi = p.at(kind + "_high_cycles");
  const double m = p.at("measured_cycles"), rep = p.at("replayed_cycles");
  EXPECT_LE(lo, m);
  EXPECT_GE(hi, m);
  EXPECT_EQ(p.at("beyond_" + kind + "_percent").get<double>() == 0, rep >= lo && rep <= hi)
      << p.dump();
}

std::map<std::string, double> findings_of(const nlohmann::json& result) {
  std::map<std::string, double> f;
  for (const auto& e : result.at("experiments"))
    for (const auto& x : e.value("findings", nlohmann::json::array())) f[x["name"]] = x["value"];
  return f;
}

TEST(ModelExport, ReplayingTheMeasuredH200GivesItsFindingsBack) {
  const auto result = committed_h200();
  const auto measured = findings_of(result);
  const auto model_json = device::model_from_result(result);
  EXPECT_TRUE(model_json.contains("not_measured"));
  device::ModelDevice dev(device::model_config_from_json(model_json));
  RunOptions o;
  FindingBoard board;
  Context ctx{dev, o, board};
  ExperimentResult r;
  const auto* sweep = Registry::builtin().find("latency.sweep");
  sweep->run(ctx, r);
  sweep->analyze(r);
  std::map<std::string, double> replayed;
  for (const auto& f : r.findings) replayed[f.name] = f.value;
  ASSERT_TRUE(replayed.count("l1.capacity"));
  EXPECT_NEAR(replayed["l1.capacity"], measured.at("l1.capacity"),
              0.02 * measured.at("l1.capacity"));
  // The exported L2 is two partitions of what cache.l2.far_hit measured one to hold
  // (l2.replica_capacity): the model's sweep finds its knees there. The H200's knees are soft:
  // the sweep's l2.capacity and l2.near_capacity are where the latency first rises, which moves
  // with the sweep's points (55.4 to 57.9 MiB over three runs of one card), so they lie below
  // the model's, within 10 % for the L2 and 20 % for the partition (GPU-00f7d886: 57.3 MB
  // against 60.9, 25.9 against 30.2 at confidence 0.06).
  ASSERT_TRUE(replayed.count("l2.capacity"));
  ASSERT_TRUE(measured.count("l2.replica_capacity"));
  EXPECT_NEAR(replayed["l2.capacity"], 2 * measured.at("l2.replica_capacity"),
              0.02 * 2 * measured.at("l2.replica_capacity"));
  EXPECT_NEAR(replayed["l2.capacity"], measured.at("l2.capacity"),
              0.10 * measured.at("l2.capacity"));
  ASSERT_TRUE(replayed.count("l2.near_capacity"));
  EXPECT_NEAR(replayed["l2.near_capacity"], measured.at("l2.replica_capacity"),
              0.02 * measured.at("l2.replica_capacity"));
  EXPECT_NEAR(replayed["l2.near_capacity"], measured.at("l2.near_capacity"),
              0.20 * measured.at("l2.near_capacity"));
  for (const char* n : {"l1.hit_latency", "l2.hit_latency"}) {
    ASSERT_TRUE(replayed.count(n)) << n;
    EXPECT_NEAR(replayed[n], measured.at(n), 1.0) << n;
  }
  // With the DRAM latency of each home measured, the model's DRAM plateau is their mean (its
  // address space homes exactly half the lines on each side); the GPU's chase buffer sits on
  // physical pages whose home fraction is not exactly a half (l2.partition.line_fraction), so
  // the two agree within 2 %, not within a cycle.
  ASSERT_TRUE(replayed.count("dram.latency"));
  EXPECT_NEAR(replayed["dram.latency"], measured.at("dram.latency"),
              measured.count("dram.latency_near_home") ? 0.02 * measured.at("dram.latency") : 1.0);
  // The mixed region between the L2 knees: a chase that overflows the SM's partition (home
  // lines and copies of far-homed ones) reads far-homed lines as far hits and misses its own
  // home lines to DRAM. With the DRAM latency of each home measured (cache.l2.far_hit) the
  // exported model's plateau there is (far hit + near-home DRAM) / 2, the measured one within
  // 3 %; without it both homes miss at dram.latency and the plateau lies above the measurement.
  ASSERT_TRUE(replayed.count("l2.mixed_latency"));
  EXPECT_GT(replayed["l2.mixed_latency"], measured.at("l2.hit_latency"));
  EXPECT_LT(replayed["l2.mixed_latency"], measured.at("dram.latency"));
  if (measured.count("dram.latency_near_home"))
    EXPECT_NEAR(replayed["l2.mixed_latency"], measured.at("l2.mixed_latency"),
                0.03 * measured.at("l2.mixed_latency"));
  else
    EXPECT_GT(replayed["l2.mixed_latency"], 1.03 * measured.at("l2.mixed_latency"));
}

// `gpuprobe replay` on the committed H200 result: every latency.sweep point measured on the
// exported model. The plateaus replay (their points within 3 %); the worst error, and the
// reason the whole curve is not within 3 %, lies between the near-partition and L2 knees, where
// the exported model's near copies and far hits do not reproduce the measured mixture.
TEST(ModelExport, ReplayOfTheH200SweepLocatesItsWorstRegion) {
  const auto dir = std::filesystem::temp_directory_path() / "gpuprobe_replay_test";
  std::filesystem::remove_all(dir);
  std::ostringstream out;
  ASSERT_EQ(cli::replay_command(std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/result.json",
                                dir.string(), out),
            0);
  std::ifstream in(dir / "result.json");
  ASSERT_TRUE(in.good());
  const auto r = nlohmann::json::parse(in);
  const auto& e = r.at("experiments").at(0);
  std::map<std::string, nlohmann::json> f;
  for (const auto& x : e.at("findings")) f[x.at("name")] = x;
  ASSERT_TRUE(f.count("replay.worst_error_percent"));
  // The knees are soft on the H200 and sharp in the model (16-way LRU sets filled evenly): the
  // worst point lies at a knee, never on a plateau.
  EXPECT_GT(f["replay.worst_error_percent"]["value"].get<double>(), 3.0);
  // Mid-plateau points (away from the knees) replay within 3 %; so does the mixed plateau
  // between the partition's knee and the L2's once the DRAM latency by home is measured.
  const auto m = findings_of(committed_h200());
  const double partition = m.at("l2.capacity") / 2;
  for (const auto& p : e.at("samples").at("points")) {
    const double ws = p.at("working_set_bytes");
    const bool mid_l1 = ws <= 0.9 * m.at("l1.capacity");
    const bool mid_near = ws >= 2 * m.at("l1.capacity") && ws <= 0.9 * m.at("l2.near_capacity");
    const bool mid_mixed = m.count("dram.latency_near_home") && ws >= 1.5 * partition &&
                           ws <= 0.95 * m.at("l2.capacity");
    const bool mid_dram = ws >= 1.5 * m.at("l2.capacity");
    const bool plateau = mid_l1 || mid_near || mid_mixed || mid_dram;
    if (plateau) EXPECT_LT(std::fabs(p.at("error_percent").get<double>()), 3.0) << p.dump();
    if (std::fabs(p.at("working_set_bytes").get<double>() -
                  f["replay.worst_error_percent"]["working_set_bytes"].get<double>()) < 1)
      EXPECT_FALSE(plateau) << "the worst point lies on a plateau: " << p.dump();
  }
  // The replacement-class comparison: the committed result's L2 class is LRU (deterministic
  // victims of a 16-line set), so the LRU row is the replay itself past 2 x l1.capacity.
  const auto& sens = e.at("statistics").at("l2_policy_sensitivity");
  const auto& by = sens.at("worst_error_percent_by_region");
  for (const char* p : {"lru", "fifo", "tree_plru", "random"}) EXPECT_TRUE(by.contains(p)) << p;
  if (f.count("replay.l2_mixed.worst_error_percent"))
    EXPECT_NEAR(by.at("lru").at("l2_mixed").at("error_percent").get<double>(),
                f["replay.l2_mixed.worst_error_percent"]["value"].get<double>(), 1e-9);
  EXPECT_TRUE(std::filesystem::exists(dir / "report.html"));
  std::filesystem::remove_all(dir);
}

// On the L2's slope the replay is also judged against the range other allocations of one size
// give (cache.l2.mixture's draws). The committed result is given draws at its first four points
// (0.95 .. 1.25 x the partition) whose every load is a near hit: the range then reaches down to
// the near level, and the replay's worst slope point (over 5 % below the sweep on every
// result committed this session: 9.9, 15.5 and 17.3 %), lies inside it.
TEST(ModelExport, ReplayJudgesTheSlopeAgainstOtherAllocations) {
  auto result = committed_h200();
  bool drawn = false;
  for (auto& e : result.at("experiments")) {
    if (e.at("id") != "cache.l2.mixture") continue;
    e.at("samples").erase("draws");
    const auto& pts = e.at("samples").at("points");
    std::vector<double> ref;
    for (const auto& c : e.at("samples").at("reference").at("cycles")) ref.push_back(c);
    std::sort(ref.begin(), ref.end());
    const auto near = static_cast<std::uint32_t>(ref[ref.size() / 2]);
    nlohmann::json draws = nlohmann::json::array();
    for (std::size_t k : {0, 1, 2, 3})
      draws.push_back({{"working_set_bytes", pts.at(k).at("working_set_bytes")},
                       {"offset_bytes", 64 << 20},
                       {"cycles_histogram", nlohmann::json::array({{near, 5000}})}});
    e["samples"]["draws"] = draws;
    set_placement_unit(e, 131072);  // what results/h200 records
    drawn = true;
  }
  ASSERT_TRUE(drawn);
  const auto dir = std::filesystem::temp_directory_path() / "gpuprobe_replay_allocations";
  const auto r = replay_of(result, dir);
  const auto& e = r.at("experiments").at(0);
  std::map<std::string, nlohmann::json> f;
  for (const auto& x : e.at("findings")) f[x.at("name")] = x;
  ASSERT_TRUE(f.count("replay.l2_mixed.worst_beyond_allocations_percent"));
  EXPECT_LE(f["replay.l2_mixed.worst_beyond_allocations_percent"]["value"].get<double>(),
            f["replay.l2_mixed.worst_error_percent"]["value"].get<double>());
  std::size_t judged = 0;
  nlohmann::json worst_judged;
  for (const auto& p : e.at("samples").at("points")) {
    if (!p.contains("beyond_allocations_percent")) continue;
    ++judged;
    expect_range_holds(p, "allocations");
    if (worst_judged.is_null() || std::fabs(p.at("error_percent").get<double>()) >
                                      std::fabs(worst_judged.at("error_percent").get<double>()))
      worst_judged = p;
  }
  EXPECT_GE(judged, 3u);
  ASSERT_FALSE(worst_judged.is_null());
  EXPECT_GT(std::fabs(worst_judged.at("error_percent").get<double>()), 5.0) << worst_judged.dump();
  EXPECT_LT(worst_judged.at("beyond_allocations_percent").get<double>(), 1.0);
  EXPECT_EQ(f["replay.l2_mixed.worst_beyond_allocations_percent"]["points_judged"], judged);
  // The random-placement bound: 128 KiB blocks placed at random lose near hits well before the
  // evenly placed model does (at 26.8 MB, where the exported LRU model still hits near, at
  // the result's l2.hit_latency).
  const auto& worst =
      e.at("statistics").at("l2_policy_sensitivity").at("worst_error_percent_by_region");
  ASSERT_TRUE(worst.at("random_placement").is_object()) << worst.dump();
  EXPECT_TRUE(worst.at("random_placement").contains("l2_mixed"));
  const auto csv = read_csv(dir / "replay" / "model.replay.l2_policy_sensitivity.csv");
  ASSERT_LT(csv.col("random_placement"), csv.head.size());
  const double near = findings_of(result).at("l2.hit_latency");
  bool seen = false;
  for (const auto& v : csv.rows) {
    if (std::fabs(v[0] - 26762368) > 1) continue;
    seen = true;
    EXPECT_NEAR(v[csv.col("lru")], near, 0.01 * near);  // the evenly placed model still hits near
    EXPECT_GT(v[csv.col("random_placement")], v[csv.col("lru")] + 20);
  }
  EXPECT_TRUE(seen);
  std::filesystem::remove_all(dir);
}

// Why the off points miss: a point off by more than 3 % whose measurement lies between the
// replay (even placement) and the random-placement bound counts as placement-decided; one
// beyond either is listed as unexplained. Three slope points of the committed result are
// moved: one half-way between the two placements, one 20 % above the higher, one 20 % below
// the lower. The L1's knee has no placement bound.
TEST(ModelExport, ReplaySaysWhichOffPointsPlacementExplains) {
  const auto dir = std::filesystem::temp_directory_path() / "gpuprobe_replay_off_points";
  auto result = committed_h200();
  const auto first = replay_of(result, dir);
  // Per working set: replayed and random-placement cycles on the slope (l2_mixed points the
  // sensitivity covers, where the two placements differ by more than 10 %).
  std::map<double, std::pair<double, double>> slope;
  std::map<double, double> replayed;
  for (const auto& p : first.at("experiments").at(0).at("samples").at("points"))
    if (p.at("region") == "l2_mixed") replayed[p.at("working_set_bytes")] = p.at("replayed_cycles");
  const auto csv = read_csv(dir / "replay" / "model.replay.l2_policy_sensitivity.csv");
  const auto k = csv.col("random_placement");
  ASSERT_LT(k, csv.head.size());
  for (const auto& row : csv.rows) {
    if (!replayed.count(row[0]) || std::isnan(row[k])) continue;
    const double rep = replayed[row[0]], rnd = row[k];
    if (std::fabs(rnd - rep) > 0.1 * rep) slope[row[0]] = {rep, rnd};
  }
  ASSERT_GE(slope.size(), 2u);
  ASSERT_GE(slope.size(), 3u);
  const double between_ws = slope.begin()->first, beyond_ws = slope.rbegin()->first;
  const double below_ws = std::next(slope.begin())->first;
  for (auto& e : result.at("experiments")) {
    if (e.at("id") != "latency.sweep") continue;
    for (auto& p : e.at("samples").at("points")) {
      const double ws = p.at("working_set_bytes");
      const auto [rep, rnd] = slope.count(ws) ? slope[ws] : std::make_pair(0.0, 0.0);
      if (ws == between_ws) p["cycles_per_load"]["median"] = (rep + rnd) / 2;
      if (ws == beyond_ws) p["cycles_per_load"]["median"] = 1.2 * std::max(rep, rnd);
      if (ws == below_ws) p["cycles_per_load"]["median"] = 0.8 * std::min(rep, rnd);
    }
  }
  const auto r = replay_of(result, dir);
  const auto& e = r.at("experiments").at(0);
  std::map<std::string, nlohmann::json> f;
  for (const auto& x : e.at("findings")) f[x.at("name")] = x;
  // Every off point of a region is counted once, between or unexplained.
  std::map<std::string, std::size_t> off;
  for (const auto& p : e.at("samples").at("points"))
    if (std::fabs(p.at("error_percent").get<double>()) > 3) ++off[p.at("region")];
  for (const auto& [region, n] : off) {
    const auto name = "replay." + region + ".off_points_between_placements";
    if (!f.count(name)) continue;  // every off point without a bound (the L1's knee)
    EXPECT_EQ(f[name].at("off_points").get<std::size_t>(), n);
    EXPECT_EQ(f[name].at("between_placements").get<std::size_t>() +
                  f[name].at("unexplained").size() + f[name].at("without_bound").get<std::size_t>(),
              n);
    EXPECT_NEAR(f[name].at("value").get<double>(),
                f[name].at("between_placements").get<double>() /
                    (n - f[name].at("without_bound").get<double>()),
                1e-12);
  }
  const auto& mixed = f.at("replay.l2_mixed.off_points_between_placements");
  EXPECT_EQ(mixed.at("without_bound").get<std::size_t>(), 0u);  // the slope has its bound
  bool between_listed = false, beyond_listed = false, below_listed = false;
  for (const auto& u : mixed.at("unexplained")) {
    const double ws = u.at("working_set_bytes").get<double>();
    between_listed |= ws == between_ws;
    beyond_listed |= ws == beyond_ws;
    below_listed |= ws == below_ws;
    EXPECT_EQ(u.at("bound"), "random_placement");
  }
  EXPECT_FALSE(between_listed) << mixed.dump();
  EXPECT_TRUE(beyond_listed) << mixed.dump();
  EXPECT_TRUE(below_listed) << mixed.dump();
  // The L1's knee (in l2_near, below 2 x l1.capacity) is never judged against a placement.
  const double l1_cap = findings_of(result).at("l1.capacity");
  for (const auto& [name, x] : f)
    if (name.find(".off_points_between_placements") != std::string::npos)
      for (const auto& u : x.at("unexplained"))
        EXPECT_GE(u.at("working_set_bytes").get<double>(), 2 * l1_cap) << name;
  EXPECT_GE(mixed.at("bounds").value("random_placement", 0), 1);
  std::filesystem::remove_all(dir);
}

// The replay judged against the GPU's own runs (--runs): the committed result and its three
// repeat runs, and the committed result given as its own run (a range of one value at every
// point, so the distance outside it is the replay's error and nothing spreads).
TEST(ModelExport, ReplayIsJudgedAgainstTheGpusOwnRuns) {
  const std::string res = std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/";
  const auto dir = std::filesystem::temp_directory_path() / "gpuprobe_replay_runs";
  const auto replay_with = [&](const std::vector<std::string>& runs) {
    std::filesystem::remove_all(dir);
    std::ostringstream out;
    EXPECT_EQ(cli::replay_command(res + "result.json", dir.string(), out, runs), 0);
    std::ifstream in(dir / "result.json");
    const auto r = nlohmann::json::parse(in);
    std::map<std::string, nlohmann::json> f;
    for (const auto& x : r.at("experiments").at(0).at("findings")) f[x.at("name")] = x;
    return std::make_pair(r.at("experiments").at(0), f);
  };
  {
    const auto [e, f] = replay_with({res + "result.json"});
    ASSERT_TRUE(f.count("replay.runs_worst_spread_percent"));
    EXPECT_EQ(f.at("replay.runs_worst_spread_percent").at("value").get<double>(), 0.0);
    EXPECT_EQ(f.at("replay.runs_worst_spread_percent").at("confidence").get<double>(), 0.0);
    EXPECT_NEAR(f.at("replay.worst_beyond_runs_percent").at("value").get<double>(),
                f.at("replay.worst_error_percent").at("value").get<double>(), 1e-9);
    EXPECT_NEAR(f.at("replay.points_within_3_percent_of_runs").at("value").get<double>(),
                f.at("replay.points_within_3_percent").at("value").get<double>(), 1e-12);
  }
  const auto [e, f] = replay_with({res + "repeat/run1/result.json", res + "repeat/run2/result.json",
                                   res + "repeat/run3/result.json"});
  std::size_t judged = 0;
  for (const auto& p : e.at("samples").at("points")) {
    if (!p.contains("runs_low_cycles")) continue;
    ++judged;
    expect_range_holds(p, "runs");
    EXPECT_GE(p.at("runs_at_point").get<int>(), 2);
  }
  EXPECT_EQ(f.at("replay.points_within_3_percent_of_runs").at("points_judged").get<std::size_t>(),
            judged);
  EXPECT_GE(judged, 10u);
  // On the committed card the sweep's slope moves between runs by more than the 3 % the replay
  // is asked for, clearly beyond each run's noise.
  EXPECT_GT(f.at("replay.runs_worst_spread_percent").at("value").get<double>(), 3.0);
  EXPECT_GT(f.at("replay.runs_worst_spread_percent").at("confidence").get<double>(), 0.9);
  EXPECT_EQ(f.at("replay.runs_worst_spread_percent").at("region"), "l2_mixed");
  std::filesystem::remove_all(dir);
}

// A placement unit the model cannot place (3000 B: no power of two) makes the random-placement
// comparison not applicable, with the reason; the replay itself still runs.
TEST(ModelExport, ReplaySkipsAPlacementUnitItCannotPlace) {
  auto result = committed_h200();
  for (auto& e : result.at("experiments")) {
    if (e.at("id") == "cache.l2.mixture") set_placement_unit(e, 3000);
  }
  const auto dir = std::filesystem::temp_directory_path() / "gpuprobe_replay_bad_unit";
  const auto r = replay_of(result, dir);
  const auto& by = r.at("experiments")
                       .at(0)
                       .at("statistics")
                       .at("l2_policy_sensitivity")
                       .at("worst_error_percent_by_region");
  ASSERT_TRUE(by.at("random_placement").is_string()) << by.dump();
  EXPECT_EQ(by.at("random_placement").get<std::string>().rfind("not applicable", 0), 0u);
  std::filesystem::remove_all(dir);
}

// The structure findings reach the model: ways and replacement as measured, nothing of them
// under not_measured; a result naming another class (or the sweeps' tie) is modelled so.
TEST(ModelExport, StructureFindingsReachTheModel) {
  auto result = committed_h200();
  const auto m = device::model_from_result(result);
  EXPECT_EQ(m.at("l2_ways"), 16);
  EXPECT_EQ(m.at("l2_policy"), "lru");
  for (const auto& n : m.at("not_measured"))
    EXPECT_EQ(n.get<std::string>().find("replacement"), std::string::npos) << n;
  for (auto& e : result.at("experiments"))
    for (auto& f : e.at("findings"))
      if (f.at("name") == "cache.l2.replacement") f["policy"] = "random_or_tree_plru";
  const auto tied = device::model_from_result(result);
  EXPECT_EQ(tied.at("l2_policy"), "tree_plru");
  bool said = false;
  for (const auto& n : tied.at("not_measured"))
    said =
        said || n.get<std::string>().find("tied between random and tree-PLRU") != std::string::npos;
  EXPECT_TRUE(said) << tied.at("not_measured");
}

// What cache.l2.persisting and cache.l2.eviction_priority measured reaches the model and the
// Accel-Sim text (as comments: its syntax has no set-aside); without them the model has none
// and says so.
TEST(ModelExport, PersistingLimitsAndDiscardReachTheModel) {
  auto result = committed_h200();
  const auto plain = device::model_from_result(result);
  EXPECT_FALSE(plain.contains("l2_persisting_max_set_aside_bytes"));
  bool said = false;
  for (const auto& n : plain.at("not_measured"))
    said = said || n.get<std::string>().find("persisting L2 set-aside") != std::string::npos;
  EXPECT_TRUE(said) << plain.at("not_measured");
  const auto finding = [](const char* name, double value, nlohmann::json extra) {
    extra["name"] = name;
    extra["value"] = value;
    return extra;
  };
  result["experiments"].push_back(
      {{"id", "cache.l2.persisting"},
       {"status", "passed"},
       {"findings",
        nlohmann::json::array(
            {finding("l2.persisting.max_set_aside", 39321600, nlohmann::json::object()),
             finding("l2.persisting.max_window", 134217728, nlohmann::json::object())})}});
  result["experiments"].push_back(
      {{"id", "cache.l2.eviction_priority"},
       {"status", "passed"},
       {"findings", nlohmann::json::array(
                        {finding("l2.discard.drops_dirty", 0, {{"outcome", "written_back"}}),
                         finding("l2.evict_last.cap_rule", 1, {{"label", "byte_budget"}})})}});
  const auto m = device::model_from_result(result);
  EXPECT_EQ(m.at("l2_persisting_byte_budget"), true);
  EXPECT_EQ(device::model_config_from_json(m).persisting.byte_budget, true);
  EXPECT_EQ(m.at("l2_persisting_max_set_aside_bytes").get<std::uint64_t>(), 39321600u);
  EXPECT_EQ(m.at("l2_access_policy_max_window_bytes").get<std::uint64_t>(), 134217728u);
  EXPECT_EQ(m.at("l2_discard_writes_back"), true);
  const std::string text = device::accelsim_config(m);
  EXPECT_NE(text.find("# L2 persisting (not in the syntax): a set-aside of up to 39321600 B"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("discard.global.L2 of a dirty line: written back first"), std::string::npos);
  EXPECT_NE(text.find("a byte budget over every set"), std::string::npos) << text;
}

// Measured L1 tags (cache.l1.tag_sets with its XOR masks) that name more lines than the L1
// holds give a decoupled L1: the masks index the tags, the carve-out sizes the lines, and the
// data victim is listed as not measured. Masks that do not match the sets are not used.
TEST(ModelExport, MeasuredL1TagsMakeADecoupledL1) {
  auto result = committed_h200();
  std::vector<std::uint64_t> masks;
  for (int i = 0; i < 9; ++i) masks.push_back(std::uint64_t{1} << (7 + i));
  masks[0] |= std::uint64_t{1} << 16;
  nlohmann::json tag = {{"name", "cache.l1.tag_sets"},
                        {"value", 512.0},
                        {"unit", "sets"},
                        {"confidence", 0.8},
                        {"masks", masks}};
  for (auto& e : result.at("experiments"))
    if (e.at("id") == "cache.l1.ways") e["findings"].push_back(tag);
  const auto m = device::model_from_result(result);
  EXPECT_EQ(m.at("l1_tag_bytes"), 512u * 4 * 128);
  EXPECT_EQ(m.at("l1_set_hash_masks").size(), 9u);
  EXPECT_EQ(m.at("l1_set_hash_masks")[0], masks[0]);
  // The committed result measured the data victim (set_cycle): the model takes it.
  EXPECT_EQ(m.at("l1_data_victim"), "set_cycle");
  const auto says_victim = [](const nlohmann::json& model) {
    bool said = false;
    for (const auto& n : model.at("not_measured"))
      said = said || n.get<std::string>().find("l1 data victim") != std::string::npos;
    return said;
  };
  EXPECT_FALSE(says_victim(m)) << m.at("not_measured");
  // The model it describes loads and runs.
  EXPECT_NO_THROW(device::model_config_from_json(m));
  // Without a measured data victim the model keeps own_set and lists it as not measured.
  auto unmeasured = result;
  for (auto& e : unmeasured.at("experiments")) {
    auto& fs = e.at("findings");
    for (auto it = fs.begin(); it != fs.end();)
      it = it->at("name") == "cache.l1.data_victim" ? fs.erase(it) : it + 1;
  }
  const auto u = device::model_from_result(unmeasured);
  EXPECT_EQ(u.at("l1_data_victim"), "own_set");
  EXPECT_TRUE(says_victim(u)) << u.at("not_measured");
  for (auto& e : result.at("experiments"))
    for (auto& f : e.at("findings"))
      if (f.at("name") == "cache.l1.tag_sets") f["masks"] = {128, 256};
  const auto bad = device::model_from_result(result);
  EXPECT_EQ(bad.at("l1_tag_bytes"), 0u);
  EXPECT_TRUE(bad.at("l1_set_hash_masks").empty());
}

TEST(ModelExport, BadModelFilesAreRefused) {
  auto j = device::model_from_result(committed_h200());
  j.erase("l2_ways");
  EXPECT_THROW(device::model_config_from_json(j), UsageError);
  auto k = device::model_from_result(committed_h200());
  k["l2_near_capacity_bytes"] = k["l2_capacity_bytes"].get<std::uint64_t>() * 2;
  EXPECT_THROW(device::model_config_from_json(k), UsageError);
  nlohmann::json empty = {{"schema_version", 1},
                          {"experiments", nlohmann::json::array()},
                          {"device", nlohmann::json::object()}};
  EXPECT_THROW(device::model_from_result(empty), UsageError);
}

}  // namespace
}  // namespace gpuprobe
