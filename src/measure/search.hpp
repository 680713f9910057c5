#pragma once
// One search over configurations, shared by every experiment that looks for the best kernel
// variant or launch shape (docs/FAMILIES.md, "Search, then confirm").
//
//  - Every configuration tried becomes a row with a status: passed (with its measurement),
//    error (a failed check or a recoverable CUDA error, with the reason) or skipped (with the
//    reason). One failed row never discards the search or its neighbours; anything else (a
//    sticky CUDA error, a bug) propagates.
//  - A stage is a small generator: it looks at the rows so far (e.g. `best()`) and returns the
//    configurations to try next; `run_stage` measures them. Stages see the search only through
//    its rows, so changing one stage changes later ones only through what it measured.
//  - The search pass only picks a winner. `confirm` re-measures the winner with a fresh
//    measurer (new buffers, new repetitions, the same verification as timed); the confirmation
//    is what a finding reports, the search's best is recorded beside it. Reporting the maximum
//    of N noisy medians would bias the figure upward (the unit tests show it).
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gpuprobe::measure {

enum class RowStatus { kPassed, kError, kSkipped };
std::string to_string(RowStatus s);

/// What measuring one configuration gives.
struct Measured {
  std::vector<double> samples;  ///< the primary value of every repetition (for the confidence)
  double value = 0;             ///< the value that ranks the row (usually the median)
  nlohmann::json detail = nlohmann::json::object();  ///< anything else worth recording
};

/// Thrown by a measurer for a configuration that does not apply (recorded as skipped).
class SkipRow : public std::runtime_error {
 public:
  explicit SkipRow(const std::string& why) : std::runtime_error(why) {}
};

/// The outcome of measuring once: status, reason (empty when passed), measurement (when passed).
struct Outcome {
  RowStatus status = RowStatus::kPassed;
  std::string reason;
  Measured measured;
};

/// Runs `measure`, turning a VerificationError, a non-sticky CudaError or a SkipRow into an
/// outcome; any other exception (a sticky CudaError included) propagates.
Outcome run_guarded(const std::function<Measured()>& measure);

/// The fresh re-measurement of a search's winner.
struct Confirmation {
  std::size_t winner = 0;   ///< the winner's row index
  double search_value = 0;  ///< the winner's value in the search pass
  Outcome outcome;          ///< the confirmation pass
  bool ok() const { return outcome.status == RowStatus::kPassed; }
};
nlohmann::json to_json(const Confirmation& c);

/// {rows, passed, error, skipped, errors: [...], skipped_reasons: [...]} over (status, text)
/// pairs.
nlohmann::json summarize_statuses(const std::vector<std::pair<RowStatus, std::string>>& statuses);

template <class Config>
struct SearchRow {
  std::string stage;
  std::string key;
  Config config;
  Outcome outcome;
  bool passed() const { return outcome.status == RowStatus::kPassed; }
  double value() const { return outcome.measured.value; }
};

template <class Config>
class Search {
 public:
  using Row = SearchRow<Config>;
  using Measure = std::function<Measured(const Config&)>;
  using Key = std::function<std::string(const Config&)>;
  using Pick = std::function<bool(const Row&)>;

  /// `key` names a configuration: a configuration whose key was tried already is not measured
  /// again.
  Search(Measure measure, Key key) : measure_(std::move(measure)), key_(std::move(key)) {}

  /// Measures `c` in `stage` unless its key was tried; returns its row's index.
  std::size_t try_config(const std::string& stage, const Config& c) {
    const std::string k = key_(c);
    for (std::size_t i = 0; i < rows_.size(); ++i)
      if (rows_[i].key == k) return i;
    rows_.push_back({stage, k, c, run_guarded([&] { return measure_(c); })});
    return rows_.size() - 1;
  }
  /// Records `c` as skipped with `why`, without measuring it.
  std::size_t skip(const std::string& stage, const Config& c, const std::string& why) {
    rows_.push_back({stage, key_(c), c, {RowStatus::kSkipped, why, {}}});
    return rows_.size() - 1;
  }
  /// Measures every configuration a stage generated.
  void run_stage(const std::string& stage, const std::vector<Config>& configs) {
    for (const auto& c : configs) try_config(stage, c);
  }

  const std::vector<Row>& rows() const { return rows_; }

  /// The passed row with the largest value among those `pick` accepts (all when empty).
  std::optional<std::size_t> best(const Pick& pick = {}) const {
    std::optional<std::size_t> b;
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      const Row& r = rows_[i];
      if (!r.passed() || (pick && !pick(r))) continue;
      if (!b || r.value() > rows_[*b].value()) b = i;
    }
    return b;
  }

  /// Re-measures row `winner`'s configuration with `fresh` (which must build new buffers and
  /// take new repetitions); the result is guarded like a row.
  Confirmation confirm(std::size_t winner, const Measure& fresh) const {
    const Row& r = rows_.at(winner);
    return {winner, r.value(), run_guarded([&] { return fresh(r.config); })};
  }

  /// Counts of rows by status and the reason of every failed row ("<key>: <reason>").
  nlohmann::json status_summary() const {
    std::vector<std::pair<RowStatus, std::string>> s;
    for (const auto& r : rows_) s.emplace_back(r.outcome.status, r.key + ": " + r.outcome.reason);
    return summarize_statuses(s);
  }

  /// The rows as JSON: {stage, key, status, reason?} merged with describe(config) and, when
  /// passed, the measurement's detail.
  nlohmann::json rows_json(const std::function<nlohmann::json(const Config&)>& describe) const {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows_) {
      nlohmann::json j = describe(r.config);
      j["stage"] = r.stage;
      j["key"] = r.key;
      j["status"] = to_string(r.outcome.status);
      if (!r.passed()) j["reason"] = r.outcome.reason;
      if (r.passed()) j.update(r.outcome.measured.detail);
      out.push_back(std::move(j));
    }
    return out;
  }

 private:
  Measure measure_;
  Key key_;
  std::vector<Row> rows_;
};

/// Confidence of a confirmed figure: confidence::precision of the confirmation's samples around
/// its value (0 when the confirmation failed).
double confirmed_confidence(const Confirmation& c);

}  // namespace gpuprobe::measure
