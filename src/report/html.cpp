// The HTML report: one section per experiment with its curves drawn from their hints and its
// counters beside its timings, the findings with confidence bars, and the environment. Inline
// SVG and CSS only, so the file opens anywhere offline.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/files.hpp"
#include "report/chart.hpp"
#include "report/writer.hpp"

namespace gpuprobe::report {
namespace {

using nlohmann::json;

std::string fixed(double v, int digits) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

/// The method up to its first ';' (the full text is the cell's tooltip).
std::string short_method(const std::string& m) { return m.substr(0, m.find(';')); }

constexpr const char* kStyle =
    "body{font-family:sans-serif;max-width:1040px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
    "text-align:right;vertical-align:top}td.l,th.l{text-align:left}"
    "td.method{min-width:320px;max-width:480px;overflow-wrap:anywhere;text-align:left}"
    "td.conf{white-space:nowrap}"
    "td.reason{max-width:520px;overflow-wrap:anywhere;text-align:left}"
    ".scroll{overflow-x:auto;max-width:100%}table.data td,table.data th{font-size:12px}"
    "figure{margin:1em 0}figcaption{font-weight:bold;margin-bottom:.3em}"
    ".legend{font-size:12px;display:flex;flex-wrap:wrap;gap:.3em 1.2em;max-width:760px}"
    ".legend i{display:inline-block;width:14px;height:8px;margin-right:4px;vertical-align:middle}"
    ".bar{display:inline-block;width:80px;height:9px;background:#eee;margin-right:6px}"
    ".bar span{display:block;height:100%;background:#2a7}"
    ".warn{color:#a40}.waived{color:#777}section{border-top:1px solid #ddd;margin-top:1.5em}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px}p{overflow-wrap:anywhere}"
    "dl.env{display:grid;grid-template-columns:max-content 1fr;gap:2px 1em}"
    "dl.env dt{font-weight:bold}dl.env dd{margin:0;overflow-wrap:anywhere}";

/// A curve's CSV: "" when there is none; refused (UsageError) when it is not a regular file of
/// bounded size (a FIFO would block the report).
std::string read_file(const std::filesystem::path& p) {
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) return "";
  return files::read_input(p.string(), "CSV written by gpuprobe");
}

/// Counters read beside the timings (samples.counters) and their cross-check.
std::string counters_html(const json& e) {
  const auto& s = e.value("samples", json::object());
  if (!s.contains("counters")) return "";
  const auto& c = s["counters"];
  std::ostringstream o;
  o << "<h4>Hardware counters</h4>";
  if (c.value("status", "") != "read") {
    o << "<p class='waived'>cross-check waived: " << escape(c.value("reason", "")) << "</p>";
    return o.str();
  }
  o << "<p>" << escape(c.value("method", "")) << "</p><div class='scroll'><table class='data'>"
    << "<tr><th class='l'>configuration</th><th class='l'>quantity</th><th>measured</th>"
       "<th>model</th><th>tolerance</th><th class='l'>verdict</th></tr>";
  for (const auto& p : c.value("probes", json::array()))
    for (const auto& q : p.value("checks", json::array())) {
      const bool ok = q.value("agrees", false);
      o << "<tr><td class='l'>" << escape(p.value("label", "")) << "</td><td class='l'>"
        << escape(q.value("quantity", "")) << "</td><td>"
        << escape(tick_label(q.value("measured", 0.0), false)) << "</td><td>"
        << escape(tick_label(q.value("expected", 0.0), false)) << "</td><td>"
        << escape(q.value("tolerance_text", "")) << "</td><td class='l" << (ok ? "" : " warn")
        << "'>" << (ok ? "agrees" : "disagrees") << "</td></tr>";
    }
  // Checks with no known expectation, listed with the reason rather than judged.
  for (const auto& n : c.value("not_checked", json::array()))
    if (n.is_object())
      o << "<tr><td class='l'>" << escape(n.value("at", "")) << "</td><td class='l'>"
        << escape(n.value("quantity", "")) << "</td><td></td><td></td><td></td><td class='l'>"
        << "not checked: " << escape(n.value("why", "")) << "</td></tr>";
  o << "</table></div>";
  return o.str();
}

std::string environment_html(const json& result) {
  std::ostringstream o;
  o << "<h2>Environment</h2><dl class='env'>";
  const auto& d = result.value("device", json::object());
  auto item = [&](const std::string& k, const json& v) {
    if (v.is_null()) return;
    o << "<dt>" << escape(k) << "</dt><dd>"
      << escape(v.is_string() ? v.get<std::string>() : v.dump()) << "</dd>";
  };
  for (const char* k :
       {"name", "kind", "compute_capability", "sm_count", "l2_bytes", "global_memory_bytes",
        "sm_clock_max_mhz", "mem_clock_max_mhz", "dram_bandwidth_theoretical_gb_s", "uuid"})
    if (d.contains(k)) item(k, d[k]);
  const auto& env = result.value("environment", json::object());
  for (auto it = env.begin(); it != env.end(); ++it)
    if (!it.value().is_object() && !it.value().is_array()) item(it.key(), it.value());
  o << "</dl><details><summary>full environment record</summary><pre>" << escape(env.dump(2))
    << "</pre></details>";
  return o.str();
}

}  // namespace

std::vector<CurveData> load_curves(const json& e, const std::string& dir) {
  std::vector<CurveData> out;
  for (const auto& c : e.value("curves", json::array())) {
    if (!c.is_object()) continue;
    CurveData d;
    d.name = c.value("name", "");
    const auto columns = c.find("columns"), rows = c.find("rows");
    if (columns != c.end() && columns->is_array() && rows != c.end() && rows->is_array()) {
      for (const auto& h : *columns)
        d.columns.push_back(h.is_string() ? h.get<std::string>() : h.dump());
      for (const auto& r : *rows)
        if (r.is_array() && r.size() == d.columns.size()) d.rows.emplace_back(r.begin(), r.end());
    } else {
      const std::string file = c.value("file", "");
      if (file.empty()) continue;
      const std::string text = read_file(std::filesystem::path(dir.empty() ? "." : dir) / file);
      if (text.empty()) continue;
      d.rows = parse_csv(text, d.columns);
    }
    d.hints =
        c.contains("hints") ? curve_hints_from_json(c["hints"]) : infer_hints(d.columns, d.rows);
    out.push_back(std::move(d));
  }
  return out;
}

std::string html_report(const json& result, const std::string& curves_dir) {
  std::ostringstream o;
  const std::string device = result.contains("device") ? result["device"].value("name", "?") : "?";
  o << "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>gpuprobe: "
    << escape(device) << "</title><style>" << kStyle << "</style></head><body>";
  o << "<h1>gpuprobe report: " << escape(device) << "</h1>";
  if (result.contains("tool"))
    o << "<p>gpuprobe " << escape(result["tool"].value("version", "")) << ", git "
      << escape(result["tool"].value("git_sha", "")) << "; started "
      << escape(result.value("started_utc", "")) << "; wall time "
      << fixed(result.value("wall_s", 0.0), 1) << " s</p>";

  o << "<h2>Findings</h2><div class='scroll'><table><tr><th class='l'>finding</th><th>value</th>"
       "<th class='l'>unit</th><th>ns</th><th class='l'>confidence</th><th class='l'>method</th>"
       "</tr>";
  for (const auto& e : result.value("experiments", json::array()))
    for (const auto& f : e.value("findings", json::array())) {
      const double conf = f.value("confidence", 0.0);
      const auto shown = display_value(f);
      o << "<tr><td class='l'>" << escape(f.value("name", "")) << "</td><td>" << escape(shown.value)
        << "</td><td class='l'>" << escape(shown.unit) << "</td><td>"
        << (f.contains("value_ns") ? fixed(f["value_ns"].get<double>(), 1) : "")
        << "</td><td class='l conf'><span class='bar'><span style='width:"
        << fixed(std::clamp(conf, 0.0, 1.0) * 100, 0) << "%'></span></span>" << fixed(conf, 2)
        << "</td><td class='method' title='" << escape(f.value("method", "")) << "'>"
        << escape(short_method(f.value("method", ""))) << "</td></tr>";
    }
  o << "</table></div>";

  o << "<h2>Experiments</h2>";
  for (const auto& e : result.value("experiments", json::array())) {
    const std::string id = e.value("id", ""), status = e.value("status", "");
    o << "<section id='" << escape(id) << "'><h3>" << escape(id) << "</h3><p"
      << (status == "passed" ? "" : " class='waived'") << ">" << escape(status);
    if (!e.value("reason", std::string()).empty()) o << ": " << escape(e.value("reason", ""));
    o << "; " << fixed(e.value("wall_s", 0.0), 1) << " s</p>";
    const auto findings = e.value("findings", json::array());
    for (const auto& c : load_curves(e, curves_dir)) o << draw_curve(id, c, findings) << "\n";
    o << counters_html(e) << "</section>";
  }
  o << environment_html(result) << "</body></html>\n";
  return o.str();
}

}  // namespace gpuprobe::report
