#include "report/check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/finding_value.hpp"
#include "report/baseline.hpp"
#include "report/fleet.hpp"
#include "report/numbers.hpp"

namespace gpuprobe::report {
namespace {

using nlohmann::json;

std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

bool is_latency(const std::string& name, const std::string& unit) {
  return unit == "cycles" || unit == "ns" || unit == "us" || unit == "s" ||
         name.find("latency") != std::string::npos;
}

/// +1 when a higher value is better (bandwidth, throughput), -1 when lower is (latency), 0 when
/// neither is known.
int better_direction(const std::string& name, const std::string& unit) {
  if (is_latency(name, unit)) return -1;
  if (unit.find("/s") != std::string::npos || unit.find("/clk") != std::string::npos ||
      unit.find("FLOP") != std::string::npos)
    return +1;
  return 0;
}

bool starts(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }

/// What to look at first, by the finding's family and the direction it is off.
std::string hint(const std::string& name, const std::string& unit, double deviation,
                 bool categorical) {
  if (categorical) return "check that the driver, MIG mode and GPU model match the baseline's";
  if (starts(name, "link.")) return "check the PCIe link width/generation and NUMA placement";
  if (is_latency(name, unit))
    return deviation > 0 ? "check clocks and other processes"
                         : "check clocks and that the baseline was taken under the same settings";
  if (starts(name, "compute.") || starts(name, "hopper.") ||
      unit.find("FLOP") != std::string::npos || unit.find("FMA") != std::string::npos)
    return "check clocks and throttle reasons";
  if (starts(name, "dram.") || starts(name, "hierarchy.dram") || starts(name, "transpose."))
    return "check clocks, ECC and power limits";
  if (starts(name, "l2.") || starts(name, "hierarchy.") || starts(name, "l1.") ||
      starts(name, "cache."))
    return "check clocks and power limits";
  return "check clocks and throttle reasons";
}

/// The words a reader knows for the findings a health check is about.
std::string words(const std::string& name) {
  static const std::map<std::string, std::string> known = {
      {"dram.read_bandwidth", "DRAM read"}, {"dram.write_bandwidth", "DRAM write"},
      {"dram.copy_bandwidth", "DRAM copy"}, {"hierarchy.l2.read_bandwidth", "L2 bandwidth"},
      {"l1.hit_latency", "L1 latency"},     {"l2.hit_latency", "L2 latency"},
      {"dram.latency", "DRAM latency"},     {"compute.ffma.throughput", "FFMA throughput"}};
  const auto it = known.find(name);
  return it == known.end() ? name : it->second + " (" + name + ")";
}

json judge_number(const json& f, const json& b) {
  const double x = f["value"].get<double>();
  const double m = b["median"].get<double>();
  const double card = b["card_spread"].get<double>();
  const auto own_f = finding_spread(f);
  const double run =
      b.contains("run_spread") && b["run_spread"].is_number() ? b["run_spread"].get<double>() : 0.0;
  const double own = std::max(own_f ? std::max(own_f->value, 0.0) : 0.0, run);
  const double combined = std::sqrt(card * card + own * own);
  const double d = x - m;
  const bool differs = !same(x, m);
  const double spreads = !differs ? 0.0 : combined > 0 ? d / combined : std::copysign(INFINITY, d);
  const double lo = b["card_min"].get<double>() - kFamilyLimit * own;
  const double hi = b["card_max"].get<double>() + kFamilyLimit * own;
  const bool outside_span = (x < lo && !same(x, lo)) || (x > hi && !same(x, hi));
  const bool out = std::fabs(spreads) > kFamilyLimit && outside_span;
  return {{"value", x},
          {"text", display_text(f)},
          {"baseline_median", m},
          {"baseline_text",
           display_text(json{{"name", f["name"]}, {"value", m}, {"unit", b.value("unit", "")}})},
          {"deviation", d},
          {"deviation_percent", m != 0 ? json(d / std::fabs(m) * 100) : json(nullptr)},
          {"deviation_spreads", num_or_null(spreads)},
          {"card_spread", card},
          {"own_spread", own_f ? json(own_f->value) : json(nullptr)},
          {"own_spread_source", own_f ? own_f->source : "none"},
          {"run_spread", b.value("run_spread", json(nullptr))},
          {"combined_spread", combined},
          {"card_span", {b["card_min"], b["card_max"]}},
          {"within_card_span", !outside_span},
          {"out_of_family", out}};
}

json judge_category(const json& f, const json& b) {
  const std::string text = typed_value(f).text;
  const std::string base = b.value("text", "");
  return {{"value", f["value"]},          {"text", text},
          {"baseline_value", b["value"]}, {"baseline_text", base},
          {"baseline_agree", b["agree"]}, {"same_as_baseline", text == base},
          {"out_of_family", text != base}};
}

/// The sentence about one out-of-family finding.
std::string deviation_sentence(const json& j, const std::string& model) {
  char buf[512];
  if (j.value("kind", "") != "number") {
    std::snprintf(buf, sizeof(buf), "%s is %s where the %s baseline shows %s (%d of %d cards)",
                  words(j["name"]).c_str(), j.value("text", "").c_str(), model.c_str(),
                  j.value("baseline_text", "").c_str(), j.value("baseline_agree", 0),
                  j.value("baseline_cards", 0));
    return buf;
  }
  const double d = j["deviation"].get<double>();
  char num[64];
  std::string spreads = "spread 0", amount;
  if (j["deviation_spreads"].is_number()) {
    std::snprintf(num, sizeof(num), "%.1f spreads",
                  std::fabs(j["deviation_spreads"].get<double>()));
    spreads = num;
  }
  if (j["deviation_percent"].is_number()) {
    std::snprintf(num, sizeof(num), "%.1f %%", std::fabs(j["deviation_percent"].get<double>()));
    amount = num;
  } else {
    const auto q = format_quantity(std::fabs(d), j.value("unit", ""));
    amount = q.first + " " + q.second;
  }
  std::snprintf(buf, sizeof(buf), "%s %s %s the %s baseline (%s)", words(j["name"]).c_str(),
                amount.c_str(), d < 0 ? "below" : "above", model.c_str(), spreads.c_str());
  return buf;
}

/// Sort key: numbers by |spreads| (infinite first), categories after them.
double severity(const json& j) {
  if (j.value("kind", "") != "number") return -1;
  const auto& s = j["deviation_spreads"];
  return s.is_number() ? std::fabs(s.get<double>()) : std::numeric_limits<double>::infinity();
}

}  // namespace

json check_result(const json& result, const json& baseline, const std::string& baseline_name) {
  std::map<std::string, const json*> base;
  for (const auto& b : baseline["findings"]) base[b["name"].get<std::string>()] = &b;
  const std::string model = baseline.value("gpu_model", "");
  json findings = json::array(), only_result = json::array();
  std::set<std::string> shared;
  for (const auto& f : comparable_findings(result)) {
    const std::string name = f["name"];
    const auto it = base.find(name);
    if (it == base.end()) {
      only_result.push_back(name);
      continue;
    }
    shared.insert(name);
    const json& b = *it->second;
    const bool number = b.value("kind", "") == "number";
    json j = number ? judge_number(f, b) : judge_category(f, b);
    j["name"] = name;
    j["experiment"] = f["experiment"];
    j["unit"] = b.value("unit", "");
    j["kind"] = b["kind"];
    j["baseline_cards"] = b["cards"];
    j["hint"] = hint(name, j["unit"], number ? j["deviation"].get<double>() : 0.0, !number);
    // A finding the run itself is unsure of (confidence below 0.5) cannot make a card out of
    // family: it is judged, said to be uncertain, and left out of the verdict.
    const json& conf = f.value("confidence", json(1.0));
    j["confidence"] = conf;
    if (conf.is_number() && conf.get<double>() < kUncertainConfidence) {
      j["uncertain"] = true;
      j["would_be_out_of_family"] = j["out_of_family"];
      j["out_of_family"] = false;
    }
    findings.push_back(std::move(j));
  }
  json only_baseline = json::array();
  for (const auto& [name, b] : base)
    if (!shared.count(name)) only_baseline.push_back(name);
  if (findings.empty())
    throw UsageError("the result and the baseline '" + baseline_name +
                     "' share no finding (the result has " + std::to_string(only_result.size()) +
                     ", the baseline " + std::to_string(base.size()) + ")");
  // samples_version of each experiment the two share.
  json sv_diff = json::array();
  const json experiments = baseline.value("experiments", json::object());
  for (const auto& e : result.value("experiments", json::array())) {
    const std::string id = str(e, "id");
    if (!experiments.contains(id) || str(e, "status") != "passed") continue;
    const json v = e.value("samples_version", json(1));
    const int rv = v.is_number_integer() ? v.get<int>() : 1;
    const auto& bv = experiments[id]["samples_versions"];
    if (bv.size() != 1 || bv[0].get<int>() != rv)
      sv_diff.push_back({{"experiment", id}, {"result", rv}, {"baseline", bv}});
  }
  std::vector<const json*> out;
  for (const auto& j : findings)
    if (j["out_of_family"].get<bool>()) out.push_back(&j);
  std::stable_sort(out.begin(), out.end(),
                   [](const json* a, const json* b) { return severity(*a) > severity(*b); });
  std::string verdict;
  json out_names = json::array();
  for (const auto* j : out) out_names.push_back((*j)["name"]);
  std::size_t uncertain = 0;
  for (const auto& j : findings) uncertain += j.value("uncertain", false) ? 1 : 0;
  if (out.empty()) {
    verdict = "in family: all " + std::to_string(findings.size() - uncertain) +
              " findings shared with the " + model + " baseline are within its spread";
    if (uncertain > 0)
      verdict += " (" + std::to_string(uncertain) +
                 " more the run itself is unsure of, confidence below 0.5, not judged)";
  } else {
    verdict = "OUT OF FAMILY: " + deviation_sentence(*out[0], model) + ": " +
              (*out[0])["hint"].get<std::string>();
    if (out.size() > 1) verdict += "; " + std::to_string(out.size() - 1) + " more out of family";
  }
  const json& dev = result.value("device", json::object());
  const json env = result.value("environment", json::object());
  const std::string host = env.is_object() && env.contains("host") && env["host"].is_object()
                               ? str(env["host"], "hostname")
                               : "";
  return {{"kind", "gpuprobe.check"},
          {"schema_version", 1},
          {"result",
           {{"gpu_name", str(dev, "name")},
            {"gpu_uuid", str(dev, "uuid")},
            {"host", host},
            {"gpuprobe_git_sha", str(result.value("tool", json::object()), "git_sha")}}},
          {"baseline",
           {{"name", baseline_name},
            {"gpu_model", model},
            {"cards", baseline["cards"]},
            {"runs", baseline["runs"]}}},
          {"rule",
           "a number is out of family when |value - median| > 3 x sqrt(card_spread^2 + own^2) "
           "(own = max(the finding's own spread, the baseline's run-to-run spread)) and the value "
           "lies more than 3 x own outside the span of the baseline's cards; a category, yes/no "
           "or mask when it differs from the value most baseline cards show; a finding whose own "
           "confidence is below 0.5 is marked uncertain and never makes the card out of family"},
          {"out_of_family", !out.empty()},
          {"verdict", verdict},
          {"out_of_family_findings", out_names},
          {"findings", findings},
          {"only_in_result", only_result},
          {"only_in_baseline", only_baseline},
          {"samples_version_differences", sv_diff},
          {"summary",
           {{"shared", findings.size()},
            {"out_of_family", out.size()},
            {"uncertain", uncertain},
            {"only_in_result", only_result.size()},
            {"only_in_baseline", only_baseline.size()}}}};
}

double slowness_in_spreads(const json& check) {
  double worst = 0;
  for (const auto& j : check.value("findings", json::array())) {
    if (j.value("kind", "") != "number") continue;
    const int dir = better_direction(j.value("name", ""), j.value("unit", ""));
    const auto& s = j["deviation_spreads"];
    const double spreads =
        s.is_number() ? s.get<double>() : std::copysign(1e308, j["deviation"].get<double>());
    worst = std::max(worst, -dir * spreads);
  }
  return worst;
}

}  // namespace gpuprobe::report
