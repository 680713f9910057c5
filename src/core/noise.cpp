#include "core/noise.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/confidence.hpp"

namespace gpuprobe::noise {
namespace {

/// Inverse of erf on (0, 1) by bisection (erf is monotonic; 200 halvings reach double precision).
double erfinv(double y) {
  double lo = 0, hi = 10;
  for (int i = 0; i < 200 && hi - lo > 0; ++i) {
    const double mid = (lo + hi) / 2;
    (std::erf(mid) < y ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace

double beyond_z() { return 2.0 * std::sqrt(2.0) * erfinv(kBeyondSeparation); }

double implied_standard_error(double value, double c) {
  if (!(c > 0) || !std::isfinite(value)) return std::numeric_limits<double>::infinity();
  // A stated confidence of 1 is clamped (core/confidence.hpp), not an exact value: it is read as
  // 0.999, the finest a confidence states (a standard error of ~0.6 % of the value).
  c = std::min(c, 0.999);
  return confidence::kDefaultTolerance * std::fabs(value) / (std::sqrt(2.0) * erfinv(c));
}

Judgement judge(double a, double ca, double b, double cb) {
  Judgement j;
  const double d = std::fabs(b - a);
  const double se = std::hypot(implied_standard_error(a, ca), implied_standard_error(b, cb));
  if (d == 0 || std::isinf(se) || std::isnan(se) || std::isnan(d)) return j;
  j.z = se > 0 ? d / se : std::numeric_limits<double>::infinity();
  j.beyond = confidence::separation(j.z) >= kBeyondSeparation;
  return j;
}

Judgement judge_replicates(double a, double se_a, std::size_t k_a, double b, double se_b,
                           std::size_t k_b) {
  Judgement j;
  const double d = std::fabs(b - a);
  if (d == 0 || std::isnan(d) || k_a < 2 || k_b < 2 || !(se_a >= 0) || !(se_b >= 0)) return j;
  const double va = se_a * se_a, vb = se_b * se_b;
  if (va + vb == 0) {
    j.z = std::numeric_limits<double>::infinity();
    j.beyond = true;
    return j;
  }
  const double t = d / std::sqrt(va + vb);
  const double nu =
      (va + vb) * (va + vb) /
      (va * va / static_cast<double>(k_a - 1) + vb * vb / static_cast<double>(k_b - 1));
  const int dof = std::max(1, static_cast<int>(std::floor(nu)));
  const double within = confidence::student_t_two_sided(t, dof);
  // The normal deviate with the same two-sided probability (erf(z / sqrt 2) = within).
  j.z = within >= 1.0 ? std::numeric_limits<double>::infinity() : std::sqrt(2.0) * erfinv(within);
  j.beyond = confidence::separation(j.z) >= kBeyondSeparation;
  return j;
}

namespace {
const char* const kByteUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
}

std::string human_as(double v, const std::string& unit, const std::string& shown) {
  if (unit != "bytes" || !std::isfinite(v)) return human(v, unit).first;
  double x = v;
  for (int k = 0; k < 5; ++k, x /= 1024) {
    if (shown != kByteUnits[k]) continue;
    char text[64];
    std::snprintf(text, sizeof(text), k == 0 ? "%.0f" : "%.2f", x);
    return text;
  }
  return human(v, unit).first;
}

std::pair<std::string, std::string> human(double v, const std::string& unit) {
  char text[64];
  if (unit == "bytes" && std::isfinite(v)) {
    int k = 0;
    double x = v;
    while (std::fabs(x) >= 1024 && k < 4) x /= 1024, ++k;
    if (k == 0) {
      std::snprintf(text, sizeof(text), "%.0f", x);
    } else {
      std::snprintf(text, sizeof(text), "%.2f", x);
    }
    return {text, kByteUnits[k]};
  }
  if (std::isfinite(v) && std::fabs(v) < 1e9)
    std::snprintf(text, sizeof(text), "%.6g", v);
  else
    std::snprintf(text, sizeof(text), "%.4g", v);
  // %.6g may still choose an exponent for numbers >= 1e6; print those whole.
  if (std::string(text).find('e') != std::string::npos && std::fabs(v) < 1e9)
    std::snprintf(text, sizeof(text), "%.0f", v);
  return {text, unit};
}

}  // namespace gpuprobe::noise
