// The typed finding values and the summary card, on the committed H200 result and on a
// modelled run: categories, yes/no and masks in words, numbers at their precision, the card
// on one screen with every level, and `gpuprobe summary` for good and bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli_runner.hpp"
#include "core/experiment.hpp"
#include "core/finding_value.hpp"
#include "report/fleet.hpp"
#include "report/summary.hpp"
#include "report/writer.hpp"

namespace gpuprobe {
namespace {

using nlohmann::json;
using test_cli::gp;

const json& h200() {
  static const json r = [] {
    std::ifstream in(std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/result.json");
    return json::parse(in);
  }();
  return r;
}

json finding_named(const json& result, const std::string& name) {
  for (const auto& e : result.at("experiments"))
    for (const auto& f : e.value("findings", json::array()))
      if (f.value("name", "") == name) return f;
  ADD_FAILURE() << "no finding " << name;
  return json::object();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

TEST(FindingValue, RecordedH200CategoriesMasksAndBooleansInWords) {
  const TypedValue policy = typed_value(finding_named(h200(), "cache.l1.replacement"));
  EXPECT_EQ(policy.kind, ValueKind::kCategory);
  EXPECT_EQ(policy.text, "LRU");
  EXPECT_EQ(policy.label, "lru");
  const TypedValue mask = typed_value(finding_named(h200(), "l2.partition.hash_mask"));
  EXPECT_EQ(mask.kind, ValueKind::kMask);
  EXPECT_EQ(mask.text, "0xab000");
  const TypedValue repl = typed_value(finding_named(h200(), "l2.replication"));
  EXPECT_EQ(repl.kind, ValueKind::kBool);
  EXPECT_EQ(repl.text, "yes");
  const TypedValue victim = typed_value(finding_named(h200(), "cache.l1.data_victim"));
  EXPECT_EQ(victim.label, "set_cycle");
  EXPECT_EQ(typed_value(finding_named(h200(), "l1.capacity")).kind, ValueKind::kNumber);
}

TEST(FindingValue, KindFromKeyEvenWithoutUnitAndCodeWithoutLabel) {
  // A category found by its key: the code alone names the class.
  const json f = {{"name", "cache.l2.replacement"}, {"value", 1.0}, {"unit", ""}};
  EXPECT_EQ(typed_value(f).text, "FIFO");
  const json tie = {{"name", "cache.l1.replacement"}, {"value", -1.0}, {"unit", "class"}};
  EXPECT_EQ(typed_value(tie).label, "random_or_tree_plru");
  const json mask = {{"name", "l2.partition.hash_mask"}, {"value", 700416.0}, {"unit", "mask"}};
  EXPECT_EQ(typed_value(mask).text, "0xab000");  // no mask_hex: computed from the value
  const json no = {{"name", "x.enabled"}, {"value", 0.0}, {"unit", "bool"}};
  EXPECT_EQ(display_text(no), "no");
}

TEST(FindingValue, NumbersAtTheirPrecision) {
  EXPECT_EQ(format_number(454.860628847842), "454.9");
  EXPECT_EQ(format_number(454.860628847842, 0.33), "454.86");
  EXPECT_EQ(format_number(454.860628847842, 3.3), "454.9");
  EXPECT_EQ(format_number(454.860628847842, 33), "455");
  EXPECT_EQ(format_number(0.00392656), "0.003927");
  EXPECT_EQ(format_number(4582.42), "4582.4");
  EXPECT_EQ(format_number(16.0), "16");
  EXPECT_EQ(format_number(4.81882e11), "4.819e+11");
  EXPECT_EQ(
      format_quantity(2.71928e7, "bytes").first + " " + format_quantity(2.71928e7, "bytes").second,
      "25.93 MiB");
  EXPECT_EQ(format_quantity(222208, "bytes").first, "217");
  EXPECT_EQ(format_quantity(512, "bytes").second, "B");
}

TEST(FindingValue, EdgeCasesNeitherPadNorMisname) {
  EXPECT_EQ(format_number(32.02, 1e-30), "32.02");     // float-noise error: as if none
  EXPECT_EQ(format_number(1e-12, 1e-13), "1.00e-12");  // two digits of the error: 0.10e-12
  const json huge = {{"name", "cache.l1.replacement"}, {"value", 4294967296.0}, {"unit", "class"}};
  EXPECT_NE(typed_value(huge).text, "LRU");
  const json nan_bool = {{"name", "l2.replication"}, {"unit", "bool"}};
  EXPECT_EQ(display_text(nan_bool), "-");
}

TEST(SummaryCard, ThrottledEverywhereStillOneScreen) {
  json r = h200();
  for (auto& e : r["experiments"]) e["clocks"]["throttled"] = true;
  const std::string text = report::summary_text(report::summary_card(r));
  EXPECT_LE(lines_of(text).size(), 30u) << text;
  EXPECT_NE(text.find("throttling during"), std::string::npos);
}

TEST(FindingValue, WrittenBesideTheNumberAndNeverReadBack) {
  Finding f{"cache.l2.replacement", 0.0, "class", 0.9, "m", {{"policy", "lru"}}};
  const json j = to_json(f);
  ASSERT_TRUE(j.contains("typed"));
  EXPECT_EQ(j["typed"]["kind"], "category");
  EXPECT_EQ(j["typed"]["text"], "LRU");
  EXPECT_EQ(j["value"], 0.0);  // old readers keep the number
  const Finding back = finding_from_json(j);
  EXPECT_FALSE(back.extra.contains("typed"));
}

TEST(SummaryCard, RecordedH200OnOneScreenWithEveryLevel) {
  const auto card = report::summary_card(h200());
  EXPECT_FALSE(card.simulated);
  const std::string text = report::summary_text(card);
  const auto lines = lines_of(text);
  EXPECT_LE(lines.size(), 30u) << text;
  for (const auto& l : lines) EXPECT_LE(l.size(), 100u) << l;
  for (const char* level :
       {"shared memory", "L1", "L2 near partition", "L2 far partition", "DRAM"}) {
    bool found = false;
    for (const auto& r : card.levels) found = found || r.name == level;
    EXPECT_TRUE(found) << level;
  }
  for (const char* needle :
       {"NVIDIA H200", "GPU-3ece0ba6", "580.159.04", "LRU", "0xab000", "217 KiB", "16 x 15360",
        "4582.5 GB/s (95.2 %)", "TLB: 1 level", "256 MiB reach", "WGMMA", "timer.clock.overhead"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
  EXPECT_EQ(text.find("700416"), std::string::npos);  // the mask never as a float
}

TEST(SummaryCard, FailedChecksAndCounterDisagreementsAreNamed) {
  json r = h200();
  for (auto& e : r["experiments"])
    if (e["id"] == "bandwidth.stride") {
      e["status"] = "error";
      e["reason"] = "copy mismatch at element 7";
    }
  const auto card = report::summary_card(r);
  const std::string text = report::summary_text(card);
  EXPECT_NE(text.find("1 failed"), std::string::npos) << text;
  bool named = false;
  for (const auto& d : card.doubts)
    named = named || d.why.find("copy mismatch") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(SummaryCard, MissingLevelsAreSaidNotInvented) {
  json r = h200();
  json kept = json::array();
  for (const auto& e : r["experiments"])
    if (e["id"].get<std::string>().rfind("latency.", 0) == 0) kept.push_back(e);
  r["experiments"] = kept;
  const auto card = report::summary_card(r);
  const std::string text = report::summary_text(card);
  EXPECT_NE(text.find("not measured in this run"), std::string::npos) << text;
  EXPECT_NE(text.find("DRAM ceilings"), std::string::npos) << text;
  EXPECT_EQ(text.find("4582.5"), std::string::npos);
}

TEST(SummaryCard, WithoutTheSweepTheLevelsShowTheChaseLatencies) {
  // The quick profile runs latency.chase without latency.sweep: the L1, L2 and DRAM rows show
  // the chase's default-load latencies; other load operators' findings stay off the card.
  json r = h200();
  json kept = json::array();
  for (const auto& e : r["experiments"])
    if (e["id"] != "latency.sweep") kept.push_back(e);
  r["experiments"] = kept;
  const std::string text = report::summary_text(report::summary_card(r));
  auto shown = [&](const std::string& name) {
    const json f = finding_named(r, name);
    return format_number(f.value("value", 0.0), f.value("standard_error", 0.0));
  };
  const std::string l1 = shown("l1.hit_latency.default");
  const std::string dram = shown("dram.latency.default");
  bool l1_row = false, dram_row = false;
  for (const auto& line : lines_of(text)) {
    l1_row = l1_row || (line.rfind("  L1 ", 0) == 0 && line.find(l1 + " cy") != std::string::npos);
    dram_row =
        dram_row || (line.rfind("  DRAM ", 0) == 0 && line.find(dram + " cy") != std::string::npos);
  }
  EXPECT_TRUE(l1_row) << text;
  EXPECT_TRUE(dram_row) << text;
  const std::string l2 = shown("l2.hit_latency.default");
  EXPECT_NE(text.find("  L2 near partition " + l2 + " cy"), std::string::npos) << text;
  const std::string cg = shown("dram.latency.cg");
  ASSERT_NE(cg, dram);
  EXPECT_EQ(text.find(cg + " cy"), std::string::npos) << "a non-default load on the card";
}

TEST(SummaryCard, PrefetchIsOneLineInWords) {
  json r = h200();
  auto verdict = [](const char* name, double yes) {
    json f = {{"name", name}, {"value", yes}, {"unit", "bool"}, {"confidence", 0.95}};
    if (yes != 0) {
      f["max_stride_bytes"] = 2048;
      f["max_distance_strides"] = 2;
    }
    return f;
  };
  r["experiments"].push_back({{"id", "cache.prefetch"},
                              {"status", "passed"},
                              {"findings", json::array({verdict("prefetch.dram_to_l2", 1.0),
                                                        verdict("prefetch.l2_to_l1", 0.0)})}});
  const std::string text = report::summary_text(report::summary_card(r));
  EXPECT_NE(text.find("Prefetch: DRAM -> L2 for strides up to 2 KiB, 2 strides ahead; none seen "
                      "(L2 -> L1)"),
            std::string::npos)
      << text;
  EXPECT_EQ(report::summary_text(report::summary_card(h200())).find("Prefetch"), std::string::npos);
}

TEST(SummaryCard, PersistingAndEvictionPriorityAreOneLineInWords) {
  json r = h200();
  const auto f = [](const char* name, double v, const char* unit, json extra = json::object()) {
    json j = {{"name", name}, {"value", v}, {"unit", unit}, {"confidence", 0.9}};
    j.update(extra);
    return j;
  };
  r["experiments"].push_back(
      {{"id", "cache.l2.persisting"},
       {"status", "passed"},
       {"findings",
        json::array({f("l2.persisting.max_set_aside", 39321600, "bytes"),
                     f("l2.persisting.capacity", 39321600, "bytes"),
                     f("l2.persisting.rule", 2, "class", {{"label", "ways_floor"}})})}});
  r["experiments"].push_back(
      {{"id", "cache.l2.eviction_priority"},
       {"status", "passed"},
       {"findings",
        json::array(
            {f("l2.evict_last.protects", 1, "bool"), f("l2.evict_last.max_share", 0.62, "fraction"),
             f("l2.evict_first.goes_first", 1, "bool"), f("l2.discard.drops_dirty", 0, "bool"),
             f("l2.evict_last.cap_rule", 0, "class", {{"label", "per_set"}})})}});
  // The card wraps long lines: read it with each wrap undone.
  std::string text;
  for (char ch : report::summary_text(report::summary_card(r)))
    if (ch == '\n' || (ch == ' ' && !text.empty() && text.back() == ' '))
      text += text.empty() || text.back() == ' ' ? "" : " ";
    else
      text += ch;
  const auto at = text.find(
      "L2 persisting: set-aside up to 37.5 MiB, keeps 37.5 MiB (rule whole "
      "ways of every set");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string line = text.substr(at, 400);
  EXPECT_NE(line.find("evict_last outlasts plain loads: yes, holds at most 62 % of the L2"),
            std::string::npos)
      << line;
  EXPECT_NE(line.find("evict_first goes first: yes"), std::string::npos) << line;
  EXPECT_NE(line.find("drops dirty data (no write-back): no"), std::string::npos) << line;
  // Only evict_last's cap was measured: said for evict_last alone.
  EXPECT_NE(line.find("evict_last's cap applies per set"), std::string::npos) << line;
  EXPECT_EQ(report::summary_text(report::summary_card(h200())).find("L2 persisting"),
            std::string::npos);
}

TEST(SummaryCard, AReplayIsSaidToBeOne) {
  json r = h200();
  r["command"] = "replay";
  const auto card = report::summary_card(r);
  EXPECT_TRUE(card.simulated);
  const std::string text = report::summary_text(card);
  EXPECT_EQ(text.rfind("SIMULATED: a replay on the model exported from a measured result", 0), 0u)
      << text;
  for (const auto& l : lines_of(text)) EXPECT_LE(l.size(), 100u) << l;
}

TEST(SummaryCard, FindingsMarkdownOpensWithTheCardAndGroupsByFamily) {
  const std::string md = report::findings_markdown(h200());
  EXPECT_EQ(md.rfind("# gpuprobe findings: NVIDIA H200", 0), 0u);
  EXPECT_LT(md.find("## Summary"), md.find("## Every finding"));
  EXPECT_NE(md.find("### cache"), std::string::npos);
  EXPECT_NE(md.find("| cache.l1.ways | cache.l1.replacement | LRU |"), std::string::npos);
  EXPECT_NE(md.find("| l1.hit_latency |"), std::string::npos);  // the load-operator matrix
}

TEST(SummaryCommand, PrintsTheCardAndRefusesABrokenFile) {
  const auto ok = gp({"summary", std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/result.json"});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("LRU"), std::string::npos);
  EXPECT_EQ(ok.out.find("finding "), std::string::npos);  // the full table only with --verbose
  const auto verbose =
      gp({"--verbose", "summary", std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/result.json"});
  EXPECT_NE(verbose.out.find("l2.partition.hash_mask"), std::string::npos);
  const auto dir = test_cli::temp_dir("summary_broken");
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "r.json") << "{\"schema_version\": 1, \"tool\": ";
  test_cli::expect_one_line_error(gp({"summary", (dir / "r.json").string()}), "r.json");
  std::ofstream(dir / "v9.json") << json{{"schema_version", 9}}.dump();
  test_cli::expect_one_line_error(gp({"summary", (dir / "v9.json").string()}), "schema_version");
}

TEST(SummaryCommand, ModelledRunEndsWithASimulatedCard) {
  const auto dir = test_cli::temp_dir("summary_model");
  const auto o =
      gp({"--device", "model:tiny", "--quiet", "--out", dir.string(), "run", "latency.sweep"});
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("SIMULATED"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("finding      "), std::string::npos);  // no flat table without --verbose
  std::ifstream md(dir / "FINDINGS.md");
  std::stringstream s;
  s << md.rdbuf();
  EXPECT_NE(s.str().find("**Simulated**"), std::string::npos);
  std::ifstream rj(dir / "result.json");
  const json r = json::parse(rj);
  EXPECT_EQ(r["schema_version"], kResultSchemaVersion);
  EXPECT_TRUE(r["experiments"][0]["findings"][0].contains("typed"));
}

TEST(FleetTyped, CategoriesAreSameOrDifferentNeverAPercent) {
  // Three GPUs: one reports FIFO where the others report LRU; one is an old (schema 1) result.
  std::vector<report::FleetMember> members;
  for (int i = 0; i < 3; ++i) {
    json r = {{"schema_version", i == 2 ? 1 : kResultSchemaVersion},
              {"device", {{"name", "NVIDIA H200"}}},
              {"experiments",
               {{{"id", "cache.l2.ways"},
                 {"status", "passed"},
                 {"findings",
                  {{{"name", "cache.l2.replacement"},
                    {"value", i == 1 ? 1.0 : 0.0},
                    {"unit", "class"},
                    {"confidence", 0.9},
                    {"method", "m"}}}}}}}};
    members.push_back({"gpu" + std::to_string(i), r, "", json::object()});
  }
  const json rep = report::fleet_report(members, false);
  ASSERT_EQ(rep["summary"]["compared"], 3);
  const json& f = rep["findings"][0];
  EXPECT_EQ(f["fleet_value"], "LRU");
  EXPECT_FALSE(f.contains("fleet_mad"));
  for (const auto& v : f["values"]) EXPECT_FALSE(v.contains("relative_deviation_percent"));
  ASSERT_EQ(rep["outliers"].size(), 1u);
  // A tie has no fleet value: it is mixed, and no GPU is an outlier.
  std::vector<report::FleetMember> two(members.begin(), members.begin() + 2);
  const json tie = report::fleet_report(two, false);
  EXPECT_EQ(tie["findings"][0]["fleet_value"], "mixed: FIFO x1, LRU x1");
  EXPECT_TRUE(tie["outliers"].empty());
  EXPECT_EQ(rep["outliers"][0]["label"], "gpu1");
  EXPECT_EQ(rep["outliers"][0]["text"], "FIFO");
  const std::string table = report::fleet_table(rep);
  EXPECT_NE(table.find("FIFO (different)"), std::string::npos) << table;
}

}  // namespace
}  // namespace gpuprobe
