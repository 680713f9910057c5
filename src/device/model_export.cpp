#include "device/model_export.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>

#include "core/error.hpp"
#include "core/finding_names.hpp"
#include "core/json_input.hpp"
#include "core/text_input.hpp"

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

/// An optional integer field that must be >= 0 (a negative value is refused by name, not
/// wrapped around by an unsigned conversion).
std::uint64_t optional_unsigned(const json& j, const char* key, std::uint64_t fallback) {
  if (!j.contains(key)) return fallback;
  const auto& v = j.at(key);
  if (!v.is_number_integer() ||
      (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() < 0))
    throw UsageError(std::string("model file: '") + key + "' = " + v.dump() +
                     " is not allowed; allowed: an integer >= 0");
  return v.get<std::uint64_t>();
}

/// A required integer field that must be >= 0 (see optional_unsigned).
std::uint64_t need_unsigned(const json& j, const char* key) {
  if (!j.contains(key)) throw UsageError(std::string("model file: missing key '") + key + "'");
  return optional_unsigned(j, key, 0);
}

std::vector<std::uint64_t> masks(const json& j, const char* key) {
  std::vector<std::uint64_t> out;
  if (!j.contains(key)) return out;
  if (!j.at(key).is_array())
    throw UsageError(std::string("model file: '") + key + "' must be an array of integers");
  for (const auto& m : j.at(key)) {
    if (!m.is_number_unsigned())
      throw UsageError(std::string("model file: '") + key + "' holds " + m.dump() +
                       "; allowed: integers >= 0");
    out.push_back(m.get<std::uint64_t>());
  }
  return out;
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
  std::tie(c.cc_major, c.cc_minor) = compute_capability(need<std::string>(j, "compute_capability"),
                                                        "model file: compute_capability");
  c.sm_count = need<int>(j, "sm_count");
  c.sm_clock_mhz = need<double>(j, "sm_clock_mhz");
  c.mem_clock_mhz = need<double>(j, "mem_clock_mhz");
  c.mem_bus_width_bits = need<int>(j, "mem_bus_width_bits");
  c.global_mem_bytes = need<std::uint64_t>(j, "global_mem_bytes");
  c.l1_shared_unified_bytes = need<std::uint64_t>(j, "l1_shared_unified_bytes");
  c.default_shared_carveout_bytes = need<std::uint64_t>(j, "default_shared_carveout_bytes");
  c.shared_per_sm_bytes = need<std::uint64_t>(j, "shared_per_sm_bytes");
  const auto u32 = [&](const char* key) {
    const std::uint64_t v = need_unsigned(j, key);
    if (v > 0xffffffffu) throw UsageError(std::string("model file: '") + key + "' is too large");
    return static_cast<std::uint32_t>(v);
  };
  c.l1 = {0, u32("l1_line_bytes"), u32("l1_ways"), need<double>(j, "l1_hit_latency_cycles")};
  c.l2_partitioned = need<bool>(j, "l2_partitioned");
  c.l2_near = {need_unsigned(j, "l2_near_capacity_bytes"), u32("l2_near_line_bytes"),
               u32("l2_near_ways"), need<double>(j, "l2_near_hit_latency_cycles")};
  c.l2 = {need_unsigned(j, "l2_capacity_bytes"), u32("l2_line_bytes"), u32("l2_ways"),
          need<double>(j, "l2_hit_latency_cycles")};
  // The structural fields (run_sequence); absent in model files written before them.
  c.l1.policy =
      parse_replacement(j.contains("l1_policy") ? need<std::string>(j, "l1_policy") : "lru");
  c.l2.policy =
      parse_replacement(j.contains("l2_policy") ? need<std::string>(j, "l2_policy") : "lru");
  c.l1.sector_bytes = static_cast<std::uint32_t>(optional_unsigned(j, "l1_sector_bytes", 0));
  c.l2.sector_bytes = static_cast<std::uint32_t>(optional_unsigned(j, "l2_sector_bytes", 0));
  c.l1.set_hash_masks = masks(j, "l1_set_hash_masks");
  c.l2.set_hash_masks = masks(j, "l2_set_hash_masks");
  c.l1_tag_bytes = optional_unsigned(j, "l1_tag_bytes", 0);
  c.persisting.max_set_aside_bytes = optional_unsigned(j, "l2_persisting_max_set_aside_bytes", 0);
  c.persisting.max_window_bytes = optional_unsigned(j, "l2_access_policy_max_window_bytes", 0);
  c.persisting.evict_last_ways_unreserved = static_cast<int>(
      std::min<std::uint64_t>(optional_unsigned(j, "l2_evict_last_ways_unreserved", 0), 1u << 20));
  if (j.contains("l2_discard_writes_back"))
    c.persisting.discard_writes_back = need<bool>(j, "l2_discard_writes_back");
  if (j.contains("l2_persisting_byte_budget"))
    c.persisting.byte_budget = need<bool>(j, "l2_persisting_byte_budget");
  if (j.contains("l2_insertion"))
    c.l2_insertion = parse_insertion(need<std::string>(j, "l2_insertion"));
  c.l2_bimodal_throttle = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(optional_unsigned(j, "l2_bimodal_throttle", 32), 1u << 20));
  if (j.contains("l1_data_victim"))
    c.l1_data_victim = parse_data_victim(need<std::string>(j, "l1_data_victim"));
  for (auto [key, cache] : {std::pair{"l1_set_index", &c.l1}, std::pair{"l2_set_index", &c.l2}}) {
    if (!j.contains(key)) continue;
    const std::string v = need<std::string>(j, key);
    if (v != "modulo" && v != "scrambled")
      throw UsageError(std::string("model file: '") + key + "' is '" + v +
                       "'; allowed: modulo, scrambled");
    cache->scrambled_index = v == "scrambled";
  }
  c.l2.placement_unit_bytes = optional_unsigned(j, "l2_placement_unit_bytes", 0);
  c.l2_partitions = static_cast<int>(optional_unsigned(j, "l2_partitions", 0));
  c.l2_partition_masks = masks(j, "l2_partition_masks");
  c.l2_replication = j.contains("l2_replication") ? need<bool>(j, "l2_replication") : true;
  if (j.contains("sm_partition"))
    for (const auto& p : masks(j, "sm_partition")) c.sm_partition.push_back(static_cast<int>(p));
  if (j.contains("tlb")) {
    if (!j.at("tlb").is_array()) throw UsageError("model file: 'tlb' must be an array");
    for (const auto& t : j.at("tlb"))
      c.tlb.push_back({need_unsigned(t, "entries"), need_unsigned(t, "page_bytes"),
                       static_cast<std::uint32_t>(optional_unsigned(t, "ways", 0)),
                       need<double>(t, "miss_penalty_cycles")});
  }
  c.l2_far_hit_latency_cycles = need<double>(j, "l2_far_hit_latency_cycles");
  c.dram_latency_cycles = need<double>(j, "dram_latency_cycles");
  if (j.contains("dram_near_home_latency_cycles"))
    c.dram_near_home_latency_cycles = need<double>(j, "dram_near_home_latency_cycles");
  if (j.contains("dram_far_home_latency_cycles"))
    c.dram_far_home_latency_cycles = need<double>(j, "dram_far_home_latency_cycles");
  if (j.contains("chase_structural")) c.chase_structural = need<bool>(j, "chase_structural");
  c.shared_latency_cycles = need<double>(j, "shared_latency_cycles");
  c.noise_relative_sigma =
      j.contains("noise_relative_sigma") ? need<double>(j, "noise_relative_sigma") : 0.0;
  c.seed = j.contains("seed") ? need<std::uint64_t>(j, "seed") : std::uint64_t{1};
  validate(c);
  return c;
}

namespace {

/// The findings of a result that the model is built from: values and extra fields by name.
struct ResultFindings {
  std::map<std::string, double> values;
  std::map<std::string, json> extras;

  explicit ResultFindings(const json& result) {
    for (const auto& e : result.at("experiments"))
      for (const auto& x : e.value("findings", json::array())) {
        values[x.value("name", "")] = x.value("value", 0.0);
        // result.json writes a finding's extra fields beside its name and value (a Finding
        // converted in memory keeps them under "extra").
        extras[x.value("name", "")] = x.contains("extra") ? x.at("extra") : x;
      }
  }
  bool has(const std::string& name) const { return values.count(name) > 0; }
  double at(const std::string& name) const { return values.at(name); }
  /// A finding the model cannot do without.
  double need(const std::string& name) const {
    auto it = values.find(name);
    if (it == values.end())
      throw UsageError("the result has no '" + name +
                       "' finding; export needs latency.sweep and latency.shared");
    return it->second;
  }
  /// A positive measured count or size, else `fallback` (listed under not_measured).
  std::uint32_t u32_or(const std::string& name, std::uint32_t fallback) const {
    auto it = values.find(name);
    return it != values.end() && it->second > 0 ? static_cast<std::uint32_t>(it->second) : fallback;
  }
  /// The string field `field` of a finding's extra fields; nothing when absent or no string.
  std::optional<std::string> extra_text(const std::string& name, const char* field) const {
    const auto it = extras.find(name);
    if (it == extras.end() || !it->second.contains(field) || !it->second.at(field).is_string())
      return std::nullopt;
    return it->second.at(field).get<std::string>();
  }
};

/// Line sizes and ways: measured (cache.*.line_size, cache.*.ways) or assumed.
struct Geometry {
  std::uint32_t l1_line, l2_line, l1_ways, l2_ways;
  explicit Geometry(const ResultFindings& f)
      : l1_line(f.u32_or(finding::kCacheL1LineSize, 128)),
        l2_line(f.u32_or(finding::kCacheL2LineSize, 128)),
        l1_ways(f.u32_or(finding::kCacheL1Ways, 4)),
        l2_ways(f.u32_or(finding::kCacheL2Ways, 16)) {}
};

/// The device's name, compute capability, SM count, clocks and memory from result.device.
void set_device(ModelConfig& c, const json& d) {
  c.name = "measured-" + d.value("name", std::string("gpu"));
  for (auto& ch : c.name)
    if (ch == ' ') ch = '-';
  std::tie(c.cc_major, c.cc_minor) = compute_capability(
      d.value("compute_capability", std::string("0.0")), "result: device.compute_capability");
  c.sm_count = d.value("sm_count", 1);
  // Cycles are the unit of every latency; the clock only turns them into ns.
  c.sm_clock_mhz = d.value("sm_clock_max_mhz", 1000.0);
  c.mem_clock_mhz = d.value("mem_clock_max_mhz", 1000.0);
  c.mem_bus_width_bits = d.value("mem_bus_width_bits", 0);
  c.global_mem_bytes = d.value("global_memory_bytes", std::uint64_t{1} << 34);
}

/// The L1 and the unified L1/shared storage. The largest capacity (max-L1 carveout, else the
/// default) is the unified size; the smallest (all shared) fixes how much the carveout can
/// take, so the model's capacity at 0% and 100% shared matches what was measured, and lies on
/// a line between them.
void set_l1(ModelConfig& c, const ResultFindings& f, const Geometry& g) {
  const std::uint64_t unit = g.l1_line * g.l1_ways;
  const double l1_default = f.need(finding::kL1Capacity);
  const double l1_max =
      f.has(finding::kL1CapacityMaxL1) ? f.at(finding::kL1CapacityMaxL1) : l1_default;
  const double l1_min =
      f.has(finding::kL1CapacityCarveout100) ? f.at(finding::kL1CapacityCarveout100) : 0;
  c.l1_shared_unified_bytes = round_down(std::max(l1_max, l1_default), unit);
  c.shared_per_sm_bytes = round_down(static_cast<double>(c.l1_shared_unified_bytes) - l1_min, unit);
  c.default_shared_carveout_bytes =
      c.l1_shared_unified_bytes -
      std::min<std::uint64_t>(round_down(l1_default, unit), c.l1_shared_unified_bytes);
  c.l1 = {0, g.l1_line, g.l1_ways, f.need(finding::kL1HitLatency)};
}

/// The L2, and its near partition where both its capacity and a far-hit latency were measured;
/// returns the unit the L2's capacity is a multiple of.
std::uint64_t set_l2(ModelConfig& c, const ResultFindings& f, const Geometry& g) {
  // The far-hit latency: cache.l2.far_hit's l2.far_hit_latency; results from before it have
  // only latency.sweep's region between the knees (l2.mixed_latency, once also named
  // l2.far_hit_latency).
  const FindingKey& far =
      f.has(finding::kL2FarHitLatency) ? finding::kL2FarHitLatency : finding::kL2MixedLatency;
  c.l2_partitioned = f.has(finding::kL2NearCapacity) && f.has(far);
  // With two partitions the whole L2 must split into two equal partitions of whole sets.
  const std::uint64_t l2_unit = std::uint64_t{g.l2_line} * g.l2_ways * (c.l2_partitioned ? 2 : 1);
  c.l2 = {round_down(f.need(finding::kL2Capacity), l2_unit), g.l2_line, g.l2_ways,
          f.need(finding::kL2HitLatency)};
  if (c.l2_partitioned) {
    c.l2_near = {round_down(f.at(finding::kL2NearCapacity), std::uint64_t{g.l2_line} * g.l2_ways),
                 g.l2_line, g.l2_ways, f.need(finding::kL2HitLatency)};
    c.l2_far_hit_latency_cycles = f.at(far);
  }
  return l2_unit;
}

/// The replacement class a cache.*.replacement finding names; LRU when none.
Replacement policy_of(const ResultFindings& f, const std::string& name, std::uint32_t ways) {
  auto it = f.extras.find(name);
  if (it == f.extras.end() || !it->second.contains("policy")) return Replacement::kLru;
  const std::string p = it->second["policy"];
  if (p == "lru" || p == "fifo" || p == "tree_plru" || p == "random") return parse_replacement(p);
  // The eviction sweeps' tie excludes LRU and FIFO: one of the two it leaves (tree-PLRU where
  // the ways allow a tree), named under not_measured.
  if (p == "random_or_tree_plru")
    return ways <= 32 && (ways & (ways - 1)) == 0 ? Replacement::kTreePlru : Replacement::kRandom;
  return Replacement::kLru;  // "none" or another tie: the chase's LRU
}

/// What the result said about the L1's tags and its data victim.
struct L1Tags {
  bool tags_measured = false, victim_measured = false, victim_none = false;
};

/// The L1's tags as measured (cache.l1.tag_sets: the XOR hash's masks): when they name more
/// lines than the L1 holds, the model's L1 is decoupled (tags apart from lines), with the
/// measured data victim (cache.l1.data_victim).
L1Tags set_l1_tags(ModelConfig& c, const ResultFindings& f, const Geometry& g) {
  L1Tags t;
  if (auto it = f.extras.find(finding::kCacheL1TagSets);
      it != f.extras.end() && f.has(finding::kCacheL1TagSets)) {
    const json& e = it->second;
    std::vector<std::uint64_t> m;
    if (e.contains("masks") && e["masks"].is_array())
      for (const auto& x : e["masks"])
        if (x.is_number_unsigned()) m.push_back(x.get<std::uint64_t>());
    const double sets_value = f.at(finding::kCacheL1TagSets);
    const bool sane = !m.empty() && m.size() < 32 && std::isfinite(sets_value) &&
                      sets_value == std::ldexp(1.0, static_cast<int>(m.size()));
    const std::uint64_t sets = sane ? std::uint64_t{1} << m.size() : 0;
    const std::uint64_t tags = sets * g.l1_line * g.l1_ways;
    if (sane && tags >= l1_capacity_bytes(c, 0)) {
      c.l1.set_hash_masks = m;
      c.l1_tag_bytes = tags;
      t.tags_measured = true;
    }
  }
  if (auto it = f.extras.find(finding::kCacheL1DataVictim);
      t.tags_measured && it != f.extras.end()) {
    const std::string v = it->second.value("victim", std::string());
    if (const auto dv = find_data_victim(v)) {
      c.l1_data_victim = *dv;
      t.victim_measured = true;
    }
    t.victim_none = v == "none";
  }
  return t;
}

/// The L2's home hash (l2.partition.hash_mask) and the TLB levels (tlb.l<n>.*).
void set_partition_mask_and_tlb(ModelConfig& c, const ResultFindings& f) {
  if (f.has(finding::kL2PartitionHashMask) && f.at(finding::kL2PartitionHashMask) > 0)
    c.l2_partition_masks = {static_cast<std::uint64_t>(f.at(finding::kL2PartitionHashMask))};
  for (int level = 1; level <= 4; ++level) {
    const std::string n = "tlb.l" + std::to_string(level);
    if (!f.has(n + ".entries") || !f.has(finding::kTlbPageSize)) break;
    c.tlb.push_back({static_cast<std::uint64_t>(f.at(n + ".entries")),
                     static_cast<std::uint64_t>(f.at(finding::kTlbPageSize)), 0,
                     std::max(0.0, f.has(n + ".miss_penalty") ? f.at(n + ".miss_penalty") : 0.0)});
  }
}

/// Two partitions with a measured home hash and replication: the chase walks the partitions
/// themselves (home lines and copies in the SM's partition, far-homed lines in the other), and
/// a miss costs the DRAM latency of its home where cache.l2.far_hit measured both.
struct TwoSides {
  bool modelled = false, l2_from_replicas = false;
};
TwoSides set_two_sides(ModelConfig& c, const ResultFindings& f, std::uint64_t l2_unit) {
  TwoSides t;
  t.modelled = c.l2_partitioned && !c.l2_partition_masks.empty() &&
               f.has(finding_key::kReplication) && f.has(finding::kL2FarHitLatency);
  if (!t.modelled) return t;
  c.l2_partitions = 2;
  c.l2_replication = f.at(finding_key::kReplication) > 0.5;
  c.chase_structural = true;
  // A partition's capacity as cache.l2.far_hit measures it directly (the copies one SM's
  // partition holds), rather than the sweep's l2.capacity: on a soft knee that is where the
  // latency first rises, which moves with the sweep's points from run to run.
  if (f.has(finding::kL2ReplicaCapacity) && f.at(finding::kL2ReplicaCapacity) > 0) {
    const std::uint64_t part = round_down(f.at(finding::kL2ReplicaCapacity), l2_unit / 2);
    if (part * 2 >= l1_capacity_bytes(c, 0) && part > 0) {
      c.l2.capacity_bytes = part * 2;
      c.l2_near.capacity_bytes = part;
      t.l2_from_replicas = true;
    }
  }
  if (f.has(finding::kDramLatencyNearHome) && f.has(finding::kDramLatencyFarHome)) {
    c.dram_near_home_latency_cycles = f.at(finding::kDramLatencyNearHome);
    c.dram_far_home_latency_cycles = f.at(finding::kDramLatencyFarHome);
  }
  return t;
}

/// What the model assumes about replacement where the result did not measure it (or measured
/// a tie).
void add_replacement_assumptions(const ModelConfig& c, const ResultFindings& f,
                                 json& not_measured) {
  for (const char* lv : {"l1", "l2"}) {
    const std::string p = f.extra_text(std::string("cache.") + lv + ".replacement", "policy")
                              .value_or("not measured");
    if (p == "random_or_tree_plru")
      not_measured.push_back(std::string(lv) +
                             " replacement policy: tied between random and "
                             "tree-PLRU (LRU and FIFO excluded); " +
                             to_string(lv == std::string("l1") ? c.l1.policy : c.l2.policy) +
                             " modelled");
    else if (p != "lru" && p != "fifo" && p != "tree_plru" && p != "random")
      not_measured.push_back(std::string(lv) + " replacement policy: " + p + " (LRU modelled)");
  }
}

/// Where the result found a hashed set index whose function it did not measure.
void add_index_assumptions(const ModelConfig& c, const ResultFindings& f, json& not_measured) {
  for (const char* lv : {"l1", "l2"}) {
    const auto kind = f.extra_text(std::string("cache.") + lv + ".set_index_bits", "kind");
    if (!kind) continue;
    const auto& masks = lv == std::string("l1") ? c.l1.set_hash_masks : c.l2.set_hash_masks;
    if (*kind == "xor_hash" && masks.empty())
      not_measured.push_back(std::string(lv) +
                             " set index: a hash (no modulo fits the measured conflicts), "
                             "whose function is not measured; modulo indexing modelled, which "
                             "fills the sets of a contiguous range evenly");
  }
}

/// Everything the model assumes rather than takes from the result, in words.
/// What a kernel can ask of the L2, where the result measured it (cache.l2.persisting,
/// cache.l2.eviction_priority): the set-aside's and the window's limits, and whether a discard
/// writes dirty data back. The ways evict_last takes without a set-aside are not exported.
void set_persisting(ModelConfig& c, const ResultFindings& f) {
  if (f.has(finding::kL2PersistingMaxSetAside.name)) {
    const double bytes = f.at(finding::kL2PersistingMaxSetAside.name);
    c.persisting.max_set_aside_bytes =
        bytes > 0 ? std::min(static_cast<std::uint64_t>(bytes), c.l2.capacity_bytes) : 0;
  }
  if (f.has(finding::kL2PersistingMaxWindow.name) && c.persisting.max_set_aside_bytes > 0) {
    const double bytes = f.at(finding::kL2PersistingMaxWindow.name);
    c.persisting.max_window_bytes =
        bytes > 0 ? std::min(static_cast<std::uint64_t>(bytes), std::uint64_t{1} << 40) : 0;
  }
  // Where the cap applies (per set unless a cap-rule finding says a byte budget).
  for (const auto* key : {&finding::kL2EvictLastCapRule, &finding::kL2PersistingCapRule})
    if (f.has(key->name)) {
      const json& x = f.extras.at(key->name);
      c.persisting.byte_budget = x.is_object() && x.value("label", std::string()) == "byte_budget";
      break;
    }
  const std::string discard = finding::kL2DiscardDropsDirty.name;
  if (f.has(discard)) {
    const json& x = f.extras.at(discard);
    c.persisting.discard_writes_back =
        x.is_object() && x.value("outcome", std::string()) == "written_back";
  }
}

json not_measured_list(const ModelConfig& c, const ResultFindings& f, const L1Tags& l1,
                       const TwoSides& sides) {
  json not_measured = json::array();
  if (!f.has(finding::kCacheL1Ways)) not_measured.push_back("l1_ways (4 assumed)");
  if (!f.has(finding::kCacheL2Ways)) not_measured.push_back("l2_ways (16 assumed)");
  if (!f.has(finding::kCacheL1LineSize) || !f.has(finding::kCacheL2LineSize))
    not_measured.push_back("line sizes (128 B assumed)");
  add_replacement_assumptions(c, f, not_measured);
  if (l1.tags_measured && c.l1_tag_bytes > l1_capacity_bytes(c, -1) && !l1.victim_measured)
    not_measured.push_back(
        "l1 data victim: the L1 holds fewer lines than its tags name (cache.l1.tag_capacity); "
        "which line leaves when the lines are full and the new line's set has a free tag is " +
        (l1.victim_none ? "none of " + data_victim_names(" and ") + " (cache.l1.data_victim)"
                        : std::string("not measured")) +
        ": " + to_string(c.l1_data_victim) + " modelled");
  add_index_assumptions(c, f, not_measured);
  if (sides.modelled && !sides.l2_from_replicas)
    not_measured.push_back(
        "a partition's capacity (l2.replica_capacity): the sweep's l2.capacity "
        "used, where a soft knee first rises");
  if (c.tlb.empty()) not_measured.push_back("TLB (none modelled)");
  if (sides.modelled && c.dram_near_home_latency_cycles == 0)
    not_measured.push_back("DRAM latency by home partition (dram_latency_cycles for both)");
  not_measured.push_back("the L1 capacity between carveouts (linear between 0% and 100%)");
  if (!f.has(finding::kL2PersistingMaxSetAside.name))
    not_measured.push_back("the persisting L2 set-aside (cache.l2.persisting): none modelled");
  else
    not_measured.push_back(
        std::string("the ways evict_last lines may take without a set-aside (0 modelled)") +
        (f.has(finding::kL2EvictLastCapRule.name) || f.has(finding::kL2PersistingCapRule.name)
             ? ""
             : " and whether the evict_last cap is per set (the set-aside's whole ways of every "
               "set modelled)"));
  if (!f.has(finding::kL2DiscardDropsDirty.name))
    not_measured.push_back(
        "discard.global.L2 of dirty lines (cache.l2.eviction_priority): dropped, as the PTX ISA "
        "allows, modelled");
  return not_measured;
}

}  // namespace

json model_from_result(const json& result) {
  const ResultFindings f(result);
  const auto& d = result.at("device");
  // Structure findings (cache.*.ways, cache.*.line_size, cache.*.replacement) when the result
  // has them; otherwise the assumptions listed under not_measured.
  const Geometry g(f);
  ModelConfig c;
  set_device(c, d);
  set_l1(c, f, g);
  const std::uint64_t l2_unit = set_l2(c, f, g);
  c.l1.policy = policy_of(f, finding::kCacheL1Replacement, g.l1_ways);
  c.l2.policy = policy_of(f, "cache.l2.replacement", g.l2_ways);
  const L1Tags l1_tags = set_l1_tags(c, f, g);
  if ((c.l1.policy == Replacement::kTreePlru && (g.l1_ways & (g.l1_ways - 1))) ||
      (c.l2.policy == Replacement::kTreePlru && (g.l2_ways & (g.l2_ways - 1))))
    throw UsageError("the result's tree-PLRU finding needs a power-of-two number of ways");
  set_partition_mask_and_tlb(c, f);
  c.dram_latency_cycles = f.need(finding::kDramLatency);
  const TwoSides sides = set_two_sides(c, f, l2_unit);
  c.shared_latency_cycles = f.need(finding::kSharedLatency);
  set_persisting(c, f);
  validate(c);
  json out = to_json(c);
  out["provenance"] = {
      {"from", "gpuprobe result"},
      {"device_uuid", d.value("uuid", std::string(""))},
      {"result_git_sha", result.value("tool", json::object()).value("git_sha", "")},
      {"result_started_utc", result.value("started_utc", std::string(""))},
      {"l2_capacity_from", sides.l2_from_replicas ? "2 x l2.replica_capacity (cache.l2.far_hit)"
                                                  : "l2.capacity (latency.sweep)"}};
  out["not_measured"] = not_measured_list(c, f, l1_tags, sides);
  return out;
}

namespace {
char replacement_letter(const std::string& policy) { return policy == "fifo" ? 'F' : 'L'; }
}  // namespace

std::string accelsim_config(const json& model) {
  const ModelConfig c = model_config_from_json(model);
  std::ostringstream o;
  o << "# gpuprobe export-model --format accelsim: " << c.name << "\n"
    << "# fields: <N normal|S sectored>:<sets>:<line B>:<ways>,<replacement L=LRU F=FIFO>:"
       "<write>:<alloc>:<write alloc>:<set index L=linear X=xor H=fermi hash P=ipoly>,"
       "<mshr type>:<entries>:<merge>,<miss queue>:<result fifo>,<data port width>\n"
    << "# write/alloc/MSHR/queue fields are not measured by gpuprobe: the values are the "
       "simulator's usual Volta+ choices\n";
  const auto line = [&](const char* option, const CacheConfig& cc, std::uint64_t capacity,
                        const char* wr, const char* what) {
    const std::uint32_t ways =
        cc.ways ? cc.ways : static_cast<std::uint32_t>(capacity / cc.line_bytes);
    const std::uint64_t sets = capacity / cc.line_bytes / ways;
    const bool sectored = cc.sector_bytes != 0 && cc.sector_bytes < cc.line_bytes;
    const std::string pol = to_string(cc.policy);
    const char sif = cc.set_hash_masks.empty() ? 'L' : 'X';
    o << "# " << what << ": " << capacity << " B = " << sets << " sets x " << ways << " ways x "
      << cc.line_bytes << " B, policy " << pol;
    if (pol == "tree_plru" || pol == "random") o << " (not in the syntax: written as LRU)";
    if (!cc.set_hash_masks.empty()) {
      o << ", set index = XOR hash, masks";
      for (auto m : cc.set_hash_masks) {
        char b[32];
        std::snprintf(b, sizeof b, " 0x%llx", static_cast<unsigned long long>(m));
        o << b;
      }
      o << " (the syntax has no custom masks: written as X)";
    }
    o << "\n"
      << option << " " << (sectored ? 'S' : 'N') << ":" << sets << ":" << cc.line_bytes << ":"
      << ways << "," << replacement_letter(pol) << ":" << wr << ":m:L:" << sif
      << ",A:512:8,16:0,32\n";
  };
  if (c.l1_tag_bytes > l1_capacity_bytes(c, -1))
    o << "# L1D tags: " << c.l1_tag_bytes / c.l1.line_bytes / (c.l1.ways ? c.l1.ways : 1)
      << " sets (the XOR masks below) name " << c.l1_tag_bytes
      << " B, more than the lines held: the syntax has one array, written with the lines' "
         "capacity\n";
  line("-gpgpu_cache:dl1", c.l1, l1_capacity_bytes(c, -1), "T", "L1D (default carve-out)");
  const int parts = sequence_partitions(c);
  line("-gpgpu_cache:dl2", c.l2, c.l2.capacity_bytes / static_cast<std::uint64_t>(parts), "B",
       parts == 2 ? "L2, one of 2 partitions (gpgpu-sim's dl2 is per memory sub-partition: "
                    "divide the sets by the sub-partitions per partition)"
                  : "L2 (gpgpu-sim's dl2 is per memory sub-partition: divide the sets by "
                    "their number)");
  if (c.persisting.max_set_aside_bytes > 0) {
    const double ways = c.l2.capacity_bytes
                            ? static_cast<double>(c.l2.ways) *
                                  static_cast<double>(c.persisting.max_set_aside_bytes) /
                                  static_cast<double>(c.l2.capacity_bytes)
                            : 0.0;
    o << "# L2 persisting (not in the syntax): a set-aside of up to "
      << c.persisting.max_set_aside_bytes << " B (" << ways << " of " << c.l2.ways
      << (c.persisting.byte_budget ? " ways' bytes, a byte budget over every set)"
                                   : " ways of every set)")
      << " holds persisting-window and evict_last lines; access-policy "
         "windows up to "
      << c.persisting.max_window_bytes << " B; evict_first and streaming lines go first\n"
      << "# discard.global.L2 of a dirty line: "
      << (c.persisting.discard_writes_back ? "written back first" : "dropped (no write-back)")
      << "\n";
  }
  return o.str();
}

AccelsimCache parse_accelsim_cache_line(const std::string& text) {
  AccelsimCache a;
  const auto space = text.find(' ');
  if (space == std::string::npos || text.rfind("-gpgpu_cache:", 0) != 0)
    throw UsageError("not a -gpgpu_cache line: " + text_input::quoted(text));
  a.option = text.substr(0, space);
  const std::string cfg = text.substr(space + 1);
  unsigned long long sets = 0;
  unsigned line = 0, ways = 0, mshr = 0, merge = 0, mq = 0, fifo = 0, port = 0;
  char type = 0, rep = 0, wr = 0, alloc = 0, wa = 0, sif = 0, mt = 0;
  const int n = std::sscanf(cfg.c_str(), "%c:%llu:%u:%u,%c:%c:%c:%c:%c,%c:%u:%u,%u:%u,%u", &type,
                            &sets, &line, &ways, &rep, &wr, &alloc, &wa, &sif, &mt, &mshr, &merge,
                            &mq, &fifo, &port);
  if (n != 15 || (type != 'N' && type != 'S') || (rep != 'L' && rep != 'F'))
    throw UsageError("malformed cache configuration " + text_input::quoted(cfg));
  a.type = type;
  a.sets = sets;
  a.line_bytes = line;
  a.ways = ways;
  a.replacement = rep;
  a.set_index = sif;
  return a;
}

}  // namespace gpuprobe::device
