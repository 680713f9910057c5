// samples["counters"] as a type: the one conversion of the record collect() writes, read
// leniently as it always was (a member that is absent reads as its default).
#include <limits>

#include "core/error.hpp"
#include "counters/counters.hpp"

namespace gpuprobe::counters {

using nlohmann::json;

void from_json(const json& j, RecordedCheck& c) {
  Expectation& e = c.expectation;
  e.quantity = j.value("quantity", "");
  e.numerator = j.value("numerator", "");
  e.denominator = j.value("denominator", "");
  e.unit = j.value("unit", "");
  e.expected = j.value("expected", 0.0);
  e.tolerance = j.value("tolerance", 0.0);
  e.relative = j.value("relative", true);
  e.model = j.value("model", "");
  e.valid_min = j.value("valid_min", -std::numeric_limits<double>::infinity());
  e.valid_max = j.value("valid_max", std::numeric_limits<double>::infinity());
  c.reads = j.value("reads", std::vector<double>{});
}

void from_json(const json& j, RecordedProbe& p) {
  p.label = j.value("label", std::string());
  p.where = j.value("where", json::object());
  p.checks = j.value("checks", std::vector<RecordedCheck>{});
}

void from_json(const json& j, Record& r) {
  r.status = j.value("status", "");
  r.not_checked.reset();
  if (r.status != "read") {
    r.reason = j.value("reason", std::string());
    return;
  }
  r.method = j.value("method", "");
  r.probes = j.value("probes", std::vector<RecordedProbe>{});
  if (const auto it = j.find("not_checked"); it != j.end()) r.not_checked = *it;
}

std::optional<Record> recorded(const ExperimentResult& r) {
  const auto it = r.samples.find("counters");
  if (it == r.samples.end()) return std::nullopt;
  try {
    return it->get<Record>();
  } catch (const json::exception& e) {
    const std::string what = e.what();
    throw UsageError((r.id.empty() ? std::string("experiment") : r.id) +
                     ": samples.counters is not what this gpuprobe writes (" +
                     what.substr(0, what.find('\n')) + ")");
  }
}

}  // namespace gpuprobe::counters
