#pragma once
// Typed samples (issue 28, "samples are structs"): an experiment declares its samples as a C++
// type beside it with one JSON conversion (to_json / from_json found by ADL) and a kVersion;
// samples_as<T> converts result.samples once and checks it whole, so a sample of the wrong
// shape (a missing field, a wrong type, an empty or ragged array that the analysis indexes)
// is one UsageError line naming the experiment (exit 2), never a crash inside analyze.
//
// RecordedSummary is a repeated measurement's summary as stats::to_json / protocol's to_json
// write it, read back with the same leniency the JSON readers had (only the median is needed;
// a summary without n or MAD has precision 0).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "core/protocol.hpp"
#include "core/stats.hpp"

namespace gpuprobe {

/// A summary as recorded: every field stats::to_json writes (and protocol's converged and
/// wall_s), each present only when the record held it.
struct RecordedSummary {
  double median = 0;
  std::optional<std::size_t> n;
  std::optional<double> min, max, mean, p5, p95, mad, stddev, wall_s;
  std::optional<bool> converged;

  static RecordedSummary of(const stats::Summary& s);
  static RecordedSummary of(const Measurement& m);
  /// confidence::precision_of_summary of the record (0 without n or MAD).
  double precision(double tolerance = confidence::kDefaultTolerance) const;
  /// The sample the summary stands for (measure::samples_of_summary): n values around the
  /// median at +-MAD. Throws UsageError when n or MAD is missing.
  std::vector<double> sample() const;
  /// p5 and p95, throwing UsageError when either is missing (a table row needs them).
  double p5_or_throw() const;
  double p95_or_throw() const;
  /// `field` of this summary, throwing UsageError naming `name` when the record lacks it.
  double required(const std::optional<double>& field, const char* name) const;
  std::size_t required_n() const;
};

/// confidence::separation of two recorded summaries' medians (measure's summary_separation).
double summary_separation(const RecordedSummary& a, const RecordedSummary& b);

void to_json(nlohmann::json& j, const RecordedSummary& s);
/// A summary must be an object with a number "median"; the other fields are read when present
/// (a present field of the wrong type throws). n above kMaxRecordedN is refused: the summary's
/// sample is rebuilt from it.
void from_json(const nlohmann::json& j, RecordedSummary& s);
inline constexpr std::size_t kMaxRecordedN = 1u << 24;

namespace samples_detail {
template <typename T, typename = void>
struct has_check : std::false_type {};
template <typename T>
struct has_check<T, std::void_t<decltype(std::declval<const T&>().check())>> : std::true_type {};
template <typename T, typename = void>
struct has_problem : std::false_type {};
template <typename T>
struct has_problem<T, std::void_t<decltype(std::string(std::declval<const T&>().problem()))>>
    : std::true_type {};
std::string first_line(const std::string& s);
/// A conversion's UsageError as the samples' error: kept as it is when it already names the
/// experiment ("<id>: ..."), else "<id>: samples are not what this gpuprobe writes (...)".
std::string conversion_error(const std::string& id, const std::string& what);
}  // namespace samples_detail

/// `r.samples` as T (T::kVersion is the experiment's samples_version), converted once; then
/// T::check() when T has one (it throws UsageError for what the conversion cannot see: an
/// empty array the analysis needs, arrays of unequal length, an index out of range), or
/// T::problem() (the problem in words, "" when there is none). Any failure is one UsageError
/// line "<id>: samples ..." (a check's) or "<id>: <problem>"; a conversion's own UsageError
/// that names the experiment already is kept as it is.
template <typename T>
T samples_as(const ExperimentResult& r) {
  static_assert(T::kVersion >= 1, "a samples type declares its version");
  const std::string id = r.id.empty() ? std::string("experiment") : r.id;
  if (r.samples_version != 0 && r.samples_version != T::kVersion)
    throw UsageError(id + ": samples version " + std::to_string(r.samples_version) +
                     ", this gpuprobe reads version " + std::to_string(T::kVersion));
  T s;
  try {
    s = r.samples.get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(id + ": samples are not what this gpuprobe writes (" +
                     samples_detail::first_line(e.what()) + ")");
  } catch (const UsageError& e) {
    throw UsageError(samples_detail::conversion_error(id, e.what()));
  }
  if constexpr (samples_detail::has_check<T>::value) {
    try {
      s.check();
    } catch (const UsageError& e) {
      throw UsageError(id + ": samples: " + samples_detail::first_line(e.what()));
    }
  }
  if constexpr (samples_detail::has_problem<T>::value) {
    if (const std::string p = s.problem(); !p.empty())
      throw UsageError(id + ": " + samples_detail::first_line(p));
  }
  return s;
}

/// A member the analysis does not read but the run records: read when present, written when set.
template <typename V>
void read_optional(const nlohmann::json& j, const char* key, std::optional<V>& v) {
  v.reset();
  if (const auto it = j.find(key); it != j.end()) v = it->template get<V>();
}
template <typename V>
void write_optional(nlohmann::json& j, const char* key, const std::optional<V>& v) {
  if (v) j[key] = *v;
}

/// Throws UsageError(`what`) unless `ok` (for the check() of a samples type).
inline void require_samples(bool ok, const std::string& what) {
  if (!ok) throw UsageError(what);
}

}  // namespace gpuprobe
