#include "core/repeatability.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "core/noise.hpp"
#include "core/stats.hpp"

namespace {
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
}  // namespace

namespace gpuprobe::repeatability {

using nlohmann::json;

json table(const std::vector<json>& results) {
  struct Series {
    std::string unit;
    std::vector<json> values, confidences;  // null where a run lacks the finding
    std::vector<double> standard_errors;       // -1 where the run states none
    std::vector<std::size_t> replicates;       // 0 where the finding is no replicate median
  };
  std::vector<std::string> order;
  std::map<std::string, Series> by_name;
  const std::size_t n = results.size();
  for (std::size_t run = 0; run < n; ++run)
    for (const auto& e : results[run].at("experiments"))
      for (const auto& f : e.value("findings", json::array())) {
        const std::string name = f.at("name").get<std::string>();
        auto [it, fresh] = by_name.try_emplace(name);
        if (fresh) {
          order.push_back(name);
          it->second.unit = f.at("unit").get<std::string>();
          it->second.values.assign(n, nullptr);
          it->second.confidences.assign(n, nullptr);
          it->second.standard_errors.assign(n, -1.0);
          it->second.replicates.assign(n, 0);
        }
        it->second.values[run] = f.at("value").get<double>();
        it->second.confidences[run] = f.at("confidence").get<double>();
        // A replicate median states its standard error and how many replicates gave it.
        const auto se = f.find("standard_error");
        const auto rep = f.find("replicates");
        if (se != f.end() && se->is_number() && rep != f.end() && rep->is_object() &&
            rep->contains("replicates") && rep->at("replicates").is_number_unsigned()) {
          it->second.standard_errors[run] = se->get<double>();
          it->second.replicates[run] = rep->at("replicates").get<std::size_t>();
        }
      }
  json rows = json::array();
  int beyond_count = 0;
  for (const auto& name : order) {
    const auto& s = by_name[name];
    std::vector<double> v, c, se;
    std::vector<std::size_t> k;
    for (std::size_t run = 0; run < n; ++run)
      if (!s.values[run].is_null()) {
        v.push_back(s.values[run].get<double>());
        c.push_back(s.confidences[run].get<double>());
        se.push_back(s.standard_errors[run]);
        k.push_back(s.replicates[run]);
      }
    json row = {{"name", name},
                {"unit", s.unit},
                {"values", s.values},
                {"confidences", s.confidences},
                {"runs_with_finding", v.size()}};
    double max_z = 0;
    bool beyond = false, welch = false;
    // A bound is not an estimate: two runs' lower (upper) bounds never contradict each other,
    // the tightest holds for both. Their z is kept, the judgement is not made.
    const bool lower = ends_with(name, "_lower_bound"), upper = ends_with(name, "_upper_bound");
    for (std::size_t i = 0; i < v.size(); ++i)
      for (std::size_t j = i + 1; j < v.size(); ++j) {
        const bool replicated = k[i] >= 2 && k[j] >= 2 && se[i] >= 0 && se[j] >= 0;
        welch = welch || replicated;
        const auto judged = replicated
                                ? noise::judge_replicates(v[i], se[i], k[i], v[j], se[j], k[j])
                                : noise::judge(v[i], c[i], v[j], c[j]);
        max_z = std::max(max_z, judged.z);
        beyond = beyond || (judged.beyond && !lower && !upper);
      }
    if ((lower || upper) && !v.empty()) {
      row["bound"] = lower ? "lower" : "upper";
      row["tightest"] =
          lower ? *std::max_element(v.begin(), v.end()) : *std::min_element(v.begin(), v.end());
    }
    const double median = stats::median_or_zero(v);
    row["median"] = median;
    row["run_to_run_relative_spread"] =
        v.empty() || median == 0
            ? json(nullptr)
            : json((*std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end())) /
                   std::fabs(median));
    row["max_z"] = std::isfinite(max_z) ? json(max_z) : json("inf");
    row["beyond_stated_spread"] = beyond;
    if (welch) row["judged_by"] = "welch_t";
    beyond_count += beyond;
    rows.push_back(row);
  }
  return {{"runs", n},
          {"judgement",
           "a finding moves beyond its stated spread when two runs differ with separation >= " +
               std::to_string(noise::kBeyondSeparation) +
               ", each run's standard error read back from its confidence (see compare); "
               "between two replicate medians (a finding with standard_error and replicates), "
               "by Welch's t on the standard errors the replicates gave, its two-sided "
               "probability read as a normal z (judged_by: welch_t)"},
          {"beyond", beyond_count},
          {"findings", rows}};
}

std::string format(const json& t) {
  std::ostringstream out;
  std::vector<json> rows(t.at("findings").begin(), t.at("findings").end());
  auto z_of = [](const json& r) {
    return r["max_z"].is_string() ? HUGE_VAL : r["max_z"].get<double>();
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const json& a, const json& b) {
    if (a["beyond_stated_spread"] != b["beyond_stated_spread"])
      return a["beyond_stated_spread"].get<bool>();
    return z_of(a) > z_of(b);
  });
  char line[512];
  std::snprintf(line, sizeof(line), "%-52s %-6s %9s %8s  %-13s %s\n", "finding", "unit", "spread",
                "max z", "judgement", "values (confidence) per run");
  out << line;
  for (const auto& r : rows) {
    std::string values;
    const std::string unit = r["unit"].get<std::string>();
    std::string shown_unit = unit;
    if (!r["median"].is_null()) shown_unit = noise::human(r["median"].get<double>(), unit).second;
    for (std::size_t i = 0; i < r["values"].size(); ++i) {
      if (i) values += ", ";
      if (r["values"][i].is_null()) {
        values += "-";
        continue;
      }
      char conf[24];
      std::snprintf(conf, sizeof(conf), " (%.2f)", r["confidences"][i].get<double>());
      values += noise::human_as(r["values"][i].get<double>(), unit, shown_unit) + conf;
    }
    char spread[24] = "-", z[24];
    if (!r["run_to_run_relative_spread"].is_null())
      std::snprintf(spread, sizeof(spread), "%.2f%%",
                    r["run_to_run_relative_spread"].get<double>() * 100);
    const double zv = z_of(r);
    std::snprintf(z, sizeof(z), std::isinf(zv) ? "inf" : "%.2f", zv);
    std::snprintf(line, sizeof(line), "%-52s %-6s %9s %8s  %-13s ",
                  r["name"].get<std::string>().c_str(), shown_unit.c_str(), spread, z,
                  r["beyond_stated_spread"].get<bool>() ? "beyond"
                  : r.contains("bound") ? (r["bound"] == "lower" ? "lower bound" : "upper bound")
                                        : "within");
    out << line << values << "\n";
  }
  out << t.at("beyond").get<int>() << " of " << rows.size()
      << " findings moved beyond their own stated spread over " << t.at("runs").get<int>()
      << " runs\n";
  return out.str();
}

}  // namespace gpuprobe::repeatability
