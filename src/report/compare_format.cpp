// The comparison as text, markdown, CSV and JSON (report/compare.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "core/noise.hpp"
#include "report/compare.hpp"

namespace gpuprobe::report {
namespace {

using nlohmann::json;

/// The cells of a row as every table shows them: finding, A, B, change, z, judgement.
std::vector<std::string> cells(const CompareRow& r) {
  return {r.name, r.a_text, r.b_text, r.change, r.z, to_string(r.verdict)};
}

const std::vector<std::string> kHeader = {"finding", "A", "B", "change", "z", "judgement"};

std::string padded(const std::string& s, std::size_t width, bool right) {
  const std::string pad(width > s.size() ? width - s.size() : 0, ' ');
  return right ? pad + s : s + pad;
}

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += '\\';
    out += ch;
  }
  return out;
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

std::string number_cell(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.10g", v);
  return buf;
}

json side_json(const json& f) {
  if (f.is_null()) return nullptr;
  json s = {{"value", f.value("value", 0.0)},
            {"unit", f.value("unit", "")},
            {"confidence", f.value("confidence", 0.0)},
            {"typed", typed_json(typed_value(f))}};
  return s;
}

}  // namespace

std::string compare_text(const Comparison& c, bool changed_only) {
  std::ostringstream o;
  for (const auto& w : c.warnings) o << w << "\n";
  o << count_line(c) << "\n" << threshold_rule() << "\n";
  o << "A: " << c.a_label << "\nB: " << c.b_label << "\n\n";
  const auto rows = shown_rows(c, changed_only);
  std::vector<std::size_t> width(kHeader.size());
  for (std::size_t k = 0; k < kHeader.size(); ++k) width[k] = kHeader[k].size();
  for (const auto* r : rows) {
    const auto row = cells(*r);
    for (std::size_t k = 0; k < row.size(); ++k) width[k] = std::max(width[k], row[k].size());
  }
  // The name and the judgement read left to right; values, change and z line up on the right.
  const auto line = [&](const std::vector<std::string>& row) {
    std::string s;
    for (std::size_t k = 0; k < row.size(); ++k) {
      const bool right = k != 0 && k + 1 != row.size();
      const bool last = k + 1 == row.size();
      s += last ? row[k] : padded(row[k], width[k], right) + "  ";
    }
    return s + "\n";
  };
  o << line(kHeader);
  for (const auto* r : rows) o << line(cells(*r));
  if (rows.empty()) o << (changed_only ? "(nothing changed)\n" : "(no findings)\n");
  return o.str();
}

std::string compare_markdown(const Comparison& c, bool changed_only) {
  std::ostringstream o;
  for (const auto& w : c.warnings) o << "**" << markdown_cell(w) << "**\n\n";
  o << count_line(c) << "\n\n" << markdown_cell(threshold_rule()) << "\n\n";
  o << "A: " << markdown_cell(c.a_label) << "  \nB: " << markdown_cell(c.b_label) << "\n\n";
  o << "| finding | A | B | change | z | judgement |\n|:--|--:|--:|--:|--:|:--|\n";
  for (const auto* r : shown_rows(c, changed_only)) {
    const auto row = cells(*r);
    o << "| `" << markdown_cell(row[0]) << "` ";
    for (std::size_t k = 1; k < row.size(); ++k) o << "| " << markdown_cell(row[k]) << " ";
    o << "|\n";
  }
  return o.str();
}

std::string compare_csv(const Comparison& c, bool changed_only) {
  std::ostringstream o;
  o << "finding,kind,a,b,a_value,b_value,change_percent,z,judgement\n";
  for (const auto* r : shown_rows(c, changed_only)) {
    const auto value = [](const json& f) {
      return f.is_null() ? std::string() : number_cell(f.value("value", 0.0));
    };
    o << csv_cell(r->name) << "," << to_string(r->kind) << "," << csv_cell(r->a_text) << ","
      << csv_cell(r->b_text) << "," << value(r->a) << "," << value(r->b) << ","
      << (r->change.empty() ? "" : number_cell(r->change_percent)) << "," << r->z << ","
      << to_string(r->verdict) << "\n";
  }
  return o.str();
}

json compare_json(const Comparison& c, bool changed_only) {
  json rows = json::array();
  for (const auto* r : shown_rows(c, changed_only)) {
    json z = nullptr;
    if (!r->z.empty())
      z = std::isinf(r->z_value) ? json("inf") : json(std::strtod(r->z.c_str(), nullptr));
    rows.push_back({{"name", r->name},
                    {"kind", to_string(r->kind)},
                    {"a", side_json(r->a)},
                    {"b", side_json(r->b)},
                    {"a_text", r->a_text},
                    {"b_text", r->b_text},
                    {"change_percent", r->change.empty() ? json(nullptr) : json(r->change_percent)},
                    {"change", r->change},
                    {"z", z},
                    {"judgement", to_string(r->verdict)}});
  }
  return {{"a", c.a_label},
          {"b", c.b_label},
          {"warnings", c.warnings},
          {"summary", count_line(c)},
          {"threshold",
           {{"z", std::strtod(beyond_z_text().c_str(), nullptr)},
            {"separation", noise::kBeyondSeparation},
            {"rule", threshold_rule()}}},
          {"counts",
           {{"numbers", c.numbers},
            {"beyond_noise", c.beyond},
            {"categories", c.categories},
            {"categories_different", c.different},
            {"only_in_a", c.only_a},
            {"only_in_b", c.only_b},
            {"units_differ", c.units_differ}}},
          {"changed_only", changed_only},
          {"rows", rows}};
}

}  // namespace gpuprobe::report
