#pragma once
// Curves drawn from their hints: an SVG line/point chart, an HTML table or a heat matrix. The
// drawing reads column names from the hints, never an experiment's id or samples.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/experiment.hpp"

namespace gpuprobe::report {

/// A curve as the report reads it back: columns, rows (numbers or strings) and hints.
struct CurveData {
  std::string name;
  std::vector<std::string> columns;
  std::vector<std::vector<nlohmann::json>> rows;
  CurveHints hints;
  /// An overlay of runs (overlay_curves): the labels of the runs, whose series are drawn in one
  /// colour per series name, a later run's dashed.
  std::vector<std::string> runs;
};

/// One chart of two runs of a curve: each row of `a` and `b` with a first column "run" holding
/// `label_a` / `label_b` (b's cells matched to a's columns by name), the series split by run
/// first. draw_curve gives a series of B the colour of the same series of A, dashed.
CurveData overlay_curves(const CurveData& a, const CurveData& b, const std::string& label_a,
                         const std::string& label_b);

/// Rows of a CSV written by to_csv (numbers parsed as numbers, quoted cells unquoted).
std::vector<std::vector<nlohmann::json>> parse_csv(const std::string& text,
                                                   std::vector<std::string>& header);

/// Hints for a curve recorded without them: y = the first median column, x = the last numeric
/// column before it with several values, series = the other columns before it; a table when
/// no such pair exists.
CurveHints infer_hints(const std::vector<std::string>& columns,
                       const std::vector<std::vector<nlohmann::json>>& rows);

/// The curves of one experiment (an entry of result.json's "experiments"): rows from the
/// result when it carries them, else from the CSV named by "file" in `dir` (results recorded
/// before curves carried rows); hints from the result, else from the current analysis when it
/// makes the curve, else inferred. `missing` names the curves found in neither place.
struct LoadedCurves {
  std::vector<CurveData> curves;
  std::vector<std::string> missing;
};
LoadedCurves load_curves(const nlohmann::json& experiment, const std::string& dir);

/// A column name in words ("cycles_median" -> "latency", "smid" -> "SM id"); a column the
/// mapping does not know reads as its name with spaces for underscores.
std::string column_words(const std::string& column);
/// An axis title: the column in words and the unit ("latency (cycles per load)").
std::string axis_title(const std::string& column, const std::string& unit);
/// A legend entry for one value of a series column: a bare number gets the column's words
/// ("SM group 0"), a word stays as it is ("copy").
std::string series_value_label(const std::string& column, const nlohmann::json& value);

/// Round tick values covering [lo, hi]: 1-2-5 steps on a linear axis, powers of 2 (bytes or a
/// span under 3 decades) or of 10 on a log axis. `integer`: the data are counts, so a linear
/// step is never below 1.
std::vector<double> nice_ticks(double lo, double hi, bool log, bool bytes, bool integer = false);
/// A tick label: bytes as B/KiB/MiB/GiB, other numbers with at most 4 significant digits.
std::string tick_label(double v, bool bytes);

/// The curve drawn as its hints ask (one chart per value of hints.split); `findings` are the
/// experiment's (for mark_findings). A series with no non-zero y is not drawn.
std::string draw_curve(const std::string& experiment_id, const CurveData& c,
                       const nlohmann::json& findings);

/// HTML-escapes text.
std::string escape(const std::string& s);

}  // namespace gpuprobe::report
