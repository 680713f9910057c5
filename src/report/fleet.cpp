#include "report/fleet.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/finding_value.hpp"
#include "core/noise.hpp"
#include "core/stats.hpp"
#include "report/numbers.hpp"

namespace gpuprobe::report {
namespace {

using nlohmann::json;

}  // namespace

std::string compatibility_key(const json& result) {
  std::vector<std::string> ids;
  for (const auto& e : result.value("experiments", json::array())) ids.push_back(e.value("id", ""));
  std::sort(ids.begin(), ids.end());
  // Formats this build reads alike (1 and 2 differ only by the typed form) compare alike.
  const json v = result.value("schema_version", json(0));
  const long long version = v.is_number_integer() ? v.get<long long>() : 0;
  const bool readable = version >= kOldestResultSchemaVersion && version <= kResultSchemaVersion;
  std::string key = "schema_version " +
                    (readable ? std::to_string(kOldestResultSchemaVersion) + "-" +
                                    std::to_string(kResultSchemaVersion)
                              : std::to_string(version)) +
                    "; experiments";
  for (const auto& id : ids) key += " " + id;
  return key;
}

std::optional<Spread> finding_spread(const json& f) {
  if (f.contains("spread") && f["spread"].is_number())
    return Spread{f["spread"].get<double>(), "spread"};
  for (const auto& [k, v] : f.items()) {
    if (k.rfind("p5_", 0) != 0 || !v.is_number()) continue;
    const std::string hi = "p95_" + k.substr(3);
    if (f.contains(hi) && f[hi].is_number())
      return Spread{(f[hi].get<double>() - v.get<double>()) / 3.29, k + "/" + hi};
  }
  if (f.contains("confidence") && f["confidence"].is_number() && f.contains("value") &&
      f["value"].is_number()) {
    // The standard error a confidence states (noise::implied_standard_error, as compare and
    // repeat read it).
    const double c = f["confidence"].get<double>();
    const double v = f["value"].get<double>();
    if (c > 0.0 && v != 0.0)
      return Spread{noise::implied_standard_error(v, c),
                    "confidence read as a 2 % precision (standard error of the median)"};
  }
  return std::nullopt;
}

namespace {

/// The fleet entry of a finding that is not a number: the most common value (typed), and each
/// GPU's value as same or different; a GPU that differs from a majority (more than half the
/// GPUs) is an outlier.
json categorical_entry(const std::string& name, const std::map<std::size_t, json>& values,
                       const std::vector<const FleetMember*>& used, json& outliers,
                       std::map<std::string, json>& flagged_by_member) {
  std::map<std::string, std::size_t> count;
  for (const auto& [i, f] : values) ++count[typed_value(f).text];
  std::string common;
  std::size_t best = 0;
  for (const auto& [text, c] : count)
    if (c > best) best = c, common = text;
  const bool majority = 2 * best > values.size();
  const json* common_finding = nullptr;
  for (const auto& [i, f] : values)
    if (typed_value(f).text == common) common_finding = &f;
  const TypedValue kind = typed_value(*common_finding);
  // Without a majority the fleet has no value of its own: it is said to be mixed, with counts.
  std::string fleet_value = common;
  if (!majority) {
    fleet_value = "mixed:";
    for (const auto& [text, c] : count)
      fleet_value += (fleet_value.back() == ':' ? " " : ", ") + text + " x" + std::to_string(c);
  }
  json entry = {{"name", name},
                {"unit", common_finding->value("unit", "")},
                {"kind", to_string(kind.kind)},
                {"gpus", values.size()},
                {"fleet_value", fleet_value},
                {"fleet_median", (*common_finding)["value"]},
                {"fleet_majority", majority}};
  json rows = json::array(), missing = json::array();
  for (std::size_t i = 0; i < used.size(); ++i)
    if (!values.count(i)) missing.push_back(used[i]->label);
  for (const auto& [i, f] : values) {
    const std::string text = typed_value(f).text;
    const bool outlier = majority && text != common;
    json row = {{"label", used[i]->label},
                {"value", f["value"]},
                {"text", text},
                {"same_as_fleet", text == common},
                {"outlier", outlier}};
    rows.push_back(row);
    if (outlier) {
      json o = row;
      o["finding"] = name;
      o["fleet_value"] = common;
      o["unit"] = entry["unit"];
      outliers.push_back(o);
      flagged_by_member[used[i]->label].push_back(name);
    }
  }
  entry["values"] = rows;
  if (!missing.empty()) entry["missing_on"] = missing;
  return entry;
}

/// Each GPU's verdict against the baseline (fleet merge --baseline), slowest first: out of
/// family before in family, then by how many spreads its slowest finding is slower.
std::string baseline_section(const json& report) {
  const json& b = report["baseline"];
  std::ostringstream out;
  out << "\nagainst the baseline " << b.value("name", "") << " (" << b.value("gpu_model", "")
      << ", " << b.value("cards", 0) << " cards), slowest first:\n";
  std::vector<const json*> rows;
  for (const auto& m : report["members"])
    if (m.contains("baseline")) rows.push_back(&m);
  auto key = [](const json* m) {
    const json& v = (*m)["baseline"];
    return std::make_pair(v.value("out_of_family", false) ? 1 : 0,
                          v.value("slowness_spreads", 0.0));
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const json* a, const json* c) { return key(a) > key(c); });
  for (const json* m : rows) {
    const json& v = (*m)["baseline"];
    out << "  " << m->value("label", "") << ": "
        << (v.contains("error") ? "not judged: " + v.value("error", "") : v.value("verdict", ""))
        << "\n";
  }
  out << report["summary"].value("baseline_out_of_family", 0)
      << " GPU(s) out of family against the baseline\n";
  return out.str();
}

}  // namespace

json fleet_report(const std::vector<FleetMember>& members, bool exclude_mismatched) {
  // The reference key: the most common among members with a result.
  std::map<std::string, int> keys;
  for (const auto& m : members)
    if (m.error.empty()) ++keys[compatibility_key(m.result)];
  std::string reference;
  int best = 0;
  for (const auto& [k, c] : keys)
    if (c > best) best = c, reference = k;

  json report = {{"schema_version", 1}, {"kind", "gpuprobe.fleet"}, {"compatibility", reference}};
  report["method"] =
      "per finding: fleet median over the GPUs that have it; deviation = (value - median) / the "
      "GPU's own run-to-run spread of that finding; outlier when the modified z-score 0.6745 "
      "(value - median) / MAD exceeds 3.5 (Iglewicz & Hoaglin 1993; MAD = 0 with a differing "
      "value counts as exceeding) and the deviation exceeds 3 own spreads";
  json member_json = json::array();
  std::vector<const FleetMember*> used;
  for (const auto& m : members) {
    json j = m.info;
    j["label"] = m.label;
    if (!m.error.empty()) {
      j["status"] = "error";
      j["reason"] = m.error;
    } else if (compatibility_key(m.result) != reference) {
      const std::string why =
          "different schema version or experiment set: " + compatibility_key(m.result) +
          " (fleet: " + reference + ")";
      if (!exclude_mismatched)
        throw UsageError(m.label + " is not comparable with the fleet: " + why);
      j["status"] = "excluded";
      j["reason"] = why;
    } else {
      j["status"] = "ok";
      const auto& d = m.result.value("device", json::object());
      j["device"] = {{"name", d.value("name", "")},
                     {"uuid", d.value("uuid", "")},
                     {"kind", d.value("kind", "")}};
      used.push_back(&m);
    }
    member_json.push_back(j);
  }

  // name -> per member finding (first of that name in the member's result).
  std::vector<std::string> order;
  std::map<std::string, std::map<std::size_t, json>> by_name;
  for (std::size_t i = 0; i < used.size(); ++i) {
    std::set<std::string> seen;
    for (const auto& e : used[i]->result.value("experiments", json::array())) {
      if (e.value("status", "") != "passed") continue;
      for (const auto& f : e.value("findings", json::array())) {
        const std::string name = f.value("name", "");
        if (name.empty() || !f.contains("value") || !f["value"].is_number() || seen.count(name))
          continue;
        seen.insert(name);
        if (!by_name.count(name)) order.push_back(name);
        by_name[name][i] = f;
      }
    }
  }
  json findings = json::array(), outliers = json::array();
  std::map<std::string, json> flagged_by_member;
  for (const auto& name : order) {
    const auto& values = by_name[name];
    if (!typed_value(values.begin()->second).is_number()) {
      // A category, yes/no or mask: same or different from the fleet's most common value,
      // never a percent or a z-score.
      findings.push_back(categorical_entry(name, values, used, outliers, flagged_by_member));
      continue;
    }
    std::vector<double> v;
    for (const auto& [i, f] : values) v.push_back(f["value"].get<double>());
    const double median = stats::median(v);
    std::vector<double> abs_dev;
    for (double x : v) abs_dev.push_back(std::fabs(x - median));
    const double mad = stats::median(abs_dev);
    json entry = {{"name", name},
                  {"unit", values.begin()->second.value("unit", "")},
                  {"gpus", v.size()},
                  {"fleet_median", median},
                  {"fleet_mad", mad}};
    json rows = json::array(), missing = json::array();
    for (std::size_t i = 0; i < used.size(); ++i)
      if (!values.count(i)) missing.push_back(used[i]->label);
    double worst = 0;
    for (const auto& [i, f] : values) {
      const double x = f["value"].get<double>();
      const bool differs = !same(x, median);
      const double robust_z = !differs  ? 0.0
                              : mad > 0 ? 0.6745 * (x - median) / mad
                                        : std::copysign(INFINITY, x - median);
      const auto spread = finding_spread(f);
      double deviation = 0;  // in own spreads; infinite when the GPU's own spread is 0
      if (differs)
        deviation = spread && spread->value > 0 ? (x - median) / spread->value
                    : spread                    ? std::copysign(INFINITY, x - median)
                                                : 0.0;
      const bool outlier =
          std::fabs(robust_z) > kModifiedZLimit && std::fabs(deviation) > kOwnSpreadLimit;
      if (std::fabs(deviation) > std::fabs(worst)) worst = deviation;
      json row = {{"label", used[i]->label},
                  {"value", x},
                  {"relative_deviation_percent",
                   median != 0 ? (x - median) / std::fabs(median) * 100 : 0.0},
                  {"spread", spread ? json(spread->value) : json(nullptr)},
                  {"spread_source", spread ? spread->source : "none (deviation not computed)"},
                  {"deviation_in_own_spreads", num_or_null(deviation)},
                  {"beyond_own_spread", std::fabs(deviation) > kOwnSpreadLimit},
                  {"modified_z", num_or_null(robust_z)},
                  {"outlier", outlier}};
      rows.push_back(row);
      if (outlier) {
        json o = row;
        o["finding"] = name;
        o["fleet_median"] = median;
        o["unit"] = entry["unit"];
        outliers.push_back(o);
        flagged_by_member[used[i]->label].push_back(name);
      }
    }
    entry["largest_deviation_in_own_spreads"] = num_or_null(worst);
    entry["values"] = rows;
    if (!missing.empty()) entry["missing_on"] = missing;
    findings.push_back(entry);
  }
  for (auto& j : member_json)
    if (j["status"] == "ok") {
      const std::string l = j["label"];
      j["outlier_findings"] = flagged_by_member.count(l) ? flagged_by_member[l] : json::array();
      j["outlier"] = flagged_by_member.count(l) > 0;
    }
  report["members"] = member_json;
  report["findings"] = findings;
  report["outliers"] = outliers;
  report["summary"] = {{"members", members.size()},
                       {"compared", used.size()},
                       {"findings", findings.size()},
                       {"outliers", outliers.size()},
                       {"outlier_members", flagged_by_member.size()}};
  return report;
}

std::string fleet_table(const json& report) {
  std::ostringstream out;
  char line[512];
  out << "fleet: " << report["summary"].value("compared", 0) << " of "
      << report["summary"].value("members", 0) << " GPUs compared\n";
  for (const auto& m : report.value("members", json::array())) {
    std::string what = m.value("status", "");
    if (m.contains("device")) what += ", " + m["device"].value("name", "");
    if (m.contains("reason")) what += ": " + m.value("reason", "");
    if (m.value("outlier", false))
      what += "  OUTLIER in " + std::to_string(m["outlier_findings"].size()) + " finding(s)";
    out << "  " << m.value("label", "") << ": " << what << "\n";
  }
  std::snprintf(line, sizeof(line), "\n%-52s %14s %-8s %10s  %s\n", "finding", "fleet median",
                "unit", "max dev", "outliers (value, deviation in own spreads)");
  out << line;
  for (const auto& f : report.value("findings", json::array())) {
    if (f.contains("fleet_value")) {  // a category, yes/no or mask: same or different
      std::string flagged;
      for (const auto& v : f["values"])
        if (v.value("outlier", false))
          flagged += (flagged.empty() ? "" : "; ") + v.value("label", "") + " " +
                     v.value("text", "") + " (different)";
      std::snprintf(line, sizeof(line), "%-52s %14s %-8s %10s  %s\n", f.value("name", "").c_str(),
                    f.value("fleet_value", "").c_str(), "", "-", flagged.c_str());
      out << line;
      continue;
    }
    std::string flagged;
    for (const auto& v : f["values"])
      if (v.value("outlier", false)) {
        char cell[160];
        const auto& d = v["deviation_in_own_spreads"];
        char dev[32];
        if (d.is_number())
          std::snprintf(dev, sizeof(dev), "%+.1f spreads", d.get<double>());
        else
          std::snprintf(dev, sizeof(dev), "%s", "own spread 0");
        std::snprintf(cell, sizeof(cell), "%s%s %.6g (%s)", flagged.empty() ? "" : "; ",
                      v.value("label", "").c_str(), v["value"].get<double>(), dev);
        flagged += cell;
      }
    const auto& worst = f["largest_deviation_in_own_spreads"];
    char dev[32];
    if (worst.is_number())
      std::snprintf(dev, sizeof(dev), "%+.2f", worst.get<double>());
    else
      std::snprintf(dev, sizeof(dev), "%s", "inf");
    std::snprintf(line, sizeof(line), "%-52s %14.6g %-8s %10s  %s\n", f.value("name", "").c_str(),
                  f["fleet_median"].get<double>(), f.value("unit", "").c_str(), dev,
                  flagged.c_str());
    out << line;
  }
  out << "\n"
      << report["summary"].value("outliers", 0) << " outlier value(s) on "
      << report["summary"].value("outlier_members", 0) << " GPU(s)\n";
  if (report.contains("baseline")) out << baseline_section(report);
  return out.str();
}

}  // namespace gpuprobe::report
