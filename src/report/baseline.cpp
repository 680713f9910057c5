#include "report/baseline.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/finding_value.hpp"
#include "core/json_input.hpp"
#include "core/stats.hpp"

namespace gpuprobe::report {
namespace {

using nlohmann::json;

/// A string member, or "" when absent or of another type (old results lack some fields).
std::string text_of(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  const json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return "";
}

const json& member(const json& j, const char* key) {
  static const json empty = json::object();
  return j.is_object() && j.contains(key) && j[key].is_object() ? j[key] : empty;
}

/// The conditions one result was taken under.
json conditions_of(const json& r) {
  const json& tool = member(r, "tool");
  const json& dev = member(r, "device");
  const json& env = member(r, "environment");
  return {{"gpuprobe_version", text_of(tool, "version")},
          {"gpuprobe_git_sha", text_of(tool, "git_sha")},
          {"driver_version", text_of(member(env, "nvml"), "driver_version")},
          {"sm_clock_max_mhz", text_of(dev, "sm_clock_max_mhz")},
          {"mem_clock_max_mhz", text_of(dev, "mem_clock_max_mhz")}};
}

/// Pooled run-to-run standard deviation: sqrt(sum of (k-1) s^2 / sum of (k-1)) over the cards
/// with two or more runs; {spread, cards used}.
std::pair<double, int> pooled_run_spread(const std::vector<std::vector<double>>& per_card) {
  double ss = 0;
  int dof = 0, cards = 0;
  for (const auto& runs : per_card) {
    if (runs.size() < 2) continue;
    double mean = 0;
    for (double x : runs) mean += x;
    mean /= static_cast<double>(runs.size());
    for (double x : runs) ss += (x - mean) * (x - mean);
    dof += static_cast<int>(runs.size()) - 1;
    ++cards;
  }
  return {dof > 0 ? std::sqrt(ss / dof) : 0.0, cards};
}

struct Collected {
  std::string experiment, unit;
  json first;  ///< the first finding seen (its kind, labels)
  /// card uuid -> the finding of each run of that card
  std::map<std::string, std::vector<json>> by_card;
};

json number_entry(const std::string& name, const Collected& c) {
  std::vector<double> medians;
  std::vector<std::vector<double>> runs;
  int run_count = 0;
  for (const auto& [uuid, fs] : c.by_card) {
    std::vector<double> v;
    for (const auto& f : fs) v.push_back(f["value"].get<double>());
    run_count += static_cast<int>(v.size());
    medians.push_back(stats::median(v));
    runs.push_back(std::move(v));
  }
  const double median = stats::median(medians);
  std::vector<double> dev;
  for (double m : medians) dev.push_back(std::fabs(m - median));
  const double card_spread = 1.4826 * stats::median(dev);
  const auto [run_spread, run_cards] = pooled_run_spread(runs);
  json e = {{"name", name},
            {"experiment", c.experiment},
            {"unit", c.unit},
            {"kind", "number"},
            {"median", median},
            {"card_spread", card_spread},
            {"card_min", *std::min_element(medians.begin(), medians.end())},
            {"card_max", *std::max_element(medians.begin(), medians.end())},
            {"cards", medians.size()},
            {"runs", run_count}};
  e["run_spread"] = run_cards > 0 ? json(run_spread) : json(nullptr);
  e["run_spread_cards"] = run_cards;
  return e;
}

json category_entry(const std::string& name, const Collected& c) {
  // Each card's value: the one most of its runs show; then the value most cards show.
  std::map<std::string, int> cards_with;
  std::map<std::string, json> finding_of;
  int run_count = 0;
  for (const auto& [uuid, fs] : c.by_card) {
    std::map<std::string, int> n;
    for (const auto& f : fs) {
      const std::string t = typed_value(f).text;
      ++n[t];
      finding_of.emplace(t, f);
    }
    run_count += static_cast<int>(fs.size());
    const auto best = std::max_element(
        n.begin(), n.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    ++cards_with[best->first];
  }
  const auto common =
      std::max_element(cards_with.begin(), cards_with.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  const json& f = finding_of.at(common->first);
  const TypedValue tv = typed_value(f);
  json others = json::object();
  for (const auto& [text, n] : cards_with)
    if (text != common->first) others[text] = n;
  return {{"name", name},
          {"experiment", c.experiment},
          {"unit", c.unit},
          {"kind", to_string(tv.kind)},
          {"value", f["value"]},
          {"text", tv.text},
          {"label", tv.label},
          {"agree", common->second},
          {"cards", c.by_card.size()},
          {"runs", run_count},
          {"other_values", others}};
}

}  // namespace

std::vector<json> comparable_findings(const json& result) {
  std::vector<json> out;
  std::set<std::string> seen;
  if (!result.is_object() || !result.contains("experiments") || !result["experiments"].is_array())
    return out;
  for (const auto& e : result["experiments"]) {
    if (!e.is_object() || text_of(e, "status") != "passed") continue;
    if (!e.contains("findings") || !e["findings"].is_array()) continue;
    for (const auto& f : e["findings"]) {
      if (!f.is_object()) continue;
      const std::string name = text_of(f, "name");
      if (name.empty() || !f.contains("value") || !f["value"].is_number() ||
          !std::isfinite(f["value"].get<double>()) || !seen.insert(name).second)
        continue;
      json g = f;
      g["experiment"] = text_of(e, "id");
      out.push_back(std::move(g));
    }
  }
  return out;
}

json build_baseline(const std::vector<BaselineSource>& sources) {
  if (sources.empty()) throw UsageError("baseline build needs at least one result.json");
  std::map<std::string, int> models;
  for (const auto& s : sources) ++models[text_of(member(s.result, "device"), "name")];
  if (models.size() > 1) {
    std::string list;
    for (const auto& [m, n] : models)
      list += (list.empty() ? "" : ", ") + ("'" + m + "' (" + std::to_string(n) + ")");
    throw UsageError("the results are of " + std::to_string(models.size()) +
                     " GPU models: " + list + "; build one baseline per model");
  }
  const std::string model = models.begin()->first;
  if (model.empty()) throw UsageError("the results name no GPU model (device.name)");

  std::vector<std::string> order;
  std::map<std::string, Collected> by_name;
  std::map<std::string, std::set<int>> samples_versions;
  std::map<std::string, int> experiment_results;
  std::set<std::string> uuids;
  std::map<std::string, std::set<std::string>> conditions;
  json source_list = json::array();
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const auto& s = sources[i];
    std::string uuid = text_of(member(s.result, "device"), "uuid");
    if (uuid.empty()) uuid = "(no uuid: " + s.path + ")";  // one card per file then
    uuids.insert(uuid);
    const json cond = conditions_of(s.result);
    for (const auto& [k, v] : cond.items())
      if (!v.get<std::string>().empty()) conditions[k].insert(v.get<std::string>());
    json src = {{"uuid", uuid},
                {"file", s.repo_path.empty() ? s.path : s.repo_path},
                {"git_commit", s.git_commit},
                {"gpuprobe_git_sha", cond["gpuprobe_git_sha"]},
                {"schema_version", s.result.value("schema_version", json())}};
    source_list.push_back(src);
    for (const auto& e : s.result.value("experiments", json::array())) {
      if (!e.is_object() || text_of(e, "status") != "passed") continue;
      const std::string id = text_of(e, "id");
      ++experiment_results[id];
      const json sv = e.value("samples_version", json(1));
      samples_versions[id].insert(sv.is_number_integer() ? sv.get<int>() : 1);
    }
    for (auto& f : comparable_findings(s.result)) {
      const std::string name = f["name"];
      auto& c = by_name[name];
      if (c.by_card.empty()) {
        order.push_back(name);
        c.experiment = f["experiment"];
        c.unit = text_of(f, "unit");
        c.first = f;
      }
      c.by_card[uuid].push_back(std::move(f));
    }
  }
  if (order.empty()) throw UsageError("no result has a passed experiment with a finding");

  json findings = json::array();
  for (const auto& name : order) {
    const auto& c = by_name[name];
    findings.push_back(typed_value(c.first).is_number() ? number_entry(name, c)
                                                        : category_entry(name, c));
  }
  json experiments = json::object();
  for (const auto& [id, versions] : samples_versions)
    experiments[id] = {{"samples_versions", std::vector<int>(versions.begin(), versions.end())},
                       {"results", experiment_results[id]}};
  json cond = json::object();
  for (const auto& [k, v] : conditions) cond[k] = std::vector<std::string>(v.begin(), v.end());
  return {{"kind", kBaselineKind},
          {"schema_version", kBaselineSchemaVersion},
          {"gpu_model", model},
          {"cards", uuids.size()},
          {"runs", sources.size()},
          {"method",
           "per number: median over cards of each card's median over its runs; card_spread = "
           "1.4826 x MAD of those per-card medians; run_spread = pooled standard deviation of "
           "the runs of each card with two or more; card_min/card_max = the span of the per-card "
           "medians. Per category, yes/no or mask: the value most cards show (a card's value: "
           "the one most of its runs show) and how many cards agree"},
          {"conditions", cond},
          {"experiments", experiments},
          {"sources", source_list},
          {"findings", findings}};
}

void check_baseline_shape(const json& b, const std::string& file) {
  using json_input::Reader;
  const Reader root(b, file);
  root.object();
  if (root.at("kind").string() != kBaselineKind)
    root.at("kind").fail("expected \"" + std::string(kBaselineKind) + "\" (not a baseline)");
  const auto version = root.at("schema_version").integer();
  if (version != kBaselineSchemaVersion)
    root.at("schema_version")
        .fail("this gpuprobe reads baseline schema_version " +
              std::to_string(kBaselineSchemaVersion) + ", not " + std::to_string(version));
  if (root.at("gpu_model").string().empty()) root.at("gpu_model").fail("empty GPU model");
  root.at("cards").unsigned_integer();
  root.at("runs").unsigned_integer();
  if (auto e = root.find("experiments")) {
    for (const auto& [id, v] : e->object().items()) {
      const Reader x = e->at(id);
      const Reader sv = x.at("samples_versions");
      for (std::size_t i = 0; i < sv.size(); ++i) sv.at(i).integer();
    }
  }
  const Reader fs = root.at("findings");
  if (fs.size() == 0) fs.fail("no findings");
  for (std::size_t i = 0; i < fs.size(); ++i) {
    const Reader f = fs.at(i);
    f.object();
    if (f.at("name").string().empty()) f.at("name").fail("empty finding name");
    f.at("unit").string();
    f.at("experiment").string();
    if (f.at("cards").unsigned_integer() == 0) f.at("cards").fail("a finding of no card");
    const std::string kind = f.at("kind").string();
    if (kind == "number") {
      f.at("median").number();
      f.at("card_min").number();
      f.at("card_max").number();
      if (f.at("card_spread").number() < 0) f.at("card_spread").fail("negative spread");
      if (const auto r = f.find("run_spread"); r && !r->json().is_null() && r->number() < 0)
        r->fail("negative spread");
    } else if (kind == "bool" || kind == "category" || kind == "mask") {
      f.at("value").number();
      f.at("text").string();
      f.at("agree").unsigned_integer();
    } else {
      f.at("kind").fail("expected number, bool, category or mask, got \"" + kind + "\"");
    }
  }
}

std::string baseline_line(const json& b) {
  std::ostringstream s;
  s << b.value("gpu_model", "") << ": " << b.value("cards", 0) << " cards, " << b.value("runs", 0)
    << " runs, " << b.value("findings", json::array()).size() << " findings";
  return s.str();
}

}  // namespace gpuprobe::report
