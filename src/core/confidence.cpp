#include "core/confidence.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/stats.hpp"

namespace gpuprobe::confidence {

namespace {
/// Samples that are all whole numbers (clock cycles, counts) locate their median no better than
/// to within half a unit either way, however many agree: a uniform error of one unit's width,
/// standard deviation 1 / sqrt(12). Without this floor, identical integer samples (MAD 0)
/// claimed certainty about a fraction of a cycle (tlb.l1.miss_penalty read 8 and 11 cycles in
/// two runs, each with confidence 1.00).
double quantum_floor(const std::vector<double>& samples) {
  for (double x : samples)
    if (!std::isfinite(x) || std::fabs(x - std::round(x)) > 1e-9) return 0.0;
  return 1.0 / std::sqrt(12.0);
}
}  // namespace

double median_standard_error(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0.0;
  const stats::Summary s = stats::summarize(samples);
  return std::max(standard_error_from_mad(s.n, s.mad), quantum_floor(samples));
}

double precision_from_standard_error(double value, double se, double tolerance) {
  if (value == 0.0 || !std::isfinite(value) || !std::isfinite(se)) return 0.0;
  if (se <= 0.0) return 1.0;
  return std::clamp(std::erf(tolerance * std::fabs(value) / (std::sqrt(2.0) * se)), 0.0, 1.0);
}

double standard_error_from_mad(std::size_t n, double mad) {
  return n > 0 ? 1.2533 * 1.4826 * mad / std::sqrt(static_cast<double>(n)) : 0.0;
}

double standard_error_of_summary(const nlohmann::json& summary) {
  if (!summary.contains("n") || !summary.contains("mad")) return 0.0;
  return standard_error_from_mad(summary.at("n").get<std::size_t>(),
                                 summary.at("mad").get<double>());
}

double precision_from_mad(std::size_t n, double mad, double value, double tolerance) {
  if (n < 3) return 0.0;
  return precision_from_standard_error(value, standard_error_from_mad(n, mad), tolerance);
}

double precision(const std::vector<double>& samples, double value, double tolerance) {
  if (samples.size() < 3) return 0.0;
  return precision_from_standard_error(value, median_standard_error(samples), tolerance);
}

double precision_of_summary(const nlohmann::json& summary, double tolerance) {
  if (!summary.contains("n") || !summary.contains("mad") || !summary.contains("median")) return 0.0;
  return precision_from_mad(summary.at("n").get<std::size_t>(), summary.at("mad").get<double>(),
                            summary.at("median").get<double>(), tolerance);
}

double separation(double z) {
  if (!(z > 0.0)) return 0.0;
  return std::clamp(std::erf(z / (2.0 * std::sqrt(2.0))), 0.0, 1.0);
}

double heterogeneity_z(const std::vector<double>& x, const std::vector<double>& w) {
  if (x.size() < 2 || w.size() != x.size()) return 0.0;
  double sw = 0, swx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sw += w[i];
    swx += w[i] * x[i];
  }
  const double m = swx / sw;
  double q = 0;
  for (std::size_t i = 0; i < x.size(); ++i) q += w[i] * (x[i] - m) * (x[i] - m);
  const double df = static_cast<double>(x.size() - 1);
  return (q - df) / std::sqrt(2 * df);
}

double separation_z(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) return 0.0;
  const double d = std::fabs(stats::median(a) - stats::median(b));
  const double se = std::hypot(median_standard_error(a), median_standard_error(b));
  if (se <= 0.0) return d > 0.0 ? std::numeric_limits<double>::infinity() : 0.0;
  return d / se;
}

double agreement(std::size_t agreeing, std::size_t trials) {
  if (trials == 0) return 0.0;
  const double n = static_cast<double>(trials);
  const double p = static_cast<double>(std::min(agreeing, trials)) / n;
  const double z = 1.6449;  // two-sided 90 %
  const double centre = p + z * z / (2 * n);
  const double half = z * std::sqrt(p * (1 - p) / n + z * z / (4 * n * n));
  return std::clamp((centre - half) / (1 + z * z / n), 0.0, 1.0);
}

double combine(std::initializer_list<double> factors) {
  double c = 1.0;
  for (double f : factors) c *= std::isfinite(f) ? f : 0.0;
  return std::clamp(c, 0.0, 1.0);
}

double student_t_two_sided(double t, int dof) {
  if (!(t > 0.0) || dof < 1) return 0.0;
  if (!std::isfinite(t)) return 1.0;
  const double nu = dof;
  const double theta = std::atan(t / std::sqrt(nu));
  const double c = std::cos(theta), s = std::sin(theta);
  double a = 0.0;
  if (dof % 2 == 1) {
    // theta + sin(theta) (cos + 2/3 cos^3 + 2*4/(3*5) cos^5 + ... up to cos^(nu-2)).
    double term = c, sum = 0.0;
    for (int j = 1; j <= dof - 2; j += 2) {
      sum += term;
      term *= c * c * (j + 1) / (j + 2);
    }
    a = 2.0 / std::acos(-1.0) * (theta + s * sum);
  } else {
    // sin(theta) (1 + 1/2 cos^2 + 1*3/(2*4) cos^4 + ... up to cos^(nu-2)).
    double term = 1.0, sum = 0.0;
    for (int j = 0; j <= dof - 2; j += 2) {
      sum += term;
      term *= c * c * (j + 1) / (j + 2);
    }
    a = s * sum;
  }
  return std::clamp(a, 0.0, 1.0);
}

ReplicateSummary summarize_replicates(const std::vector<double>& medians,
                                      const std::vector<double>& standard_errors,
                                      double tolerance) {
  ReplicateSummary r;
  r.replicates = medians.size();
  r.medians = medians;
  if (medians.empty()) return r;
  const double k = static_cast<double>(medians.size());
  r.value = stats::median(medians);
  double sq = 0.0;
  for (double se : standard_errors) sq += se * se;
  if (!standard_errors.empty())
    r.within_standard_error =
        std::sqrt(sq / static_cast<double>(standard_errors.size())) / std::sqrt(k);
  if (medians.size() >= 3) {
    double mean = 0.0;
    for (double m : medians) mean += m / k;
    double var = 0.0;
    for (double m : medians) var += (m - mean) * (m - mean) / (k - 1);
    // 1.2533: the median's standard error over the mean's, as in median_standard_error.
    r.between_standard_error = 1.2533 * std::sqrt(var) / std::sqrt(k);
  }
  r.standard_error = std::max(r.between_standard_error, r.within_standard_error);
  r.precision = precision_at(r, r.value, tolerance);
  return r;
}

double precision_at(const ReplicateSummary& s, double value, double tolerance) {
  if (s.replicates == 0 || value == 0.0 || !std::isfinite(value)) return 0.0;
  if (s.standard_error <= 0.0) return 1.0;
  const double t = tolerance * std::fabs(value) / s.standard_error;
  return s.replicates >= 3 ? student_t_two_sided(t, static_cast<int>(s.replicates) - 1)
                           : std::clamp(std::erf(t / std::sqrt(2.0)), 0.0, 1.0);
}

ReplicateSummary summarize_replicate_samples(const std::vector<std::vector<double>>& replicates,
                                             double tolerance) {
  std::vector<double> medians, ses;
  for (const auto& r : replicates) {
    if (r.empty()) continue;
    medians.push_back(stats::median(r));
    ses.push_back(median_standard_error(r));
  }
  ReplicateSummary s = summarize_replicates(medians, ses, tolerance);
  if (replicates.size() == 1) s.precision = precision(replicates.front(), s.value, tolerance);
  return s;
}

ReplicateSummary summarize_replicate_summaries(const std::vector<nlohmann::json>& summaries,
                                               double tolerance) {
  std::vector<double> medians, ses;
  for (const auto& j : summaries) {
    if (!j.contains("n") || !j.contains("mad") || !j.contains("median")) continue;
    const auto n = j.at("n").get<std::size_t>();
    medians.push_back(j.at("median").get<double>());
    ses.push_back(n < 2 ? 0.0 : standard_error_from_mad(n, j.at("mad").get<double>()));
  }
  ReplicateSummary s = summarize_replicates(medians, ses, tolerance);
  if (summaries.size() == 1) s.precision = precision_of_summary(summaries.front(), tolerance);
  return s;
}

ReplicateSummary at_resolution(ReplicateSummary s, double resolution, double tolerance) {
  if (!(resolution > 0.0) || !std::isfinite(resolution)) return s;
  s.resolution_standard_error = resolution / std::sqrt(12.0);
  s.standard_error = std::max(s.standard_error, s.resolution_standard_error);
  s.precision = precision_at(s, s.value, tolerance);
  return s;
}

nlohmann::json to_json(const ReplicateSummary& s) {
  nlohmann::json j = {{"replicates", s.replicates},
                      {"replicate_medians", s.medians},
                      {"standard_error", s.standard_error},
                      {"between_standard_error", s.between_standard_error},
                      {"within_standard_error", s.within_standard_error}};
  if (s.resolution_standard_error > 0) j["resolution_standard_error"] = s.resolution_standard_error;
  return j;
}

}  // namespace gpuprobe::confidence
