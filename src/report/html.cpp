// The HTML report: one section per experiment with its curves drawn from their hints and its
// counters beside its timings, the findings with confidence bars, and the environment. Inline
// SVG and CSS only, so the file opens anywhere offline.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/finding_value.hpp"
#include "report/chart.hpp"
#include "report/summary.hpp"
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
    "td.conf{white-space:nowrap}"
    "td.reason{max-width:520px;overflow-wrap:anywhere;text-align:left}"
    ".scroll{overflow-x:auto;max-width:100%}table.data td,table.data th{font-size:12px}"
    "figure{margin:1em 0}figcaption{font-weight:bold;margin-bottom:.3em}"
    ".legend{font-size:12px;display:flex;flex-wrap:wrap;gap:.3em 1.2em;max-width:760px}"
    ".legend i{display:inline-block;width:14px;height:8px;margin-right:4px;vertical-align:middle}"
    ".bar{display:inline-block;width:80px;height:9px;background:#eee;margin-right:6px}"
    ".bar span{display:block;height:100%;background:#2a7}"
    ".warn{color:#a40}.waived{color:#777}section{border-top:1px solid #ddd;margin-top:1.5em}"
    "section.family{border-top:3px solid #7a9cc6}section.family>h2{margin:.4em 0}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;font-size:12px}p{overflow-wrap:anywhere}"
    "dl.env{display:grid;grid-template-columns:max-content 1fr;gap:2px 1em}"
    "dl.env dt{font-weight:bold}dl.env dd{margin:0;overflow-wrap:anywhere}"
    // The summary card on top; a simulated GPU is said in a banner no one can miss.
    "section.summary{border-top:none;margin-top:0}"
    "p.simulated{background:#b00020;color:#fff;font-size:1.4em;text-align:center;"
    "padding:.5em 1em;border-radius:6px;margin:0 0 1em}"
    "p.missing{background:#fff3e0;border-left:4px solid #e65100;padding:.3em .6em}"
    // Findings beside their charts: compact; every finding at the end: fixed columns that wrap.
    "table.findings{width:100%;table-layout:fixed;font-size:13px}"
    "table.findings td{overflow-wrap:anywhere}table.findings .name{width:46%}"
    "table.all{width:100%;table-layout:fixed;font-size:13px}"
    "table.all td,table.all th{overflow-wrap:anywhere}"
    "table.all .name{width:30%}table.all .val{width:12%}table.all .unit{width:10%}"
    "table.all .ns{width:7%}table.all .conf{width:15%}"
    "td.method{text-align:left;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}"
    "details.family>summary{font-weight:bold;cursor:pointer;margin:.4em 0}"
    "input#finding-filter{font-size:14px;padding:4px 8px;width:320px;max-width:100%}";

/// An experiment family (the id up to its first '.') and its heading, in the order the page
/// shows them: the memory hierarchy from the SM outwards, then compute, ordering, Hopper,
/// links. A family not listed follows, in the order of the result.
struct Family {
  const char* prefix;
  const char* title;
};
constexpr Family kFamilies[] = {{"latency", "Latency"},
                                {"smem", "Shared memory"},
                                {"cache", "Caches: L1 and L2"},
                                {"bandwidth", "Bandwidth"},
                                {"compute", "Compute"},
                                {"timer", "Timer"},
                                {"ordering", "Memory ordering and atomics"},
                                {"hopper", "Hopper: wgmma, TMA, distributed shared memory"},
                                {"link", "Links: host and peer"}};

std::string family_of(const std::string& id) { return id.substr(0, id.find('.')); }

/// The experiments grouped by family, families in page order, experiments in result order.
std::vector<std::pair<std::string, std::vector<const json*>>> by_family(const json& result) {
  std::vector<std::pair<std::string, std::vector<const json*>>> groups;
  for (const auto& f : kFamilies) groups.emplace_back(f.prefix, std::vector<const json*>{});
  static const json kNone = json::array();
  // By reference: the groups hold pointers into the result (value() would return a copy).
  const json& experiments = result.contains("experiments") && result["experiments"].is_array()
                                ? result["experiments"]
                                : kNone;
  for (const auto& e : experiments) {
    if (!e.is_object()) continue;
    const std::string fam = family_of(e.value("id", ""));
    auto it = std::find_if(groups.begin(), groups.end(), [&](auto& g) { return g.first == fam; });
    if (it == groups.end()) it = groups.insert(groups.end(), {fam, {}});
    it->second.push_back(&e);
  }
  groups.erase(
      std::remove_if(groups.begin(), groups.end(), [](auto& g) { return g.second.empty(); }),
      groups.end());
  return groups;
}

std::string family_title(const std::string& fam) {
  for (const auto& f : kFamilies)
    if (fam == f.prefix) return f.title;
  return fam;
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

/// The findings of one experiment, under its charts: name, typed value, confidence.
std::string findings_brief(const json& findings) {
  if (findings.empty()) return "";
  std::ostringstream o;
  o << "<table class='findings'><tr><th class='l name'>finding</th><th class='l'>value</th>"
       "<th class='l'>confidence</th></tr>";
  for (const auto& f : findings) {
    if (!f.is_object()) continue;
    const double conf = f.value("confidence", 0.0);
    o << "<tr><td class='l name'>" << escape(f.value("name", "")) << "</td><td class='l'>"
      << escape(display_text(f)) << "</td><td class='l conf'><span class='bar'><span style='width:"
      << fixed(std::clamp(conf, 0.0, 1.0) * 100, 0) << "%'></span></span>" << fixed(conf, 2)
      << "</td></tr>";
  }
  o << "</table>";
  return o.str();
}

/// One experiment: status, its charts, the findings they support, its counters. A curve
/// found neither in result.json nor beside it is said, never left out in silence.
std::string experiment_html(const json& e, const std::string& curves_dir, ReportCounts& counts) {
  std::ostringstream o;
  const std::string id = e.value("id", ""), status = e.value("status", "");
  o << "<section class='experiment' id='" << escape(id) << "'><h3>" << escape(id) << "</h3><p"
    << (status == "passed" ? "" : " class='waived'") << ">" << escape(status);
  if (!e.value("reason", std::string()).empty()) o << ": " << escape(e.value("reason", ""));
  o << "; " << fixed(e.value("wall_s", 0.0), 1) << " s</p>";
  const auto findings = e.value("findings", json::array());
  const auto loaded = load_curves(e, curves_dir);
  for (const auto& c : loaded.curves) o << draw_curve(id, c, findings) << "\n";
  for (const auto& name : loaded.missing) {
    o << "<p class='warn missing'>curve " << escape(name)
      << ": no rows in result.json and no CSV beside it</p>";
    counts.missing_curves.push_back(id + "." + name);
  }
  o << findings_brief(findings) << counters_html(e) << "</section>";
  return o.str();
}

/// Every finding at the end, by family in collapsible groups, with a filter box (rows whose
/// text does not hold what is typed are hidden; groups with a match open).
std::string all_findings_html(
    const std::vector<std::pair<std::string, std::vector<const json*>>>& families) {
  std::ostringstream o;
  o << "<section id='all-findings'><h2>All findings</h2><p><input id='finding-filter' "
       "type='search' placeholder='filter findings (name, value, method)' "
       "aria-label='filter findings'></p>";
  for (const auto& [fam, experiments] : families) {
    std::size_t n = 0;
    for (const auto* e : experiments) n += e->value("findings", json::array()).size();
    if (n == 0) continue;
    o << "<details class='family' data-family='" << escape(fam) << "'><summary>"
      << escape(family_title(fam)) << " (" << n << ")</summary><table class='all'><tr>"
      << "<th class='l name'>finding</th><th class='val'>value</th><th class='l unit'>unit</th>"
         "<th class='ns'>ns</th><th class='l conf'>confidence</th><th class='l'>method</th></tr>";
    for (const auto* e : experiments)
      for (const auto& f : e->value("findings", json::array())) {
        const double conf = f.value("confidence", 0.0);
        const TypedValue shown = typed_value(f);
        o << "<tr class='f'><td class='l name'>" << escape(f.value("name", "")) << "</td><td>"
          << escape(shown.text) << "</td><td class='l'>" << escape(shown.unit) << "</td><td>"
          << (f.contains("value_ns") && f["value_ns"].is_number()
                  ? fixed(f["value_ns"].get<double>(), 1)
                  : "")
          << "</td><td class='l conf'><span class='bar'><span style='width:"
          << fixed(std::clamp(conf, 0.0, 1.0) * 100, 0) << "%'></span></span>" << fixed(conf, 2)
          << "</td><td class='method' title='" << escape(f.value("method", "")) << "'>"
          << escape(short_method(f.value("method", ""))) << "</td></tr>";
      }
    o << "</table></details>";
  }
  o << "<script id='gp-filter'>document.getElementById('finding-filter').addEventListener("
       "'input',function(){var q=this.value.toLowerCase();"
       "document.querySelectorAll('#all-findings tr.f').forEach(function(r){"
       "var m=!q||(r.textContent+' '+r.lastElementChild.title).toLowerCase().indexOf(q)>=0;"
       "r.style.display=m?'':'none';});"
       "document.querySelectorAll('#all-findings details').forEach(function(d){"
       "if(q)d.open=[].some.call(d.querySelectorAll('tr.f'),function(r){"
       "return r.style.display!=='none';});});});</script></section>";
  return o.str();
}

}  // namespace

std::string html_report(const json& result, const std::string& curves_dir, ReportCounts* counts) {
  ReportCounts local;
  ReportCounts& n = counts ? *counts : local;
  n = ReportCounts{};
  std::ostringstream o;
  const std::string device = result.contains("device") ? result["device"].value("name", "?") : "?";
  o << "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>gpuprobe: "
    << escape(device) << "</title><style>" << kStyle << "</style></head><body>";
  // The summary card first (with its "Simulated" banner for a modelled or replayed GPU).
  o << summary_html(summary_card(result));
  o << "<h1>gpuprobe report: " << escape(device) << "</h1>";
  if (result.contains("tool"))
    o << "<p>gpuprobe " << escape(result["tool"].value("version", "")) << ", git "
      << escape(result["tool"].value("git_sha", "")) << "; started "
      << escape(result.value("started_utc", "")) << "; wall time "
      << fixed(result.value("wall_s", 0.0), 1) << " s</p>";
  const auto families = by_family(result);
  for (const auto& [fam, experiments] : families) {
    o << "<section class='family' id='family-" << escape(fam) << "'><h2>"
      << escape(family_title(fam)) << "</h2>";
    for (const auto* e : experiments) o << experiment_html(*e, curves_dir, n);
    o << "</section>";
  }
  o << all_findings_html(families) << environment_html(result) << "</body></html>\n";
  const std::string page = o.str();
  for (auto p = page.find("<svg class='chart'"); p != std::string::npos;
       p = page.find("<svg class='chart'", p + 1))
    ++n.charts;
  return page;
}

}  // namespace gpuprobe::report
