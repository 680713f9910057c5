#pragma once
// Judging a difference between two values of one finding (two runs, `compare`, `repeat`) against
// what each run stated about itself. A finding's confidence is, by the tool's one definition
// (core/confidence.hpp), the probability that a fresh measurement lands within
// +-kDefaultTolerance of the reported value; read backwards it states a standard error:
//   se = tolerance * |value| / (sqrt(2) * erfinv(confidence)).
// (A confidence that also carries a separation or agreement factor is lower than its precision
// alone, so the se it implies is larger: the judgement errs toward "within noise".)
// Two values differ beyond noise when their separation (confidence::separation of
// z = |a - b| / sqrt(se_a^2 + se_b^2)) reaches kBeyondSeparation, the tool's "nine in ten".
#include <cstddef>
#include <string>
#include <vector>

namespace gpuprobe::noise {

inline constexpr double kBeyondSeparation = 0.9;

/// The z at which separation reaches kBeyondSeparation (2 sqrt(2) erfinv(0.9) = 3.29): a
/// difference is beyond noise from this many combined standard errors on.
double beyond_z();

/// The standard error a finding's value and confidence state (0 for confidence 1, infinity for
/// confidence 0).
double implied_standard_error(double value, double confidence);

struct Judgement {
  double z = 0;         ///< |a - b| / combined stated standard error
  bool beyond = false;  ///< separation(z) >= kBeyondSeparation
};
/// Whether b differs from a beyond both runs' stated spread.
Judgement judge(double a, double confidence_a, double b, double confidence_b);

/// The same question for two values measured as replicates (confidence.hpp, "replicates"),
/// each with the standard error its k replicates gave: a standard error estimated from k values
/// has k - 1 degrees of freedom, so the difference is judged by Welch's t (Welch-Satterthwaite
/// degrees of freedom, rounded down) and z is the normal deviate of the same two-sided
/// probability, so that one threshold (kBeyondSeparation) serves both judgements. With three
/// replicates a run's standard error is itself uncertain by a factor of ~2: reading it as exact
/// called runs 8 (se 0.55) and 10 (se 0.25) cycles apart beyond (z 3.3); Welch's t puts their
/// difference at the 8 % level.
Judgement judge_replicates(double a, double se_a, std::size_t k_a, double b, double se_b,
                           std::size_t k_b);

/// A value in the units people read: bytes as B / KiB / MiB / GiB (two decimals), other units
/// with up to 6 significant digits and no exponent below 1e9. Returns {value text, unit}.
std::pair<std::string, std::string> human(double value, const std::string& unit);

/// The number of `value` shown in `shown_unit` (a unit human() returned for this unit), e.g. a
/// byte count in MiB; other units as human() prints them.
std::string human_as(double value, const std::string& unit, const std::string& shown_unit);

}  // namespace gpuprobe::noise
