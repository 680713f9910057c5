#include "device/model_export.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
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
  // Structure findings (cache.*.ways, cache.*.line_size, cache.*.replacement) when the result
  // has them; otherwise the assumptions listed under not_measured.
  std::map<std::string, json> extra;
  for (const auto& e : result.at("experiments"))
    for (const auto& x : e.value("findings", json::array()))
      // result.json writes a finding's extra fields beside its name and value (a Finding
      // converted in memory keeps them under "extra").
      extra[x.value("name", "")] = x.contains("extra") ? x.at("extra") : x;
  const auto measured_u32 = [&](const std::string& name, std::uint32_t fallback) {
    auto it = f.find(name);
    return it != f.end() && it->second > 0 ? static_cast<std::uint32_t>(it->second) : fallback;
  };
  const std::uint32_t kLine = measured_u32("cache.l1.line_size", 128);
  const std::uint32_t kL2Line = measured_u32("cache.l2.line_size", 128);
  const std::uint32_t kL1Ways = measured_u32("cache.l1.ways", 4);
  const std::uint32_t kL2Ways = measured_u32("cache.l2.ways", 16);
  ModelConfig c;
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
  c.l1 = {0, kLine, kL1Ways, get("l1.hit_latency")};
  // The far-hit latency: cache.l2.far_hit's l2.far_hit_latency; results from before it have
  // only latency.sweep's region between the knees (l2.mixed_latency, once also named
  // l2.far_hit_latency).
  const char* far = f.count("l2.far_hit_latency") ? "l2.far_hit_latency" : "l2.mixed_latency";
  c.l2_partitioned = f.count("l2.near_capacity") && f.count(far);
  // With two partitions the whole L2 must split into two equal partitions of whole sets.
  const std::uint64_t l2_unit = std::uint64_t{kL2Line} * kL2Ways * (c.l2_partitioned ? 2 : 1);
  c.l2 = {round_down(get("l2.capacity"), l2_unit), kL2Line, kL2Ways, get("l2.hit_latency")};
  if (c.l2_partitioned) {
    c.l2_near = {round_down(f["l2.near_capacity"], std::uint64_t{kL2Line} * kL2Ways), kL2Line,
                 kL2Ways, get("l2.hit_latency")};
    c.l2_far_hit_latency_cycles = f[far];
  }
  const auto policy_of = [&](const std::string& name) {
    auto it = extra.find(name);
    if (it == extra.end() || !it->second.contains("policy")) return Replacement::kLru;
    const std::string p = it->second["policy"];
    if (p == "lru" || p == "fifo" || p == "tree_plru" || p == "random") return parse_replacement(p);
    // The eviction sweeps' tie excludes LRU and FIFO: one of the two it leaves (tree-PLRU where
    // the ways allow a tree), named under not_measured.
    if (p == "random_or_tree_plru") {
      const std::uint32_t w = name == "cache.l1.replacement" ? kL1Ways : kL2Ways;
      return w <= 32 && (w & (w - 1)) == 0 ? Replacement::kTreePlru : Replacement::kRandom;
    }
    return Replacement::kLru;  // "none" or another tie: the chase's LRU
  };
  c.l1.policy = policy_of("cache.l1.replacement");
  c.l2.policy = policy_of("cache.l2.replacement");
  // The L1's tags as measured (cache.l1.tag_sets: the XOR hash's masks): when they name more
  // lines than the L1 holds, the model's L1 is decoupled (tags apart from lines).
  bool l1_tags_measured = false;
  if (auto it = extra.find("cache.l1.tag_sets");
      it != extra.end() && f.count("cache.l1.tag_sets")) {
    const json& e = it->second;
    std::vector<std::uint64_t> m;
    if (e.contains("masks") && e["masks"].is_array())
      for (const auto& x : e["masks"])
        if (x.is_number_unsigned()) m.push_back(x.get<std::uint64_t>());
    const double sets_value = f["cache.l1.tag_sets"];
    const bool sane = !m.empty() && m.size() < 32 && std::isfinite(sets_value) &&
                      sets_value == std::ldexp(1.0, static_cast<int>(m.size()));
    const std::uint64_t sets = sane ? std::uint64_t{1} << m.size() : 0;
    const std::uint64_t tags = sets * kLine * kL1Ways;
    if (sane && tags >= l1_capacity_bytes(c, 0)) {
      c.l1.set_hash_masks = m;
      c.l1_tag_bytes = tags;
      l1_tags_measured = true;
    }
  }
  bool l1_victim_measured = false, l1_victim_none = false;
  if (auto it = extra.find("cache.l1.data_victim"); l1_tags_measured && it != extra.end()) {
    const std::string v = it->second.value("victim", std::string());
    if (const auto dv = find_data_victim(v)) {
      c.l1_data_victim = *dv;
      l1_victim_measured = true;
    }
    l1_victim_none = v == "none";
  }
  if ((c.l1.policy == Replacement::kTreePlru && (kL1Ways & (kL1Ways - 1))) ||
      (c.l2.policy == Replacement::kTreePlru && (kL2Ways & (kL2Ways - 1))))
    throw UsageError("the result's tree-PLRU finding needs a power-of-two number of ways");
  if (f.count("l2.partition.hash_mask") && f["l2.partition.hash_mask"] > 0)
    c.l2_partition_masks = {static_cast<std::uint64_t>(f["l2.partition.hash_mask"])};
  for (int level = 1; level <= 4; ++level) {
    const std::string n = "tlb.l" + std::to_string(level);
    if (!f.count(n + ".entries") || !f.count("tlb.page_size")) break;
    c.tlb.push_back({static_cast<std::uint64_t>(f[n + ".entries"]),
                     static_cast<std::uint64_t>(f["tlb.page_size"]), 0,
                     std::max(0.0, f.count(n + ".miss_penalty") ? f[n + ".miss_penalty"] : 0.0)});
  }
  c.dram_latency_cycles = get(finding::kDramLatency);
  // Two partitions with a measured home hash and replication: the chase walks the partitions
  // themselves (home lines and copies in the SM's partition, far-homed lines in the other), and
  // a miss costs the DRAM latency of its home where cache.l2.far_hit measured both.
  const bool two_sides = c.l2_partitioned && !c.l2_partition_masks.empty() &&
                         f.count("l2.replication") && f.count("l2.far_hit_latency");
  bool l2_from_replicas = false;
  if (two_sides) {
    c.l2_partitions = 2;
    c.l2_replication = f["l2.replication"] > 0.5;
    c.chase_structural = true;
    // A partition's capacity as cache.l2.far_hit measures it directly (the copies one SM's
    // partition holds), rather than the sweep's l2.capacity: on a soft knee that is where the
    // latency first rises, which moves with the sweep's points from run to run (55.4 to 57.9
    // MiB over three runs of one card).
    if (f.count("l2.replica_capacity") && f["l2.replica_capacity"] > 0) {
      const std::uint64_t part = round_down(f["l2.replica_capacity"], l2_unit / 2);
      if (part * 2 >= l1_capacity_bytes(c, 0) && part > 0) {
        c.l2.capacity_bytes = part * 2;
        c.l2_near.capacity_bytes = part;
        l2_from_replicas = true;
      }
    }
    if (f.count(finding::kDramLatencyNearHome) && f.count(finding::kDramLatencyFarHome)) {
      c.dram_near_home_latency_cycles = f[finding::kDramLatencyNearHome];
      c.dram_far_home_latency_cycles = f[finding::kDramLatencyFarHome];
    }
  }
  c.shared_latency_cycles = get(finding::kSharedLatency);
  validate(c);
  json out = to_json(c);
  out["provenance"] = {
      {"from", "gpuprobe result"},
      {"device_uuid", d.value("uuid", std::string(""))},
      {"result_git_sha", result.value("tool", json::object()).value("git_sha", "")},
      {"result_started_utc", result.value("started_utc", std::string(""))},
      {"l2_capacity_from", l2_from_replicas ? "2 x l2.replica_capacity (cache.l2.far_hit)"
                                            : "l2.capacity (latency.sweep)"}};
  json not_measured = json::array();
  if (!f.count("cache.l1.ways")) not_measured.push_back("l1_ways (4 assumed)");
  if (!f.count("cache.l2.ways")) not_measured.push_back("l2_ways (16 assumed)");
  if (!f.count("cache.l1.line_size") || !f.count("cache.l2.line_size"))
    not_measured.push_back("line sizes (128 B assumed)");
  for (const char* lv : {"l1", "l2"}) {
    const auto it = extra.find(std::string("cache.") + lv + ".replacement");
    const std::string p =
        it != extra.end() && it->second.contains("policy") && it->second["policy"].is_string()
            ? it->second["policy"].get<std::string>()
            : "not measured";
    if (p == "random_or_tree_plru")
      not_measured.push_back(std::string(lv) +
                             " replacement policy: tied between random and "
                             "tree-PLRU (LRU and FIFO excluded); " +
                             to_string(lv == std::string("l1") ? c.l1.policy : c.l2.policy) +
                             " modelled");
    else if (p != "lru" && p != "fifo" && p != "tree_plru" && p != "random")
      not_measured.push_back(std::string(lv) + " replacement policy: " + p + " (LRU modelled)");
  }
  if (l1_tags_measured && c.l1_tag_bytes > l1_capacity_bytes(c, -1) && !l1_victim_measured)
    not_measured.push_back(
        "l1 data victim: the L1 holds fewer lines than its tags name (cache.l1.tag_capacity); "
        "which line leaves when the lines are full and the new line's set has a free tag is " +
        (l1_victim_none ? "none of " + data_victim_names(" and ") + " (cache.l1.data_victim)"
                        : std::string("not measured")) +
        ": " + to_string(c.l1_data_victim) + " modelled");
  for (const char* lv : {"l1", "l2"}) {
    const auto it = extra.find(std::string("cache.") + lv + ".set_index_bits");
    if (it == extra.end() || !it->second.contains("kind") || !it->second["kind"].is_string())
      continue;
    const std::string kind = it->second["kind"].get<std::string>();
    const auto& masks = lv == std::string("l1") ? c.l1.set_hash_masks : c.l2.set_hash_masks;
    if (kind == "xor_hash" && masks.empty())
      not_measured.push_back(std::string(lv) +
                             " set index: a hash (no modulo fits the measured conflicts), "
                             "whose function is not measured; modulo indexing modelled, which "
                             "fills the sets of a contiguous range evenly");
  }
  if (two_sides && !l2_from_replicas)
    not_measured.push_back(
        "a partition's capacity (l2.replica_capacity): the sweep's l2.capacity "
        "used, where a soft knee first rises");
  if (c.tlb.empty()) not_measured.push_back("TLB (none modelled)");
  if (two_sides && c.dram_near_home_latency_cycles == 0)
    not_measured.push_back("DRAM latency by home partition (dram_latency_cycles for both)");
  not_measured.push_back("the L1 capacity between carveouts (linear between 0% and 100%)");
  out["not_measured"] = not_measured;
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
