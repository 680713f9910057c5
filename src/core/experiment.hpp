#pragma once
// An experiment declares what it measures and how its samples become findings; the registry
// lists them; the runner runs them. Measuring (run) and concluding (analyze) are separate so
// that analyze can be tested on recorded samples without a GPU.
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/axis.hpp"
#include "core/device.hpp"
#include "core/finding.hpp"
#include "core/finding_value.hpp"
#include "core/protocol.hpp"

namespace gpuprobe {

enum class Status { kPassed, kWaived, kError };
std::string to_string(Status s);

struct ExperimentResult {
  std::string id;
  Status status = Status::kPassed;
  std::string reason;
  nlohmann::json protocol = nlohmann::json::object();
  nlohmann::json parameters = nlohmann::json::object();
  nlohmann::json samples = nlohmann::json::object();
  nlohmann::json statistics = nlohmann::json::object();
  std::vector<Finding> findings;
  std::vector<Curve> curves;
  int samples_version = 0;  ///< Experiment::samples_version() of the code that wrote samples
  nlohmann::json clocks = nlohmann::json::object();  ///< before / after / drift
  double wall_s = 0;
};
nlohmann::json to_json(const ExperimentResult& r);

/// What the user asked for, shared by every experiment. What one family varies is an axis of
/// its experiments (`--axis`; the family options --strides, --offsets, --word-sizes,
/// --carveouts and --array-size are aliases of those axes, cli/option_axes.hpp); what stays
/// here is shared by several families.
struct RunOptions {
  std::string device = "0";
  std::string out_dir;
  // The chase's options, read by the latency family, cache.l2.mixture, link.host and
  // measure/chase_point.hpp: bounds and a load set many experiments share, not one's axis.
  std::vector<device::LoadOp> loads;  ///< empty = the experiment's default
  std::uint64_t min_size = 0;         ///< 0 = the experiment's default
  std::uint64_t max_size = 0;
  std::uint32_t node_stride = 128;
  std::uint64_t seed = 1;
  ProtocolOptions protocol;
  /// --array-size for link.peer and hopper.tma (0 = their default), families whose byte counts
  /// are not yet axes; the bandwidth family reads its array_bytes axis, which the option
  /// also sets.
  std::uint64_t array_bytes = 0;
  std::vector<AxisOverride> axis_overrides;  ///< --axis <experiment>.<axis>=v1,v2 (checked)
  bool counters = false;  ///< --counters: read hardware counters over separate, untimed launches
};

/// Findings of the experiments that ran before, by name: later experiments use them only when
/// they are confident enough.
class FindingBoard {
 public:
  void add(const Finding& f) { findings_[f.name] = f; }
  /// A finding by its key (core/finding_names.hpp): a typo is a compile error, not a miss.
  std::optional<Finding> get(const FindingKey& key, double min_confidence = 0.5) const;

 private:
  std::map<std::string, Finding> findings_;
};

struct Context {
  device::Device& device;
  const RunOptions& options;
  const FindingBoard& prior;
};

/// One run of a plain sweep: what stays from one point to the next (the GPU, its buffers, the
/// points measured so far). The runner calls run_point once per point of the product of the
/// experiment's non-fixed axes (AxisValues::product: the first declared axis outermost), then
/// finish, which folds the points into the result's parameters, samples and curves.
class Sweep {
 public:
  virtual ~Sweep() = default;
  /// Measures one point (a point the experiment cannot measure here adds nothing).
  virtual void run_point(const AxisPoint& point) = 0;
  virtual void finish(ExperimentResult& result) = 0;
};

class Experiment {
 public:
  virtual ~Experiment() = default;
  virtual std::string id() const = 0;
  virtual std::string description() const = 0;
  /// The typed parameter axes (core/axis.hpp): `list`, result.parameters["axes"] and --axis
  /// come from them, and run() iterates axis_values(). Empty for an experiment not converted.
  virtual std::vector<Axis> typed_axes() const { return {}; }
  /// The axes as JSON, for `list` and the result; by default built from typed_axes(). An
  /// experiment that declares no typed axes may still describe its axes here.
  virtual nlohmann::json axes() const;
  /// The values of typed_axes() for this run (defaults, or what --axis gave).
  AxisValues axis_values(const RunOptions& options) const {
    return resolve_axes(id(), typed_axes(), options.axis_overrides);
  }
  /// Experiments whose findings this one uses when available.
  virtual std::vector<std::string> depends_on() const { return {}; }
  /// Those of depends_on() without whose findings it cannot run at all (it would be waived) or
  /// would misread what it measures: `run` and `repeat` add them to a selection that lacks
  /// them (Registry::add_required).
  virtual std::vector<std::string> required() const { return {}; }
  /// The names (or globs, `*`) of the findings analyze() may emit; empty: not declared.
  /// tests/unit/test_finding_names.cpp holds declared experiments to it.
  virtual std::vector<std::string> produces() const { return {}; }
  /// The layout of result.samples that analyze() (and the report) read. Raise it when that
  /// layout changes: `analyze` then refuses to replay samples written by another version.
  virtual int samples_version() const { return 1; }
  /// A reason when the experiment does not apply to this device (it is then waived).
  virtual std::optional<std::string> waiver(const device::DeviceInfo&) const {
    return std::nullopt;
  }
  /// A reason when the options leave the experiment nothing to measure on this device (it is
  /// then waived; `run` refuses when every chosen experiment is waived).
  virtual std::optional<std::string> options_waiver(const device::DeviceInfo&,
                                                    const RunOptions&) const {
    return std::nullopt;
  }
  /// Whether it loads every GPU of the node at once (e.g. link.peer): `characterize --gpus` runs
  /// it once, alone, instead of once per GPU.
  virtual bool whole_node() const { return false; }
  /// Checks the options before anything runs; throws UsageError for bad input.
  virtual void validate(const device::Device&, const RunOptions&) const {}
  /// Whether this is a plain sweep: its points are exactly the product of its non-fixed axes,
  /// each measured on its own by begin_sweep's Sweep (the runner expands the product:
  /// run_experiment). false: run() chooses its points (an adaptive search, or a procedure of
  /// its own); `gpuprobe list` says which.
  virtual bool is_sweep() const { return false; }
  /// A sweep's state for one run (open the device, allocate); nullptr when it cannot run here
  /// (it then recorded why in `result`, e.g. waived). Only called where is_sweep().
  virtual std::unique_ptr<Sweep> begin_sweep(Context& ctx, ExperimentResult& result) const;
  /// Measures: fills parameters, protocol, samples, statistics and curves. A sweep need not
  /// override it: by default it runs the product of the axes (run_sweep).
  virtual void run(Context& ctx, ExperimentResult& result) const;
  /// Concludes: turns result.samples into result.findings. Pure (no device access).
  virtual void analyze(ExperimentResult& result) const = 0;
};

class Registry {
 public:
  /// Every experiment gpuprobe knows, in the order characterize runs them.
  static const Registry& builtin();
  void add(std::unique_ptr<Experiment> e);
  const std::vector<std::unique_ptr<Experiment>>& all() const { return experiments_; }
  const Experiment* find(const std::string& id) const;
  /// Experiments whose id matches any of the globs (`*`, `?`); throws UsageError for a glob
  /// that matches nothing, suggesting the closest ids.
  std::vector<const Experiment*> select(const std::vector<std::string>& globs) const;
  /// Adds to `chosen` (in registry order) every experiment a chosen one requires, transitively;
  /// returns one line per added experiment: its id and the chosen ones that need it.
  std::vector<std::string> add_required(std::vector<const Experiment*>& chosen) const;

 private:
  /// The experiments of `chosen` in registry order (dependencies run first).
  std::vector<const Experiment*> in_registry_order(
      const std::vector<const Experiment*>& chosen) const;
  std::vector<std::unique_ptr<Experiment>> experiments_;
};

/// Runs a sweep: begin_sweep, run_point for each point of axis_values(ctx.options).product()
/// in order, finish.
void run_sweep(const Experiment& e, Context& ctx, ExperimentResult& result);
/// What the runner calls: run_sweep for a sweep, run() otherwise.
void run_experiment(const Experiment& e, Context& ctx, ExperimentResult& result);

/// Checks every --axis against the registry's experiments and their typed axes; throws
/// UsageError for an unknown experiment (suggesting the closest ids), axis or value.
void check_axis_overrides(const Registry& registry, const std::vector<AxisOverride>& overrides);

/// Waiver reasons shared by the families that need real or Hopper hardware.
inline constexpr const char* kNeedsSm90a = "needs sm_90a (Hopper)";
inline constexpr const char* kNeedsCudaGpu = "needs a CUDA GPU";

/// The waiver of an experiment the modelled GPU cannot run: `reason` on a modelled device.
std::optional<std::string> waive_on_model(const device::DeviceInfo& info,
                                          const std::string& reason);

/// The waiver of an sm_90a-only experiment: `hopper_reason` unless compute capability is 9.0
/// (this binary holds sm_90a code for 9.0 only), then `model_reason` on a modelled device.
std::optional<std::string> waive_unless_sm90a(const device::DeviceInfo& info,
                                              const std::string& hopper_reason,
                                              const std::string& model_reason);

/// Re-runs the analysis of one recorded experiment (an entry of result.json's "experiments")
/// on its samples; nullopt when it did not pass or gpuprobe no longer has it.
std::optional<ExperimentResult> replay_analysis(const nlohmann::json& recorded);

/// Glob match with * and ?.
bool glob_match(const std::string& pattern, const std::string& text);
/// Levenshtein distance, for suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace gpuprobe
