#pragma once
// The structural hierarchy behind ModelDevice::run_sequence: caches with any of the modelled
// replacement policies, hashed set indices and sectors, L2 partitions with a home hash and
// replication, and TLB levels. Host-only; exact (noise is added by the device).
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "device/model_device.hpp"

namespace gpuprobe::device {

/// One set-associative cache level with a chosen replacement policy. Invalid ways are filled
/// lowest first; a hit on the line but not the sector fetches the sector (a miss at this level
/// that does not replace anything).
class SetCache {
 public:
  SetCache() = default;
  SetCache(const CacheConfig& config, std::uint64_t seed);
  /// A line's eviction class (L2Residency): evict-first lines go before normal ones, normal
  /// ones before protected (persisting / evict_last) ones.
  enum class Priority : std::uint8_t { kNormal = 0, kFirst = 1, kProtected = 2 };
  /// What an access does to its line's class: plain loads keep it (a fill is normal).
  enum class Mark : std::uint8_t { kKeep, kNormal, kFirst, kProtected };
  /// Looks up `address`; true on a hit of its sector. A miss fills (evicting per the policy,
  /// and per the classes once any line was marked).
  bool access(std::uint64_t address, Mark mark = Mark::kKeep);
  /// The most protected lines one set holds; a line marked protected beyond it is normal.
  void set_protected_ways(int ways) { protected_ways_ = ways; }
  /// Caps the protected lines of the whole cache at `lines` instead (anywhere, a set may hold
  /// only protected lines); kPerSet: back to set_protected_ways.
  static constexpr std::uint64_t kPerSet = ~std::uint64_t{0};
  void set_protected_budget(std::uint64_t lines) { protected_budget_ = lines; }
  /// Every protected line becomes normal (cudaCtxResetPersistingL2Cache).
  void reset_protected();
  /// Every way holds a line of no buffer (tags from `first_tag` on), older than any access
  /// after it: the L2 as a flush by streaming traffic leaves it.
  void fill_stale(std::uint64_t first_tag);
  bool contains(std::uint64_t address) const;
  void clear();
  std::uint64_t sets() const { return sets_; }
  std::uint32_t ways() const { return ways_; }
  std::uint64_t set_of(std::uint64_t address) const;
  /// Modulo indexing of the address with bit `bit` removed (0 = none): one partition of a
  /// two-partition L2 whose home is chosen by a hash including that bit holds only half of the
  /// lines of any range, and without the bit those lines fill its sets evenly.
  void squeeze_index_bit(unsigned bit) { squeeze_bit_ = bit; }
  /// Where fills enter the recency order (LRU policy only; see Insertion).
  void set_insertion(Insertion insertion, std::uint32_t bimodal_throttle);

 private:
  void touch(std::uint64_t set, std::uint32_t way, bool fill);
  std::uint32_t victim(std::uint64_t set);
  /// The victim when classes are in use: the policy's choice among the lowest class present.
  std::uint32_t classed_victim(std::uint64_t set);
  void mark(std::uint64_t slot, std::uint64_t set, Mark m);
  /// A decoupled store is full and `set` has a free tag: frees a line's data (and its tag) per
  /// the data victim policy; returns the way of `set` to fill.
  std::uint32_t free_data(std::uint64_t set, std::uint32_t free_way);
  void invalidate(std::uint64_t slot);
  /// Whether a fill into `set` enters at the MRU place (Insertion), and the dueling leaders'
  /// counter kept up to date with this miss.
  bool insert_at_mru(std::uint64_t set);

  CacheConfig config_;
  std::uint64_t sets_ = 0;
  std::uint32_t ways_ = 0;
  std::uint32_t sectors_ = 1;
  std::vector<std::uint64_t> tags_;  ///< line number + 1; 0 = invalid
  std::vector<std::uint64_t> sectors_present_;
  std::vector<std::uint64_t> stamps_;  ///< LRU: last use; FIFO: fill time
  std::vector<std::uint64_t> plru_;    ///< per set: tree bits, node n at bit n (1-based heap)
  std::uint64_t clock_ = 0;
  // Decoupled store: the most lines held (0 = every tag), lines held, last use of each slot.
  std::uint64_t data_lines_ = 0, held_ = 0;
  std::vector<std::uint64_t> last_use_;

  std::uint64_t use_clock_ = 0;
  std::uint64_t cycle_ = 0;  ///< DataVictim::kSetCycle: the next set the pointer visits
  unsigned squeeze_bit_ = 0;
  std::mt19937_64 rng_;
  std::vector<Priority> priority_;  ///< per slot; used once classed_ is set
  std::uint64_t protected_budget_ = kPerSet;
  std::uint64_t protected_held_ = 0;  ///< protected slots (kept for the budget)
  /// Sets slot's class, keeping protected_held_.
  void set_priority(std::uint64_t slot, Priority p);
  bool classed_ = false;
  int protected_ways_ = 0;
  Insertion insertion_ = Insertion::kMru;
  std::uint32_t throttle_ = 32;
  std::uint32_t psel_ = 512;  ///< dueling: 10-bit counter, above half = the mru leaders miss more
};

namespace detail {

/// What served one access.
enum class Served { kL1, kL2Near, kL2Far, kDram };

struct SequenceModel {
  SequenceModel(const ModelConfig& config, std::uint64_t l1_capacity);
  /// One load by `sm`; returns its cost in cycles (without noise) and what served it.
  double access(std::uint64_t address, int sm, bool use_l1, Served* served = nullptr);
  void invalidate_l1() { l1.clear(); }
  void flush_l2();
  /// One line of a bulk pass by `sm` into the L2 (no L1, no TLB), marked `mark`.
  void place_l2(std::uint64_t address, int sm, SetCache::Mark mark);
  int side_of(int sm) const;
  int home_of(std::uint64_t address) const;

  /// The stride prefetcher's view of one SM's loads (ModelConfig::prefetcher).
  struct StrideState {
    std::uint64_t last = 0;
    std::int64_t stride = 0;
    bool seen = false;
  };
  /// Fills what the prefetcher fetches after `address` (nothing when it is off).
  void prefetch_after(std::uint64_t address, int sm, bool use_l1);

  const ModelConfig& config;
  std::map<int, StrideState> strides;
  std::uint64_t l1_capacity = 0;
  int partitions = 1;
  SetCache l1;
  std::vector<SetCache> l2;
  std::vector<SetCache> tlb;
};

}  // namespace detail
}  // namespace gpuprobe::device
