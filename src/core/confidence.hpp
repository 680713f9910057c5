#pragma once
// The one definition of a finding's confidence (docs/METHOD.md, "Confidence"). A confidence is
// a probability-like number in [0, 1] computed from the data behind the finding, as the product
// of the factors that apply to it:
//
//   precision(samples, value, tolerance)  how sure we are that a fresh measurement would give a
//       value within +-tolerance (relative; 2 % by default) of the reported one: with
//       se = 1.2533 * 1.4826 * MAD / sqrt(n) (the robust standard error of a median),
//       precision = erf(tolerance * |value| / (sqrt(2) * se)), where se is never below
//       1 / sqrt(12) when every sample is a whole number (cycles, counts: the median is known
//       only to within half a unit). 0.5: even odds of landing within
//       the tolerance; 0.9: nine in ten. Fewer than 3 samples or a zero value: 0.
//   separation(z)  for a level, a knee or a step between two alternatives: z = |a - b| /
//       sqrt(se_a^2 + se_b^2); separation = erf(z / (2 * sqrt(2))) (0.5 at z = 1.35, 0.9 at
//       z = 3.3): how clearly the two sides differ beyond their noise.
//   agreement(k, n)  for a categorical conclusion (a policy class, a line size, a hash) from n
//       independent trials of which k agree: the lower end of the 90 % Wilson interval of k / n.
//       0.9 means: at least nine in ten trials would agree, with 90 % certainty.
//   replicates (a quantity measured as k >= 3 independent replicates, each with its own fresh
//       buffers, launches and warm-up; measure/replicates.hpp): the value is the median of the
//       replicate medians and its standard error is the larger of
//         between = 1.2533 * sd(replicate medians) / sqrt(k)   (what moves between replicates)
//         within  = rms(each replicate's median_standard_error) / sqrt(k)
//       and precision = P(|T_{k-1}| < tolerance * |value| / se), Student's t with k - 1 degrees
//       of freedom (a spread estimated from k values is itself uncertain). The same question as
//       precision() -- would a fresh measurement land within the tolerance? -- answered from
//       the spread between independent repetitions, not only the noise inside one: a quantity
//       that drifts between replicates (fresh allocations, fresh launches, the OS's page cache,
//       clocks) gets an honestly lower confidence. Fewer than 3 replicates: the within term and
//       the normal law (precision() of one replicate's samples when k == 1).
//
// A finding without evidence is not emitted at all (the experiment's summary says why).
#include <cstddef>
#include <initializer_list>
#include <nlohmann/json_fwd.hpp>
#include <vector>

namespace gpuprobe::confidence {

inline constexpr double kDefaultTolerance = 0.02;

/// Robust standard error of the median of `samples` (0 for fewer than 2 samples).
double median_standard_error(const std::vector<double>& samples);
/// See the header comment. `value` is the reported value (usually the median of samples).
double precision(const std::vector<double>& samples, double value,
                 double tolerance = kDefaultTolerance);
/// precision() of a value whose standard error `se` is known otherwise (a proportion's or a
/// ratio's from binomial counts): erf(tolerance * |value| / (sqrt(2) * se)); 1 for se == 0, 0
/// for a zero or non-finite value.
double precision_from_standard_error(double value, double se, double tolerance = kDefaultTolerance);
/// The robust standard error of a median from its sample's size `n` and unscaled MAD:
/// 1.2533 * 1.4826 * MAD / sqrt(n) (0 for n == 0).
double standard_error_from_mad(std::size_t n, double mad);
/// standard_error_from_mad() of a summary as stats::to_json writes it ("n", "mad"); 0 when a
/// key is missing.
double standard_error_of_summary(const nlohmann::json& summary);
/// precision() of a sample kept only as its size `n` and unscaled MAD (the same formula).
double precision_from_mad(std::size_t n, double mad, double value,
                          double tolerance = kDefaultTolerance);
/// precision() of the median of a sample written as stats::to_json writes a summary ("n",
/// "mad", "median"); 0 when a key is missing.
double precision_of_summary(const nlohmann::json& summary, double tolerance = kDefaultTolerance);
/// See the header comment; z >= 0.
double separation(double z);
/// z of two medians with their samples (0 when either has fewer than 2 samples and they are
/// equal; a large z when both are exact and differ).
double separation_z(const std::vector<double>& a, const std::vector<double>& b);
/// Heterogeneity of values x_i with weights w_i (1 / variance): Cochran's Q = sum w_i (x_i -
/// m)^2 about their w-weighted mean m, as z = (Q - df) / sqrt(2 df), df = n - 1 (a z for
/// separation(): how clearly the values differ beyond their noise); 0 for fewer than 2 values.
double heterogeneity_z(const std::vector<double>& x, const std::vector<double>& w);
/// See the header comment; 0 when n == 0.
double agreement(std::size_t agreeing, std::size_t trials);
/// The product of factors, clamped to [0, 1].
double combine(std::initializer_list<double> factors);

/// P(|T| < t) for Student's t with `dof` >= 1 degrees of freedom (closed forms, Abramowitz &
/// Stegun 26.7.3-4); 0 for t <= 0.
double student_t_two_sided(double t, int dof);

/// A quantity measured as independent replicates (see the header comment, "replicates").
struct ReplicateSummary {
  double value = 0;                      ///< median of the replicate medians
  double standard_error = 0;             ///< max(between, within)
  double between_standard_error = 0;     ///< from the spread of the replicate medians (k >= 3)
  double within_standard_error = 0;      ///< from the noise inside each replicate
  double resolution_standard_error = 0;  ///< resolution / sqrt(12) of a quantised reading
  double precision = 0;
  std::size_t replicates = 0;
  std::vector<double> medians;
};
/// From each replicate's median and the standard error of that median.
ReplicateSummary summarize_replicates(const std::vector<double>& medians,
                                      const std::vector<double>& standard_errors,
                                      double tolerance = kDefaultTolerance);
/// From each replicate's samples (k == 1: exactly precision() of the samples).
ReplicateSummary summarize_replicate_samples(const std::vector<std::vector<double>>& replicates,
                                             double tolerance = kDefaultTolerance);
/// From each replicate's summary as stats::to_json writes it ("n", "mad", "median"); k == 1:
/// exactly precision_of_summary().
ReplicateSummary summarize_replicate_summaries(const std::vector<nlohmann::json>& summaries,
                                               double tolerance = kDefaultTolerance);
/// The precision of `s` had it reported `value` instead of s.value (same standard error and
/// degrees of freedom): for a figure computed from all the data while its replicates give the
/// spread.
double precision_at(const ReplicateSummary& s, double value, double tolerance = kDefaultTolerance);
/// `s` for readings quantised to `resolution` (a timer's tick): the value is known only to
/// within half a tick whatever the samples agree on, so the standard error is at least
/// resolution / sqrt(12) (the rounding error's), and the precision follows (replicates that
/// all read the same tick no longer give confidence 1).
ReplicateSummary at_resolution(ReplicateSummary s, double resolution,
                               double tolerance = kDefaultTolerance);
/// {"replicates", "replicate_medians", "standard_error", "between_standard_error",
///  "within_standard_error"} (+ "resolution_standard_error" where set) for a finding's extra
/// fields.
nlohmann::json to_json(const ReplicateSummary& s);

}  // namespace gpuprobe::confidence
