// RecordedSummary's conversion and what the analyses compute from it (core/samples.hpp).
#include "core/samples.hpp"

namespace gpuprobe {

using nlohmann::json;

RecordedSummary RecordedSummary::of(const stats::Summary& s) {
  RecordedSummary r;
  r.median = s.median;
  r.n = s.n;
  r.min = s.min;
  r.max = s.max;
  r.mean = s.mean;
  r.p5 = s.p5;
  r.p95 = s.p95;
  r.mad = s.mad;
  r.stddev = s.stddev;
  return r;
}

RecordedSummary RecordedSummary::of(const Measurement& m) {
  RecordedSummary r = of(m.summary);
  r.converged = m.converged;
  r.wall_s = m.wall_s;
  return r;
}

double RecordedSummary::precision(double tolerance) const {
  if (!n || !mad) return 0.0;
  return confidence::precision_from_mad(*n, *mad, median, tolerance);
}

std::vector<double> RecordedSummary::sample() const {
  if (!n || !mad) throw UsageError("a summary without n or mad");
  std::vector<double> v;
  for (std::size_t i = 0; i < *n / 2; ++i) {
    v.push_back(median - *mad);
    v.push_back(median + *mad);
  }
  if (*n % 2 == 1) v.push_back(median);
  return v;
}

double RecordedSummary::p5_or_throw() const { return required(p5, "p5"); }
double RecordedSummary::p95_or_throw() const { return required(p95, "p95"); }

double RecordedSummary::required(const std::optional<double>& field, const char* name) const {
  if (!field) throw UsageError(std::string("a summary without ") + name);
  return *field;
}
std::size_t RecordedSummary::required_n() const {
  if (!n) throw UsageError("a summary without n");
  return *n;
}

double summary_separation(const RecordedSummary& a, const RecordedSummary& b) {
  return confidence::separation(confidence::separation_z(a.sample(), b.sample()));
}

void to_json(json& j, const RecordedSummary& s) {
  j = {{"median", s.median}};
  if (s.n) j["n"] = *s.n;
  const std::pair<const char*, const std::optional<double>*> numbers[] = {
      {"min", &s.min}, {"max", &s.max}, {"mean", &s.mean},     {"p5", &s.p5},
      {"p95", &s.p95}, {"mad", &s.mad}, {"stddev", &s.stddev}, {"wall_s", &s.wall_s}};
  for (const auto& [key, value] : numbers)
    if (*value) j[key] = **value;
  if (s.converged) j["converged"] = *s.converged;
}

void from_json(const json& j, RecordedSummary& s) {
  j.at("median").get_to(s.median);
  s.n.reset();
  if (const auto it = j.find("n"); it != j.end()) {
    // A count rebuilds a sample of that size (sample()): a negative or huge one is refused.
    if (!it->is_number() || !(it->get<double>() >= 0) ||
        it->get<double>() > static_cast<double>(kMaxRecordedN))
      throw UsageError("a summary's n is not a count up to " + std::to_string(kMaxRecordedN));
    s.n = it->get<std::size_t>();
  }
  const std::pair<const char*, std::optional<double>*> numbers[] = {
      {"min", &s.min}, {"max", &s.max}, {"mean", &s.mean},     {"p5", &s.p5},
      {"p95", &s.p95}, {"mad", &s.mad}, {"stddev", &s.stddev}, {"wall_s", &s.wall_s}};
  for (const auto& [key, value] : numbers) {
    value->reset();
    if (const auto it = j.find(key); it != j.end()) *value = it->get<double>();
  }
  s.converged.reset();
  if (const auto it = j.find("converged"); it != j.end()) s.converged = it->get<bool>();
}

namespace samples_detail {
std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }
std::string conversion_error(const std::string& id, const std::string& what) {
  const std::string line = first_line(what);
  if (line.rfind(id + ": ", 0) == 0) return line;
  return id + ": samples are not what this gpuprobe writes (" + line + ")";
}
}  // namespace samples_detail

}  // namespace gpuprobe
