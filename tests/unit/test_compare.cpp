// compare: what changed between two results, judged against their stated noise; the CLI's
// --help, --version and no-subcommand messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_runner.hpp"
#include "report/compare.hpp"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_cli::expect_one_line_error;
using test_cli::gp;
using test_cli::temp_dir;

const std::string kH200 = std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/result.json";

json h200() {
  std::ifstream in(kH200);
  return json::parse(in);
}

json& finding(json& r, const std::string& name) {
  for (auto& e : r["experiments"])
    for (auto& f : e["findings"])
      if (f["name"] == name) return f;
  throw std::runtime_error("no finding " + name);
}

const report::CompareRow& row_of(const report::Comparison& c, const std::string& name) {
  for (const auto& r : c.rows)
    if (r.name == name) return r;
  throw std::runtime_error("no row " + name);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

/// The table rows of a text listing: the lines after the header line "finding ...".
std::vector<std::string> table_lines(const std::string& text) {
  const auto lines = lines_of(text);
  std::vector<std::string> rows;
  bool in_table = false;
  for (const auto& l : lines) {
    if (in_table) rows.push_back(l);
    if (l.rfind("finding ", 0) == 0) in_table = true;
  }
  return rows;
}

/// B: the H200 result with the L1's replacement policy changed to FIFO, two latencies moved by
/// 20 % and 10 %, one finding dropped and one added.
json changed_h200() {
  json b = h200();
  auto& policy = finding(b, "cache.l1.replacement");
  policy["value"] = 1;
  policy["policy"] = "fifo";
  finding(b, "l2.hit_latency")["value"] = finding(b, "l2.hit_latency")["value"].get<double>() * 1.2;
  finding(b, "dram.latency")["value"] = finding(b, "dram.latency")["value"].get<double>() * 1.1;
  auto& sweep = b["experiments"][1];
  EXPECT_EQ(sweep["id"], "latency.sweep");
  json added = sweep["findings"][0];
  added["name"] = "l1.new_finding";
  auto& findings = b["experiments"][2]["findings"];
  findings.erase(findings.begin());  // the first latency.chase finding: only in A
  sweep["findings"].push_back(added);
  return b;
}

class Compare : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = temp_dir("compare");
    fs::create_directories(dir_);
    changed_ = changed_h200();
    write(changed_, "changed.json");
    json other_build = h200();
    other_build["tool"]["git_sha"] = "748cc2e0000000000000000000000000deadbeef";
    write(other_build, "other_build.json");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string write(const json& r, const std::string& name) {
    std::ofstream(dir_ / name) << r.dump();
    return (dir_ / name).string();
  }
  static std::string path(const std::string& name) { return (dir_ / name).string(); }
  static inline fs::path dir_;
  static inline json changed_;
};

TEST_F(Compare, CategoriesAndMasksAreSameOrDifferentNeverAPercent) {
  const auto c = report::compare(h200(), changed_);
  const auto& policy = row_of(c, "cache.l1.replacement");
  EXPECT_EQ(policy.verdict, report::Verdict::kDifferent);
  EXPECT_EQ(policy.a_text, "LRU");
  EXPECT_EQ(policy.b_text, "FIFO");
  EXPECT_TRUE(policy.change.empty());
  EXPECT_TRUE(policy.z.empty());
  for (const char* same : {"l2.partition.hash_mask", "l2.replication", "cache.l2.replacement"}) {
    const auto& r = row_of(c, same);
    EXPECT_EQ(r.verdict, report::Verdict::kSame) << same;
    EXPECT_TRUE(r.change.empty() && r.z.empty()) << same;
  }
  EXPECT_EQ(row_of(c, "l2.partition.hash_mask").a_text, "0xab000");
  const auto text = report::compare_text(c, false);
  for (const auto& l : table_lines(text)) {
    if (l.rfind("cache.l1.replacement ", 0) == 0) {
      EXPECT_NE(l.find("LRU"), std::string::npos) << l;
      EXPECT_NE(l.find("FIFO"), std::string::npos) << l;
      EXPECT_NE(l.find("different"), std::string::npos) << l;
    }
    if (l.rfind("cache.l1.replacement ", 0) == 0 || l.rfind("l2.partition.hash_mask ", 0) == 0)
      EXPECT_EQ(l.find('%'), std::string::npos) << l;
  }
}

TEST_F(Compare, BeyondNoiseRowsComeFirstLargestZFirst) {
  const auto c = report::compare(h200(), changed_);
  ASSERT_GE(c.rows.size(), 3u);
  EXPECT_EQ(c.rows[0].verdict, report::Verdict::kBeyond);
  bool left_beyond = false;
  for (std::size_t i = 0; i < c.rows.size(); ++i) {
    const bool beyond = c.rows[i].verdict == report::Verdict::kBeyond;
    EXPECT_FALSE(beyond && left_beyond) << "beyond-noise row after others: " << c.rows[i].name;
    left_beyond = left_beyond || !beyond;
    if (i > 0 && beyond) EXPECT_GE(c.rows[i - 1].z_value, c.rows[i].z_value) << c.rows[i].name;
  }
  // The 20 % move lies further beyond than the 10 % one.
  EXPECT_EQ(c.rows[0].name, "l2.hit_latency");
  EXPECT_EQ(c.rows[1].name, "dram.latency");
  const auto rows = table_lines(report::compare_text(c, false));
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0].rfind("l2.hit_latency ", 0), 0u) << rows[0];
}

TEST_F(Compare, CountLineAndThresholdComeFirst) {
  const auto c = report::compare(h200(), changed_);
  // 287 findings: 5 categories, yes/no or masks; one dropped from B, one added.
  EXPECT_EQ(report::count_line(c),
            "2 of 281 findings moved beyond noise; 1 of 5 categories differ; 1 only in A, 1 only "
            "in B");
  const auto lines = lines_of(report::compare_text(c, false));
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], report::count_line(c));
  EXPECT_NE(lines[1].find("3.29 combined standard errors"), std::string::npos) << lines[1];
  EXPECT_EQ(row_of(c, "l1.new_finding").verdict, report::Verdict::kOnlyInB);
}

// The judgement column follows the z column and the threshold stated: over two real runs of one
// card (noise only), every number row is beyond exactly when its shown z reaches 3.29.
TEST_F(Compare, JudgementAgreesWithTheShownZ) {
  const std::string repeat = std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/repeat/";
  std::ifstream a(repeat + "run1/result.json"), b(repeat + "run2/result.json");
  const auto c = report::compare(json::parse(a), json::parse(b));
  EXPECT_EQ(report::beyond_z_text(), "3.29");
  std::size_t beyond = 0, within = 0;
  for (const auto& r : c.rows) {
    if (r.verdict != report::Verdict::kBeyond && r.verdict != report::Verdict::kWithin) continue;
    const double z = r.z == "inf" ? INFINITY : std::strtod(r.z.c_str(), nullptr);
    EXPECT_EQ(r.verdict == report::Verdict::kBeyond, z >= 3.29) << r.name << " z " << r.z;
    (r.verdict == report::Verdict::kBeyond ? beyond : within) += 1;
  }
  EXPECT_GT(beyond, 0u);
  EXPECT_GT(within, 0u);
}

TEST_F(Compare, ChangedListsOnlyWhatMovedOrDiffers) {
  const auto o = gp({"compare", kH200, path("changed.json"), "--changed"});
  ASSERT_EQ(o.code, 0) << o.err;
  const auto rows = table_lines(o.out);
  ASSERT_EQ(rows.size(), 3u) << o.out;
  for (const auto& r : rows)
    EXPECT_TRUE(r.find("beyond noise") != std::string::npos ||
                r.find("different") != std::string::npos)
        << r;
  const auto all = gp({"compare", kH200, path("changed.json")});
  EXPECT_EQ(table_lines(all.out).size(), 288u);
  EXPECT_NE(all.out.find("within noise"), std::string::npos);
}

TEST_F(Compare, MarkdownCsvAndJsonFormats) {
  const auto md = gp({"compare", kH200, path("changed.json"), "--changed", "--format", "md"});
  ASSERT_EQ(md.code, 0) << md.err;
  std::size_t table = 0;
  for (const auto& l : lines_of(md.out)) table += l.rfind("|", 0) == 0;
  EXPECT_EQ(table, 3u + 2u) << md.out;  // header, alignment row, three rows
  EXPECT_NE(md.out.find("| `cache.l1.replacement` | LRU | FIFO |"), std::string::npos) << md.out;

  const auto csv = gp({"compare", kH200, path("changed.json"), "--format", "csv"});
  ASSERT_EQ(csv.code, 0) << csv.err;
  const auto lines = lines_of(csv.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines[0], "finding,kind,a,b,a_value,b_value,change_percent,z,judgement");
  EXPECT_EQ(lines.size(), 1u + 288u);

  const auto js = gp({"compare", kH200, path("changed.json"), "--format", "json"});
  ASSERT_EQ(js.code, 0) << js.err;
  const json j = json::parse(js.out);
  EXPECT_EQ(j["counts"]["beyond_noise"], 2);
  EXPECT_EQ(j["counts"]["categories_different"], 1);
  EXPECT_EQ(j["rows"].size(), 288u);
  EXPECT_EQ(j["threshold"]["z"], 3.29);
  bool found = false;
  for (const auto& r : j["rows"])
    if (r["name"] == "cache.l1.replacement") {
      found = true;
      EXPECT_EQ(r["a"]["typed"]["kind"], "category");
      EXPECT_EQ(r["b"]["typed"]["text"], "FIFO");
      EXPECT_TRUE(r["change_percent"].is_null());
      EXPECT_TRUE(r["z"].is_null());
      EXPECT_EQ(r["judgement"], "different");
    }
  EXPECT_TRUE(found);
  expect_one_line_error(gp({"compare", kH200, kH200, "--format", "xml"}), "--format");
}

TEST_F(Compare, WarnsOfADifferentBuildOnlyWhenThereIsOne) {
  const auto o = gp({"compare", kH200, path("other_build.json")});
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string sha = h200()["tool"]["git_sha"].get<std::string>().substr(0, 7);
  EXPECT_EQ(o.out.rfind("warning: different gpuprobe builds (" + sha + " vs 748cc2e)", 0), 0u)
      << o.out;
  EXPECT_NE(o.out.find("\n0 of "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(" findings moved beyond noise"), std::string::npos) << o.out;
  const auto same = gp({"compare", kH200, kH200});
  ASSERT_EQ(same.code, 0) << same.err;
  EXPECT_EQ(same.out.find("warning"), std::string::npos) << same.out;
  json other_driver = h200();
  other_driver["environment"]["nvml"]["driver_version"] = "575.57.08";
  const auto d = gp({"compare", kH200, write(other_driver, "other_driver.json")});
  EXPECT_EQ(d.out.rfind("warning: different drivers (580.159.04 vs 575.57.08)", 0), 0u) << d.out;
}

TEST_F(Compare, OutWritesComparePageWithBothRunsOnOneChart) {
  // B beside its curve file, so the page can draw the latency sweep of both.
  const auto b_dir = dir_ / "b";
  fs::create_directories(b_dir);
  fs::copy_file(std::string(GPUPROBE_SOURCE_DIR) + "/results/h200/latency.sweep.curve.csv",
                b_dir / "latency.sweep.curve.csv");
  std::ofstream(b_dir / "result.json") << changed_.dump();
  const auto out = dir_ / "page";
  const auto o = gp({"compare", kH200, (b_dir / "result.json").string(), "--out", out.string()});
  ASSERT_EQ(o.code, 0) << o.err;
  std::ifstream in(out / "compare.html");
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("2 of 281 findings moved beyond noise"), std::string::npos);
  EXPECT_NE(html.find("cache.l1.replacement"), std::string::npos);
  const auto sweep = html.find("<section id='latency.sweep'>");
  ASSERT_NE(sweep, std::string::npos);
  const auto end = html.find("</section>", sweep);
  const std::string section = html.substr(sweep, end - sweep);
  EXPECT_NE(section.find("<svg"), std::string::npos);
  EXPECT_NE(section.find("data-label='A"), std::string::npos);
  EXPECT_NE(section.find("data-label='B"), std::string::npos);
  EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg"));  // nothing fetched
}

TEST_F(Compare, BrokenInputWritesNothing) {
  std::ofstream(dir_ / "broken.json") << "{\"schema_version\": 2, \"tool\": ";
  std::ofstream(dir_ / "other.json") << R"({"name": "not a gpuprobe result"})";
  for (const char* bad : {"broken.json", "other.json", "missing.json"}) {
    const auto out = dir_ / (std::string("bad_") + bad);
    expect_one_line_error(gp({"compare", kH200, path(bad), "--out", out.string()}), bad);
    expect_one_line_error(gp({"compare", path(bad), kH200, "--out", out.string()}), bad);
    EXPECT_FALSE(fs::exists(out)) << bad;
  }
}

// ---- the command line's own help -------------------------------------------------------------

TEST(CliHelp, VersionPrintsVersionAndSha) {
  const auto o = gp({"--version"});
  EXPECT_EQ(o.code, 0);
  EXPECT_EQ(o.out.rfind("gpuprobe 0.", 0), 0u) << o.out;
  EXPECT_NE(o.out.find(" ("), std::string::npos) << o.out;
  EXPECT_EQ(lines_of(o.out).size(), 1u) << o.out;
  EXPECT_TRUE(o.err.empty());
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(CliHelp, SubcommandHelpIsPrintedOnceWithTheGlobalOptionsItUses) {
  const auto report = gp({"report", "--help"});
  EXPECT_EQ(report.code, 0);
  EXPECT_EQ(count(report.out, "Usage:"), 1u) << report.out;
  EXPECT_EQ(count(report.out, "write report.html"), 1u) << report.out;
  EXPECT_NE(report.out.find("global options"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("--out"), std::string::npos) << report.out;
  EXPECT_EQ(report.out.find("--node-stride"), std::string::npos) << report.out;
  const auto compare = gp({"compare", "--help"});
  for (const char* opt : {"--changed", "--format", "--out"})
    EXPECT_NE(compare.out.find(opt), std::string::npos) << opt << "\n" << compare.out;
  const auto top = gp({"--help"});
  EXPECT_EQ(count(top.out, "Usage:"), 1u) << top.out;
}

TEST(CliHelp, NoSubcommandNamesEverySubcommand) {
  // The subcommands as --help lists them (the lines under "Subcommands:").
  const auto help = gp({"--help"});
  std::vector<std::string> names;
  bool in_list = false;
  for (const auto& l : lines_of(help.out)) {
    if (in_list && l.size() > 2 && l[0] == ' ' && l[2] != ' ')
      names.push_back(l.substr(2, l.find(' ', 2) - 2));
    if (l.rfind("Subcommands:", 0) == 0) in_list = true;
  }
  ASSERT_GE(names.size(), 12u) << help.out;
  const auto o = gp({});
  expect_one_line_error(o, "a subcommand is required");
  // "...: one of: info, list, ... (see gpuprobe --help)": the named list, split at ", ".
  const auto from = o.err.find("one of: "), to = o.err.find(" (see");
  ASSERT_TRUE(from != std::string::npos && to != std::string::npos) << o.err;
  std::set<std::string> listed;
  std::istringstream list(o.err.substr(from + 8, to - from - 8));
  for (std::string n; std::getline(list, n, ',');)
    listed.insert(n.substr(n.find_first_not_of(' ')));
  for (const auto& n : names) EXPECT_TRUE(listed.count(n)) << n << ": " << o.err;
  EXPECT_EQ(listed.size(), names.size()) << o.err;
}

}  // namespace
}  // namespace gpuprobe
