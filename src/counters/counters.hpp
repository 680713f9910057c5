#pragma once
// Hardware counters beside the timings (--counters). An experiment declares the metrics it
// wants, the configurations to read them on (each a callable that launches its kernel once,
// untimed), and what its model predicts for each; collect() reads them through CUPTI's range
// profiler over separate launches after the timed ones, and cross_check() turns the record into
// findings. Without the profiler the record says why and the timings are untouched.
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/experiment.hpp"

namespace gpuprobe::counters {

/// A quantity a model predicts: one metric, or the ratio of two (numerator / denominator).
struct Expectation {
  std::string quantity;     ///< the name shown, e.g. "DRAM bytes read per launch"
  std::string numerator;    ///< a metric name
  std::string denominator;  ///< empty: the metric itself
  std::string unit;         ///< of the quantity (a ratio's unit, e.g. "sectors/request")
  double expected = 0;
  double tolerance = 0;  ///< allowed |measured - expected|, relative or absolute (below)
  bool relative = true;  ///< tolerance is a fraction of expected; else in the quantity's unit
  std::string model;     ///< where the expected value comes from
  /// The values a read can take when the metric measures what the check assumes (a hit rate:
  /// 0..100 %); a read outside leaves the check unjudged (the metric counts something else).
  double valid_min = -std::numeric_limits<double>::infinity();
  double valid_max = std::numeric_limits<double>::infinity();
};

/// One configuration of the experiment's kernel.
struct Probe {
  std::string label;                                ///< e.g. "stride 4, read"
  nlohmann::json where = nlohmann::json::object();  ///< its axis values
  std::function<void()> launch;                     ///< launches the kernel once and waits
  std::vector<Expectation> checks;
  /// Run before each read, outside the profiled range (e.g. a full pass that warms the L2).
  std::function<void()> prepare = {};
};

/// A check the experiment would make but cannot: no expectation of the quantity is known
/// there. Listed with the reason instead of judged.
struct NotChecked {
  std::string at, quantity, why;
};

struct Declaration {
  std::vector<Probe> probes;
  int reads = 3;                        ///< independent reads per probe (the cross-check's trials)
  std::vector<NotChecked> not_checked;  ///< in a read record's "not_checked"
};

/// Whether --counters was given for this run.
bool requested(const Context& ctx);

/// Reads the declared metrics (every metric any check names) over separate launches of each
/// probe, and returns the record for result.samples["counters"]: status "read" with the
/// values, or "waived" with the reason (no profiler, no permission, a modelled device). Never
/// throws for a missing profiler; a failing launch throws as the experiment's would.
nlohmann::json collect(Context& ctx, const Declaration& d);

/// samples["counters"] as collect() wrote it, converted once (counters_samples.cpp): the
/// status, and when read, every probe's checks with their reads. Members absent in the record
/// read as their defaults, as the record was always read.
struct RecordedCheck {
  Expectation expectation;
  std::vector<double> reads;
};
struct RecordedProbe {
  std::string label;
  nlohmann::json where = nlohmann::json::object();  ///< the probe's axis values, as given
  std::vector<RecordedCheck> checks;
};
struct Record {
  std::string status, reason, method;
  std::vector<RecordedProbe> probes;
  /// The checks the experiment could not make, copied to the statistics as recorded (an
  /// array when read; anything else is refused by cross_check).
  std::optional<nlohmann::json> not_checked;
};
void from_json(const nlohmann::json& j, RecordedCheck& c);
void from_json(const nlohmann::json& j, RecordedProbe& p);
void from_json(const nlohmann::json& j, Record& r);
/// The record of `r` (samples["counters"]), nullopt without one; a record of the wrong shape
/// is a UsageError naming the experiment, one line.
std::optional<Record> recorded(const ExperimentResult& r);

/// Findings from samples["counters"] (pure): `<id>.counters.agreement` (the share of checks
/// within tolerance) and one `<id>.counters.disagreement.<n>` per disagreeing check, with both
/// numbers. Appends to r.findings; adds r.statistics["counters"], and "counters_unjudged" /
/// "counters_not_checked" when there are such checks.
void cross_check(ExperimentResult& r);

/// The verdict of one check over its reads: measured = median of the reads.
struct Verdict {
  double measured = 0;
  bool agrees = false;
  bool judged = true;       ///< false: a read fell outside the expectation's valid range
  double invalid_read = 0;  ///< the first such read
  std::size_t agreeing_reads = 0, reads = 0;
};
Verdict judge(const Expectation& e, const std::vector<double>& reads);

/// The profiler behind collect(), replaceable so tests can run the whole path on the host.
class Reader {
 public:
  virtual ~Reader() = default;
  /// Empty when counters can be read on this device; else why not.
  virtual std::optional<std::string> unavailable(const device::DeviceInfo& info) = 0;
  /// Values of `metrics` for each range: one range per launch, in order; prepares[i] (when
  /// set) runs before launches[i], outside the range, in every replay pass. Throws
  /// ProfilerError naming the failing call when the profiler fails.
  virtual std::vector<std::map<std::string, double>> read(
      const device::DeviceInfo& info, const std::vector<std::string>& metrics,
      const std::vector<std::function<void()>>& launches,
      const std::vector<std::function<void()>>& prepares) = 0;
  virtual std::string method() const = 0;
};

/// The CUPTI range profiler, loaded at run time (libcupti from the CUDA toolkit).
Reader& cupti_reader();
/// Replaces the reader collect() uses (tests); nullptr restores CUPTI's.
void set_reader_for_testing(Reader* reader);

}  // namespace gpuprobe::counters
