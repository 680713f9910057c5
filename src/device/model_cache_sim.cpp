// CacheSim: the set-associative LRU cache behind the modelled chase (see model_device.hpp).
#include <limits>
#include <string>

#include "core/error.hpp"
#include "device/model_device.hpp"

namespace gpuprobe::device {

namespace detail {

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
}  // namespace detail

// ---------------------------------------------------------------------------------------------
// CacheSim

CacheSim::CacheSim(const CacheConfig& config) : config_(config) {
  detail::check_cache("cache", config);
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

}  // namespace gpuprobe::device
