// The modelled GPU's configuration: the L1 capacity for a carve-out, validate() and to_json().
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "core/text_input.hpp"
#include "core/units.hpp"
#include "device/model_device.hpp"

namespace gpuprobe::device {

namespace {

using detail::check_cache;
using units::kKiB;

bool power_of_two(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

/// Semantic checks of the fields run_sequence uses, one line naming the field.
void check_structure(const std::string& who, const std::string& lvl, const CacheConfig& c) {
  const std::string f = who + lvl;
  if (!power_of_two(c.line_bytes) || c.line_bytes < 8 || c.line_bytes > 4096)
    throw UsageError(f + "line_bytes " + std::to_string(c.line_bytes) +
                     " is not allowed; allowed: a power of two from 8 to 4096");
  if (c.sector_bytes != 0 && (!power_of_two(c.sector_bytes) || c.sector_bytes > c.line_bytes ||
                              c.line_bytes / c.sector_bytes > 64))
    throw UsageError(f + "sector_bytes " + std::to_string(c.sector_bytes) +
                     " is not allowed; allowed: 0 (the line) or a power of two <= the line and "
                     ">= line / 64");
  if (c.ways != 0 && c.capacity_bytes != 0 &&
      c.capacity_bytes % (std::uint64_t{c.line_bytes} * c.ways))
    throw UsageError(f + "ways " + std::to_string(c.ways) + " do not divide the capacity (" +
                     std::to_string(c.capacity_bytes) + " B) into whole sets of " +
                     std::to_string(c.line_bytes) + "-B lines");
  if (!(c.hit_latency_cycles > 0) || c.hit_latency_cycles > 1e6)
    throw UsageError(f + "hit_latency_cycles " + std::to_string(c.hit_latency_cycles) +
                     " is not allowed; allowed: > 0 and <= 1e6 cycles");
  const std::uint32_t ways =
      c.ways ? c.ways : static_cast<std::uint32_t>(c.capacity_bytes / c.line_bytes);
  if (c.policy == Replacement::kTreePlru && (!power_of_two(ways) || ways > 32))
    throw UsageError(f + "policy tree_plru needs a power-of-two number of ways <= 32 (have " +
                     std::to_string(ways) + ")");
  if (!c.set_hash_masks.empty()) {
    const std::uint64_t sets = ways ? c.capacity_bytes / c.line_bytes / ways : 0;
    if (!power_of_two(sets) || (std::uint64_t{1} << c.set_hash_masks.size()) != sets)
      throw UsageError(f + "set_hash_masks has " + std::to_string(c.set_hash_masks.size()) +
                       " masks; allowed: log2(sets) masks with a power-of-two set count (sets = " +
                       std::to_string(sets) + ")");
    for (auto m : c.set_hash_masks)
      if (m == 0 || (m & (c.line_bytes - 1)))
        throw UsageError(f +
                         "set_hash_masks: each mask must be non-zero and use no bit below "
                         "the line (" +
                         std::to_string(c.line_bytes) + " B)");
  }
  if (c.scrambled_index && !c.set_hash_masks.empty())
    throw UsageError(f + "set index 'scrambled' with set_hash_masks; allowed: one of the two");
  if (c.placement_unit_bytes != 0 &&
      (!power_of_two(c.placement_unit_bytes) || c.placement_unit_bytes < c.line_bytes ||
       c.placement_unit_bytes > (std::uint64_t{1} << 30)))
    throw UsageError(f + "placement_unit_bytes " + std::to_string(c.placement_unit_bytes) +
                     " is not allowed; allowed: 0 or a power of two from the line (" +
                     std::to_string(c.line_bytes) + " B) to 1 GiB");
  if (c.placement_unit_bytes != 0 && (c.scrambled_index || !c.set_hash_masks.empty()))
    throw UsageError(f +
                     "placement_unit_bytes with a scrambled or hashed set index; allowed: "
                     "with the modulo index only");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Configuration

std::uint64_t l1_capacity_bytes(const ModelConfig& config, int carveout_percent) {
  std::uint64_t shared = 0;
  if (carveout_percent == -1) {
    shared = config.default_shared_carveout_bytes;
  } else if (carveout_percent >= 0 && carveout_percent <= 100) {
    shared = static_cast<std::uint64_t>(
        std::llround(static_cast<double>(config.shared_per_sm_bytes) * carveout_percent / 100.0));
  } else {
    throw UsageError("carveout percent " + std::to_string(carveout_percent) +
                     " is out of range; allowed: -1 (driver default) or 0..100");
  }
  const std::uint64_t l1 =
      config.l1_shared_unified_bytes > shared ? config.l1_shared_unified_bytes - shared : 0;
  const std::uint64_t unit =
      static_cast<std::uint64_t>(config.l1.line_bytes) * (config.l1.ways ? config.l1.ways : 1);
  return unit ? l1 / unit * unit : 0;
}

void validate(const ModelConfig& c) {
  if (c.name.empty()) throw UsageError("model: the name must not be empty");
  if (c.prefetcher.distance_lines < 0 || c.prefetcher.distance_lines > 64 ||
      (c.prefetcher.distance_lines > 0 &&
       (c.prefetcher.max_stride_bytes == 0 || c.prefetcher.max_stride_bytes > (1ull << 30))))
    throw UsageError("model " + text_input::quoted(c.name) +
                     ": the stride prefetcher needs distance_lines 0..64 and, when on, "
                     "max_stride_bytes 1 .. 1 GiB");
  if (c.sm_count <= 0)
    throw UsageError("model " + text_input::quoted(c.name) + ": sm_count must be > 0");
  if (c.persisting.max_set_aside_bytes > c.l2.capacity_bytes ||
      c.persisting.max_window_bytes > (1ull << 40) || c.persisting.evict_last_ways_unreserved < 0 ||
      static_cast<std::uint64_t>(c.persisting.evict_last_ways_unreserved) > c.l2.ways)
    throw UsageError("model " + text_input::quoted(c.name) +
                     ": the persisting L2 needs a set-aside of at most the L2's capacity, a "
                     "window of at most 1 TiB and evict_last ways 0 .. the L2's ways");
  if (c.l2_insertion != Insertion::kMru && c.l2.policy != Replacement::kLru)
    throw UsageError("model " + text_input::quoted(c.name) + ": l2_insertion " +
                     to_string(c.l2_insertion) +
                     " needs l2_policy lru (it places fills in the "
                     "recency order)");
  if (c.l2_bimodal_throttle < 2 || c.l2_bimodal_throttle > 65536)
    throw UsageError("model " + text_input::quoted(c.name) + ": l2_bimodal_throttle " +
                     std::to_string(c.l2_bimodal_throttle) + "; allowed: 2 .. 65536");
  if (!(c.sm_clock_mhz > 0) || !(c.mem_clock_mhz > 0))
    throw UsageError("model " + text_input::quoted(c.name) + ": clocks must be > 0 MHz");
  if (c.global_mem_bytes == 0)
    throw UsageError("model " + text_input::quoted(c.name) + ": global memory must be > 0 bytes");
  if (c.default_shared_carveout_bytes > c.l1_shared_unified_bytes)
    throw UsageError("model '" + c.name +
                     "': the default shared carve-out exceeds the unified L1/shared size");
  if (c.shared_per_sm_bytes > c.l1_shared_unified_bytes)
    throw UsageError("model '" + c.name +
                     "': shared memory per SM exceeds the unified L1/shared size");
  CacheConfig l1 = c.l1;
  l1.capacity_bytes = c.l1_tag_bytes ? c.l1_tag_bytes : l1_capacity_bytes(c, -1);
  check_cache(text_input::quoted(c.name) + " L1", l1);
  if (c.l1_tag_bytes != 0 && c.l1_tag_bytes < l1_capacity_bytes(c, 0))
    throw UsageError("model " + text_input::quoted(c.name) + ": the L1 tags (" +
                     std::to_string(c.l1_tag_bytes) + " B) cover less than the largest L1 (" +
                     std::to_string(l1_capacity_bytes(c, 0)) + " B); allowed: tags >= lines");
  check_cache(text_input::quoted(c.name) + " L2", c.l2);
  if (c.l2_partitioned) {
    check_cache(text_input::quoted(c.name) + " L2 near partition", c.l2_near);
    if (c.l2_near.capacity_bytes > c.l2.capacity_bytes)
      throw UsageError("model " + text_input::quoted(c.name) +
                       ": the near L2 partition exceeds the whole L2");
  }
  if (!(c.l2_far_hit_latency_cycles >= 0) || !(c.dram_latency_cycles >= 0) ||
      !(c.shared_latency_cycles >= 0))
    throw UsageError("model " + text_input::quoted(c.name) + ": latencies must be >= 0 cycles");
  if (!(c.noise_relative_sigma >= 0) || !(c.noise_relative_sigma < 1))
    throw UsageError("model " + text_input::quoted(c.name) + ": noise sigma must be in [0, 1)");
  const std::string who = "model " + text_input::quoted(c.name) + ": ";
  check_structure(who, "l1_", l1);
  // run_sequence builds one cache per partition, so the geometry is checked per partition.
  const int parts = sequence_partitions(c);
  CacheConfig l2_part = c.l2;
  l2_part.capacity_bytes /= static_cast<std::uint64_t>(parts > 0 ? parts : 1);
  check_structure(who, parts == 2 ? "l2_ (one of 2 partitions) " : "l2_", l2_part);
  if (!(c.dram_latency_cycles > 0) || c.dram_latency_cycles > 1e6)
    throw UsageError(who + "dram_latency_cycles " + std::to_string(c.dram_latency_cycles) +
                     " is not allowed; allowed: > 0 and <= 1e6 cycles");
  if (c.l2.capacity_bytes < l1_capacity_bytes(c, 0))
    throw UsageError(who + "l2_capacity_bytes " + std::to_string(c.l2.capacity_bytes) +
                     " is smaller than the largest L1 (" + std::to_string(l1_capacity_bytes(c, 0)) +
                     " B); allowed: an L2 at least as large as the L1");
  for (const auto& [key, v] : {std::pair<const char*, double>{"dram_near_home_latency_cycles",
                                                              c.dram_near_home_latency_cycles},
                               {"dram_far_home_latency_cycles", c.dram_far_home_latency_cycles}})
    if (!(v >= 0) || v > 1e6)
      throw UsageError(who + key + " " + std::to_string(v) +
                       " is not allowed; allowed: 0 (= dram_latency_cycles) or > 0 and <= 1e6");
  if (c.l2_partitions < 0 || c.l2_partitions > 2)
    throw UsageError(who + "l2_partitions " + std::to_string(c.l2_partitions) +
                     " is not allowed; allowed: 0 (from l2_partitioned), 1 or 2");
  if (parts == 2) {
    if (c.l2.capacity_bytes % 2)
      throw UsageError(who + "l2_capacity_bytes must split into 2 equal partitions");
    if (!(c.l2_far_hit_latency_cycles > 0) || c.l2_far_hit_latency_cycles > 1e6)
      throw UsageError(who + "l2_far_hit_latency_cycles must be > 0 and <= 1e6 with 2 partitions");
  }
  if (c.l2_partition_masks.size() > (parts == 2 ? 1u : 0u))
    throw UsageError(who + "l2_partition_masks has " + std::to_string(c.l2_partition_masks.size()) +
                     " masks; allowed: " + (parts == 2 ? "0 or 1" : "none with one partition"));
  for (auto m : c.l2_partition_masks)
    if (m == 0 || (m & (c.l2.line_bytes - 1)))
      throw UsageError(who +
                       "l2_partition_masks: the mask must be non-zero and use no bit below "
                       "the line");
  if (!c.sm_partition.empty()) {
    if (c.sm_partition.size() != static_cast<std::size_t>(c.sm_count))
      throw UsageError(who + "sm_partition has " + std::to_string(c.sm_partition.size()) +
                       " entries; allowed: one per SM (" + std::to_string(c.sm_count) + ")");
    for (int p : c.sm_partition)
      if (p < 0 || p >= parts)
        throw UsageError(who + "sm_partition: " + std::to_string(p) +
                         " is not a partition; allowed: 0.." + std::to_string(parts - 1));
  }
  for (std::size_t i = 0; i < c.tlb.size(); ++i) {
    const auto& t = c.tlb[i];
    const std::string f = who + "tlb[" + std::to_string(i) + "].";
    if (t.entries == 0 || t.entries > (1u << 24))
      throw UsageError(f + "entries must be 1..16777216");
    if (!power_of_two(t.page_bytes) || t.page_bytes < 4096)
      throw UsageError(f + "page_bytes " + std::to_string(t.page_bytes) +
                       " is not allowed; allowed: a power of two >= 4096");
    if (t.ways != 0 && t.entries % t.ways)
      throw UsageError(f + "ways " + std::to_string(t.ways) + " do not divide the entries (" +
                       std::to_string(t.entries) + ")");
    if (!(t.miss_penalty_cycles >= 0) || t.miss_penalty_cycles > 1e6)
      throw UsageError(f + "miss_penalty_cycles must be >= 0 and <= 1e6");
  }
}

nlohmann::json to_json(const ModelConfig& c) {
  const std::uint64_t optin = c.shared_per_sm_bytes > kKiB ? c.shared_per_sm_bytes - kKiB : 0;
  nlohmann::json j = {
      {"name", c.name},
      {"compute_capability", std::to_string(c.cc_major) + "." + std::to_string(c.cc_minor)},
      {"sm_count", c.sm_count},
      {"sm_clock_mhz", c.sm_clock_mhz},
      {"mem_clock_mhz", c.mem_clock_mhz},
      {"mem_bus_width_bits", c.mem_bus_width_bits},
      {"global_mem_bytes", c.global_mem_bytes},
      {"l1_shared_unified_bytes", c.l1_shared_unified_bytes},
      {"default_shared_carveout_bytes", c.default_shared_carveout_bytes},
      {"shared_per_sm_bytes", c.shared_per_sm_bytes},
      {"shared_per_block_optin_bytes", optin},
      {"l1_default_capacity_bytes", l1_capacity_bytes(c, -1)},
      {"l1_max_capacity_bytes", l1_capacity_bytes(c, 0)},
      {"l1_min_capacity_bytes", l1_capacity_bytes(c, 100)},
      {"l1_line_bytes", c.l1.line_bytes},
      {"l1_ways", c.l1.ways},
      {"l1_hit_latency_cycles", c.l1.hit_latency_cycles},
      {"l2_partitioned", c.l2_partitioned},
      {"l2_near_capacity_bytes", c.l2_near.capacity_bytes},
      {"l2_near_line_bytes", c.l2_near.line_bytes},
      {"l2_near_ways", c.l2_near.ways},
      {"l2_near_hit_latency_cycles", c.l2_near.hit_latency_cycles},
      {"l2_capacity_bytes", c.l2.capacity_bytes},
      {"l2_line_bytes", c.l2.line_bytes},
      {"l2_ways", c.l2.ways},
      {"l2_hit_latency_cycles", c.l2.hit_latency_cycles},
      {"l2_far_hit_latency_cycles", c.l2_far_hit_latency_cycles},
      {"dram_latency_cycles", c.dram_latency_cycles},
      {"dram_near_home_latency_cycles", c.dram_near_home_latency_cycles},
      {"dram_far_home_latency_cycles", c.dram_far_home_latency_cycles},
      {"chase_structural", c.chase_structural},
      {"shared_latency_cycles", c.shared_latency_cycles},
      {"noise_relative_sigma", c.noise_relative_sigma},
      {"seed", c.seed},
      {"l1_policy", to_string(c.l1.policy)},
      {"l1_sector_bytes", c.l1.sector_bytes},
      {"l1_set_hash_masks", c.l1.set_hash_masks},
      {"l1_set_index", c.l1.scrambled_index ? "scrambled" : "modulo"},
      {"l1_tag_bytes", c.l1_tag_bytes},
      {"l1_data_victim", to_string(c.l1_data_victim)},
      {"l2_policy", to_string(c.l2.policy)},
      {"l2_sector_bytes", c.l2.sector_bytes},
      {"l2_set_hash_masks", c.l2.set_hash_masks},
      {"l2_set_index", c.l2.scrambled_index ? "scrambled" : "modulo"},
      {"l2_placement_unit_bytes", c.l2.placement_unit_bytes},
      {"l2_insertion", to_string(c.l2_insertion)},
      {"l2_bimodal_throttle", c.l2_bimodal_throttle},
      {"l2_partitions", sequence_partitions(c)},
      {"l2_partition_masks", c.l2_partition_masks},
      {"l2_replication", c.l2_replication},
      {"sm_partition", c.sm_partition},
      {"tlb",
       [&] {
         nlohmann::json t = nlohmann::json::array();
         for (const auto& x : c.tlb)
           t.push_back({{"entries", x.entries},
                        {"page_bytes", x.page_bytes},
                        {"ways", x.ways},
                        {"miss_penalty_cycles", x.miss_penalty_cycles}});
         return t;
       }()},
      {"replacement_policy", c.chase_structural
                                 ? "chase and run_sequence: l1_policy / l2_policy"
                                 : "chase: lru; run_sequence: l1_policy / l2_policy"},
      {"ways_note", "0 ways = fully associative"},
      {"l2_latency_rule",
       c.l2_partitioned ? "near-partition hit: l2_near_hit_latency_cycles; near miss, L2 hit: "
                          "l2_far_hit_latency_cycles; L2 miss: dram_latency_cycles"
                        : "L2 hit: l2_hit_latency_cycles; L2 miss: dram_latency_cycles"},
  };
  if (c.prefetcher.distance_lines > 0)
    j["stride_prefetcher"] = {{"distance_lines", c.prefetcher.distance_lines},
                              {"max_stride_bytes", c.prefetcher.max_stride_bytes},
                              {"into_l1", c.prefetcher.into_l1}};
  if (c.persisting.max_set_aside_bytes > 0) {
    j["l2_persisting_max_set_aside_bytes"] = c.persisting.max_set_aside_bytes;
    j["l2_access_policy_max_window_bytes"] = c.persisting.max_window_bytes;
    j["l2_evict_last_ways_unreserved"] = c.persisting.evict_last_ways_unreserved;
    if (c.persisting.discard_writes_back) j["l2_discard_writes_back"] = true;
    if (c.persisting.byte_budget) j["l2_persisting_byte_budget"] = true;
  }
  return j;
}

}  // namespace gpuprobe::device
