// compare.html: the comparison as one self-contained page (inline CSS and SVG, opens offline),
// with every curve both results hold drawn once with the two runs on the same axes.
#include <sstream>
#include <vector>

#include "report/chart.hpp"
#include "report/compare.hpp"

namespace gpuprobe::report {
namespace {

using nlohmann::json;

constexpr const char* kStyle =
    "body{font-family:sans-serif;max-width:1040px;margin:2em auto;padding:0 1em;color:#222}"
    "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;"
    "text-align:right;vertical-align:top;font-size:13px}td.l,th.l{text-align:left}"
    "tr.beyond td,tr.different td{background:#fff3e0}.warn{color:#a40;font-weight:bold}"
    ".scroll{overflow-x:auto;max-width:100%}table.data td,table.data th{font-size:12px}"
    "figure{margin:1em 0}figcaption{font-weight:bold;margin-bottom:.3em}"
    ".legend{font-size:12px;display:flex;flex-wrap:wrap;gap:.3em 1.2em;max-width:760px}"
    ".legend i{display:inline-block;width:14px;height:8px;margin-right:4px;vertical-align:middle}"
    "section{border-top:1px solid #ddd;margin-top:1.5em}p{overflow-wrap:anywhere}";

std::string row_class(Verdict v) {
  if (v == Verdict::kBeyond) return " class='beyond'";
  if (v == Verdict::kDifferent) return " class='different'";
  return "";
}

std::string table_html(const std::vector<const CompareRow*>& rows) {
  std::ostringstream o;
  o << "<div class='scroll'><table class='compare'><tr><th class='l'>finding</th><th>A</th>"
       "<th>B</th><th>change</th><th>z</th><th class='l'>judgement</th></tr>";
  for (const auto* r : rows)
    o << "<tr" << row_class(r->verdict) << "><td class='l'>" << escape(r->name) << "</td><td>"
      << escape(r->a_text) << "</td><td>" << escape(r->b_text) << "</td><td>" << escape(r->change)
      << "</td><td>" << escape(r->z) << "</td><td class='l'>" << escape(to_string(r->verdict))
      << "</td></tr>";
  o << "</table></div>";
  return o.str();
}

/// What changed (and what only one result holds) in one table; the rest folded away below it.
std::string tables_html(const Comparison& c, bool changed_only) {
  std::vector<const CompareRow*> moved, rest;
  for (const auto* r : shown_rows(c, changed_only))
    (r->verdict == Verdict::kWithin || r->verdict == Verdict::kSame ? rest : moved).push_back(r);
  std::string html = moved.empty() ? "<p>Nothing changed.</p>" : table_html(moved);
  if (!rest.empty())
    html += "<details><summary>" + std::to_string(rest.size()) +
            " findings within noise or the same</summary>" + table_html(rest) + "</details>";
  return html;
}

/// The experiment `id` of a result (by reference), or nullptr.
const json* experiment_of(const json& result, const std::string& id) {
  const auto list = result.find("experiments");
  if (list == result.end() || !list->is_array()) return nullptr;
  for (const auto& e : *list)
    if (e.is_object() && e.value("id", "") == id) return &e;
  return nullptr;
}

/// Every curve drawn as a line or points that both results hold, the two runs on one chart.
std::string overlays_html(const json& a, const std::string& dir_a, const json& b,
                          const std::string& dir_b) {
  std::ostringstream o;
  int drawn = 0;
  for (const auto& ea : a.value("experiments", json::array())) {
    if (!ea.is_object()) continue;
    const std::string id = ea.value("id", "");
    const json* eb = experiment_of(b, id);
    if (eb == nullptr) continue;
    const auto curves_b = load_curves(*eb, dir_b).curves;
    std::ostringstream section;
    for (const auto& ca : load_curves(ea, dir_a).curves) {
      if (ca.hints.kind != "line" && ca.hints.kind != "points") continue;
      for (const auto& cb : curves_b)
        if (cb.name == ca.name) {
          section << draw_curve(id, overlay_curves(ca, cb, "A", "B"),
                                ea.value("findings", json::array()))
                  << "\n";
          ++drawn;
        }
    }
    const std::string charts = section.str();
    if (!charts.empty())
      o << "<section id='" << escape(id) << "'><h3>" << escape(id) << "</h3>" << charts
        << "</section>";
  }
  if (drawn == 0)
    return "<p>No curve is held by both results (or their CSV files are not beside "
           "them).</p>";
  return o.str();
}

}  // namespace

std::string compare_html(const Comparison& c, const json& a, const std::string& dir_a,
                         const json& b, const std::string& dir_b, bool changed_only) {
  std::ostringstream o;
  o << "<!doctype html><html lang='en'><head><meta charset='utf-8'><title>gpuprobe compare"
       "</title><style>"
    << kStyle << "</style></head><body><h1>gpuprobe compare</h1>";
  o << "<p>A: " << escape(c.a_label) << "<br>B: " << escape(c.b_label) << "</p>";
  for (const auto& w : c.warnings) o << "<p class='warn'>" << escape(w) << "</p>";
  o << "<p><b>" << escape(count_line(c)) << "</b></p><p>" << escape(threshold_rule()) << "</p>";
  o << "<h2>Findings" << (changed_only ? " that changed" : "") << "</h2>"
    << tables_html(c, changed_only);
  o << "<h2>Curves, A and B on one chart</h2>" << overlays_html(a, dir_a, b, dir_b);
  o << "</body></html>\n";
  return o.str();
}

}  // namespace gpuprobe::report
