#include "counters/counters.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "counters/profiler_error.hpp"

namespace gpuprobe::counters {
namespace {

using nlohmann::json;

Reader* g_test_reader = nullptr;
constexpr std::size_t kMaxRangesPerSession = 32;

Reader& active_reader() { return g_test_reader ? *g_test_reader : cupti_reader(); }

double quantity_of(const Expectation& e, const json& values, std::size_t read) {
  const double num = values.at(e.numerator).at(read).get<double>();
  if (e.denominator.empty()) return num;
  const double den = values.at(e.denominator).at(read).get<double>();
  return den != 0 ? num / den : 0.0;
}

std::string tolerance_text(const Expectation& e) {
  char buf[64];
  if (e.relative)
    std::snprintf(buf, sizeof(buf), "+-%g %%", e.tolerance * 100);
  else
    std::snprintf(buf, sizeof(buf), "+-%g%s%s", e.tolerance, e.unit.empty() ? "" : " ",
                  e.unit.c_str());
  return buf;
}

json to_json(const Expectation& e) {
  json j = {
      {"quantity", e.quantity}, {"numerator", e.numerator}, {"denominator", e.denominator},
      {"unit", e.unit},         {"expected", e.expected},   {"tolerance", e.tolerance},
      {"relative", e.relative}, {"model", e.model},         {"tolerance_text", tolerance_text(e)}};
  if (std::isfinite(e.valid_min)) j["valid_min"] = e.valid_min;
  if (std::isfinite(e.valid_max)) j["valid_max"] = e.valid_max;
  return j;
}

}  // namespace

bool requested(const Context& ctx) { return ctx.options.counters; }

void set_reader_for_testing(Reader* reader) { g_test_reader = reader; }

Verdict judge(const Expectation& e, const std::vector<double>& reads) {
  Verdict v;
  v.reads = reads.size();
  if (reads.empty()) return v;
  const double tol = e.relative ? e.tolerance * std::fabs(e.expected) : e.tolerance;
  auto within = [&](double m) { return std::fabs(m - e.expected) <= tol; };
  v.measured = stats::median(reads);
  for (double r : reads)
    if (!(r >= e.valid_min && r <= e.valid_max)) {
      v.judged = false;
      v.invalid_read = r;
      return v;
    }
  v.agrees = within(v.measured);
  for (double r : reads) v.agreeing_reads += within(r) ? 1 : 0;
  return v;
}

json collect(Context& ctx, const Declaration& d) {
  json record = {{"status", "waived"}};
  Reader& reader = active_reader();
  const auto& info = ctx.device.info();
  if (auto why = reader.unavailable(info)) {
    record["reason"] = *why;
    return record;
  }
  std::vector<std::string> metrics;
  std::set<std::string> seen;
  for (const auto& p : d.probes)
    for (const auto& c : p.checks)
      for (const auto& m : {c.numerator, c.denominator})
        if (!m.empty() && seen.insert(m).second) metrics.push_back(m);
  if (metrics.empty() || d.probes.empty()) {
    record["reason"] = "the experiment declared no counters for this run";
    return record;
  }
  // Read-major order: each read of a probe is a separate launch, never back to back with
  // itself, so one launch's leftovers in the caches are not what the next one counts.
  std::vector<std::function<void()>> launches, prepares;
  for (int r = 0; r < d.reads; ++r)
    for (const auto& p : d.probes) {
      launches.push_back(p.launch);
      prepares.push_back(p.prepare);
    }
  std::vector<std::map<std::string, double>> ranges;
  try {
    // Sessions of a bounded number of ranges keep the counter image small whatever the
    // experiment declares.
    for (std::size_t first = 0; first < launches.size(); first += kMaxRangesPerSession) {
      const std::size_t last = std::min(launches.size(), first + kMaxRangesPerSession);
      const std::vector<std::function<void()>> l(launches.begin() + first, launches.begin() + last);
      const std::vector<std::function<void()>> p(prepares.begin() + first, prepares.begin() + last);
      auto part = reader.read(info, metrics, l, p);
      if (part.size() != l.size()) {
        record["reason"] = "the profiler returned " + std::to_string(part.size()) + " ranges for " +
                           std::to_string(l.size()) + " launches";
        return record;
      }
      ranges.insert(ranges.end(), part.begin(), part.end());
    }
  } catch (const ProfilerError& e) {
    record["reason"] = std::string("the profiler failed: ") + e.what();
    return record;
  }
  record = {{"status", "read"},
            {"method", reader.method() + "; " + std::to_string(d.reads) +
                           " separate untimed launches per configuration, after the timed ones"},
            {"metrics", metrics},
            {"reads", d.reads},
            {"probes", json::array()}};
  for (std::size_t i = 0; i < d.probes.size(); ++i) {
    const auto& p = d.probes[i];
    json values = json::object();
    for (const auto& m : metrics) {
      values[m] = json::array();
      for (int r = 0; r < d.reads; ++r)
        values[m].push_back(ranges[static_cast<std::size_t>(r) * d.probes.size() + i].at(m));
    }
    json checks = json::array();
    for (const auto& c : p.checks) {
      std::vector<double> reads;
      for (int r = 0; r < d.reads; ++r) reads.push_back(quantity_of(c, values, r));
      const auto v = judge(c, reads);
      auto j = to_json(c);
      j["reads"] = reads;
      j["measured"] = v.measured;
      j["agrees"] = v.agrees;
      j["judged"] = v.judged;
      checks.push_back(j);
    }
    record["probes"].push_back(
        {{"label", p.label}, {"where", p.where}, {"values", values}, {"checks", checks}});
  }
  for (const auto& n : d.not_checked) {
    if (!record.contains("not_checked")) record["not_checked"] = json::array();
    record["not_checked"].push_back({{"at", n.at}, {"quantity", n.quantity}, {"why", n.why}});
  }
  return record;
}

void cross_check(ExperimentResult& r) {
  const auto record = recorded(r);
  if (!record) return;
  if (record->status != "read") {
    r.statistics["counters"] = "cross-check waived: " + record->reason;
    return;
  }
  std::size_t checks = 0, agreeing = 0, reads = 0, consistent_reads = 0, k = 0;
  json unjudged = json::array();
  for (const auto& p : record->probes) {
    for (const auto& c : p.checks) {
      const auto& e = c.expectation;
      const auto v = judge(e, c.reads);
      if (v.reads == 0) continue;
      if (!v.judged) {
        // The metric read a value the quantity cannot take (an L2 hit rate above 100 % on a
        // partitioned L2, whose slices also count the other partition's requests): it
        // does not measure what the check assumes, so it neither agrees nor disagrees.
        unjudged.push_back({{"quantity", e.quantity},
                            {"at", p.label},
                            {"read", v.invalid_read},
                            {"valid", {e.valid_min, e.valid_max}}});
        continue;
      }
      ++checks;
      reads += v.reads;
      consistent_reads += v.agrees ? v.agreeing_reads : v.reads - v.agreeing_reads;
      if (v.agrees) {
        ++agreeing;
        continue;
      }
      Finding f;
      f.name = r.id + ".counters.disagreement." + std::to_string(++k);
      f.value = v.measured;
      f.unit = e.unit;
      f.confidence = confidence::agreement(v.reads - v.agreeing_reads, v.reads);
      f.method = e.quantity + " at " + p.label + ": counters " + std::to_string(v.measured) +
                 ", model " + std::to_string(e.expected) + " (" + e.model + "), beyond " +
                 tolerance_text(e);
      f.extra = {{"expected", e.expected},
                 {"measured", v.measured},
                 {"tolerance", tolerance_text(e)},
                 {"quantity", e.quantity},
                 {"configuration", p.where}};
      r.findings.push_back(f);
    }
  }
  if (record->not_checked) {
    if (!record->not_checked->is_array())
      throw UsageError("counters: not_checked is not an array of checks");
    r.statistics["counters_not_checked"] = *record->not_checked;
  }
  if (!unjudged.empty())
    r.statistics["counters_unjudged"] = {
        {"checks", unjudged},
        {"why",
         "a read outside the values the quantity can take: the metric counts something "
         "other than what the check assumes"}};
  if (checks == 0) return;
  Finding f;
  f.name = r.id + ".counters.agreement";
  f.value = 100.0 * static_cast<double>(agreeing) / static_cast<double>(checks);
  f.unit = "%";
  // Each read is a trial of its check's verdict: how consistently the reads support them.
  f.confidence = confidence::agreement(consistent_reads, reads);
  f.method = std::to_string(agreeing) + " of " + std::to_string(checks) +
             " counter checks within tolerance of the model; " + record->method;
  r.findings.push_back(f);
  r.statistics["counters"] = {
      {"checks", checks}, {"agreeing", agreeing}, {"reads", reads}, {"unjudged", unjudged.size()}};
}

}  // namespace gpuprobe::counters
