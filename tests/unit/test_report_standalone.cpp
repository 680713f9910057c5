// Reports stand on result.json alone: curves carry their rows, the report draws them without
// the CSV exports, says which curve it could not find, and its charts read in words.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/json_input.hpp"
#include "report/chart.hpp"
#include "report/writer.hpp"

namespace gpuprobe {
namespace {

using nlohmann::json;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

ExperimentResult latency_experiment() {
  ExperimentResult r;
  r.id = "latency.sweep";
  Curve c{"curve", {"working_set_bytes", "cycles_median", "kind"}, {}};
  for (int k = 12; k <= 20; ++k) c.rows.push_back({std::ldexp(1.0, k), 30.0 + k, "chase"});
  c.hints = chart_hints("latency against working set", "working_set_bytes", "bytes",
                        "cycles_median", "cycles per load", true);
  r.curves.push_back(c);
  r.findings.push_back({"latency.l1.cycles", 32, "cycles", 0.9, "plateau"});
  return r;
}

json result_of(const json& experiment) {
  return {{"schema_version", 2},
          {"tool", {{"git_sha", "abc"}, {"version", "t"}}},
          {"device", {{"name", "test GPU"}, {"compute_capability", "9.0"}, {"kind", "model"}}},
          {"experiments", json::array({experiment})}};
}

TEST(ReportStandalone, CurveRowsRoundTripThroughToJson) {
  const auto r = latency_experiment();
  const json j = to_json(r);
  const auto& c = j.at("curves").at(0);
  EXPECT_EQ(c.at("columns").get<std::vector<std::string>>(), r.curves[0].columns);
  ASSERT_EQ(c.at("rows").size(), r.curves[0].rows.size());
  // Read back as the report reads it (no CSV anywhere): the same rows and hints.
  const json reparsed = json::parse(j.dump());
  const auto loaded = report::load_curves(reparsed, "/nonexistent-gpuprobe-dir");
  EXPECT_TRUE(loaded.missing.empty());
  ASSERT_EQ(loaded.curves.size(), 1u);
  EXPECT_EQ(loaded.curves[0].rows, r.curves[0].rows);
  EXPECT_EQ(loaded.curves[0].hints.y, "cycles_median");
  // The shape check accepts it, and refuses a row of the wrong length.
  json result = result_of(reparsed);
  result["experiments"][0]["parameters"] = json::object();
  result["experiments"][0]["samples"] = json::object();
  EXPECT_NO_THROW(json_input::check_result_shape(result, "r.json"));
  result["experiments"][0]["curves"][0]["rows"][1] = json::array({1, 2});
  EXPECT_THROW(json_input::check_result_shape(result, "r.json"), UsageError);
}

TEST(ReportStandalone, ResultWithRowsAndNoCsvDrawsItsCharts) {
  json e = to_json(latency_experiment());
  e["curves"][0]["file"] = "latency.sweep.curve.csv";  // named, but no such file beside it
  report::ReportCounts counts;
  const auto html = report::html_report(result_of(e), "/nonexistent-gpuprobe-dir", &counts);
  EXPECT_EQ(counts.charts, 1u);
  EXPECT_TRUE(counts.missing_curves.empty());
  EXPECT_EQ(count(html, "<svg class='chart'"), 1u);
  EXPECT_EQ(html.find("no rows in result.json"), std::string::npos);
  // The summary card opens the page, with the banner of a modelled GPU.
  EXPECT_LT(html.find("id=\"summary\""), html.find("<h1>"));
  EXPECT_NE(html.find("class=\"simulated\""), std::string::npos);
}

TEST(ReportStandalone, MissingCurveGivesAVisibleNote) {
  json e = to_json(latency_experiment());
  e["curves"][0].erase("rows");
  e["curves"][0]["file"] = "latency.sweep.curve.csv";
  report::ReportCounts counts;
  const auto html = report::html_report(result_of(e), "/nonexistent-gpuprobe-dir", &counts);
  EXPECT_EQ(counts.charts, 0u);
  EXPECT_EQ(counts.missing_curves, std::vector<std::string>{"latency.sweep.curve"});
  EXPECT_NE(html.find("curve curve: no rows in result.json and no CSV beside it"),
            std::string::npos);
  // The CSV beside it, when there, is the fallback of a result recorded before rows.
  const auto dir = std::filesystem::temp_directory_path() / "gpuprobe-report-standalone";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "latency.sweep.curve.csv") << report::to_csv(latency_experiment().curves[0]);
  const auto with_csv = report::html_report(result_of(e), dir.string(), &counts);
  EXPECT_EQ(counts.charts, 1u);
  EXPECT_TRUE(counts.missing_curves.empty());
  std::filesystem::remove_all(dir);
}

TEST(ReportWords, AxisTitlesAndLegendsInWords) {
  EXPECT_EQ(report::axis_title("cycles_median", "cycles per load"), "latency (cycles per load)");
  EXPECT_EQ(report::axis_title("working_set_bytes", "bytes"), "working set (bytes)");
  EXPECT_EQ(report::axis_title("useful_gb_s_median", "GB/s"), "useful bandwidth (GB/s)");
  EXPECT_EQ(report::axis_title("some_new_column", ""), "some new column");
  EXPECT_EQ(report::series_value_label("sm_group", 0), "SM group 0");
  EXPECT_EQ(report::series_value_label("group", "1"), "SM group 1");
  EXPECT_EQ(report::series_value_label("variant", "copy"), "copy");
  EXPECT_EQ(report::series_value_label("footprint_bytes", 1572864.0), "footprint bytes 1.5 MiB");
  const auto svg = report::draw_curve(
      "latency.sweep", report::load_curves(to_json(latency_experiment()), "").curves[0],
      json::array());
  EXPECT_NE(svg.find(">latency (cycles per load)<"), std::string::npos) << svg;
  EXPECT_EQ(svg.find(">cycles_median"), std::string::npos);
}

TEST(ReportTicks, IntegerDataGetsWholeNumberTicks) {
  for (double v : report::nice_ticks(1, 4, false, false, true)) EXPECT_EQ(v, std::round(v)) << v;
  // Without the hint the same span gets half steps: the hint is what makes the difference.
  const auto fractional = report::nice_ticks(1, 2, false, false, false);
  EXPECT_TRUE(std::any_of(fractional.begin(), fractional.end(),
                          [](double v) { return v != std::round(v); }));
  report::CurveData c;
  c.name = "table";
  c.columns = {"type", "warpgroups_per_sm", "tflops_median"};
  for (int w = 1; w <= 2; ++w) c.rows.push_back({"bf16", w, 500.0 * w});
  c.hints = chart_hints("wgmma", "warpgroups_per_sm", "", "tflops_median", "TFLOP/s").by({"type"});
  const auto svg = report::draw_curve("hopper.wgmma.throughput", c, json::array());
  EXPECT_EQ(svg.find(">1.2<"), std::string::npos) << svg;
  EXPECT_EQ(svg.find(">1.5<"), std::string::npos) << svg;
  EXPECT_NE(svg.find("class='tick x' x="), std::string::npos);
}

TEST(ReportChart, AllZeroSeriesIsNotDrawn) {
  report::CurveData c;
  c.name = "sm_latency";
  c.columns = {"smid", "group", "near_cycles_median", "far_cycles_median"};
  for (int sm = 0; sm < 8; ++sm)
    c.rows.push_back({sm, sm % 2, 300.0 + sm, sm % 2 ? 520.0 + sm : 0.0});  // group 0: no far
  c.hints = chart_hints("partition", "smid", "", "near_cycles_median", "cycles")
                .by({"group"})
                .with_model({"far_cycles_median"})
                .points();
  const auto svg = report::draw_curve("cache.l2.partition", c, json::array());
  EXPECT_EQ(count(svg, "class='series'"), 1u) << svg;  // group 1's far line only
  EXPECT_NE(svg.find("data-label='SM group 1: far-partition latency'"), std::string::npos);
  EXPECT_EQ(svg.find("data-label='SM group 0: far-partition latency'"), std::string::npos);
  EXPECT_EQ(count(svg, "<g class='points'"), 2u);  // the near latency of both groups
}

TEST(ReportChart, SplitDrawsOneChartPerValue) {
  report::CurveData c;
  c.name = "table";
  c.columns = {"replicate", "direction", "memory", "method", "bytes", "gb_s"};
  for (const char* d : {"h2d", "d2h"})
    for (int rep = 0; rep < 3; ++rep)
      for (double b : {16.0, 4096.0, 1048576.0})
        c.rows.push_back({rep, d, "pinned", "copy_engine", b, b / 1e5 + rep});
  c.hints = chart_hints("host", "bytes", "bytes", "gb_s", "GB/s", true)
                .by({"memory", "method"})
                .best("max")
                .split_by({"direction"});
  const auto html = report::draw_curve("link.host", c, json::array());
  EXPECT_EQ(count(html, "<svg class='chart'"), 2u);
  EXPECT_EQ(count(html, "class='series'"), 2u);
  EXPECT_EQ(count(html, "<circle"), 6u);  // three sizes per direction, best replicate
  EXPECT_NE(html.find("host: d2h"), std::string::npos);
}

}  // namespace
}  // namespace gpuprobe
