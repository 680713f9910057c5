#include "core/axis.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "core/error.hpp"
#include "core/text_input.hpp"

namespace gpuprobe {

using nlohmann::json;

std::string to_string(AxisType t) {
  switch (t) {
    case AxisType::kInt:
      return "int";
    case AxisType::kNumber:
      return "number";
    case AxisType::kString:
      return "string";
    case AxisType::kBool:
      return "bool";
  }
  return "?";
}

Axis int_axis(std::string name, std::vector<std::int64_t> values, std::string unit,
              std::string description, std::optional<double> min, std::optional<double> max) {
  Axis a{
      std::move(name), AxisType::kInt, {}, std::move(unit), std::move(description), {}, min, max};
  for (auto v : values) a.values.emplace_back(v);
  return a;
}

Axis number_axis(std::string name, std::vector<double> values, std::string unit,
                 std::string description, std::optional<double> min, std::optional<double> max) {
  Axis a{std::move(name),
         AxisType::kNumber,
         {},
         std::move(unit),
         std::move(description),
         {},
         min,
         max};
  for (auto v : values) a.values.emplace_back(v);
  return a;
}

Axis string_axis(std::string name, std::vector<std::string> values, std::string description,
                 std::vector<std::string> allowed) {
  Axis a{std::move(name), AxisType::kString, {}, "", std::move(description), {}, {}, {}};
  for (auto& v : values) a.values.emplace_back(v);
  for (auto& v : allowed) a.allowed.emplace_back(v);
  return a;
}

Axis bool_axis(std::string name, std::vector<bool> values, std::string description) {
  Axis a{std::move(name), AxisType::kBool, {}, "", std::move(description), {}, {}, {}};
  for (bool v : values) a.values.emplace_back(v);
  return a;
}

Axis fixed(Axis a) {
  a.overridable = false;
  return a;
}

json to_json(const Axis& a) {
  json j = {{"type", to_string(a.type)},
            {"values", a.values},
            {"unit", a.unit},
            {"description", a.description}};
  if (!a.allowed.empty()) j["allowed"] = a.allowed;
  if (a.min) j["min"] = *a.min;
  if (a.max) j["max"] = *a.max;
  if (!a.overridable) j["overridable"] = false;
  return j;
}

namespace {

std::string join(const std::vector<json>& values) {
  std::string s;
  for (const auto& v : values)
    s += (s.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
  return s;
}

const std::vector<json>& allowed_of(const Axis& a) {
  return a.allowed.empty() ? a.values : a.allowed;
}

/// `text` as a value of axis `a`; throws UsageError starting with `where` otherwise.
json parse_value(const Axis& a, const std::string& text, const std::string& where) {
  auto fail = [&](const std::string& why) {
    throw UsageError(where + ": " + text_input::quoted(text) + " " + why);
  };
  switch (a.type) {
    case AxisType::kInt:
    case AxisType::kNumber: {
      errno = 0;
      char* end = nullptr;
      const double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v))
        fail(std::string("is not a") + (a.type == AxisType::kInt ? "n integer" : " number"));
      if (a.type == AxisType::kInt && (v != std::floor(v) || std::fabs(v) > 9.0e15))
        fail("is not an integer");
      if (!a.allowed.empty() &&
          std::find_if(a.allowed.begin(), a.allowed.end(),
                       [&](const json& x) { return x.get<double>() == v; }) == a.allowed.end())
        fail("is not allowed; use " + join(a.allowed));
      if ((a.min && v < *a.min) || (a.max && v > *a.max)) {
        std::ostringstream range;
        range << "is out of range [" << (a.min ? json(*a.min).dump() : "-inf") << ", "
              << (a.max ? json(*a.max).dump() : "inf") << "]";
        fail(range.str());
      }
      return a.type == AxisType::kInt ? json(static_cast<std::int64_t>(v)) : json(v);
    }
    case AxisType::kBool:
      if (text == "true" || text == "1") return true;
      if (text == "false" || text == "0") return false;
      fail("is not a bool (true, false)");
      break;
    case AxisType::kString: {
      const auto& allowed = allowed_of(a);
      if (std::find(allowed.begin(), allowed.end(), json(text)) == allowed.end())
        fail("is not allowed; use " + join(allowed));
      return text;
    }
  }
  return nullptr;
}

}  // namespace

std::string describe(const Axis& a) {
  std::string s = a.name + " (" + to_string(a.type);
  if (!a.unit.empty()) s += ", " + a.unit;
  s += ")" + (a.values.empty() ? std::string() : " = " + join(a.values));
  if (!a.overridable) s += " [fixed]";
  if (!a.description.empty()) s += ": " + a.description;
  return s;
}

AxisOverride parse_axis_override(const std::string& text) {
  const auto eq = text.find('=');
  const auto dot = text.rfind('.', eq);
  if (eq == std::string::npos || dot == std::string::npos || dot == 0 || dot + 1 >= eq ||
      eq + 1 >= text.size())
    throw UsageError("--axis " + text_input::quoted(text) +
                     " is not <experiment>.<axis>=v1,v2,...");
  AxisOverride o{text.substr(0, dot), text.substr(dot + 1, eq - dot - 1), {}, {}};
  o.values = text_input::split_list(text.substr(eq + 1), "--axis " + text_input::quoted(text));
  return o;
}

AxisValues::AxisValues(std::vector<Axis> axes, std::vector<std::vector<json>> values,
                       std::vector<bool> overridden)
    : axes_(std::move(axes)), values_(std::move(values)), overridden_(std::move(overridden)) {}

std::size_t AxisValues::index(const std::string& name) const {
  for (std::size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].name == name) return i;
  throw std::logic_error("axis '" + name + "' is not declared");
}

std::vector<std::int64_t> AxisValues::ints(const std::string& name) const {
  std::vector<std::int64_t> v;
  for (const auto& x : values_[index(name)]) v.push_back(x.get<std::int64_t>());
  return v;
}

std::vector<int> AxisValues::int32s(const std::string& name) const {
  std::vector<int> v;
  for (const auto& x : values_[index(name)]) v.push_back(x.get<int>());
  return v;
}

std::vector<double> AxisValues::numbers(const std::string& name) const {
  std::vector<double> v;
  for (const auto& x : values_[index(name)]) v.push_back(x.get<double>());
  return v;
}

std::vector<std::string> AxisValues::strings(const std::string& name) const {
  std::vector<std::string> v;
  for (const auto& x : values_[index(name)]) v.push_back(x.get<std::string>());
  return v;
}

std::vector<bool> AxisValues::bools(const std::string& name) const {
  std::vector<bool> v;
  for (const auto& x : values_[index(name)]) v.push_back(x.get<bool>());
  return v;
}

bool AxisValues::contains(const std::string& name, const json& value) const {
  const auto& v = values_[index(name)];
  return std::find(v.begin(), v.end(), value) != v.end();
}

bool AxisValues::overridden(const std::string& name) const { return overridden_[index(name)]; }

json AxisValues::to_json() const {
  json j = json::object();
  for (std::size_t i = 0; i < axes_.size(); ++i) j[axes_[i].name] = values_[i];
  return j;
}

AxisPoint::AxisPoint(std::vector<std::string> names, std::vector<json> values)
    : names_(std::move(names)), values_(std::move(values)) {}

const json& AxisPoint::at(const std::string& name) const {
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return values_[i];
  throw std::logic_error("axis '" + name + "' is not a swept axis of this point");
}

json AxisPoint::to_json() const {
  json j = json::object();
  for (std::size_t i = 0; i < names_.size(); ++i) j[names_[i]] = values_[i];
  return j;
}

std::vector<AxisPoint> AxisValues::product() const {
  std::vector<std::size_t> swept;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].overridable) {
      swept.push_back(i);
      names.push_back(axes_[i].name);
    }
  std::vector<AxisPoint> points;
  if (swept.empty()) return points;
  for (auto i : swept)
    if (values_[i].empty()) return points;
  // An odometer over the swept axes, the last one turning fastest.
  std::vector<std::size_t> at(swept.size(), 0);
  while (true) {
    std::vector<json> values;
    for (std::size_t k = 0; k < swept.size(); ++k) values.push_back(values_[swept[k]][at[k]]);
    points.emplace_back(names, std::move(values));
    std::size_t k = swept.size();
    while (k > 0 && ++at[k - 1] == values_[swept[k - 1]].size()) at[--k] = 0;
    if (k == 0) return points;
  }
}

std::size_t AxisValues::product_size() const {
  std::size_t n = 1;
  bool any = false;
  for (std::size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].overridable) {
      n *= values_[i].size();
      any = true;
    }
  return any ? n : 0;
}

std::string AxisValues::product_text() const {
  std::string s;
  for (std::size_t i = 0; i < axes_.size(); ++i)
    if (axes_[i].overridable)
      s += (s.empty() ? "" : " x ") + axes_[i].name + " " + std::to_string(values_[i].size());
  return s;
}

AxisValues resolve_axes(const std::string& id, const std::vector<Axis>& axes,
                        const std::vector<AxisOverride>& overrides) {
  std::vector<std::vector<json>> values;
  std::vector<bool> overridden(axes.size(), false);
  for (const auto& a : axes) values.push_back(a.values);
  for (const auto& o : overrides) {
    if (o.experiment != id) continue;
    // An override from a family option names the option and the axis it reached.
    const std::string where = o.option.empty() ? "--axis " + id + "." + o.axis
                                               : o.option + " (" + id + "." + o.axis + ")";
    const auto it =
        std::find_if(axes.begin(), axes.end(), [&](const Axis& a) { return a.name == o.axis; });
    if (it == axes.end()) {
      std::string names;
      for (const auto& a : axes) names += (names.empty() ? "" : ", ") + a.name;
      throw UsageError("--axis: " + id + " has no axis " + text_input::quoted(o.axis) + "" +
                       (names.empty() ? std::string(" (it declares none)") : "; axes: " + names));
    }
    if (!it->overridable)
      throw UsageError("--axis: " + id + "." + o.axis +
                       " cannot be overridden (the experiment chooses its values itself)");
    const auto i = static_cast<std::size_t>(it - axes.begin());
    values[i].clear();
    for (const auto& text : o.values) {
      json v = parse_value(*it, text, where);
      if (std::find(values[i].begin(), values[i].end(), v) == values[i].end())
        values[i].push_back(std::move(v));
    }
    overridden[i] = true;
  }
  return AxisValues(axes, std::move(values), std::move(overridden));
}

}  // namespace gpuprobe
