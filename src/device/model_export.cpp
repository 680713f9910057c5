#include "device/model_export.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "core/error.hpp"
#include "core/finding_names.hpp"

namespace gpuprobe::device {
namespace {

using nlohmann::json;

template <typename T>
T need(const json& j, const char* key) {
  if (!j.contains(key)) throw UsageError(std::string("model file: missing key '") + key + "'");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw UsageError(std::string("model file: key '") + key + "' has the wrong type");
  }
}

std::uint64_t round_down(double bytes, std::uint64_t unit) {
  const auto b = static_cast<std::uint64_t>(std::max(0.0, bytes));
  return b / unit * unit;
}

}  // namespace

ModelConfig model_config_from_json(const json& j) {
  ModelConfig c;
  c.name = need<std::string>(j, "name");
  const auto cc = need<std::string>(j, "compute_capability");
  const auto dot = cc.find('.');
  if (dot == std::string::npos) throw UsageError("model file: compute_capability must be like 9.0");
  c.cc_major = std::stoi(cc.substr(0, dot));
  c.cc_minor = std::stoi(cc.substr(dot + 1));
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
  c.noise_relative_sigma = j.value("noise_relative_sigma", 0.0);
  c.seed = j.value("seed", std::uint64_t{1});
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
  const auto cc = d.value("compute_capability", std::string("0.0"));
  c.cc_major = std::stoi(cc.substr(0, cc.find('.')));
  c.cc_minor = std::stoi(cc.substr(cc.find('.') + 1));
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
  const double l1_default = get(finding::kL1Capacity);
  const double l1_max =
      f.count(finding::kL1CapacityMaxL1) ? f[finding::kL1CapacityMaxL1] : l1_default;
  const double l1_min =
      f.count(finding::kL1CapacityCarveout100) ? f[finding::kL1CapacityCarveout100] : 0;
  c.l1_shared_unified_bytes = round_down(std::max(l1_max, l1_default), unit);
  c.shared_per_sm_bytes = round_down(static_cast<double>(c.l1_shared_unified_bytes) - l1_min, unit);
  c.default_shared_carveout_bytes =
      c.l1_shared_unified_bytes -
      std::min<std::uint64_t>(round_down(l1_default, unit), c.l1_shared_unified_bytes);
  c.l1 = {0, kLine, kL1Ways, get(finding::kL1HitLatency)};
  c.l2 = {round_down(get(finding::kL2Capacity), kLine * kL2Ways), kLine, kL2Ways,
          get(finding::kL2HitLatency)};
  c.l2_partitioned = f.count(finding::kL2NearCapacity) && f.count(finding::kL2FarHitLatency);
  if (c.l2_partitioned) {
    c.l2_near = {round_down(f[finding::kL2NearCapacity], kLine * kL2Ways), kLine, kL2Ways,
                 get(finding::kL2HitLatency)};
    c.l2_far_hit_latency_cycles = f[finding::kL2FarHitLatency];
  }
  c.dram_latency_cycles = get(finding::kDramLatency);
  c.shared_latency_cycles = get(finding::kSharedLatency);
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
