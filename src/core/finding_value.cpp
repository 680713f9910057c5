#include "core/finding_value.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "core/finding_names.hpp"

namespace gpuprobe {
namespace {

bool component_match(const std::string& pattern, const std::string& name) {
  // '*' stands for exactly one dotted component.
  std::size_t p = 0, n = 0;
  while (p < pattern.size() && n < name.size()) {
    if (pattern[p] == '*') {
      while (n < name.size() && name[n] != '.') ++n;
      ++p;
      continue;
    }
    if (pattern[p] != name[n]) return false;
    ++p;
    ++n;
  }
  return p == pattern.size() && n == name.size();
}

std::string trim_zeros(std::string s) {
  if (s.find('.') == std::string::npos || s.find('e') != std::string::npos) return s;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

std::string hex_of(double v) {
  if (!std::isfinite(v) || v < 0 || v >= 18446744073709551616.0) return format_number(v);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx",
                static_cast<unsigned long long>(static_cast<std::uint64_t>(v)));
  return buf;
}

double number_or(const nlohmann::json& j, const char* key, double fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string string_or(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

std::string to_string(ValueKind k) {
  switch (k) {
    case ValueKind::kBool:
      return "bool";
    case ValueKind::kCategory:
      return "category";
    case ValueKind::kMask:
      return "mask";
    case ValueKind::kNumber:
      break;
  }
  return "number";
}

const FindingKey* find_key(const std::string& name) {
  static const FindingKey* const kKeys[] = {&finding_key::kReplacement, &finding_key::kDataVictim,
                                            &finding_key::kReplication, &finding_key::kHashMask};
  for (const FindingKey* k : kKeys)
    if (component_match(k->name, name)) return k;
  for (const FindingKey* k : finding::kKeys)
    if (name == k->name) return k;
  return nullptr;
}

std::string format_number(double value, double standard_error) {
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  char buf[64];
  const double mag = std::fabs(value);
  if (value == std::round(value) && mag < 1e9) {
    std::snprintf(buf, sizeof(buf), "%.0f", value);
    return buf;
  }
  // A standard error far below the value's own digits (float noise) says nothing.
  if (standard_error > mag * 1e-9 && std::isfinite(standard_error) && mag < 1e9) {
    // Two significant digits of the standard error fix the last digit shown.
    const int decimals = 1 - static_cast<int>(std::floor(std::log10(standard_error)));
    if (decimals <= 6 && (mag >= 1e-3 || decimals <= 3)) {
      std::snprintf(buf, sizeof(buf), "%.*f", std::max(0, decimals), value);
      return buf;
    }
    // Too small for fixed digits: scientific, with as many digits as the error supports.
    const int exponent = mag > 0 ? static_cast<int>(std::floor(std::log10(mag))) : 0;
    const int digits = std::clamp(exponent + decimals, 0, 9);
    std::snprintf(buf, sizeof(buf), "%.*e", digits, value);
    return buf;
  }
  if (mag >= 1e6 || (mag > 0 && mag < 1e-3)) {
    std::snprintf(buf, sizeof(buf), "%.3e", value);
    std::string s = buf;
    const auto e = s.find('e');
    std::string mant = s.substr(0, e), ex = s.substr(e);
    if (mant.find('.') != std::string::npos) {
      while (mant.back() == '0') mant.pop_back();
      if (mant.back() == '.') mant.pop_back();
    }
    return mant + ex;
  }
  // Four significant digits, but never fewer than one decimal above 1000 (4582.4 GB/s).
  const int int_digits = mag >= 1 ? static_cast<int>(std::floor(std::log10(mag))) + 1 : 0;
  int decimals = std::max(1, 4 - int_digits);
  if (mag < 1) decimals = 4 - static_cast<int>(std::floor(std::log10(mag))) - 1;
  std::snprintf(buf, sizeof(buf), "%.*f", std::min(decimals, 9), value);
  return trim_zeros(buf);
}

std::pair<std::string, std::string> format_quantity(double value, const std::string& unit,
                                                    double standard_error) {
  if (unit == "bytes" && std::isfinite(value) && std::fabs(value) >= 1024) {
    static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    double scaled = value / 1024, se = standard_error / 1024;
    int i = 0;
    while (std::fabs(scaled) >= 1024 && i < 3) {
      scaled /= 1024;
      se /= 1024;
      ++i;
    }
    char buf[48];
    std::snprintf(buf, sizeof(buf), "%.2f", scaled);
    return {se > 0 ? format_number(scaled, se) : trim_zeros(buf), kUnits[i]};
  }
  if (unit == "bytes") return {format_number(value, standard_error), "B"};
  return {format_number(value, standard_error), unit};
}

TypedValue typed_value(const nlohmann::json& f) {
  TypedValue t;
  const std::string name = string_or(f, "name"), unit = string_or(f, "unit");
  const double v = number_or(f, "value", std::nan(""));
  const FindingKey* key = find_key(name);
  t.kind = key               ? key->kind
           : unit == "bool"  ? ValueKind::kBool
           : unit == "mask"  ? ValueKind::kMask
           : unit == "class" ? ValueKind::kCategory
                             : ValueKind::kNumber;
  switch (t.kind) {
    case ValueKind::kBool:
      if (!std::isfinite(v)) {
        t.text = "-";
        return t;
      }
      t.label = v != 0 ? "true" : "false";
      t.text = v != 0 ? "yes" : "no";
      return t;
    case ValueKind::kMask: {
      const std::string hex = string_or(f, "mask_hex");
      t.text = t.label = hex.empty() ? hex_of(v) : hex;
      return t;
    }
    case ValueKind::kCategory: {
      // The finding's own label (policy / victim) wins: a tie names its classes there.
      std::string label = string_or(f, "policy");
      if (label.empty()) label = string_or(f, "victim");
      if (key)
        for (std::size_t i = 0; i < key->label_count; ++i) {
          const CategoryLabel& c = key->labels[i];
          if ((label.empty() && std::isfinite(v) && v == static_cast<double>(c.code)) ||
              label == c.label) {
            t.label = c.label;
            t.text = c.text;
            return t;
          }
        }
      t.label = label.empty() ? format_number(v) : label;
      t.text = t.label;
      return t;
    }
    case ValueKind::kNumber:
      break;
  }
  auto [text, shown_unit] = format_quantity(v, unit, number_or(f, "standard_error", 0));
  t.text = text;
  t.unit = shown_unit;
  return t;
}

nlohmann::json typed_json(const TypedValue& v) {
  nlohmann::json j = {{"kind", to_string(v.kind)}, {"text", v.text}};
  if (!v.label.empty()) j["label"] = v.label;
  if (!v.unit.empty()) j["unit"] = v.unit;
  return j;
}

std::string display_text(const nlohmann::json& finding) {
  const TypedValue t = typed_value(finding);
  if (!t.is_number() || t.unit.empty()) return t.text;
  return t.text + " " + t.unit;
}

}  // namespace gpuprobe
