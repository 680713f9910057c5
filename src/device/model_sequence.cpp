#include "device/model_sequence.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/line_select.hpp"
#include "core/text_input.hpp"

namespace gpuprobe::device {

std::string to_string(Replacement r) {
  switch (r) {
    case Replacement::kLru:
      return "lru";
    case Replacement::kFifo:
      return "fifo";
    case Replacement::kTreePlru:
      return "tree_plru";
    case Replacement::kRandom:
      return "random";
  }
  return "lru";
}

Replacement parse_replacement(const std::string& text) {
  if (text == "lru") return Replacement::kLru;
  if (text == "fifo") return Replacement::kFifo;
  if (text == "tree_plru") return Replacement::kTreePlru;
  if (text == "random") return Replacement::kRandom;
  throw UsageError("unknown replacement policy '" + text +
                   "'; allowed: lru, fifo, tree_plru, random");
}

std::string to_string(DataVictim v) {
  switch (v) {
    case DataVictim::kOwnSet:
      return "own_set";
    case DataVictim::kGlobalLru:
      return "global_lru";
    case DataVictim::kRandom:
      return "random";
    case DataVictim::kRandomSet:
      return "random_set";
    case DataVictim::kSetCycle:
      return "set_cycle";
  }
  return "own_set";
}

const std::vector<DataVictim>& data_victims() {
  static const std::vector<DataVictim> all{DataVictim::kOwnSet, DataVictim::kGlobalLru,
                                           DataVictim::kRandom, DataVictim::kRandomSet,
                                           DataVictim::kSetCycle};
  return all;
}

std::string data_victim_names(const std::string& last_joiner) {
  std::string out;
  const auto& all = data_victims();
  for (std::size_t i = 0; i < all.size(); ++i)
    out += (i == 0 ? "" : i + 1 == all.size() ? last_joiner : ", ") + to_string(all[i]);
  return out;
}

std::optional<DataVictim> find_data_victim(const std::string& text) {
  for (DataVictim v : data_victims())
    if (to_string(v) == text) return v;
  return std::nullopt;
}

DataVictim parse_data_victim(const std::string& text) {
  if (const auto v = find_data_victim(text)) return *v;
  throw UsageError("unknown data victim " + text_input::quoted(text) +
                   "; allowed: " + data_victim_names(", "));
}

std::string to_string(Insertion i) {
  switch (i) {
    case Insertion::kMru:
      return "mru";
    case Insertion::kLru:
      return "lru";
    case Insertion::kBimodal:
      return "bimodal";
    case Insertion::kDueling:
      return "dueling";
  }
  return "mru";
}

Insertion parse_insertion(const std::string& text) {
  for (Insertion i : {Insertion::kMru, Insertion::kLru, Insertion::kBimodal, Insertion::kDueling})
    if (to_string(i) == text) return i;
  throw UsageError("unknown insertion policy " + text_input::quoted(text) +
                   "; allowed: mru, lru, bimodal, dueling");
}

int sequence_partitions(const ModelConfig& c) {
  if (c.l2_partitions > 0) return c.l2_partitions;
  return c.l2_partitioned ? 2 : 1;
}

namespace {
int parity(std::uint64_t v) { return __builtin_parityll(v); }
constexpr std::uint64_t kClockBase = std::uint64_t{1} << 40;
}  // namespace

SetCache::SetCache(const CacheConfig& config, std::uint64_t seed) : config_(config), rng_(seed) {
  const std::uint64_t lines = config.line_bytes ? config.capacity_bytes / config.line_bytes : 0;
  ways_ = config.ways ? config.ways : static_cast<std::uint32_t>(lines);
  sets_ = ways_ ? lines / ways_ : 0;
  const std::uint32_t sector = config.sector_bytes ? config.sector_bytes : config.line_bytes;
  sectors_ = config.line_bytes / sector;
  data_lines_ = config.line_bytes ? config.data_capacity_bytes / config.line_bytes : 0;
  clear();
}

void SetCache::clear() {
  held_ = 0;
  use_clock_ = 0;
  last_use_.assign(sets_ * ways_, 0);
  tags_.assign(sets_ * ways_, 0);
  sectors_present_.assign(sets_ * ways_, 0);
  stamps_.assign(sets_ * ways_, 0);
  plru_.assign(sets_, 0);
  priority_.assign(sets_ * ways_, Priority::kNormal);
  protected_held_ = 0;
  classed_ = false;
  // Stamps start high so that an insertion below the oldest line (Insertion::kLru) has room;
  // only their order counts.
  clock_ = kClockBase;
  // The set cycle's pointer starts anywhere (on the H200 it is not reset by a launch). Drawn
  // only for that victim, so that other models' random streams do not move.
  if (config_.data_victim == DataVictim::kSetCycle && data_lines_ != 0 && sets_ != 0)
    cycle_ = rng_() % sets_;
}

namespace {

using line_select::mix64;

}  // namespace

std::uint64_t SetCache::set_of(std::uint64_t address) const {
  if (config_.set_hash_masks.empty()) {
    if (const std::uint64_t unit = config_.placement_unit_bytes; unit != 0) {
      // The block lands at a pseudo-random block (its number mixed, kept to the blocks a
      // 64-bit address holds); its lines keep their order within it.
      address = (mix64(address / unit) >> __builtin_ctzll(unit)) * unit + address % unit;
    }
    if (squeeze_bit_ != 0) {
      const std::uint64_t low = address & ((std::uint64_t{1} << squeeze_bit_) - 1);
      address = ((address >> (squeeze_bit_ + 1)) << squeeze_bit_) | low;
    }
    // Every bit of the line number moves every bit of the set.
    if (config_.scrambled_index) return mix64(address / config_.line_bytes) % sets_;
    return (address / config_.line_bytes) % sets_;
  }
  return xor_set_index(address, config_.set_hash_masks);
}

void SetCache::touch(std::uint64_t set, std::uint32_t way, bool fill) {
  const std::uint64_t slot = set * ways_ + way;
  switch (config_.policy) {
    case Replacement::kLru:
      stamps_[slot] = ++clock_;
      break;
    case Replacement::kFifo:
      if (fill) stamps_[slot] = ++clock_;
      break;
    case Replacement::kTreePlru: {
      // Every node on the way's path points away from the subtree just used.
      std::uint64_t bits = plru_[set];
      for (std::uint32_t node = way + ways_; node > 1; node /= 2) {
        const std::uint32_t parent = node / 2;
        if (node == 2 * parent)
          bits |= std::uint64_t{1} << parent;
        else
          bits &= ~(std::uint64_t{1} << parent);
      }
      plru_[set] = bits;
      break;
    }
    case Replacement::kRandom:
      break;
  }
}

void SetCache::reset_protected() {
  for (auto& p : priority_)
    if (p == Priority::kProtected) p = Priority::kNormal;
  protected_held_ = 0;
}

void SetCache::set_priority(std::uint64_t slot, Priority p) {
  const bool was = priority_[slot] == Priority::kProtected, is = p == Priority::kProtected;
  protected_held_ += is && !was;
  protected_held_ -= was && !is;
  priority_[slot] = p;
}

void SetCache::fill_stale(std::uint64_t first_tag) {
  clear();
  const std::uint64_t all_sectors = (std::uint64_t{1} << sectors_) - 1;
  for (std::uint64_t slot = 0; slot < tags_.size(); ++slot) {
    tags_[slot] = first_tag + slot;
    sectors_present_[slot] = all_sectors;
  }
  held_ = tags_.size();
}

void SetCache::mark(std::uint64_t slot, std::uint64_t set, Mark m) {
  if (m == Mark::kKeep) return;
  classed_ = true;
  Priority p = m == Mark::kFirst    ? Priority::kFirst
               : m == Mark::kNormal ? Priority::kNormal
                                    : Priority::kProtected;
  if (p == Priority::kProtected && priority_[slot] != Priority::kProtected) {
    if (protected_budget_ != kPerSet) {
      if (protected_held_ >= protected_budget_) p = Priority::kNormal;
    } else {
      int held = 0;
      for (std::uint32_t w = 0; w < ways_; ++w)
        held += priority_[set * ways_ + w] == Priority::kProtected && tags_[set * ways_ + w] != 0;
      if (held >= protected_ways_) p = Priority::kNormal;
    }
  }
  set_priority(slot, p);
}

std::uint32_t SetCache::classed_victim(std::uint64_t set) {
  const std::uint64_t base = set * ways_;
  for (auto cls : {Priority::kFirst, Priority::kNormal, Priority::kProtected}) {
    std::uint32_t best = ways_;
    for (std::uint32_t w = 0; w < ways_; ++w) {
      if (priority_[base + w] != cls) continue;
      // LRU / FIFO: the oldest stamp; the other policies: the first of the class.
      if (best == ways_ ||
          ((config_.policy == Replacement::kLru || config_.policy == Replacement::kFifo) &&
           stamps_[base + w] < stamps_[base + best]))
        best = w;
    }
    if (best != ways_) return best;
  }
  return 0;
}

std::uint32_t SetCache::victim(std::uint64_t set) {
  const std::uint64_t base = set * ways_;
  for (std::uint32_t w = 0; w < ways_; ++w)
    if (tags_[base + w] == 0) return w;
  if (classed_) return classed_victim(set);
  switch (config_.policy) {
    case Replacement::kLru:
    case Replacement::kFifo: {
      std::uint32_t best = 0;
      for (std::uint32_t w = 1; w < ways_; ++w)
        if (stamps_[base + w] < stamps_[base + best]) best = w;
      return best;
    }
    case Replacement::kTreePlru: {
      std::uint32_t node = 1;
      while (node < ways_) node = 2 * node + static_cast<std::uint32_t>((plru_[set] >> node) & 1);
      return node - ways_;
    }
    case Replacement::kRandom:
      return static_cast<std::uint32_t>(rng_() % ways_);
  }
  return 0;
}

bool SetCache::contains(std::uint64_t address) const {
  if (sets_ == 0) return false;
  const std::uint64_t tag = address / config_.line_bytes + 1;
  const std::uint64_t base = set_of(address) * ways_;
  const std::uint32_t sector =
      static_cast<std::uint32_t>((address % config_.line_bytes) / (config_.line_bytes / sectors_));
  for (std::uint32_t w = 0; w < ways_; ++w)
    if (tags_[base + w] == tag) return (sectors_present_[base + w] >> sector) & 1;
  return false;
}

void SetCache::invalidate(std::uint64_t slot) {
  if (tags_[slot] == 0) return;
  // A line that leaves gives up its protection (an invalid slot holds nothing to protect).
  if (classed_) set_priority(slot, Priority::kNormal);
  tags_[slot] = 0;
  sectors_present_[slot] = 0;
  --held_;
}

std::uint32_t SetCache::free_data(std::uint64_t set, std::uint32_t free_way) {
  const std::uint64_t base = set * ways_;
  const auto least_recent = [&](std::uint64_t from, std::uint64_t to) {
    std::uint64_t best = ~std::uint64_t{0};
    for (std::uint64_t i = from; i < to; ++i)
      if (tags_[i] != 0 && (best == ~std::uint64_t{0} || last_use_[i] < last_use_[best])) best = i;
    return best;
  };
  std::uint64_t slot = ~std::uint64_t{0};
  switch (config_.data_victim) {
    case DataVictim::kOwnSet:
      slot = least_recent(base, base + ways_);
      if (slot != ~std::uint64_t{0}) {
        invalidate(slot);
        return static_cast<std::uint32_t>(slot - base);
      }
      slot = least_recent(0, tags_.size());
      break;
    case DataVictim::kGlobalLru:
      slot = least_recent(0, tags_.size());
      break;
    case DataVictim::kRandom: {
      // A random held line: draw slots until one holds a line (held_ > 0 here).
      do slot = rng_() % tags_.size();
      while (tags_[slot] == 0);
      break;
    }
    case DataVictim::kRandomSet: {
      // The least recently used line of a random set that holds one (held_ > 0 here; after
      // 64 x sets draws without one, the globally least recently used line).
      for (std::uint64_t n = 0; n < 64 * sets_ && slot == ~std::uint64_t{0}; ++n) {
        const std::uint64_t s = rng_() % sets_;
        slot = least_recent(s * ways_, (s + 1) * ways_);
      }
      if (slot == ~std::uint64_t{0}) slot = least_recent(0, tags_.size());
      break;
    }
    case DataVictim::kSetCycle: {
      // The least recently used line of the next set, in a cycle over all sets, that holds one.
      for (std::uint64_t n = 0; n < sets_ && slot == ~std::uint64_t{0}; ++n) {
        slot = least_recent(cycle_ * ways_, (cycle_ + 1) * ways_);
        cycle_ = (cycle_ + 1) % sets_;
      }
      break;
    }
  }
  if (slot != ~std::uint64_t{0}) invalidate(slot);
  return free_way;
}

void SetCache::set_insertion(Insertion insertion, std::uint32_t bimodal_throttle) {
  insertion_ = insertion;
  throttle_ = bimodal_throttle == 0 ? 1 : bimodal_throttle;
  psel_ = 512;
}

bool SetCache::insert_at_mru(std::uint64_t set) {
  const auto bimodal = [&] { return rng_() % throttle_ == 0; };
  switch (insertion_) {
    case Insertion::kMru:
      return true;
    case Insertion::kLru:
      return false;
    case Insertion::kBimodal:
      return bimodal();
    case Insertion::kDueling: {
      // One set in `period` leads for mru, the one half a period on for bimodal; a leader's
      // miss moves the counter against its policy, the followers take the policy ahead.
      if (sets_ < 2) return true;
      const std::uint64_t period = std::min<std::uint64_t>(32, sets_);
      const std::uint64_t r = set % period;
      if (r == 0) {
        psel_ = std::min<std::uint32_t>(1023, psel_ + 1);
        return true;
      }
      if (r == period / 2) {
        psel_ = psel_ == 0 ? 0 : psel_ - 1;
        return bimodal();
      }
      return psel_ > 512 ? bimodal() : true;
    }
  }
  return true;
}

bool SetCache::access(std::uint64_t address, Mark m) {
  if (sets_ == 0) return false;
  const std::uint64_t tag = address / config_.line_bytes + 1;
  const std::uint64_t set = set_of(address);
  const std::uint64_t base = set * ways_;
  const std::uint64_t sector_bit =
      std::uint64_t{1} << ((address % config_.line_bytes) / (config_.line_bytes / sectors_));
  for (std::uint32_t w = 0; w < ways_; ++w) {
    if (tags_[base + w] != tag) continue;
    touch(set, w, false);
    last_use_[base + w] = ++use_clock_;
    mark(base + w, set, m);
    if (sectors_present_[base + w] & sector_bit) return true;
    sectors_present_[base + w] |= sector_bit;
    return false;
  }
  std::uint32_t w = victim(set);
  if (tags_[base + w] != 0) {
    invalidate(base + w);
  } else if (data_lines_ != 0 && held_ >= data_lines_) {
    w = free_data(set, w);
  }
  ++held_;
  last_use_[base + w] = ++use_clock_;
  tags_[base + w] = tag;
  sectors_present_[base + w] = sector_bit;
  if (classed_) set_priority(base + w, Priority::kNormal);
  mark(base + w, set, m);
  touch(set, w, true);
  if (config_.policy == Replacement::kLru && insertion_ != Insertion::kMru && !insert_at_mru(set)) {
    // Below every other line of the set: the next victim unless hit first.
    std::uint64_t oldest = stamps_[base + w];
    for (std::uint32_t o = 0; o < ways_; ++o)
      if (o != w && tags_[base + o] != 0) oldest = std::min(oldest, stamps_[base + o]);
    stamps_[base + w] = oldest == 0 ? 0 : oldest - 1;
  }
  return false;
}

namespace detail {

SequenceModel::SequenceModel(const ModelConfig& c, std::uint64_t l1_bytes)
    : config(c), l1_capacity(l1_bytes) {
  partitions = sequence_partitions(c);
  CacheConfig l1c = c.l1;
  l1c.capacity_bytes = l1_bytes;
  // A decoupled L1 holding no lines at this carve-out is no L1 (capacity 0), not one whose
  // tags all hold lines (data_capacity_bytes 0 means that).
  if (c.l1_tag_bytes != 0 && l1_bytes != 0) {
    l1c.capacity_bytes = c.l1_tag_bytes;
    l1c.data_capacity_bytes = l1_bytes;
    l1c.data_victim = c.l1_data_victim;
  }
  l1 = SetCache(l1c, c.seed * 7 + 1);
  CacheConfig part = c.l2;
  part.capacity_bytes = c.l2.capacity_bytes / static_cast<std::uint64_t>(partitions);
  for (int p = 0; p < partitions; ++p) {
    l2.emplace_back(part, c.seed * 7 + 2 + p);
    l2.back().set_insertion(c.l2_insertion, c.l2_bimodal_throttle);
  }
  // The exported (chase_structural) models: the lowest bit of the home hash leaves the modulo
  // index, so that each partition's own lines of a contiguous range fill its sets evenly. Not
  // with a placement unit: blocks placed at random fill no partition evenly, and without the
  // bit each block's lines cover consecutive sets one line each, as on the H200.
  if (c.chase_structural && partitions == 2 && part.set_hash_masks.empty() &&
      part.placement_unit_bytes == 0 && !c.l2_partition_masks.empty())
    for (auto& p : l2)
      p.squeeze_index_bit(static_cast<unsigned>(__builtin_ctzll(c.l2_partition_masks[0])));
  for (const auto& t : c.tlb) {
    CacheConfig pc;
    pc.line_bytes = 1;  // pages are addressed by page number (see access)
    pc.capacity_bytes = t.entries;
    pc.ways = t.ways;
    tlb.emplace_back(pc, c.seed * 7 + 9);
  }
}

void SequenceModel::flush_l2() {
  l1.clear();
  for (auto& p : l2) p.clear();
  strides.clear();
}

void SequenceModel::prefetch_after(std::uint64_t address, int sm, bool use_l1) {
  const auto& pf = config.prefetcher;
  if (pf.distance_lines <= 0) return;
  StrideState& st = strides[sm];
  const std::int64_t stride =
      st.seen ? static_cast<std::int64_t>(address) - static_cast<std::int64_t>(st.last) : 0;
  const bool confirmed = st.seen && stride == st.stride && stride > 0 &&
                         static_cast<std::uint64_t>(stride) <= pf.max_stride_bytes;
  st = {address, stride, true};
  if (!confirmed) return;
  for (int d = 1; d <= pf.distance_lines; ++d) {
    const std::uint64_t ahead =
        address + static_cast<std::uint64_t>(d) * static_cast<std::uint64_t>(stride);
    l2[static_cast<std::size_t>(home_of(ahead))].access(ahead);
    if (pf.into_l1 && use_l1) l1.access(ahead);
  }
}

void SequenceModel::place_l2(std::uint64_t address, int sm, SetCache::Mark mark) {
  const int side = side_of(sm), home = home_of(address);
  // A far line's near replica is a plain copy: persisting and evict_last lines hold the
  // set-aside's ways in their home partition only (on the H100 a window as large as the
  // set-aside stays whole, with lines placed by every SM, half of them far).
  const SetCache::Mark replica =
      mark == SetCache::Mark::kProtected ? SetCache::Mark::kNormal : mark;
  if (home != side && config.l2_replication)
    l2[static_cast<std::size_t>(side)].access(address, replica);
  l2[static_cast<std::size_t>(home)].access(address, mark);
}

int SequenceModel::side_of(int sm) const {
  if (partitions == 1) return 0;
  if (!config.sm_partition.empty()) return config.sm_partition[static_cast<std::size_t>(sm)];
  return sm % partitions;
}

int SequenceModel::home_of(std::uint64_t address) const {
  if (partitions == 1) return 0;
  const std::uint64_t mask =
      config.l2_partition_masks.empty() ? config.l2.line_bytes : config.l2_partition_masks[0];
  return parity(address & mask);
}

double SequenceModel::access(std::uint64_t address, int sm, bool use_l1, Served* served) {
  double cycles = 0;
  for (std::size_t i = 0; i < tlb.size(); ++i) {
    if (tlb[i].access(address / config.tlb[i].page_bytes)) break;
    cycles += config.tlb[i].miss_penalty_cycles;
  }
  Served s;
  bool far_home = false;
  if (use_l1 && l1.access(address)) {
    s = Served::kL1;
  } else {
    const int side = side_of(sm), home = home_of(address);
    far_home = home != side;
    if (home == side) {
      s = l2[home].access(address) ? Served::kL2Near : Served::kDram;
    } else if (config.l2_replication && l2[side].access(address)) {
      s = Served::kL2Near;
    } else {
      s = l2[home].access(address) ? Served::kL2Far : Served::kDram;
    }
  }
  const double near =
      config.l2_partitioned ? config.l2_near.hit_latency_cycles : config.l2.hit_latency_cycles;
  switch (s) {
    case Served::kL1:
      cycles += config.l1.hit_latency_cycles;
      break;
    case Served::kL2Near:
      cycles += near;
      break;
    case Served::kL2Far:
      cycles += config.l2_far_hit_latency_cycles;
      break;
    case Served::kDram: {
      const double by_home =
          far_home ? config.dram_far_home_latency_cycles : config.dram_near_home_latency_cycles;
      cycles += partitions == 2 && by_home > 0 ? by_home : config.dram_latency_cycles;
      break;
    }
  }
  if (served) *served = s;
  prefetch_after(address, sm, use_l1);
  return cycles;
}

}  // namespace detail
}  // namespace gpuprobe::device
