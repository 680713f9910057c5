#include "report/chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace gpuprobe::report {
namespace {

using nlohmann::json;

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                   "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};
constexpr std::size_t kMaxSeries = 12;

bool is_number(const json& v) { return v.is_number(); }

std::string cell_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.6g", v.get<double>());
    return buf;
  }
  return v.dump();
}

/// Whether a row passes the hint's `where` (values compared as text: CSV numbers read back as
/// numbers, hints may hold either).
bool row_matches(const std::vector<std::string>& cols, const std::vector<json>& row,
                 const json& where) {
  for (auto it = where.begin(); it != where.end(); ++it) {
    const auto c = std::find(cols.begin(), cols.end(), it.key());
    if (c == cols.end()) return false;
    const auto& v = row[static_cast<std::size_t>(c - cols.begin())];
    const auto& want = it.value();
    bool any = false;
    if (want.is_array()) {
      for (const auto& w : want) any = any || cell_text(w) == cell_text(v);
    } else {
      any = cell_text(want) == cell_text(v);
    }
    if (!any) return false;
  }
  return true;
}

int column_of(const std::vector<std::string>& cols, const std::string& name) {
  const auto it = std::find(cols.begin(), cols.end(), name);
  return it == cols.end() ? -1 : static_cast<int>(it - cols.begin());
}

std::string fmt(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

struct Series {
  std::string label;
  bool model = false;  // drawn dashed, no markers
  std::vector<std::pair<double, double>> points;
};

struct Style {
  const char* color;
  bool dashed;
};

/// Each series' colour and dash: one colour per series, except in an overlay of runs, where a
/// later run's series takes the colour of the first run's series of the same name, dashed.
std::vector<Style> styles_of(const std::vector<Series>& series,
                             const std::vector<std::string>& runs) {
  std::vector<Style> out;
  std::map<std::string, std::size_t> colour_of;
  for (const auto& s : series) {
    std::string key = s.label;
    bool later = false;
    for (std::size_t r = 0; r < runs.size(); ++r)
      if (key == runs[r] || key.rfind(runs[r] + " / ", 0) == 0 ||
          key.rfind(runs[r] + ": ", 0) == 0) {
        key = key.substr(runs[r].size());
        later = r > 0;
        break;
      }
    const auto it = colour_of.emplace(key, colour_of.size()).first;
    out.push_back({kColors[it->second % (sizeof(kColors) / sizeof(kColors[0]))], s.model || later});
  }
  return out;
}

std::string unit_text(const std::string& u) { return u.empty() ? "" : " (" + u + ")"; }

std::string table_html(const CurveData& c) {
  std::ostringstream o;
  o << "<div class='scroll'><table class='data'><tr>";
  for (const auto& h : c.columns) o << "<th>" << escape(h) << "</th>";
  o << "</tr>";
  for (const auto& r : c.rows) {
    if (!row_matches(c.columns, r, c.hints.where)) continue;
    o << "<tr>";
    for (const auto& v : r) o << "<td>" << escape(cell_text(v)) << "</td>";
    o << "</tr>";
  }
  o << "</table></div>";
  return o.str();
}

std::string matrix_html(const CurveData& c) {
  const auto& h = c.hints;
  const int xc = column_of(c.columns, h.x), yc = column_of(c.columns, h.y);
  const int rc = h.series.empty() ? -1 : column_of(c.columns, h.series.front());
  if (xc < 0 || yc < 0 || rc < 0) return table_html(c);
  std::vector<std::string> xs, rs;
  std::map<std::pair<std::string, std::string>, double> cell;
  double lo = 1e300, hi = -1e300;
  for (const auto& r : c.rows) {
    if (!row_matches(c.columns, r, h.where) || !is_number(r[yc])) continue;
    const auto x = cell_text(r[xc]), row = cell_text(r[rc]);
    if (std::find(xs.begin(), xs.end(), x) == xs.end()) xs.push_back(x);
    if (std::find(rs.begin(), rs.end(), row) == rs.end()) rs.push_back(row);
    const double v = r[yc].get<double>();
    cell[{row, x}] = v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  std::ostringstream o;
  o << "<div class='scroll'><table class='data matrix' data-series='" << cell.size() << "'><tr><th>"
    << escape(h.series.front()) << " \\ " << escape(h.x) << "</th>";
  for (const auto& x : xs) o << "<th>" << escape(x) << "</th>";
  o << "</tr>";
  for (const auto& row : rs) {
    o << "<tr><th>" << escape(row) << "</th>";
    for (const auto& x : xs) {
      const auto it = cell.find({row, x});
      if (it == cell.end()) {
        o << "<td>-</td>";
        continue;
      }
      const double t = hi > lo ? (it->second - lo) / (hi - lo) : 1;
      const int light = static_cast<int>(95 - 45 * t);
      o << "<td style='background:hsl(210,70%," << light << "%)' title='" << escape(row) << " / "
        << escape(x) << ": " << escape(cell_text(json(it->second))) << unit_text(h.y_unit) << "'>"
        << escape(cell_text(json(it->second))) << "</td>";
    }
    o << "</tr>";
  }
  o << "</table></div>";
  return o.str();
}

}  // namespace

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

CurveData overlay_curves(const CurveData& a, const CurveData& b, const std::string& label_a,
                         const std::string& label_b) {
  CurveData o;
  o.name = a.name;
  o.hints = a.hints;
  o.hints.series.insert(o.hints.series.begin(), "run");
  o.runs = {label_a, label_b};
  o.columns.push_back("run");
  o.columns.insert(o.columns.end(), a.columns.begin(), a.columns.end());
  for (const auto& r : a.rows) {
    std::vector<json> row{json(label_a)};
    row.insert(row.end(), r.begin(), r.end());
    o.rows.push_back(std::move(row));
  }
  for (const auto& r : b.rows) {
    std::vector<json> row{json(label_b)};
    for (const auto& name : a.columns) {
      const int k = column_of(b.columns, name);
      row.push_back(k >= 0 && static_cast<std::size_t>(k) < r.size() ? r[k] : json(nullptr));
    }
    o.rows.push_back(std::move(row));
  }
  return o;
}

std::vector<std::vector<json>> parse_csv(const std::string& text,
                                         std::vector<std::string>& header) {
  std::vector<std::vector<std::string>> lines;
  std::vector<std::string> cur;
  std::string cell;
  bool quoted = false, was_quoted = false;
  std::vector<bool> quoted_cells;
  std::vector<std::vector<bool>> quoted_lines;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else {
        cell += ch;
      }
    } else if (ch == '"') {
      quoted = was_quoted = true;
    } else if (ch == ',' || ch == '\n') {
      cur.push_back(cell);
      quoted_cells.push_back(was_quoted);
      cell.clear();
      was_quoted = false;
      if (ch == '\n') {
        lines.push_back(cur);
        quoted_lines.push_back(quoted_cells);
        cur.clear();
        quoted_cells.clear();
      }
    } else {
      cell += ch;
    }
  }
  if (!cell.empty() || !cur.empty()) {
    cur.push_back(cell);
    quoted_cells.push_back(was_quoted);
    lines.push_back(cur);
    quoted_lines.push_back(quoted_cells);
  }
  std::vector<std::vector<json>> rows;
  if (lines.empty()) return rows;
  header = lines.front();
  for (std::size_t l = 1; l < lines.size(); ++l) {
    std::vector<json> row;
    for (std::size_t k = 0; k < lines[l].size(); ++k) {
      const auto& s = lines[l][k];
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      if (!quoted_lines[l][k] && !s.empty() && end && *end == '\0')
        row.emplace_back(v);
      else
        row.emplace_back(s);
    }
    rows.push_back(row);
  }
  return rows;
}

CurveHints infer_hints(const std::vector<std::string>& columns,
                       const std::vector<std::vector<json>>& rows) {
  CurveHints h;
  h.kind = "table";
  int y = -1;
  for (std::size_t i = 0; i < columns.size() && y < 0; ++i)
    if (columns[i].find("median") != std::string::npos) y = static_cast<int>(i);
  if (y < 0 || rows.empty()) return h;
  int x = -1;
  for (int i = y - 1; i >= 0 && x < 0; --i) {
    std::set<double> values;
    bool numeric = true;
    for (const auto& r : rows) {
      if (static_cast<std::size_t>(i) >= r.size() || !r[i].is_number()) {
        numeric = false;
        break;
      }
      values.insert(r[i].get<double>());
    }
    if (numeric && values.size() >= 3) x = i;
  }
  if (x < 0) return h;
  h.kind = "line";
  h.x = columns[x];
  h.y = columns[y];
  for (int i = 0; i < y; ++i)
    if (i != x) h.series.push_back(columns[i]);
  double lo = 1e300, hi = 0;
  for (const auto& r : rows) {
    lo = std::min(lo, r[x].get<double>());
    hi = std::max(hi, r[x].get<double>());
  }
  h.log_x = lo > 0 && hi / lo >= 32;
  if (h.x.find("bytes") != std::string::npos) {
    h.x_unit = "bytes";
    h.mark_findings = true;  // capacities and plateaus found in bytes
  }
  if (h.y.find("gb_s") != std::string::npos) h.y_unit = "GB/s";
  if (h.y.find("cycles") != std::string::npos) h.y_unit = "cycles";
  h.title = h.y + " against " + h.x + " (hints inferred)";
  return h;
}

std::vector<double> nice_ticks(double lo, double hi, bool log, bool bytes, bool integer) {
  std::vector<double> t;
  if (!(hi > lo)) return {lo};
  if (log) {
    const double base = (bytes || std::log10(hi / lo) < 3) ? 2.0 : 10.0;
    const double e0 = std::floor(std::log(lo) / std::log(base) + 1e-9);
    const double e1 = std::ceil(std::log(hi) / std::log(base) - 1e-9);
    // At most ~10 labelled ticks: every k-th power.
    const int k = std::max(1, static_cast<int>(std::ceil((e1 - e0 + 1) / 10.0)));
    double e = e0;
    for (; e <= e1; e += k) t.push_back(std::pow(base, e));
    if (t.back() < hi * (1 - 1e-9)) t.push_back(std::pow(base, e));
    return t;
  }
  const double raw = (hi - lo) / 5;
  if (!std::isfinite(raw) || !std::isfinite(lo)) return {lo, hi};
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  // Bytes on a linear axis: a power-of-two step, so that the labels are round in binary units
  // (a decimal step reads "47.6837 MiB" and runs past the chart's edge).
  if (bytes && raw >= 1) step = std::pow(2.0, std::ceil(std::log2(raw)));
  // Counts (warpgroups, stages, SM ids) never get a tick between two whole numbers.
  if (integer && step < 1) step = 1;
  const double first = std::floor(lo / step) * step;
  for (int i = 0; first + i * step < hi + step * 0.999; ++i) {
    const double v = first + i * step;
    t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  }
  return t;
}

std::string tick_label(double v, bool bytes) {
  char buf[40];
  if (bytes) {
    static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (std::fabs(v) >= 1024 && u < 4) {
      v /= 1024;
      ++u;
    }
    std::snprintf(buf, sizeof(buf), "%g %s", v, kUnits[u]);
    return buf;
  }
  if (std::fabs(v) >= 1e6 || (std::fabs(v) < 1e-3 && v != 0))
    std::snprintf(buf, sizeof(buf), "%.3g", v);
  else
    std::snprintf(buf, sizeof(buf), "%.4g", v);
  return buf;
}

namespace {

constexpr double kW = 760, kH = 360, kL = 78, kR = 20, kT = 14, kB = 46;
constexpr std::size_t kColorCount = sizeof(kColors) / sizeof(kColors[0]);

/// A rough width of a label at font-size 11 (sans-serif digits and letters average ~6.2 px).
double text_width(const std::string& s, double font = 11) {
  return static_cast<double>(s.size()) * font * 0.56;
}

/// The plotting frame: data ranges and their mapping to the SVG's pixels.
struct Frame {
  bool log_x = false, log_y = false;
  double ax0 = 0, ax1 = 1, ay0 = 0, ay1 = 1;
  double tx(double v) const { return log_x ? std::log(v) : v; }
  double ty(double v) const { return log_y ? std::log(v) : v; }
  double px(double x) const {
    return kL + (tx(x) - tx(ax0)) / (tx(ax1) - tx(ax0)) * (kW - kL - kR);
  }
  double py(double y) const {
    return kH - kB - (ty(y) - ty(ay0)) / (ty(ay1) - ty(ay0)) * (kH - kT - kB);
  }
};

/// Whether every x (or y) of the series is a whole number: a count axis.
bool all_integer(const std::vector<Series>& series, bool x_axis) {
  for (const auto& s : series)
    for (auto [x, y] : s.points) {
      const double v = x_axis ? x : y;
      if (std::fabs(v - std::round(v)) > 1e-9) return false;
    }
  return true;
}

/// The series of a line/points curve: one per distinct value of the series columns, plus the
/// model columns (dashed); rows outside `where` skipped, `reduce` applied. A series with no
/// point or no non-zero y (a group that has no samples of that quantity) is left out.
std::vector<Series> collect_series(const CurveData& c, int xc, int yc) {
  const auto& h = c.hints;
  std::vector<Series> series;
  std::map<std::string, std::size_t> index;
  std::map<std::pair<std::size_t, double>, double> reduced;
  auto add = [&](const std::string& label, bool model, double x, double y) {
    auto it = index.find(label);
    if (it == index.end()) {
      it = index.emplace(label, series.size()).first;
      series.push_back({label, model, {}});
    }
    if (!std::isfinite(x) || !std::isfinite(y)) return;
    if ((h.log_x && x <= 0) || (h.log_y && y <= 0)) return;
    if (!h.reduce.empty()) {
      const auto key = std::make_pair(it->second, x);
      const auto r = reduced.find(key);
      if (r == reduced.end())
        reduced[key] = y;
      else
        r->second = h.reduce == "min" ? std::min(r->second, y) : std::max(r->second, y);
      return;
    }
    series[it->second].points.emplace_back(x, y);
  };
  for (const auto& r : c.rows) {
    if (!row_matches(c.columns, r, h.where) || !r[xc].is_number()) continue;
    std::string label;
    for (const auto& s : h.series) {
      const int sc = column_of(c.columns, s);
      if (sc >= 0) label += (label.empty() ? "" : ", ") + series_value_label(s, r[sc]);
    }
    if (r[yc].is_number())
      add(label.empty() ? column_words(h.y) : label, false, r[xc].get<double>(),
          r[yc].get<double>());
    for (const auto& m : h.model) {
      const int mc = column_of(c.columns, m);
      if (mc >= 0 && r[mc].is_number())
        add((label.empty() ? "" : label + ": ") + column_words(m), true, r[xc].get<double>(),
            r[mc].get<double>());
    }
  }
  for (const auto& [key, y] : reduced) series[key.first].points.emplace_back(key.second, y);
  for (auto& s : series) std::sort(s.points.begin(), s.points.end());
  series.erase(std::remove_if(series.begin(), series.end(),
                              [](const Series& s) {
                                return std::all_of(s.points.begin(), s.points.end(),
                                                   [](auto p) { return p.second == 0; });
                              }),
               series.end());
  return series;
}

/// Every k-th tick is labelled, k the smallest that keeps neighbouring labels `gap` px apart
/// (`along`: a label's extent along the axis).
std::size_t label_every(const std::vector<double>& pos, const std::vector<double>& along,
                        double gap) {
  for (std::size_t k = 1; k < pos.size(); ++k) {
    bool fits = true;
    for (std::size_t i = 0; i + k < pos.size() && fits; i += k)
      fits = std::fabs(pos[i + k] - pos[i]) >= (along[i] + along[i + k]) / 2 + gap;
    if (fits) return k;
  }
  return std::max<std::size_t>(1, pos.size());
}

/// Grid lines, tick labels (thinned so that none collide) and the axis titles in words.
std::string axes_svg(const CurveHints& h, const Frame& f, const std::vector<double>& xt,
                     const std::vector<double>& yt) {
  const bool xb = h.x_unit == "bytes", yb = h.y_unit == "bytes";
  std::ostringstream o;
  std::vector<double> pos, along;
  for (double v : xt) {
    pos.push_back(f.px(v));
    along.push_back(text_width(tick_label(v, xb)));
  }
  const std::size_t kx = label_every(pos, along, 8);
  for (std::size_t i = 0; i < xt.size(); ++i) {
    const double x = pos[i];
    o << "<line x1='" << fmt(x) << "' y1='" << kT << "' x2='" << fmt(x) << "' y2='" << kH - kB
      << "' stroke='#eee'/>";
    if (i % kx) continue;
    // A label that would pass the chart's right edge ends at its tick instead.
    const bool end = x + along[i] / 2 > kW - 2;
    o << "<text class='tick x' x='" << fmt(x) << "' y='" << kH - kB + 14 << "' text-anchor='"
      << (end ? "end" : "middle") << "'>" << escape(tick_label(xt[i], xb)) << "</text>";
  }
  pos.clear();
  along.clear();
  for (double v : yt) {
    pos.push_back(f.py(v));
    along.push_back(11);
  }
  const std::size_t ky = label_every(pos, along, 2);
  for (std::size_t i = 0; i < yt.size(); ++i) {
    o << "<line x1='" << kL << "' y1='" << fmt(pos[i]) << "' x2='" << kW - kR << "' y2='"
      << fmt(pos[i]) << "' stroke='#eee'/>";
    if (i % ky) continue;
    o << "<text class='tick y' data-v='" << yt[i] << "' x='" << kL - 6 << "' y='" << fmt(pos[i] + 4)
      << "' text-anchor='end'>" << escape(tick_label(yt[i], yb)) << "</text>";
  }
  o << "<text class='axis-title x' x='" << (kL + kW - kR) / 2 << "' y='" << kH - 10
    << "' text-anchor='middle'>"
    << escape(axis_title(h.x, h.x_unit) + (h.log_x ? ", log scale" : "")) << "</text>";
  o << "<text class='axis-title y' x='12' y='" << (kT + kH - kB) / 2
    << "' transform='rotate(-90 12 " << (kT + kH - kB) / 2 << ")' text-anchor='middle'>"
    << escape(axis_title(h.y, h.y_unit) + (h.log_y ? ", log scale" : "")) << "</text>";
  return o.str();
}

/// Found plateaus (shaded) and knees or capacities (dashed) in the x unit; their names are
/// set in up to six rows, each where it collides with no other (left out where none is free:
/// the line's tooltip still names it).
std::string marks_svg(const CurveHints& h, const Frame& f, const json& findings) {
  if (!h.mark_findings || h.x_unit.empty()) return "";
  const bool xb = h.x_unit == "bytes";
  std::ostringstream o;
  std::vector<std::vector<std::pair<double, double>>> rows(6);
  const auto in = [&](double v) { return v >= f.ax0 && v <= f.ax1 && (!h.log_x || v > 0); };
  for (const auto& fd : findings) {
    if (fd.contains("working_set_bytes_range") && xb) {
      const auto& rg = fd["working_set_bytes_range"];
      if (rg.is_array() && rg.size() == 2 && rg[0].is_number() && rg[1].is_number() &&
          in(rg[0].get<double>()) && in(rg[1].get<double>()))
        o << "<rect class='mark' x='" << fmt(f.px(rg[0].get<double>())) << "' y='" << kT
          << "' width='" << fmt(f.px(rg[1].get<double>()) - f.px(rg[0].get<double>()))
          << "' height='" << kH - kT - kB << "' fill='#2ca02c' fill-opacity='0.08'><title>"
          << escape(fd.value("name", "")) << " plateau</title></rect>";
    }
    if (fd.value("unit", "") != h.x_unit || !fd.contains("value") || !fd["value"].is_number())
      continue;
    const double v = fd["value"].get<double>();
    if (!in(v)) continue;
    const double x = f.px(v);
    const std::string name = fd.value("name", "");
    o << "<line class='mark' x1='" << fmt(x) << "' y1='" << kT << "' x2='" << fmt(x) << "' y2='"
      << kH - kB << "' stroke='#555' stroke-dasharray='4 3'><title>" << escape(name) << ": "
      << escape(tick_label(v, xb)) << "</title></line>";
    const double w = text_width(name, 10);
    const bool end = x + 3 + w > kW - kR;
    const double left = end ? x - 3 - w : x + 3, right = left + w;
    for (std::size_t row = 0; row < rows.size(); ++row) {
      const bool free = std::none_of(rows[row].begin(), rows[row].end(), [&](auto span) {
        return left < span.second + 4 && right > span.first - 4;
      });
      if (!free) continue;
      rows[row].emplace_back(left, right);
      o << "<text class='marklabel' x='" << fmt(end ? x - 3 : x + 3) << "' y='"
        << kT + 12 + 12 * row
        << "' fill='#555' font-size='10' stroke='#fff' stroke-width='3' paint-order='stroke'"
        << (end ? " text-anchor='end'" : "") << ">" << escape(name) << "</text>";
      break;
    }
  }
  return o.str();
}

/// The series' lines and points, with a tooltip per point.
std::string series_svg(const CurveHints& h, const Frame& f, const std::vector<Series>& series,
                       const std::vector<Style>& styles) {
  const bool xb = h.x_unit == "bytes", yb = h.y_unit == "bytes";
  std::ostringstream o;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const char* color = styles[k].color;
    const auto& s = series[k];
    if (h.kind != "points" || styles[k].dashed) {
      o << "<polyline class='series' data-label='" << escape(s.label) << "' fill='none' stroke='"
        << color << "' stroke-width='1.6'" << (styles[k].dashed ? " stroke-dasharray='6 4'" : "")
        << " points='";
      for (auto [x, y] : s.points) o << fmt(f.px(x)) << "," << fmt(f.py(y)) << " ";
      o << "'/>";
    }
    if (s.model) continue;
    o << "<g class='points' fill='" << color << "'>";
    for (auto [x, y] : s.points)
      o << "<circle cx='" << fmt(f.px(x)) << "' cy='" << fmt(f.py(y)) << "' r='2.6'><title>"
        << escape(s.label) << ": " << escape(column_words(h.x)) << " " << escape(tick_label(x, xb))
        << ", " << escape(column_words(h.y)) << " " << escape(tick_label(y, yb))
        << (yb || h.y_unit.empty() ? "" : " " + escape(h.y_unit)) << "</title></circle>";
    o << "</g>";
  }
  return o.str();
}

/// The band's points (x, low, high), sorted by x: the rows where both band columns hold
/// numbers (and fit a log axis); none without a band.
struct BandPoint {
  double x, low, high;
};
std::vector<BandPoint> band_points(const CurveData& c, int xc) {
  const auto& h = c.hints;
  std::vector<BandPoint> out;
  if (h.band.size() != 2) return out;
  const int lc = column_of(c.columns, h.band[0]), hc = column_of(c.columns, h.band[1]);
  if (lc < 0 || hc < 0) return out;
  for (const auto& r : c.rows) {
    if (!row_matches(c.columns, r, h.where) || !r[xc].is_number() || !r[lc].is_number() ||
        !r[hc].is_number())
      continue;
    const BandPoint b{r[xc].get<double>(), r[lc].get<double>(), r[hc].get<double>()};
    if ((h.log_x && b.x <= 0) || (h.log_y && b.low <= 0)) continue;
    out.push_back(b);
  }
  std::sort(out.begin(), out.end(),
            [](const BandPoint& a, const BandPoint& b) { return a.x < b.x; });
  return out;
}

/// The band as one shaded polygon (low edge left to right, high edge back), drawn behind the
/// series.
std::string band_svg(const Frame& f, const std::vector<BandPoint>& band) {
  if (band.empty()) return "";
  std::ostringstream o;
  o << "<polygon class='band' fill='#999' fill-opacity='0.28' stroke='none' points='";
  for (const auto& b : band) o << fmt(f.px(b.x)) << "," << fmt(f.py(b.low)) << " ";
  for (auto it = band.rbegin(); it != band.rend(); ++it)
    o << fmt(f.px(it->x)) << "," << fmt(f.py(it->high)) << " ";
  o << "'/>";
  return o.str();
}

/// One chart of a line/points curve (draw_curve has handled tables, matrices and splits).
std::string chart_html(const CurveData& c, const json& findings) {
  const auto& h = c.hints;
  std::ostringstream o;
  const int xc = column_of(c.columns, h.x), yc = column_of(c.columns, h.y);
  if (xc < 0 || yc < 0) {
    o << "<p class='warn'>columns " << escape(h.x) << " / " << escape(h.y)
      << " not in the curve</p>" << table_html(c);
    return o.str();
  }
  const auto series = collect_series(c, xc, yc);
  if (series.empty() || series.size() > kMaxSeries) {
    o << "<p class='warn'>" << (series.empty() ? "no drawable points" : "too many series")
      << "</p><details><summary>" << c.rows.size() << " rows</summary>" << table_html(c)
      << "</details>";
    return o.str();
  }
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const auto& s : series)
    for (auto [x, y] : s.points) {
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  const auto band = band_points(c, xc);
  for (const auto& b : band) {
    y0 = std::min(y0, b.low);
    y1 = std::max(y1, b.high);
  }
  if (!h.log_y && y0 > 0) y0 = 0;  // bars of magnitude read from zero
  if (x1 <= x0) {
    x0 -= 1;
    x1 += 1;
  }
  if (y1 <= y0) y1 = y0 + (y0 == 0 ? 1 : std::fabs(y0));
  const bool xb = h.x_unit == "bytes", yb = h.y_unit == "bytes";
  const auto xt = nice_ticks(x0, x1, h.log_x, xb, all_integer(series, true));
  const auto yt = nice_ticks(y0, y1, h.log_y, yb, all_integer(series, false));
  const auto styles = styles_of(series, c.runs);
  Frame f;
  f.log_x = h.log_x;
  f.log_y = h.log_y;
  f.ax0 = std::min(x0, xt.front());
  f.ax1 = std::max(x1, xt.back());
  f.ay0 = std::min(y0, yt.front());
  f.ay1 = std::max(y1, yt.back());
  o << "<svg class='chart' xmlns='http://www.w3.org/2000/svg' viewBox='0 0 " << kW << " " << kH
    << "' width='" << kW << "' height='" << kH << "' font-family='sans-serif' font-size='11'>";
  o << "<rect x='" << kL << "' y='" << kT << "' width='" << kW - kL - kR << "' height='"
    << kH - kT - kB << "' fill='none' stroke='#ccc'/>";
  o << axes_svg(h, f, xt, yt) << band_svg(f, band) << marks_svg(h, f, findings)
    << series_svg(h, f, series, styles);
  o << "</svg><div class='legend'>";
  if (!band.empty())
    o << "<span><i style='background:#999;opacity:0.5'></i>" << escape(column_words(h.band[0]))
      << " .. " << escape(column_words(h.band[1])) << "</span>";
  for (std::size_t k = 0; k < series.size(); ++k)
    o << "<span><i style='background:" << styles[k].color << (styles[k].dashed ? ";height:2px" : "")
      << "'></i>" << escape(series[k].label) << "</span>";
  o << "</div>";
  return o.str();
}

std::string figure(const std::string& experiment_id, const CurveData& c, const json& findings) {
  const auto& h = c.hints;
  const std::string title = h.title.empty() ? experiment_id + ": " + c.name : h.title;
  std::ostringstream o;
  o << "<figure class='curve' data-curve='" << escape(experiment_id + "." + c.name) << "'>";
  o << "<figcaption>" << escape(title) << "</figcaption>";
  if (h.kind == "table" || (h.kind != "matrix" && (h.x.empty() || h.y.empty())))
    o << "<details><summary>" << c.rows.size() << " rows</summary>" << table_html(c)
      << "</details>";
  else if (h.kind == "matrix")
    o << matrix_html(c);
  else
    o << chart_html(c, findings);
  o << "</figure>";
  return o.str();
}

}  // namespace

std::string draw_curve(const std::string& experiment_id, const CurveData& c, const json& findings) {
  if (c.hints.split.empty()) return figure(experiment_id, c, findings);
  // One chart per combination of the split columns' values, in the order the rows hold them.
  std::vector<std::pair<json, std::string>> parts;  // where, title suffix
  for (const auto& r : c.rows) {
    if (!row_matches(c.columns, r, c.hints.where)) continue;
    json where = c.hints.where;
    std::string suffix;
    for (const auto& s : c.hints.split) {
      const int sc = column_of(c.columns, s);
      if (sc < 0) continue;
      where[s] = cell_text(r[sc]);
      suffix += (suffix.empty() ? "" : ", ") + series_value_label(s, r[sc]);
    }
    if (std::none_of(parts.begin(), parts.end(), [&](const auto& p) { return p.first == where; }))
      parts.emplace_back(where, suffix);
  }
  std::string out;
  for (const auto& [where, suffix] : parts) {
    CurveData one = c;
    one.hints.split.clear();
    one.hints.where = where;
    one.hints.title =
        (c.hints.title.empty() ? experiment_id + ": " + c.name : c.hints.title) + ": " + suffix;
    out += figure(experiment_id, one, findings);
  }
  return out;
}

}  // namespace gpuprobe::report
