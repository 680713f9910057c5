#pragma once
// The summary card's view of a result: findings of passed experiments by name, and the
// experiments that did not pass.
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/summary.hpp"

namespace gpuprobe::report {

/// Findings of passed experiments by name (per-load latencies left out: they have their own
/// matrix), and the experiments that did not pass.
class FindingIndex {
 public:
  explicit FindingIndex(const nlohmann::json& result) {
    // References into `result` (nlohmann::json::value() would return copies, and the pointers
    // dangle).
    const auto ex = result.find("experiments");
    if (ex == result.end() || !ex->is_array()) return;
    for (const auto& e : *ex) {
      if (!e.is_object()) continue;
      if (e.value("status", "") == "error")
        errors_.push_back(
            {e.value("id", "?"), e.value("id", "?"), "check failed: " + e.value("reason", "")});
      if (e.value("status", "") != "passed") continue;
      const auto findings = e.find("findings");
      if (findings == e.end() || !findings->is_array()) continue;
      for (const auto& f : *findings) {
        if (!f.is_object() || !f.contains("name") || !f["name"].is_string()) continue;
        if (!f.contains("value") || !f["value"].is_number()) continue;
        // A finding of one load operator is looked up by name only (a level's latency where
        // latency.sweep did not run); the card's lists hold the load-independent findings.
        if (f.contains("load")) {
          if (f["load"] == "default") by_name_.emplace(f["name"].get<std::string>(), &f);
          continue;
        }
        by_name_.emplace(f["name"].get<std::string>(), &f);
        order_.push_back(&f);
        experiment_of_[&f] = e.value("id", "?");
      }
    }
  }
  const nlohmann::json* get(const std::string& name) const {
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : it->second;
  }
  double value(const std::string& name) const { return get(name)->at("value").get<double>(); }
  const std::vector<const nlohmann::json*>& all() const { return order_; }
  const std::vector<Doubt>& errors() const { return errors_; }
  std::string experiment_of(const nlohmann::json* f) const { return experiment_of_.at(f); }

 private:
  std::map<const nlohmann::json*, std::string> experiment_of_;
  std::map<std::string, const nlohmann::json*> by_name_;
  std::vector<const nlohmann::json*> order_;
  std::vector<Doubt> errors_;
};

}  // namespace gpuprobe::report
