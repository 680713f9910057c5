#pragma once
// Typed parameter axes. An experiment declares its axes once (name, type, default values, unit,
// description); `list`, the result's parameters["axes"] and `--axis <experiment>.<axis>=v1,v2`
// all come from that declaration, and run() iterates the values resolved for this run.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe {

enum class AxisType { kInt, kNumber, kString, kBool };
std::string to_string(AxisType t);

struct Axis {
  std::string name;  ///< snake_case, no dots
  AxisType type = AxisType::kInt;
  std::vector<nlohmann::json> values;  ///< the defaults, in the order run() visits them
  std::string unit;                    ///< "" for a dimensionless or categorical axis
  std::string description;
  /// The values an override may name (kString: empty = the defaults; kInt / kNumber: empty =
  /// any value in [min, max]).
  std::vector<nlohmann::json> allowed;
  std::optional<double> min, max;
  /// false: the axis describes what run() does but run() does not take its values from here
  /// yet (--axis then refuses it). Empty `values`: the experiment chooses them at run time.
  bool overridable = true;
};

/// `a`, marked as not overridable (see Axis::overridable).
Axis fixed(Axis a);

/// Builders. A string axis allows exactly its defaults unless `allowed` says more.
Axis int_axis(std::string name, std::vector<std::int64_t> values, std::string unit,
              std::string description, std::optional<double> min = std::nullopt,
              std::optional<double> max = std::nullopt);
Axis number_axis(std::string name, std::vector<double> values, std::string unit,
                 std::string description, std::optional<double> min = std::nullopt,
                 std::optional<double> max = std::nullopt);
Axis string_axis(std::string name, std::vector<std::string> values, std::string description,
                 std::vector<std::string> allowed = {});
Axis bool_axis(std::string name, std::vector<bool> values, std::string description);

/// {"type", "values", "unit", "description"[, "allowed" | "min"/"max"]}.
nlohmann::json to_json(const Axis& a);
/// One line for `list`: "name (type, unit) = v1,v2,...: description".
std::string describe(const Axis& a);

/// What one `--axis <experiment>.<axis>=v1,v2` asked for (values still text).
struct AxisOverride {
  std::string experiment, axis;
  std::vector<std::string> values;
  /// The family option this override stands for ("--strides"; cli/option_axes.hpp), empty for
  /// an --axis. Errors name it; check_axis_overrides leaves it to the experiments that run.
  std::string option;
};
/// Parses the text of one --axis; throws UsageError naming the text when it is malformed.
AxisOverride parse_axis_override(const std::string& text);

/// One point of a sweep: one value for each non-fixed axis, as its body reads them.
class AxisPoint {
 public:
  AxisPoint() = default;
  AxisPoint(std::vector<std::string> names, std::vector<nlohmann::json> values);
  const nlohmann::json& at(const std::string& name) const;  ///< throws for an undeclared axis
  std::int64_t integer(const std::string& name) const { return at(name).get<std::int64_t>(); }
  int int32(const std::string& name) const { return at(name).get<int>(); }
  double number(const std::string& name) const { return at(name).get<double>(); }
  std::string string(const std::string& name) const { return at(name).get<std::string>(); }
  bool boolean(const std::string& name) const { return at(name).get<bool>(); }
  /// {axis: value}.
  nlohmann::json to_json() const;

 private:
  std::vector<std::string> names_;
  std::vector<nlohmann::json> values_;
};

/// The values of one experiment's axes for this run: the defaults, or what --axis gave.
class AxisValues {
 public:
  AxisValues() = default;
  AxisValues(std::vector<Axis> axes, std::vector<std::vector<nlohmann::json>> values,
             std::vector<bool> overridden);
  std::vector<std::int64_t> ints(const std::string& name) const;
  std::vector<int> int32s(const std::string& name) const;
  std::vector<double> numbers(const std::string& name) const;
  std::vector<std::string> strings(const std::string& name) const;
  std::vector<bool> bools(const std::string& name) const;
  /// Whether `value` (as the axis stores it) is among this run's values of `name`.
  bool contains(const std::string& name, const nlohmann::json& value) const;
  /// Whether --axis set `name` (the experiment may then prefer it over an older option).
  bool overridden(const std::string& name) const;
  /// {axis: [values]}, for result.parameters["axes"].
  nlohmann::json to_json() const;
  /// The product of the non-fixed axes, in run order: the first declared axis outermost, the
  /// last innermost, each axis's values in their order here (the defaults, or as --axis gave
  /// them). Fixed axes are not part of it (the experiment chooses those itself).
  std::vector<AxisPoint> product() const;
  /// How many points product() has, and how it is made ("op 4 x accumulators 16").
  std::size_t product_size() const;
  std::string product_text() const;

 private:
  std::size_t index(const std::string& name) const;
  std::vector<Axis> axes_;
  std::vector<std::vector<nlohmann::json>> values_;
  std::vector<bool> overridden_;
};

/// The axes of experiment `id` with the overrides that name it applied; throws UsageError for
/// an unknown axis or a value of the wrong type, out of range or not allowed.
AxisValues resolve_axes(const std::string& id, const std::vector<Axis>& axes,
                        const std::vector<AxisOverride>& overrides);

}  // namespace gpuprobe
