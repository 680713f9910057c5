#pragma once
// What an experiment concludes and draws: findings (value, unit, confidence, method) and curves
// (tables the report draws, with their hints). Pure values: the analysis layer names them
// without reaching a device.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/finding_value.hpp"

namespace gpuprobe {

/// A conclusion with its unit, confidence in [0, 1] and the method that reached it.
struct Finding {
  std::string name;
  double value = 0;
  std::string unit;
  double confidence = 0;
  std::string method;
  nlohmann::json extra = nlohmann::json::object();  ///< e.g. value_ns, working_set_bytes
};
nlohmann::json to_json(const Finding& f);
Finding finding_from_json(const nlohmann::json& j);

/// How the report draws a curve, by column names: the writer reads only these hints, never an
/// experiment's id or samples. An empty `y` draws the curve as a table.
struct CurveHints {
  std::string kind = "line";  ///< "line", "points" (no joining line), "table", "matrix"
  std::string title;
  std::string x, y;            ///< column names (matrix: x = columns, series = rows)
  std::string x_unit, y_unit;  ///< "bytes" gets binary prefixes on its ticks
  bool log_x = false, log_y = false;
  std::vector<std::string> series;  ///< columns whose values split the rows into series
  std::vector<std::string> model;   ///< more y columns drawn dashed: a model's prediction
  std::vector<std::string> split;   ///< columns whose values split the rows into charts
  std::string reduce;               ///< "max" / "min": one point per x and series
  /// Columns and values a row must have to be drawn (e.g. {"stage": "width"}).
  nlohmann::json where = nlohmann::json::object();
  /// Mark this experiment's findings whose unit is x_unit (knees, capacities, plateau ranges).
  bool mark_findings = false;
  /// Two y columns {low, high} drawn as a shaded band behind the series (e.g. the range of
  /// several runs); empty = none.
  std::vector<std::string> band;
  bool empty() const { return x.empty() && y.empty() && kind == "line"; }
  // Builders, so a curve's construction site states its hints in one expression.
  CurveHints by(std::vector<std::string> columns) const;
  CurveHints with_model(std::vector<std::string> columns) const;
  CurveHints best(std::string max_or_min) const;
  CurveHints only(nlohmann::json where_) const;
  CurveHints marked() const;
  CurveHints points() const;
  CurveHints split_by(std::vector<std::string> columns) const;
  CurveHints banded(std::string low, std::string high) const;
};
/// A line chart of y against x.
CurveHints chart_hints(std::string title, std::string x, std::string x_unit, std::string y,
                       std::string y_unit, bool log_x = false);
/// Drawn as a table (no meaningful x).
CurveHints table_hints(std::string title);
nlohmann::json to_json(const CurveHints& h);
CurveHints curve_hints_from_json(const nlohmann::json& j);

/// A table of numbers written as one CSV file (<experiment id>.<name>.csv).
struct Curve {
  std::string name;
  std::vector<std::string> columns;
  std::vector<std::vector<nlohmann::json>> rows;  ///< numbers or strings
  CurveHints hints = {};                          ///< how the report draws it
};

}  // namespace gpuprobe
