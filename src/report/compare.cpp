#include "report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <sstream>

#include "core/confidence.hpp"
#include "core/noise.hpp"

namespace gpuprobe::report {
namespace {

using nlohmann::json;

/// The string at `path` under `r`, or "" where any step is missing or not of that type.
std::string string_at(const json& r, std::initializer_list<const char*> path) {
  const json* node = &r;
  for (const char* key : path) {
    if (!node->is_object()) return "";
    const auto it = node->find(key);
    if (it == node->end()) return "";
    node = &*it;
  }
  return node->is_string() ? node->get<std::string>() : "";
}

std::string describe(const json& r) {
  std::string sha = string_at(r, {"tool", "git_sha"}).substr(0, 12);
  std::string uuid = string_at(r, {"device", "uuid"});
  return string_at(r, {"device", "name"}) + (uuid.empty() ? "" : " " + uuid) + ", git " + sha +
         ", " + string_at(r, {"started_utc"});
}

std::vector<std::string> warnings_of(const json& a, const json& b) {
  std::vector<std::string> w;
  const auto known = [](const std::string& s) { return s.empty() ? std::string("unknown") : s; };
  const std::string sha_a = string_at(a, {"tool", "git_sha"}),
                    sha_b = string_at(b, {"tool", "git_sha"});
  const std::string ver_a = string_at(a, {"tool", "version"}),
                    ver_b = string_at(b, {"tool", "version"});
  if (sha_a != sha_b || ver_a != ver_b) {
    const auto build = [&](const std::string& ver, const std::string& sha) {
      return (ver_a != ver_b ? known(ver) + " " : std::string()) + known(sha.substr(0, 7));
    };
    w.push_back("warning: different gpuprobe builds (" + build(ver_a, sha_a) + " vs " +
                build(ver_b, sha_b) + "): a change may be the tool's, not the card's");
  }
  const std::string gpu_a = string_at(a, {"device", "name"}),
                    gpu_b = string_at(b, {"device", "name"});
  if (gpu_a != gpu_b)
    w.push_back("warning: different GPU models (" + known(gpu_a) + " vs " + known(gpu_b) +
                "): a difference may be the model's, not a change of one card");
  const std::string drv_a = string_at(a, {"environment", "nvml", "driver_version"});
  const std::string drv_b = string_at(b, {"environment", "nvml", "driver_version"});
  if (drv_a != drv_b)
    w.push_back("warning: different drivers (" + known(drv_a) + " vs " + known(drv_b) +
                "): a change may be the driver's, not the card's");
  return w;
}

/// What one run states about a number: its value, confidence and standard error (replicates'
/// own where the finding carries them, else the one its confidence implies).
struct Side {
  double value = 0, confidence = 0, se = 0;
  std::size_t replicates = 0;  ///< 0 where the finding is no replicate median
};

Side side_of(const json& f) {
  Side s;
  s.value = f.value("value", 0.0);
  s.confidence = f.value("confidence", 0.0);
  const auto se = f.find("standard_error");
  const auto rep = f.find("replicates");
  if (se != f.end() && se->is_number() && se->get<double>() >= 0 && rep != f.end() &&
      rep->is_object() && rep->contains("replicates") &&
      rep->at("replicates").is_number_unsigned()) {
    s.se = se->get<double>();
    s.replicates = rep->at("replicates").get<std::size_t>();
  }
  if (s.replicates < 2) {
    s.replicates = 0;
    s.se = noise::implied_standard_error(s.value, s.confidence);
  }
  return s;
}

std::string number_text(const Side& s, const std::string& unit) {
  const auto [text, shown] = format_quantity(s.value, unit, s.se);
  return shown.empty() ? text : text + " " + shown;
}

double shown_threshold() { return std::strtod(beyond_z_text().c_str(), nullptr); }

/// A number in both runs with the same unit: change, z and the judgement the shown z gives.
void judge_numbers(CompareRow& row, const std::string& unit) {
  const Side a = side_of(row.a), b = side_of(row.b);
  row.a_text = number_text(a, unit);
  row.b_text = number_text(b, unit);
  const double se = std::hypot(a.se, b.se);
  if (a.value != 0 && std::isfinite(a.value)) {
    row.change_percent = (b.value - a.value) / std::fabs(a.value) * 100;
    const double se_percent = se / std::fabs(a.value) * 100;
    row.change = (row.change_percent > 0 ? "+" : "") +
                 format_number(row.change_percent, std::isfinite(se_percent) ? se_percent : 0) +
                 "%";
  }
  const bool replicated = a.replicates >= 2 && b.replicates >= 2;
  const auto j =
      replicated ? noise::judge_replicates(a.value, a.se, a.replicates, b.value, b.se, b.replicates)
                 : noise::judge(a.value, a.confidence, b.value, b.confidence);
  row.z_value = j.z;
  char z[32];
  std::snprintf(z, sizeof(z), std::isinf(j.z) ? "inf" : "%.2f", j.z);
  row.z = z;
  // The judgement follows the z as shown, so that the two columns never disagree.
  const bool beyond = std::isinf(j.z) || std::strtod(z, nullptr) >= shown_threshold();
  row.verdict = beyond && a.value != b.value ? Verdict::kBeyond : Verdict::kWithin;
}

CompareRow judged_row(const std::string& name, const json& fa, const json& fb) {
  CompareRow row;
  row.name = name;
  row.a = fa;
  row.b = fb;
  const json& any = fa.is_null() ? fb : fa;
  const TypedValue ta = typed_value(any);
  row.kind = ta.kind;
  const auto shown = [](const json& f) {
    if (f.is_null()) return std::string("-");
    const TypedValue t = typed_value(f);
    if (!t.is_number()) return t.text;
    return number_text(side_of(f), f.value("unit", ""));
  };
  if (fa.is_null() || fb.is_null()) {
    row.a_text = shown(fa);
    row.b_text = shown(fb);
    row.verdict = fa.is_null() ? Verdict::kOnlyInB : Verdict::kOnlyInA;
    return row;
  }
  const TypedValue a = typed_value(fa), b = typed_value(fb);
  const std::string unit_a = fa.value("unit", ""), unit_b = fb.value("unit", "");
  if (a.kind != b.kind || (a.is_number() && unit_a != unit_b)) {
    row.a_text = shown(fa);
    row.b_text = shown(fb);
    row.verdict = Verdict::kUnitsDiffer;
    return row;
  }
  if (!a.is_number()) {
    row.a_text = a.text;
    row.b_text = b.text;
    row.verdict = a.label == b.label ? Verdict::kSame : Verdict::kDifferent;
    return row;
  }
  judge_numbers(row, unit_a);
  return row;
}

/// The array `key` of an object, by reference (json::value would return a copy); an empty one
/// where there is none.
const json& array_at(const json& j, const char* key) {
  static const json kEmpty = json::array();
  if (!j.is_object()) return kEmpty;
  const auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : kEmpty;
}

/// Every finding of a result keyed by name (a name's second occurrence as "name#2", ...), in
/// the result's order.
std::vector<std::pair<std::string, const json*>> keyed_findings(const json& r) {
  std::vector<std::pair<std::string, const json*>> out;
  std::map<std::string, int> seen;
  for (const auto& e : array_at(r, "experiments"))
    for (const auto& f : array_at(e, "findings")) {
      const std::string name = f.value("name", "");
      const int n = ++seen[name];
      out.emplace_back(n == 1 ? name : name + "#" + std::to_string(n), &f);
    }
  return out;
}

int rank(Verdict v) { return static_cast<int>(v); }

}  // namespace

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::kBeyond:
      return "beyond noise";
    case Verdict::kDifferent:
      return "different";
    case Verdict::kUnitsDiffer:
      return "units differ";
    case Verdict::kOnlyInA:
      return "only in A";
    case Verdict::kOnlyInB:
      return "only in B";
    case Verdict::kWithin:
      return "within noise";
    case Verdict::kSame:
      break;
  }
  return "same";
}

std::string beyond_z_text() {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f", noise::beyond_z());
  return text;
}

std::string threshold_rule() {
  char tolerance[32];
  std::snprintf(tolerance, sizeof(tolerance), "%g", confidence::kDefaultTolerance * 100);
  return "beyond noise = |B - A| of at least " + beyond_z_text() +
         " combined standard errors (z >= " + beyond_z_text() +
         ", separation >= " + format_number(noise::kBeyondSeparation) +
         "); a run's standard error is the one its confidence states at +-" + tolerance +
         " % of the value (a finding measured as replicates in both runs: Welch's t on their "
         "standard errors, read as z); categories, yes/no and masks are same or different";
}

Comparison compare(const json& a, const json& b) {
  Comparison c;
  c.a_label = describe(a);
  c.b_label = describe(b);
  c.warnings = warnings_of(a, b);
  const auto fa = keyed_findings(a), fb = keyed_findings(b);
  std::map<std::string, const json*> in_b(fb.begin(), fb.end());
  const json none;
  for (const auto& [key, f] : fa) {
    const auto it = in_b.find(key);
    c.rows.push_back(judged_row(f->value("name", ""), *f, it == in_b.end() ? none : *it->second));
    if (it != in_b.end()) in_b.erase(it);
  }
  for (const auto& [key, f] : fb)
    if (in_b.count(key)) c.rows.push_back(judged_row(f->value("name", ""), none, *f));
  for (const auto& r : c.rows) {
    const bool number = r.verdict == Verdict::kBeyond || r.verdict == Verdict::kWithin;
    const bool category = r.verdict == Verdict::kDifferent || r.verdict == Verdict::kSame;
    c.numbers += number;
    c.beyond += r.verdict == Verdict::kBeyond;
    c.categories += category;
    c.different += r.verdict == Verdict::kDifferent;
    c.only_a += r.verdict == Verdict::kOnlyInA;
    c.only_b += r.verdict == Verdict::kOnlyInB;
    c.units_differ += r.verdict == Verdict::kUnitsDiffer;
  }
  std::stable_sort(c.rows.begin(), c.rows.end(), [](const CompareRow& x, const CompareRow& y) {
    if (rank(x.verdict) != rank(y.verdict)) return rank(x.verdict) < rank(y.verdict);
    return x.z_value > y.z_value;
  });
  return c;
}

std::string count_line(const Comparison& c) {
  std::ostringstream o;
  o << c.beyond << " of " << c.numbers << " findings moved beyond noise; " << c.different << " of "
    << c.categories << " categories differ; " << c.only_a << " only in A, " << c.only_b
    << " only in B";
  if (c.units_differ) o << "; " << c.units_differ << " changed unit or kind";
  return o.str();
}

std::vector<const CompareRow*> shown_rows(const Comparison& c, bool changed_only) {
  std::vector<const CompareRow*> rows;
  for (const auto& r : c.rows)
    if (!changed_only || r.changed()) rows.push_back(&r);
  return rows;
}

}  // namespace gpuprobe::report
