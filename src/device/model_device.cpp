#include "device/model_device.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <limits>
#include <type_traits>
#include <utility>

#include "analysis/chain.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "core/json_input.hpp"
#include "device/model_export.hpp"
#include "device/model_sequence.hpp"

namespace gpuprobe::device {

namespace detail {
struct ModelLedger {
  std::uint64_t live_bytes = 0;
  std::uint64_t live_chains = 0;
};
}  // namespace detail

namespace {

using units::format_bytes;
using units::kGiB;
using units::kKiB;
using units::kMiB;

/// Throws UsageError unless the cache geometry is consistent.
void check_cache(const std::string& what, const CacheConfig& c) {
  if (c.line_bytes == 0) throw UsageError("model: " + what + " line size must be > 0 bytes");
  const std::uint64_t unit = static_cast<std::uint64_t>(c.line_bytes) * (c.ways ? c.ways : 1);
  if (c.capacity_bytes % unit != 0)
    throw UsageError("model: " + what + " capacity " + std::to_string(c.capacity_bytes) +
                     " B is not a multiple of line * ways (" + std::to_string(unit) + " B)");
  if (c.capacity_bytes / c.line_bytes >= std::numeric_limits<std::uint32_t>::max())
    throw UsageError("model: " + what + " has too many lines (at most 2^32 - 2)");
  if (!(c.hit_latency_cycles >= 0))
    throw UsageError("model: " + what + " hit latency must be >= 0 cycles");
}

std::uint64_t round_up(std::uint64_t v, std::uint64_t unit) { return (v + unit - 1) / unit * unit; }

class ModelChain final : public Chain {
 public:
  ModelChain(const ChainSpec& spec, std::vector<std::uint32_t> order, std::uint64_t base,
             std::shared_ptr<detail::ModelLedger> ledger)
      : spec_(spec),
        order_(std::move(order)),
        next_(analysis::successors(order_)),
        base_(base),
        ledger_(std::move(ledger)) {
    ledger_->live_bytes += spec_.working_set_bytes;
    ++ledger_->live_chains;
  }
  ~ModelChain() override {
    ledger_->live_bytes -= spec_.working_set_bytes;
    --ledger_->live_chains;
  }
  const ChainSpec& spec() const override { return spec_; }
  std::uint64_t nodes() const override { return order_.size(); }

  const std::vector<std::uint32_t>& order() const { return order_; }
  const std::vector<std::uint32_t>& next() const { return next_; }
  std::uint64_t base() const { return base_; }
  const detail::ModelLedger* ledger() const { return ledger_.get(); }

 private:
  ChainSpec spec_;
  std::vector<std::uint32_t> order_;
  std::vector<std::uint32_t> next_;
  std::uint64_t base_;
  std::shared_ptr<detail::ModelLedger> ledger_;
};

class ModelProbeBuffer final : public ProbeBuffer {
 public:
  ModelProbeBuffer(std::uint64_t bytes, std::uint64_t base,
                   std::shared_ptr<detail::ModelLedger> ledger)
      : bytes_(bytes), base_(base), ledger_(std::move(ledger)) {
    ledger_->live_bytes += bytes_;
    ++ledger_->live_chains;
  }
  ~ModelProbeBuffer() override {
    ledger_->live_bytes -= bytes_;
    --ledger_->live_chains;
  }
  std::uint64_t bytes() const override { return bytes_; }
  std::uint64_t base() const { return base_; }
  const detail::ModelLedger* ledger() const { return ledger_.get(); }

 private:
  std::uint64_t bytes_, base_;
  std::shared_ptr<detail::ModelLedger> ledger_;
};

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
  if (c.ways != 0 && c.capacity_bytes != 0 && c.capacity_bytes % (std::uint64_t{c.line_bytes} * c.ways))
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
        throw UsageError(f + "set_hash_masks: each mask must be non-zero and use no bit below "
                         "the line (" + std::to_string(c.line_bytes) + " B)");
  }
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
  if (c.sm_count <= 0) throw UsageError("model '" + c.name + "': sm_count must be > 0");
  if (!(c.sm_clock_mhz > 0) || !(c.mem_clock_mhz > 0))
    throw UsageError("model '" + c.name + "': clocks must be > 0 MHz");
  if (c.global_mem_bytes == 0)
    throw UsageError("model '" + c.name + "': global memory must be > 0 bytes");
  if (c.default_shared_carveout_bytes > c.l1_shared_unified_bytes)
    throw UsageError("model '" + c.name +
                     "': the default shared carve-out exceeds the unified L1/shared size");
  if (c.shared_per_sm_bytes > c.l1_shared_unified_bytes)
    throw UsageError("model '" + c.name +
                     "': shared memory per SM exceeds the unified L1/shared size");
  CacheConfig l1 = c.l1;
  l1.capacity_bytes = l1_capacity_bytes(c, -1);
  check_cache("'" + c.name + "' L1", l1);
  check_cache("'" + c.name + "' L2", c.l2);
  if (c.l2_partitioned) {
    check_cache("'" + c.name + "' L2 near partition", c.l2_near);
    if (c.l2_near.capacity_bytes > c.l2.capacity_bytes)
      throw UsageError("model '" + c.name + "': the near L2 partition exceeds the whole L2");
  }
  if (!(c.l2_far_hit_latency_cycles >= 0) || !(c.dram_latency_cycles >= 0) ||
      !(c.shared_latency_cycles >= 0))
    throw UsageError("model '" + c.name + "': latencies must be >= 0 cycles");
  if (!(c.noise_relative_sigma >= 0) || !(c.noise_relative_sigma < 1))
    throw UsageError("model '" + c.name + "': noise sigma must be in [0, 1)");
  const std::string who = "model '" + c.name + "': ";
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
      throw UsageError(who + "l2_partition_masks: the mask must be non-zero and use no bit below "
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
  return {
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
      {"shared_latency_cycles", c.shared_latency_cycles},
      {"noise_relative_sigma", c.noise_relative_sigma},
      {"seed", c.seed},
      {"l1_policy", to_string(c.l1.policy)},
      {"l1_sector_bytes", c.l1.sector_bytes},
      {"l1_set_hash_masks", c.l1.set_hash_masks},
      {"l2_policy", to_string(c.l2.policy)},
      {"l2_sector_bytes", c.l2.sector_bytes},
      {"l2_set_hash_masks", c.l2.set_hash_masks},
      {"l2_partitions", sequence_partitions(c)},
      {"l2_partition_masks", c.l2_partition_masks},
      {"l2_replication", c.l2_replication},
      {"sm_partition", c.sm_partition},
      {"tlb", [&] {
         nlohmann::json t = nlohmann::json::array();
         for (const auto& x : c.tlb)
           t.push_back({{"entries", x.entries},
                        {"page_bytes", x.page_bytes},
                        {"ways", x.ways},
                        {"miss_penalty_cycles", x.miss_penalty_cycles}});
         return t;
       }()},
      {"replacement_policy", "chase: lru; run_sequence: l1_policy / l2_policy"},
      {"ways_note", "0 ways = fully associative"},
      {"l2_latency_rule",
       c.l2_partitioned ? "near-partition hit: l2_near_hit_latency_cycles; near miss, L2 hit: "
                          "l2_far_hit_latency_cycles; L2 miss: dram_latency_cycles"
                        : "L2 hit: l2_hit_latency_cycles; L2 miss: dram_latency_cycles"},
  };
}

// ---------------------------------------------------------------------------------------------
// CacheSim

CacheSim::CacheSim(const CacheConfig& config) : config_(config) {
  check_cache("cache", config);
  const std::uint64_t lines = config.capacity_bytes / config.line_bytes;
  if (config.ways == 0) {
    ways_ = static_cast<std::uint32_t>(lines);
    sets_ = lines ? 1 : 0;
  } else {
    ways_ = config.ways;
    sets_ = lines / config.ways;
  }
  if ((config.line_bytes & (config.line_bytes - 1)) == 0) {
    line_shift_ = 0;
    while ((1u << line_shift_) != config.line_bytes) ++line_shift_;
  }
  if (sets_ > 1 && sets_ <= 0xffffffffu) mod_m_ = ~std::uint64_t{0} / sets_ + 1;
  hashed_ = ways_ > kMaxScanWays;
  if (hashed_) {
    std::uint64_t size = 16;
    int bits = 4;
    while (size < 2 * lines) {
      size *= 2;
      ++bits;
    }
    hmask_ = size - 1;
    hshift_ = 64 - bits;
    prev_.resize(lines);
    next_.resize(lines);
    hslots_.resize(size);
  }
  clear();
}

void CacheSim::clear() {
  hits_ = misses_ = 0;
  tags_.assign(sets_ * ways_, kEmpty);
  if (hashed_) {
    head_.assign(sets_, kNil);
    tail_.assign(sets_, kNil);
    used_.assign(sets_, 0);
    hkeys_.assign(hmask_ + 1, 0);
  }
}

inline std::uint64_t CacheSim::home(std::uint64_t line) const {
  return ((line + 1) * 0x9E3779B97F4A7C15ull) >> hshift_;
}

inline std::uint64_t CacheSim::find(std::uint64_t line) const {
  const std::uint64_t key = line + 1;
  for (std::uint64_t i = home(line);; i = (i + 1) & hmask_) {
    if (hkeys_[i] == key) return i;
    if (hkeys_[i] == 0) return kEmpty;
  }
}

inline void CacheSim::hash_insert(std::uint64_t line, std::uint32_t slot) {
  std::uint64_t i = home(line);
  while (hkeys_[i] != 0) i = (i + 1) & hmask_;
  hkeys_[i] = line + 1;
  hslots_[i] = slot;
}

inline void CacheSim::hash_erase(std::uint64_t i) {
  // Backward-shift deletion: pull later entries of the probe run into the hole when their home
  // is not cyclically inside (hole, their position].
  for (std::uint64_t j = (i + 1) & hmask_; hkeys_[j] != 0; j = (j + 1) & hmask_) {
    const std::uint64_t k = home(hkeys_[j] - 1);
    if (((j - k) & hmask_) >= ((j - i) & hmask_)) {
      hkeys_[i] = hkeys_[j];
      hslots_[i] = hslots_[j];
      i = j;
    }
  }
  hkeys_[i] = 0;
}

inline bool CacheSim::access_scan(std::uint64_t line) {
  std::uint64_t* s = tags_.data() + set_of(line) * ways_;
  if (s[0] == line) {
    ++hits_;
    return true;
  }
  for (std::uint32_t i = 1; i < ways_; ++i) {
    if (s[i] == line) {
      for (std::uint32_t k = i; k > 0; --k) s[k] = s[k - 1];
      s[0] = line;
      ++hits_;
      return true;
    }
  }
  for (std::uint32_t k = ways_ - 1; k > 0; --k) s[k] = s[k - 1];
  s[0] = line;
  ++misses_;
  return false;
}

bool CacheSim::access_hashed(std::uint64_t line) {
  const std::uint64_t set = set_of(line);
  const auto unlink = [&](std::uint32_t slot) {
    const std::uint32_t p = prev_[slot], n = next_[slot];
    (p == kNil ? head_[set] : next_[p]) = n;
    (n == kNil ? tail_[set] : prev_[n]) = p;
  };
  const auto push_front = [&](std::uint32_t slot) {
    prev_[slot] = kNil;
    next_[slot] = head_[set];
    (head_[set] == kNil ? tail_[set] : prev_[head_[set]]) = slot;
    head_[set] = slot;
  };
  const std::uint64_t h = find(line);
  if (h != kEmpty) {
    const std::uint32_t slot = hslots_[h];
    if (head_[set] != slot) {
      unlink(slot);
      push_front(slot);
    }
    ++hits_;
    return true;
  }
  ++misses_;
  std::uint32_t slot;
  if (used_[set] < ways_) {
    slot = static_cast<std::uint32_t>(set * ways_ + used_[set]++);
  } else {
    slot = tail_[set];
    unlink(slot);
    hash_erase(find(tags_[slot]));
  }
  tags_[slot] = line;
  hash_insert(line, slot);
  push_front(slot);
  return false;
}

bool CacheSim::access(std::uint64_t address) {
  if (sets_ == 0) {
    ++misses_;
    return false;
  }
  const std::uint64_t line = line_of(address);
  return hashed_ ? access_hashed(line) : access_scan(line);
}

void CacheSim::prefetch(std::uint64_t address) const {
  if (sets_ == 0) return;
  const std::uint64_t line = line_of(address);
  if (hashed_) {
    __builtin_prefetch(hkeys_.data() + home(line));
    return;
  }
  const std::uint64_t* s = tags_.data() + set_of(line) * ways_;
  __builtin_prefetch(s);
  if (ways_ > 8) __builtin_prefetch(s + ways_ - 1);
}

bool CacheSim::contains(std::uint64_t address) const {
  if (sets_ == 0) return false;
  const std::uint64_t line = line_of(address);
  if (hashed_) return find(line) != kEmpty;
  const std::uint64_t* s = tags_.data() + set_of(line) * ways_;
  for (std::uint32_t i = 0; i < ways_; ++i)
    if (s[i] == line) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------
// ModelDevice

namespace {
ModelConfig checked(ModelConfig config) {
  validate(config);
  return config;
}
CacheConfig with_capacity(CacheConfig c, std::uint64_t capacity) {
  c.capacity_bytes = capacity;
  return c;
}
}  // namespace

ModelDevice::ModelDevice(ModelConfig config)
    : config_(checked(std::move(config))),
      ledger_(std::make_shared<detail::ModelLedger>()),
      l1_(with_capacity(config_.l1, l1_capacity_bytes(config_, -1))),
      l2_near_(config_.l2_partitioned ? config_.l2_near : CacheConfig{}),
      l2_(config_.l2),
      l1_capacity_(l1_capacity_bytes(config_, -1)),
      rng_(config_.seed) {
  info_.kind = "model";
  info_.name = "model:" + config_.name;
  info_.ordinal = 0;
  info_.cc_major = config_.cc_major;
  info_.cc_minor = config_.cc_minor;
  info_.sm_count = config_.sm_count;
  info_.l2_bytes = config_.l2.capacity_bytes;
  info_.global_mem_bytes = config_.global_mem_bytes;
  info_.shared_per_sm_bytes = config_.shared_per_sm_bytes;
  // As on real GPUs, one block may opt in to all of an SM's shared memory but 1 KiB.
  info_.shared_per_block_optin_bytes =
      config_.shared_per_sm_bytes > kKiB ? config_.shared_per_sm_bytes - kKiB : 0;
  info_.l1_shared_unified_bytes = config_.l1_shared_unified_bytes;
  info_.sm_clock_max_mhz = config_.sm_clock_mhz;
  info_.mem_clock_max_mhz = config_.mem_clock_mhz;
  info_.mem_bus_width_bits = config_.mem_bus_width_bits;
  info_.uuid = "MODEL-" + config_.name;
  info_.extra = {{"modelled", true},
                 {"l1_default_capacity_bytes", l1_capacity_},
                 {"l2_partitioned", config_.l2_partitioned},
                 {"note", "simulated cache hierarchy; parameters are a model, not measurements"}};
}

ModelDevice::~ModelDevice() = default;

std::unique_ptr<ProbeBuffer> ModelDevice::alloc_probe_buffer(std::uint64_t bytes) {
  if (bytes == 0) throw UsageError("probe buffer must be > 0 bytes");
  if (bytes > free_memory())
    throw UsageError("probe buffer of " + format_bytes(bytes) +
                     " does not fit in free device memory (" + format_bytes(free_memory()) + ")");
  if (ledger_->live_chains == 0) next_base_ = 0;
  const std::uint64_t base = next_base_;
  next_base_ += round_up(bytes, 2 * kMiB);
  return std::make_unique<ModelProbeBuffer>(bytes, base, ledger_);
}

SequenceTiming ModelDevice::run_sequence(ProbeBuffer& buffer, const AccessSequence& s) {
  auto* b = dynamic_cast<ModelProbeBuffer*>(&buffer);
  if (b == nullptr || b->ledger() != ledger_.get())
    throw UsageError("run_sequence: the probe buffer was not made by this model device");
  if (s.timed_from > s.sequence.size())
    throw UsageError("run_sequence: timed_from " + std::to_string(s.timed_from) +
                     " exceeds the sequence length " + std::to_string(s.sequence.size()));
  if (s.sequence.size() + s.place.size() > max_sequence_length())
    throw UsageError("run_sequence: " + std::to_string(s.sequence.size() + s.place.size()) +
                     " accesses; at most " + std::to_string(max_sequence_length()));
  const auto check_sm = [&](int sm, const char* what) {
    if (sm < -1 || sm >= config_.sm_count)
      throw UsageError(std::string("run_sequence: ") + what + " " + std::to_string(sm) +
                       " is not an SM; allowed: -1 or 0.." + std::to_string(config_.sm_count - 1));
    return sm < 0 ? 0 : sm;
  };
  const int sm = check_sm(s.sm, "sm");
  const int place_sm = check_sm(s.place_sm, "place_sm");
  const auto check_offsets = [&](const std::vector<std::uint64_t>& v) {
    for (auto o : v)
      if (o % 8 != 0 || o + 8 > b->bytes())
        throw UsageError("run_sequence: offset " + std::to_string(o) +
                         " is unaligned or outside the " + std::to_string(b->bytes()) +
                         "-B buffer; allowed: multiples of 8 below the buffer size");
  };
  check_offsets(s.sequence);
  check_offsets(s.place);
  check_offsets(s.sweep);
  if (!s.sweep.empty()) {
    if (s.sweep.size() > max_sweep_length())
      throw UsageError("run_sequence: a sweep of " + std::to_string(s.sweep.size()) +
                       " lines; at most " + std::to_string(max_sweep_length()));
    if (s.sm < 0) throw UsageError("run_sequence: a sweep runs on the sequence's SM; give sm >= 0");
    if (s.sweep_rounds < 1 || s.sweep_rounds > 16)
      throw UsageError("run_sequence: sweep_rounds " + std::to_string(s.sweep_rounds) +
                       "; allowed 1..16");
  }
  const std::uint64_t capacity = l1_capacity_bytes(config_, s.carveout_percent);
  if (!seq_ || capacity != seq_->l1_capacity) {
    const bool keep = seq_ != nullptr;
    auto fresh = std::make_unique<detail::SequenceModel>(config_, capacity);
    if (keep) {  // only the L1 is reconfigured
      fresh->l2 = std::move(seq_->l2);
      fresh->tlb = std::move(seq_->tlb);
    }
    seq_ = std::move(fresh);
  }
  if (s.flush_l2) seq_->flush_l2();
  const bool use_l1 = caches_in_l1(s.op);
  // Every kernel launch invalidates the L1 (seen on the H200): place and sequence are launches.
  if (!s.place.empty()) {
    seq_->invalidate_l1();
    for (auto o : s.place) seq_->access(b->base() + o, place_sm, use_l1);
  }
  // The sweep's threads load in parallel on the real GPU; the model takes them in list order,
  // one round after the other (the L1 is the sweep launch's own and is invalidated after it).
  for (int r = 0; r < (s.sweep.empty() ? 0 : s.sweep_rounds); ++r)
    for (auto o : s.sweep) seq_->access(b->base() + o, sm, false);
  seq_->invalidate_l1();
  SequenceTiming t;
  t.cycles.reserve(s.sequence.size() - s.timed_from);
  for (std::size_t i = 0; i < s.sequence.size(); ++i) {
    const double c = seq_->access(b->base() + s.sequence[i], sm, use_l1);
    if (i >= s.timed_from) t.cycles.push_back(c * noise_factor());
  }
  t.smid = sm;
  t.verified = true;
  return t;
}

std::uint64_t ModelDevice::free_memory() const {
  return config_.global_mem_bytes > ledger_->live_bytes
             ? config_.global_mem_bytes - ledger_->live_bytes
             : 0;
}

ClockReading ModelDevice::read_clocks() const {
  ClockReading c;
  c.valid = true;
  c.sm_mhz = config_.sm_clock_mhz;
  c.mem_mhz = config_.mem_clock_mhz;
  c.throttle_reasons = 0;
  c.time_utc = units::utc_now();
  return c;
}

TimerCalibration ModelDevice::calibrate_timer() {
  TimerCalibration t;
  t.clock64_overhead_cycles = 2;
  t.clock32_overhead_cycles = 1;
  return t;
}

void ModelDevice::reset_caches() {
  l1_.clear();
  l2_near_.clear();
  l2_.clear();
}

std::unique_ptr<Chain> ModelDevice::make_chain(const ChainSpec& spec) {
  if (spec.node_stride_bytes == 0) throw UsageError("node stride must be > 0 bytes");
  if (spec.working_set_bytes < spec.node_stride_bytes)
    throw UsageError("working set " + std::to_string(spec.working_set_bytes) +
                     " B is smaller than one node (stride " +
                     std::to_string(spec.node_stride_bytes) + " B)");
  const std::uint64_t free = free_memory();
  if (spec.working_set_bytes > free) {
    std::string ws = format_bytes(spec.working_set_bytes), fr = format_bytes(free);
    if (ws == fr) {
      ws = std::to_string(spec.working_set_bytes) + " B";
      fr = std::to_string(free) + " B";
    }
    throw UsageError("working set " + ws + " does not fit in free device memory (" + fr + ")");
  }
  const std::uint64_t nodes = spec.working_set_bytes / spec.node_stride_bytes;
  if (nodes > std::numeric_limits<std::uint32_t>::max())
    throw UsageError("working set " + format_bytes(spec.working_set_bytes) + " has " +
                     std::to_string(nodes) + " nodes; at most 4294967295 are supported");
  // A fresh allocation: addresses restart at 0 when nothing else is live; line aligned (2 MiB).
  if (ledger_->live_chains == 0) next_base_ = 0;
  const std::uint64_t base = next_base_;
  next_base_ += round_up(spec.working_set_bytes, 2 * kMiB);
  auto chain = std::make_unique<ModelChain>(
      spec, analysis::random_cycle_order(static_cast<std::uint32_t>(nodes), spec.seed), base,
      ledger_);
  reset_caches();
  return chain;
}

template <bool kL1, bool kPartitioned, bool kCount>
std::uint32_t ModelDevice::walk(const std::vector<std::uint32_t>& order,
                                const std::vector<std::uint32_t>& next, std::uint64_t base,
                                std::uint32_t stride, std::uint32_t node, std::uint64_t first_step,
                                std::uint64_t steps, ModelChaseStats& stats) {
  // The walk itself follows the successor table (node = next[node]), like the GPU's chase. The
  // visit order is only used to issue host prefetches a few steps ahead: the successor table and
  // the simulated caches' sets are far larger than the host's caches for big working sets, and
  // without the hints every step would wait for host memory. The hints change nothing simulated.
  constexpr std::uint64_t kAhead = 12;
  const std::uint32_t* succ = next.data();
  const std::uint32_t* ord = order.data();
  const std::uint64_t n = order.size();
  std::uint64_t ahead = (first_step + kAhead) % n;
  for (std::uint64_t s = 0; s < steps; ++s) {
    {
      const std::uint32_t future = ord[ahead];
      __builtin_prefetch(succ + future);
      const std::uint64_t future_address = base + static_cast<std::uint64_t>(future) * stride;
      if (kL1) l1_.prefetch(future_address);
      if (kPartitioned) l2_near_.prefetch(future_address);
      l2_.prefetch(future_address);
      if (++ahead == n) ahead = 0;
    }
    const std::uint64_t address = base + static_cast<std::uint64_t>(node) * stride;
    if (kL1 && l1_.access(address)) {
      if (kCount) ++stats.l1_hits;
    } else if (kPartitioned) {
      if (l2_near_.access(address)) {
        if (kCount) ++stats.l2_hits;
      } else if (l2_.access(address)) {
        if (kCount) ++stats.l2_far_hits;
      } else {
        if (kCount) ++stats.dram_loads;
      }
    } else {
      if (l2_.access(address)) {
        if (kCount) ++stats.l2_hits;
      } else {
        if (kCount) ++stats.dram_loads;
      }
    }
    node = succ[node];
  }
  return node;
}

double ModelDevice::noise_factor() {
  if (config_.noise_relative_sigma == 0) return 1.0;
  // Box-Muller on the raw 64-bit stream: identical on every standard library.
  const double u1 = (static_cast<double>(rng_() >> 11) + 1.0) * 0x1.0p-53;  // (0, 1]
  const double u2 = static_cast<double>(rng_() >> 11) * 0x1.0p-53;          // [0, 1)
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  const double f = 1.0 + config_.noise_relative_sigma * z;
  return f > 0.01 ? f : 0.01;
}

ChaseTiming ModelDevice::chase(Chain& chain, const ChaseParams& params) {
  auto* mc = dynamic_cast<ModelChain*>(&chain);
  if (mc == nullptr || mc->ledger() != ledger_.get())
    throw UsageError("chase: the chain was not made by this model device");
  if (params.timed_steps == 0) throw UsageError("chase: timed_steps must be > 0");

  const std::uint64_t capacity = l1_capacity_bytes(config_, params.carveout_percent);
  if (capacity != l1_capacity_) {  // a reconfigured L1 starts empty
    l1_ = CacheSim(with_capacity(config_.l1, capacity));
    l1_capacity_ = capacity;
  }
  // A kernel launch invalidates the L1 on real GPUs (seen on the H200): each chase is a launch.
  l1_.clear();

  const bool use_l1 = caches_in_l1(params.op);
  const bool part = config_.l2_partitioned;
  const auto& next = mc->next();
  const std::uint64_t base = mc->base();
  const std::uint32_t stride = mc->spec().node_stride_bytes;
  ModelChaseStats stats;
  const auto& order = mc->order();
  const std::uint64_t start = params.start_step % order.size();
  std::uint32_t node = order[start];
  auto run = [&](std::uint64_t first, std::uint64_t steps, auto count) {
    constexpr bool kCount = decltype(count)::value;
    if (use_l1 && part)
      return walk<true, true, kCount>(order, next, base, stride, node, first, steps, stats);
    if (use_l1)
      return walk<true, false, kCount>(order, next, base, stride, node, first, steps, stats);
    if (part)
      return walk<false, true, kCount>(order, next, base, stride, node, first, steps, stats);
    return walk<false, false, kCount>(order, next, base, stride, node, first, steps, stats);
  };
  node = run(start, params.warmup_steps, std::false_type{});
  node = run(start + params.warmup_steps, params.timed_steps, std::true_type{});

  const double l2_latency =
      part ? config_.l2_near.hit_latency_cycles : config_.l2.hit_latency_cycles;
  const double cycles = static_cast<double>(stats.l1_hits) * config_.l1.hit_latency_cycles +
                        static_cast<double>(stats.l2_hits) * l2_latency +
                        static_cast<double>(stats.l2_far_hits) * config_.l2_far_hit_latency_cycles +
                        static_cast<double>(stats.dram_loads) * config_.dram_latency_cycles;
  last_stats_ = stats;
  last_final_node_ = node;

  const std::uint32_t expected =
      analysis::node_after(mc->order(), start + params.warmup_steps + params.timed_steps);
  if (node != expected)
    throw VerificationError("model chase ended on node " + std::to_string(node) +
                            ", expected node " + std::to_string(expected));

  ChaseTiming t;
  t.cycles_per_step = cycles / static_cast<double>(params.timed_steps) * noise_factor();
  t.total_cycles = t.cycles_per_step * static_cast<double>(params.timed_steps);
  t.smid = 0;
  t.verified = true;
  return t;
}

ChaseTiming ModelDevice::shared_chase(std::uint32_t bytes, std::uint32_t node_stride_bytes,
                                      std::uint64_t timed_steps) {
  if (node_stride_bytes == 0) throw UsageError("shared chase: node stride must be > 0 bytes");
  if (bytes < node_stride_bytes)
    throw UsageError("shared chase: " + std::to_string(bytes) +
                     " B is smaller than one node (stride " + std::to_string(node_stride_bytes) +
                     " B)");
  if (bytes > config_.shared_per_sm_bytes)
    throw UsageError("shared chase: " + format_bytes(bytes) +
                     " exceeds the shared memory per SM (" +
                     format_bytes(config_.shared_per_sm_bytes) + ")");
  if (timed_steps == 0) throw UsageError("shared chase: timed_steps must be > 0");
  ChaseTiming t;
  t.cycles_per_step = config_.shared_latency_cycles * noise_factor();
  t.total_cycles = t.cycles_per_step * static_cast<double>(timed_steps);
  t.smid = 0;
  t.verified = true;
  return t;
}

nlohmann::json ModelDevice::environment() const {
  return {{"device_kind", "model"},
          {"device_name", info_.name},
          {"note",
           "modelled GPU: a cache-hierarchy simulator; every parameter below is a model input "
           "(plausible, not a measurement)"},
          {"model", to_json(config_)},
          {"timer",
           {{"clock64_overhead_cycles", 2},
            {"clock32_overhead_cycles", 1},
            {"included_in_chase_timings", false}}},
          {"live_chains", ledger_->live_chains},
          {"free_memory_bytes", free_memory()},
          {"clocks", to_json(read_clocks())}};
}

// ---------------------------------------------------------------------------------------------
// Built-in models.
//
// THESE ARE MODELS: plausible parameters chosen to resemble the named GPUs, NOT measurements of
// them. Latencies are SM cycles of a dependent single-thread chase.
//  * Every model's default shared carve-out is 0, so a chase without a carve-out request sees
//    the largest L1 (the whole unified L1/shared storage), as on a GPU running a kernel that
//    uses no shared memory. carveout_percent = 100 gives the smallest L1.
//  * L1: 128-B lines, 4-way (a guess; with a contiguous chain the lines spread evenly over the
//    sets, so the associativity does not move the capacity step).
//  * L2: 128-B lines, 16-way. h200 and a100 have a partitioned L2 (near half + far half);
//    rtx5080 a single L2.
//  * rtx5080: two candidate latency sets were considered, 43 / 302 / 520 and (at ~2932 MHz)
//    43 / 366 / 922 cycles for L1 / L2 / DRAM; the model uses the second, at 2932 MHz, whose
//    DRAM latency (~315 ns) is the more plausible for GDDR7.

namespace {

ModelConfig h200() {
  ModelConfig c;
  c.name = "h200";
  c.cc_major = 9, c.cc_minor = 0;
  c.sm_count = 132;
  c.sm_clock_mhz = 1980, c.mem_clock_mhz = 3201;
  c.mem_bus_width_bits = 6144;
  c.global_mem_bytes = 141 * kGiB;
  c.l1_shared_unified_bytes = 256 * kKiB;
  c.default_shared_carveout_bytes = 0;
  c.shared_per_sm_bytes = 228 * kKiB;
  c.l1 = {0, 128, 4, 33};
  c.l2_partitioned = true;
  c.l2_near = {30 * kMiB, 128, 16, 260};
  c.l2 = {60 * kMiB, 128, 16, 430};
  c.l2_far_hit_latency_cycles = 430;
  c.l2_partition_masks = {0xab000};  // the partition hash cache.l2.partition found on H200s
  c.dram_latency_cycles = 820;
  c.shared_latency_cycles = 30;
  c.noise_relative_sigma = 0.003;
  c.seed = 200;
  return c;
}

ModelConfig a100() {
  ModelConfig c;
  c.name = "a100";
  c.cc_major = 8, c.cc_minor = 0;
  c.sm_count = 108;
  c.sm_clock_mhz = 1410, c.mem_clock_mhz = 1215;
  c.mem_bus_width_bits = 5120;
  c.global_mem_bytes = 40 * kGiB;
  c.l1_shared_unified_bytes = 192 * kKiB;
  c.default_shared_carveout_bytes = 0;
  c.shared_per_sm_bytes = 164 * kKiB;
  c.l1 = {0, 128, 4, 34};
  c.l2_partitioned = true;
  c.l2_near = {20 * kMiB, 128, 16, 200};
  c.l2 = {40 * kMiB, 128, 16, 380};
  c.l2_far_hit_latency_cycles = 380;
  c.dram_latency_cycles = 650;
  c.shared_latency_cycles = 29;
  c.noise_relative_sigma = 0.003;
  c.seed = 100;
  return c;
}

ModelConfig rtx5080() {
  ModelConfig c;
  c.name = "rtx5080";
  c.cc_major = 12, c.cc_minor = 0;
  c.sm_count = 84;
  c.sm_clock_mhz = 2932, c.mem_clock_mhz = 15001;
  c.mem_bus_width_bits = 256;
  c.global_mem_bytes = 16 * kGiB;
  c.l1_shared_unified_bytes = 128 * kKiB;
  c.default_shared_carveout_bytes = 0;
  c.shared_per_sm_bytes = 100 * kKiB;
  c.l1 = {0, 128, 4, 43};
  c.l2_partitioned = false;
  c.l2_near = {};  // unused
  c.l2 = {64 * kMiB, 128, 16, 366};
  c.l2_far_hit_latency_cycles = 366;  // unused: one L2
  c.dram_latency_cycles = 922;
  c.shared_latency_cycles = 30;
  c.noise_relative_sigma = 0.003;
  c.seed = 5080;
  return c;
}

/// Small and exact, for fast tests: L1 16 KiB by default (64 KiB unified, 48 KiB carve-out),
/// L2 near 256 KiB / whole 512 KiB, no noise.
ModelConfig tiny() {
  ModelConfig c;
  c.name = "tiny";
  c.cc_major = 9, c.cc_minor = 0;
  c.sm_count = 4;
  c.sm_clock_mhz = 1000, c.mem_clock_mhz = 1000;
  c.mem_bus_width_bits = 256;
  c.global_mem_bytes = 1 * kGiB;
  c.l1_shared_unified_bytes = 64 * kKiB;
  c.default_shared_carveout_bytes = 48 * kKiB;
  c.shared_per_sm_bytes = 48 * kKiB;
  c.l1 = {0, 128, 4, 30};
  c.l2_partitioned = true;
  c.l2_near = {256 * kKiB, 128, 8, 200};
  c.l2 = {512 * kKiB, 128, 8, 300};
  c.l2_far_hit_latency_cycles = 300;
  c.dram_latency_cycles = 500;
  c.shared_latency_cycles = 25;
  c.noise_relative_sigma = 0;
  c.seed = 1;
  return c;
}

}  // namespace

std::vector<std::string> model_names() { return {"h200", "a100", "rtx5080", "tiny"}; }

ModelConfig builtin_model_config(const std::string& name) {
  if (name == "h200") return h200();
  if (name == "a100") return a100();
  if (name == "rtx5080") return rtx5080();
  if (name == "tiny") return tiny();
  std::string list;
  for (const auto& n : model_names()) list += (list.empty() ? "" : ", ") + n;
  throw UsageError("unknown model '" + name + "'; available: " + list);
}

std::unique_ptr<Device> make_model_device(const std::string& name) {
  // A path to a model file (e.g. written by `gpuprobe export-model`) instead of a built-in name.
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".json") == 0) {
    const nlohmann::json j = json_input::load_file(name, "model file");
    try {
      return std::make_unique<ModelDevice>(model_config_from_json(j));
    } catch (const nlohmann::json::exception& e) {
      // An optional field of the wrong type (read with a default) lands here: the file's fault.
      throw UsageError("model file '" + name + "': a field has the wrong type (" +
                       std::string(e.what()) + ")");
    }
  }
  return std::make_unique<ModelDevice>(builtin_model_config(name));
}

}  // namespace gpuprobe::device
