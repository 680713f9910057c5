#include "device/model_export.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>

#include "core/error.hpp"
#include "core/json_input.hpp"

namespace gpuprobe::device {
namespace {

using nlohmann::json;

// Typed reads through json_input::Reader, so a model file of the wrong shape fails with one line
// naming the key and what it holds ("model file: l1_line_bytes: expected a non-negative integer,
// got -128"); what the values mean is checked afterwards by validate().
template <typename T>
T need(const json& j, const char* key) {
  const auto r = json_input::Reader(j, "model file").at(key);
  if constexpr (std::is_same_v<T, std::string>) {
    return r.string();
  } else if constexpr (std::is_same_v<T, bool>) {
    return r.boolean();
  } else if constexpr (std::is_floating_point_v<T>) {
    return r.number();
  } else if constexpr (std::is_unsigned_v<T>) {
    const std::uint64_t v = r.unsigned_integer();
    if (v > std::numeric_limits<T>::max()) r.fail("out of range: " + std::to_string(v));
    return static_cast<T>(v);
  } else {
    const std::int64_t v = r.integer();
    if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
      r.fail("out of range: " + std::to_string(v));
    return static_cast<T>(v);
  }
}

/// "9.0" -> {9, 0}; UsageError naming `where` for anything else.
std::pair<int, int> compute_capability(const std::string& cc, const std::string& where) {
  const auto dot = cc.find('.');
  const auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 3 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (dot == std::string::npos || !digits(cc.substr(0, dot)) || !digits(cc.substr(dot + 1)))
    throw UsageError(where + ": expected a compute capability like \"9.0\", got \"" + cc + "\"");
  return {std::stoi(cc.substr(0, dot)), std::stoi(cc.substr(dot + 1))};
}

std::uint64_t round_down(double bytes, std::uint64_t unit) {
  const auto b = static_cast<std::uint64_t>(std::max(0.0, bytes));
  return b / unit * unit;
}

}  // namespace

ModelConfig model_config_from_json(const json& j) {
  json_input::Reader(j, "model file").object();
  ModelConfig c;
  c.name = need<std::string>(j, "name");
  std::tie(c.cc_major, c.cc_minor) = compute_capability(
      need<std::string>(j, "compute_capability"), "model file: compute_capability");
  c.sm_count = need<int>(j, "sm_count");
  c.sm_clock_mhz = need<double>(j, "sm_clock_mhz");
  c.mem_clock_mhz = need<double>(j, "mem_clock_mhz");
  c.mem_bus_width_bits = need<int>(j, "mem_bus_width_bits");
  c.global_mem_bytes = need<std::uint64_t>(j, "global_mem_bytes");
  c.l1_shared_unified_bytes = need<std::uint64_t>(j, "l1_shared_unified_bytes");
  c.default_shared_carveout_bytes = need<std::uint64_t>(j, "default_shared_carveout_bytes");
  c.shared_per_sm_bytes = need<std::uint64_t>(j, "shared_per_sm_bytes");
  c.l1 = {0, need<std::uint32_t>(j, "l1_line_bytes"), need<std::uint32_t>(j, "l1_ways"),
          need<double>(j, "l1_hit_latency_cycles")};
  c.l2_partitioned = need<bool>(j, "l2_partitioned");
  c.l2_near = {need<std::uint64_t>(j, "l2_near_capacity_bytes"),
               need<std::uint32_t>(j, "l2_near_line_bytes"), need<std::uint32_t>(j, "l2_near_ways"),
               need<double>(j, "l2_near_hit_latency_cycles")};
  c.l2 = {need<std::uint64_t>(j, "l2_capacity_bytes"), need<std::uint32_t>(j, "l2_line_bytes"),
          need<std::uint32_t>(j, "l2_ways"), need<double>(j, "l2_hit_latency_cycles")};
  c.l2_far_hit_latency_cycles = need<double>(j, "l2_far_hit_latency_cycles");
  c.dram_latency_cycles = need<double>(j, "dram_latency_cycles");
  c.shared_latency_cycles = need<double>(j, "shared_latency_cycles");
  c.noise_relative_sigma = j.contains("noise_relative_sigma")
                               ? need<double>(j, "noise_relative_sigma")
                               : 0.0;
  c.seed = j.contains("seed") ? need<std::uint64_t>(j, "seed") : std::uint64_t{1};
  validate(c);
  return c;
}

json model_from_result(const json& result) {
  std::map<std::string, double> f;
  for (const auto& e : result.at("experiments"))
    for (const auto& x : e.value("findings", json::array()))
      f[x.value("name", "")] = x.value("value", 0.0);
  auto get = [&](const std::string& name) {
    auto it = f.find(name);
    if (it == f.end())
      throw UsageError("the result has no '" + name +
                       "' finding; export needs latency.sweep and latency.shared");
    return it->second;
  };
  const auto& d = result.at("device");
  constexpr std::uint32_t kLine = 128, kL1Ways = 4, kL2Ways = 16;
  ModelConfig c;
  c.name = "measured-" + d.value("name", std::string("gpu"));
  for (auto& ch : c.name)
    if (ch == ' ') ch = '-';
  std::tie(c.cc_major, c.cc_minor) =
      compute_capability(d.value("compute_capability", std::string("0.0")),
                         "result: device.compute_capability");
  c.sm_count = d.value("sm_count", 1);
  // Cycles are the unit of every latency; the clock only turns them into ns.
  c.sm_clock_mhz = d.value("sm_clock_max_mhz", 1000.0);
  c.mem_clock_mhz = d.value("mem_clock_max_mhz", 1000.0);
  c.mem_bus_width_bits = d.value("mem_bus_width_bits", 0);
  c.global_mem_bytes = d.value("global_memory_bytes", std::uint64_t{1} << 34);
  // L1: the largest capacity (max-L1 carveout, else the default) is the unified size; the
  // smallest (all shared) fixes how much the carveout can take, so the model's capacity at 0%
  // and 100% shared matches what was measured, and lies on a line between them.
  const std::uint64_t unit = kLine * kL1Ways;
  const double l1_default = get("l1.capacity");
  const double l1_max = f.count("l1.capacity.max_l1") ? f["l1.capacity.max_l1"] : l1_default;
  const double l1_min = f.count("l1.capacity.carveout_100") ? f["l1.capacity.carveout_100"] : 0;
  c.l1_shared_unified_bytes = round_down(std::max(l1_max, l1_default), unit);
  c.shared_per_sm_bytes = round_down(static_cast<double>(c.l1_shared_unified_bytes) - l1_min, unit);
  c.default_shared_carveout_bytes =
      c.l1_shared_unified_bytes -
      std::min<std::uint64_t>(round_down(l1_default, unit), c.l1_shared_unified_bytes);
  c.l1 = {0, kLine, kL1Ways, get("l1.hit_latency")};
  c.l2 = {round_down(get("l2.capacity"), kLine * kL2Ways), kLine, kL2Ways, get("l2.hit_latency")};
  c.l2_partitioned = f.count("l2.near_capacity") && f.count("l2.far_hit_latency");
  if (c.l2_partitioned) {
    c.l2_near = {round_down(f["l2.near_capacity"], kLine * kL2Ways), kLine, kL2Ways,
                 get("l2.hit_latency")};
    c.l2_far_hit_latency_cycles = f["l2.far_hit_latency"];
  }
  c.dram_latency_cycles = get("dram.latency");
  c.shared_latency_cycles = get("shared.latency");
  validate(c);
  json out = to_json(c);
  out["provenance"] = {
      {"from", "gpuprobe result"},
      {"device_uuid", d.value("uuid", std::string(""))},
      {"result_git_sha", result.value("tool", json::object()).value("git_sha", "")},
      {"result_started_utc", result.value("started_utc", std::string(""))}};
  out["not_measured"] = {"l1_ways (4 assumed)", "l2_ways (16 assumed)",
                         "line sizes (128 B assumed)", "replacement policy (LRU modelled)",
                         "the L1 capacity between carveouts (linear between 0% and 100%)"};
  return out;
}

}  // namespace gpuprobe::device
