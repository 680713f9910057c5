// A curve's band hint (CurveHints::band): two y columns drawn as one shaded polygon behind the
// series, with a legend entry, over the rows where both are numbers; no band hint, no polygon;
// and the hint survives the result's JSON.
#include <gtest/gtest.h>

#include <string>

#include "report/chart.hpp"

namespace gpuprobe::report {
namespace {

using nlohmann::json;

CurveData replay_like(bool banded) {
  CurveData c;
  c.name = "latency";
  c.columns = {"working_set_bytes", "measured_cycles", "replayed_cycles", "runs_low_cycles",
               "runs_high_cycles"};
  c.rows = {{1024, 30, 31, 29, 32}, {4096, 30, 30, nullptr, nullptr}, {65536, 300, 320, 290, 900}};
  c.hints = chart_hints("t", "working_set_bytes", "bytes", "measured_cycles", "cycles", true)
                .with_model({"replayed_cycles"});
  if (banded) c.hints = c.hints.banded("runs_low_cycles", "runs_high_cycles");
  return c;
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(ChartBand, TheRunsRangeIsOneShadedPolygonBehindTheSeries) {
  const std::string svg = draw_curve("model.replay", replay_like(true), json::array());
  ASSERT_EQ(count(svg, "<polygon class='band'"), 1u);
  // Behind: drawn before the first series.
  EXPECT_LT(svg.find("<polygon class='band'"), svg.find("<polyline class='series'"));
  // Two rows hold both edges: four corners.
  const auto at = svg.find("points='", svg.find("<polygon class='band'")) + 8;
  const std::string pts = svg.substr(at, svg.find('\'', at) - at);
  EXPECT_EQ(count(pts, ","), 4u);
  EXPECT_NE(svg.find("lowest latency .. the runs"), std::string::npos);
  EXPECT_EQ(count(draw_curve("model.replay", replay_like(false), json::array()), "class='band'"),
            0u);
}

TEST(ChartBand, TheHintSurvivesTheJsonAndOnlyAPairIsKept) {
  const auto h = replay_like(true).hints;
  const json j = to_json(h);
  EXPECT_EQ(j.at("band"), json({"runs_low_cycles", "runs_high_cycles"}));
  EXPECT_EQ(curve_hints_from_json(j).band, h.band);
  EXPECT_FALSE(to_json(replay_like(false).hints).contains("band"));  // older hints unchanged
  json odd = j;
  odd["band"] = {"runs_low_cycles"};
  EXPECT_TRUE(curve_hints_from_json(odd).band.empty());
}

}  // namespace
}  // namespace gpuprobe::report
