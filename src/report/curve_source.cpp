// Where the report finds a curve (result.json's rows, else the CSV export beside it) and how
// its columns read in words on axes and legends.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "core/files.hpp"
#include "report/chart.hpp"

namespace gpuprobe::report {
namespace {

using nlohmann::json;

/// A curve's CSV: "" when there is none; refused (UsageError) when it is not a regular file of
/// bounded size (a FIFO would block the report).
std::string read_file(const std::filesystem::path& p) {
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) return "";
  return files::read_input(p.string(), "CSV written by gpuprobe");
}

/// The rows a curve carries in result.json, when it carries a table of the right shape.
bool rows_from_result(const json& c, CurveData& d) {
  if (!c.contains("rows") || !c["rows"].is_array() || !c.contains("columns") ||
      !c["columns"].is_array())
    return false;
  for (const auto& col : c["columns"])
    d.columns.push_back(col.is_string() ? col.get<std::string>() : col.dump());
  for (const auto& r : c["rows"]) {
    if (!r.is_array() || r.size() != d.columns.size()) return false;
    std::vector<json> row;
    // null is what a NaN becomes in JSON; the CSV reads it back as "nan" (not drawn).
    for (const auto& v : r) row.push_back(v.is_null() ? json("nan") : v);
    d.rows.push_back(std::move(row));
  }
  return true;
}

/// Hints the current analysis gives each curve (by name) of a recorded experiment, for curves
/// recorded without hints; empty when the analysis does not make curves or cannot replay.
std::map<std::string, CurveHints> replayed_hints(const json& e) {
  std::map<std::string, CurveHints> out;
  try {
    if (const auto r = replay_analysis(e))
      for (const auto& c : r->curves)
        if (!c.hints.empty()) out[c.name] = c.hints;
  } catch (const std::exception&) {
    // Samples the analysis cannot read: the report's command names the file; here the
    // curve is drawn from inferred hints instead.
  }
  return out;
}

}  // namespace

LoadedCurves load_curves(const json& e, const std::string& dir) {
  LoadedCurves out;
  const auto curves = e.value("curves", json::array());
  bool hintless = false;
  for (const auto& c : curves) hintless = hintless || !c.contains("hints");
  const auto replayed = hintless ? replayed_hints(e) : std::map<std::string, CurveHints>{};
  for (const auto& c : curves) {
    CurveData d;
    d.name = c.value("name", "");
    if (!rows_from_result(c, d)) {
      d = CurveData{};
      d.name = c.value("name", "");
      const std::string file = c.value("file", "");
      const std::string text =
          file.empty() ? "" : read_file(std::filesystem::path(dir.empty() ? "." : dir) / file);
      if (text.empty()) {
        out.missing.push_back(d.name);
        continue;
      }
      d.rows = parse_csv(text, d.columns);
    }
    if (c.contains("hints"))
      d.hints = curve_hints_from_json(c["hints"]);
    else if (const auto it = replayed.find(d.name); it != replayed.end())
      d.hints = it->second;
    else
      d.hints = infer_hints(d.columns, d.rows);
    out.curves.push_back(std::move(d));
  }
  return out;
}

std::string column_words(const std::string& column) {
  static const std::map<std::string, std::string> kWords = {
      {"cycles", "latency"},
      {"median_cycles", "latency"},
      {"latency", "latency"},
      {"near_cycles", "near-partition latency"},
      {"runs_low_cycles", "the runs' lowest latency"},
      {"runs_high_cycles", "the runs' highest latency"},
      {"far_cycles", "far-partition latency"},
      {"gb_s", "bandwidth"},
      {"useful_gb_s", "useful bandwidth"},
      {"bandwidth_gb_s", "bandwidth"},
      {"tflops", "throughput"},
      {"ops_per_clk_per_sm", "throughput"},
      {"bytes_per_clk_per_sm", "bandwidth"},
      {"working_set_bytes", "working set"},
      {"working_set_bytes_per_sm", "working set per SM"},
      {"smid", "SM id"},
      {"group", "SM group"},
      {"sm_group", "SM group"},
      {"stride_elements", "stride"},
      {"offset_elements", "offset"},
      {"offset_bytes", "offset"},
      {"width_bytes", "access width"},
      {"word_bytes", "word size"},
      {"block_bytes", "block size"},
      {"tile_bytes", "tile size"},
      {"bytes", "size"},
      {"warps_per_sm", "warps per SM"},
      {"warpgroups_per_sm", "warpgroups per SM"},
      {"cluster_size", "cluster size"},
      {"stages", "pipeline stages"},
      {"measured_ways", "conflict ways"},
      {"near_share", "near-partition share"},
      {"near_share_near_homed", "near share of near-homed lines"},
      {"median_us", "time"},
      {"us", "time"},
  };
  auto it = kWords.find(column);
  const std::string kMedian = "_median";
  if (it == kWords.end() && column.size() > kMedian.size() &&
      column.compare(column.size() - kMedian.size(), kMedian.size(), kMedian) == 0)
    it = kWords.find(column.substr(0, column.size() - kMedian.size()));
  if (it != kWords.end()) return it->second;
  // A model's prediction of a measured column: "model_useful_gb_s" -> "model useful bandwidth".
  if (column.rfind("model_", 0) == 0 && column.size() > 6)
    return "model " + column_words(column.substr(6));
  std::string words = column;
  for (auto& ch : words)
    if (ch == '_') ch = ' ';
  return words;
}

std::string axis_title(const std::string& column, const std::string& unit) {
  return column_words(column) + (unit.empty() ? "" : " (" + unit + ")");
}

std::string series_value_label(const std::string& column, const json& value) {
  // A size reads in binary units ("footprint 1.5 MiB", not "1.57286e+06").
  if (value.is_number() && column.find("bytes") != std::string::npos)
    return column_words(column) + " " + tick_label(value.get<double>(), true);
  std::string text;
  if (value.is_string()) {
    text = value.get<std::string>();
  } else if (value.is_number_float()) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.6g", value.get<double>());
    text = buf;
  } else {
    text = value.dump();
  }
  // A bare number or yes/no says nothing without its column ("SM group 0", "multicast true").
  const bool number =
      !text.empty() && text.find_first_not_of("0123456789.-+e") == std::string::npos;
  const bool bare = number || value.is_boolean() || text == "true" || text == "false";
  return bare ? column_words(column) + " " + text : text;
}

}  // namespace gpuprobe::report
