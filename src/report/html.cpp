// The HTML report: a findings table and latency-vs-working-set charts drawn as inline SVG, so
// the file opens anywhere with nothing else installed.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "report/writer.hpp"

namespace gpuprobe::report {
namespace {

using nlohmann::json;

struct Series {
  std::string label;
  std::vector<std::pair<double, double>> points;
};

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
      default:
        out += c;
    }
  }
  return out;
}

std::string bytes_label(double b) {
  char buf[32];
  if (b >= 1024.0 * 1024 * 1024)
    std::snprintf(buf, sizeof(buf), "%gG", b / (1024.0 * 1024 * 1024));
  else if (b >= 1024.0 * 1024)
    std::snprintf(buf, sizeof(buf), "%gM", b / (1024.0 * 1024));
  else if (b >= 1024)
    std::snprintf(buf, sizeof(buf), "%gK", b / 1024);
  else
    std::snprintf(buf, sizeof(buf), "%g", b);
  return buf;
}

Series series_of(const std::string& label, const json& points) {
  Series s{label, {}};
  for (const auto& p : points)
    if (p.contains("working_set_bytes") && p.contains("cycles_per_load"))
      s.points.emplace_back(p["working_set_bytes"].get<double>(),
                            p["cycles_per_load"]["median"].get<double>());
  std::sort(s.points.begin(), s.points.end());
  return s;
}

/// A log-x line chart of one or more series with circles at the measured points.
std::string svg_chart(const std::string& title, const std::vector<Series>& series,
                      const std::vector<std::pair<std::string, double>>& markers = {},
                      const std::string& y_label = "cycles per load",
                      const std::string& x_label = "working set (bytes, log scale)",
                      bool x_bytes = true) {
  const double W = 760, H = 380, L = 64, R = 16, T = 28, B = 44;
  double x0 = 1e300, x1 = 0, y1 = 0;
  for (const auto& s : series)
    for (auto [x, y] : s.points) {
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y1 = std::max(y1, y);
    }
  if (x1 <= x0 || y1 <= 0) return "";
  const double lx0 = std::floor(std::log2(x0)), lx1 = std::ceil(std::log2(x1));
  const double ymax = y1 * 1.08;
  auto px = [&](double x) { return L + (std::log2(x) - lx0) / (lx1 - lx0) * (W - L - R); };
  auto py = [&](double y) { return H - B - y / ymax * (H - T - B); };
  static const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H
    << "' font-family='sans-serif' font-size='11'>";
  o << "<text x='" << W / 2 << "' y='16' text-anchor='middle' font-size='13'>" << escape(title)
    << "</text>";
  for (double e = lx0; e <= lx1; e += 1) {
    const double x = px(std::pow(2.0, e));
    o << "<line x1='" << x << "' y1='" << T << "' x2='" << x << "' y2='" << H - B
      << "' stroke='#eee'/>";
    if (!x_bytes || static_cast<long>(e) % 2 == 0)
      o << "<text x='" << x << "' y='" << H - B + 14 << "' text-anchor='middle'>"
        << (x_bytes ? bytes_label(std::pow(2.0, e))
                    : std::to_string(static_cast<long>(std::pow(2.0, e))))
        << "</text>";
  }
  for (int i = 0; i <= 5; ++i) {
    const double y = ymax * i / 5;
    o << "<line x1='" << L << "' y1='" << py(y) << "' x2='" << W - R << "' y2='" << py(y)
      << "' stroke='#eee'/><text x='" << L - 6 << "' y='" << py(y) + 4 << "' text-anchor='end'>"
      << static_cast<long>(y) << "</text>";
  }
  o << "<text x='" << W / 2 << "' y='" << H - 8 << "' text-anchor='middle'>" << escape(x_label)
    << "</text>";
  o << "<text x='14' y='" << H / 2 << "' transform='rotate(-90 14 " << H / 2
    << ")' text-anchor='middle'>" << escape(y_label) << "</text>";
  for (std::size_t m = 0; m < markers.size(); ++m) {
    const double x = px(markers[m].second);
    o << "<line x1='" << x << "' y1='" << T << "' x2='" << x << "' y2='" << H - B
      << "' stroke='#888' stroke-dasharray='4 3'/><text x='" << x - 4 << "' y='" << T + 40 + 14 * m
      << "' text-anchor='end' fill='#555'>" << escape(markers[m].first) << "</text>";
  }
  for (std::size_t k = 0; k < series.size(); ++k) {
    const char* color = kColors[k % 6];
    o << "<polyline fill='none' stroke='" << color << "' stroke-width='1.5' points='";
    for (auto [x, y] : series[k].points) o << px(x) << "," << py(y) << " ";
    o << "'/>";
    for (auto [x, y] : series[k].points)
      o << "<circle cx='" << px(x) << "' cy='" << py(y) << "' r='2.2' fill='" << color
        << "'><title>" << (x_bytes ? bytes_label(x) : std::to_string(x)) << ": " << y
        << "</title></circle>";
    o << "<text x='" << L + 10 << "' y='" << T + 14 + 14 * k << "' fill='" << color << "'>"
      << escape(series[k].label) << "</text>";
  }
  o << "</svg>";
  return o.str();
}

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

/// The method up to its first ';' (the full text is the cell's tooltip).
std::string short_method(const std::string& m) { return m.substr(0, m.find(';')); }

/// Points (x, median of `value_key`) of the rows whose `filter_key` equals `filter_value`.
Series series_by(const std::string& label, const json& rows, const std::string& x_key,
                 const std::string& value_key, const std::string& filter_key,
                 const json& filter_value) {
  Series s{label, {}};
  for (const auto& r : rows) {
    if (!filter_key.empty() && r.value(filter_key, json()) != filter_value) continue;
    if (!r.contains(x_key) || !r.contains(value_key)) continue;
    const auto& v = r[value_key];
    const double y = v.is_object() ? v.value("median", 0.0) : v.get<double>();
    s.points.emplace_back(r[x_key].get<double>(), y);
  }
  std::sort(s.points.begin(), s.points.end());
  return s;
}

/// Charts of the bandwidth and shared-memory families, from their samples.
std::string other_charts(const json& e) {
  const std::string id = e.value("id", "");
  const auto& samples = e.value("samples", json::object());
  std::ostringstream o;
  if (id == "bandwidth.sweep" && samples.contains("l2_regime")) {
    o << svg_chart("bandwidth.sweep: all SMs read one region",
                   {series_by("GB/s", samples["l2_regime"]["points"], "working_set_bytes", "gb_s",
                              "", json())},
                   {}, "GB/s", "working set (bytes, log scale)", true);
    o << svg_chart("bandwidth.sweep: every SM reads its own slice",
                   {series_by("B/clk/SM", samples["l1_regime"]["points"], "working_set_bytes",
                              "bytes_per_clk_per_sm", "", json())},
                   {}, "bytes per clock per SM", "slice per SM (bytes, log scale)", true);
  }
  if (id == "bandwidth.stride" && samples.contains("rows")) {
    o << svg_chart("bandwidth.stride: useful GB/s",
                   {series_by("strided copy", samples["rows"], "stride_elements", "useful_gb_s",
                              "variant", "copy"),
                    series_by("strided read", samples["rows"], "stride_elements", "useful_gb_s",
                              "variant", "read")},
                   {}, "useful GB/s", "stride (elements, log scale)", false);
  }
  if (id == "smem.bank_conflicts" && samples.contains("cases")) {
    std::vector<Series> series;
    for (int w : {4, 8, 16}) {
      Series s{std::to_string(w) + "-byte words", {}};
      for (const auto& c : samples["cases"])
        if (c.value("mode", "") == "block" && c.value("word_bytes", 0) == w)
          s.points.emplace_back(c["stride"].get<double>(),
                                c["cycles_per_access"].value("median", 0.0));
      std::sort(s.points.begin(), s.points.end());
      if (!s.points.empty()) series.push_back(s);
    }
    if (!series.empty())
      o << svg_chart("smem.bank_conflicts: one block, cycles per warp-wide access", series, {},
                     "cycles per access", "stride (words, log scale)", false);
  }
  return o.str();
}

}  // namespace

std::string html_report(const json& result) {
  std::ostringstream o;
  const std::string device = result.contains("device") ? result["device"].value("name", "?") : "?";
  o << "<!doctype html><html><head><meta charset='utf-8'><title>gpuprobe: " << escape(device)
    << "</title><style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;}"
       "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;"
       "text-align:right}td.l,th.l{text-align:left}</style></head><body>";
  o << "<h1>gpuprobe report: " << escape(device) << "</h1>";
  if (result.contains("tool"))
    o << "<p>gpuprobe " << escape(result["tool"].value("version", "")) << ", git "
      << escape(result["tool"].value("git_sha", "")) << "; started "
      << escape(result.value("started_utc", "")) << "; wall time " << result.value("wall_s", 0.0)
      << " s</p>";
  o << "<h2>Curves</h2>";
  for (const auto& e : result.value("experiments", json::array())) {
    const auto& samples = e.value("samples", json::object());
    std::vector<Series> series;
    if (samples.contains("points") && !samples["points"].empty() &&
        !samples["points"][0].contains("level"))
      series.push_back(series_of(e.value("id", ""), samples["points"]));
    if (samples.contains("carveouts"))
      for (const auto& c : samples["carveouts"]) {
        const int pct = c["carveout_percent"].get<int>();
        series.push_back(series_of(pct < 0 ? std::string("driver default carveout")
                                           : "carveout " + std::to_string(pct) + "% shared",
                                   c["points"]));
      }
    // Dashed lines at the capacities the experiment found.
    std::vector<std::pair<std::string, double>> markers;
    for (const auto& f : e.value("findings", json::array()))
      if (f.value("unit", "") == "bytes" && !samples.contains("carveouts"))
        markers.emplace_back(f.value("name", ""), f.value("value", 0.0));
    if (!series.empty() && series.front().points.size() > 3)
      o << svg_chart(e.value("id", ""), series, markers) << "\n";
    o << other_charts(e);
  }
  o << "<h2>Findings</h2><table><tr><th class='l'>finding</th><th>value</th><th>unit</th>"
       "<th>ns</th><th>confidence</th><th class='l'>method</th></tr>";
  for (const auto& e : result.value("experiments", json::array())) {
    for (const auto& f : e.value("findings", json::array())) {
      o << "<tr><td class='l'>" << escape(f.value("name", "")) << "</td><td>"
        << display_value(f).value << "</td><td>" << escape(display_value(f).unit) << "</td><td>"
        << (f.contains("value_ns") ? fixed(f["value_ns"].get<double>(), 1) : "") << "</td><td>"
        << fixed(f.value("confidence", 0.0), 2) << "</td><td class='l' title='"
        << escape(f.value("method", "")) << "'>" << escape(short_method(f.value("method", "")))
        << "</td></tr>";
    }
  }
  o << "</table>";
  o << "<h2>Experiments</h2><table><tr><th class='l'>id</th><th class='l'>status</th>"
       "<th>wall s</th><th class='l'>reason</th></tr>";
  for (const auto& e : result.value("experiments", json::array()))
    o << "<tr><td class='l'>" << escape(e.value("id", "")) << "</td><td class='l'>"
      << escape(e.value("status", "")) << "</td><td>" << e.value("wall_s", 0.0)
      << "</td><td class='l'>" << escape(e.value("reason", "")) << "</td></tr>";
  o << "</table><h2>Environment</h2><pre>"
    << escape(result.value("environment", json::object()).dump(2)) << "</pre></body></html>\n";
  return o.str();
}

}  // namespace gpuprobe::report
