// The report draws curves from their hints: ticks, series, model lines, marks, tables.
#include <gtest/gtest.h>

#include <cmath>

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

TEST(ReportTicks, RoundValues) {
  EXPECT_EQ(report::nice_ticks(0, 937, false, false),
            (std::vector<double>{0, 200, 400, 600, 800, 1000}));
  EXPECT_EQ(report::nice_ticks(0, 3.3, false, false), (std::vector<double>{0, 1, 2, 3, 4}));
  const auto b = report::nice_ticks(1024, 64.0 * 1024 * 1024, true, true);
  EXPECT_EQ(b.front(), 1024);
  EXPECT_GE(b.back(), 64.0 * 1024 * 1024);
  EXPECT_LE(b.size(), 11u);
  for (double v : b) EXPECT_EQ(std::exp2(std::round(std::log2(v))), v);
  EXPECT_EQ(report::nice_ticks(1, 1e6, true, false).size(), 7u);  // powers of ten
  // Bytes on a linear axis step by a power of two: 27 .. 45.6 MB gets 4 MiB steps ("44 MiB",
  // not "47.6837 MiB").
  const auto lin = report::nice_ticks(27063936, 45581440, false, true);
  ASSERT_GE(lin.size(), 2u);
  EXPECT_EQ(lin[1] - lin[0], 4.0 * 1024 * 1024);
  for (double v : lin) EXPECT_EQ(std::fmod(v, 4.0 * 1024 * 1024), 0.0);
  EXPECT_EQ(report::tick_label(lin[1], true).find('.'), std::string::npos);
  EXPECT_EQ(report::tick_label(1048576, true), "1 MiB");
  EXPECT_EQ(report::tick_label(1536, true), "1.5 KiB");
  EXPECT_EQ(report::tick_label(4200, false), "4200");
}

TEST(ReportCsv, ReadsBackWhatToCsvWrote) {
  Curve c{"t", {"name", "x", "y"}, {{"a, \"b\"", 1, 2.5}, {"7", 2, 3.0}}};
  std::vector<std::string> header;
  const auto rows = report::parse_csv(report::to_csv(c), header);
  EXPECT_EQ(header, c.columns);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0][0], "a, \"b\"");
  EXPECT_DOUBLE_EQ(rows[0][2].get<double>(), 2.5);
  EXPECT_TRUE(rows[1][0].is_number());  // an unquoted number reads back as a number
}

TEST(ReportHints, InferredForCurvesRecordedWithout) {
  const std::vector<std::string> cols = {"variant", "stride_elements", "useful_gb_s_median", "n"};
  std::vector<std::vector<json>> rows;
  for (int s : {1, 2, 4, 8})
    for (const char* v : {"copy", "read"}) rows.push_back({v, s, 100.0 / s, 5});
  const auto h = report::infer_hints(cols, rows);
  EXPECT_EQ(h.x, "stride_elements");
  EXPECT_EQ(h.y, "useful_gb_s_median");
  EXPECT_EQ(h.series, std::vector<std::string>{"variant"});
  EXPECT_EQ(report::infer_hints({"op", "cycles"}, {{"add", 4}}).kind, "table");
}

report::CurveData stride_curve() {
  report::CurveData c;
  c.name = "table";
  c.columns = {"variant", "stride_elements", "useful_gb_s_median", "model_useful_gb_s"};
  for (int s : {1, 2, 4, 8, 16, 32})
    for (const char* v : {"copy", "read"}) c.rows.push_back({v, s, 1000.0 / s, 1100.0 / s});
  c.hints = chart_hints("stride", "stride_elements", "elements", "useful_gb_s_median", "GB/s", true)
                .by({"variant"})
                .with_model({"model_useful_gb_s"});
  return c;
}

TEST(ReportChart, OneDrawnSeriesPerValueAndModelLinesDashed) {
  const auto svg = report::draw_curve("bandwidth.stride", stride_curve(), json::array());
  EXPECT_EQ(count(svg, "class='series'"), 4u);  // copy, read, and the model line of each
  EXPECT_EQ(count(svg, "stroke-dasharray='6 4'"), 2u);
  EXPECT_EQ(count(svg, "<circle"), 12u);
  EXPECT_NE(svg.find("<title>read: stride 4, useful bandwidth 250 GB/s</title>"), std::string::npos)
      << svg;
  EXPECT_NE(svg.find(">useful bandwidth (GB/s)<"), std::string::npos);
  EXPECT_NE(svg.find(">read: model useful bandwidth<"), std::string::npos);  // the model's legend
}

TEST(ReportChart, FilterReduceAndMarks) {
  auto c = stride_curve();
  c.hints = c.hints.only({{"variant", "read"}}).best("max");
  c.hints.model.clear();
  c.hints.mark_findings = true;
  c.hints.x_unit = "elements";
  const json findings = json::array({{{"name", "knee"}, {"value", 4}, {"unit", "elements"}},
                                     {{"name", "elsewhere"}, {"value", 4}, {"unit", "bytes"}}});
  const auto svg = report::draw_curve("e", c, findings);
  EXPECT_EQ(count(svg, "class='series'"), 1u);
  EXPECT_EQ(count(svg, "<circle"), 6u);
  EXPECT_EQ(count(svg, "class='mark'"), 1u);
  EXPECT_NE(svg.find(">knee<"), std::string::npos);
}

TEST(ReportChart, TablesAndMatricesAreDrawnAsHtml) {
  report::CurveData t;
  t.name = "links";
  t.columns = {"from", "to", "gb_s"};
  t.rows = {{"gpu0", "gpu1", 400.0}, {"gpu1", "gpu0", 390.0}};
  t.hints = table_hints("links");
  EXPECT_NE(report::draw_curve("e", t, json::array()).find("<table"), std::string::npos);
  t.hints.kind = "matrix";
  t.hints.x = "to";
  t.hints.y = "gb_s";
  t.hints.series = {"from"};
  const auto m = report::draw_curve("e", t, json::array());
  EXPECT_NE(m.find("class='data matrix'"), std::string::npos);
  EXPECT_EQ(count(m, "hsl("), 2u);
}

}  // namespace
}  // namespace gpuprobe
