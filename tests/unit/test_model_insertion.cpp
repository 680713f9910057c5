// The L2's insertion policy class (ModelConfig::l2_insertion), tested by sequences on one
// set-associative LRU cache of 8 sets x 8 ways:
//   - a cyclic sweep of 9 lines per set (slightly over capacity): mru insertion (classic LRU)
//     keeps nothing, lru insertion (LIP) keeps 7 of each set's 9 lines, bimodal (BIP) keeps
//     some (fewer than LIP: its MRU fills push kept lines out now and then), dueling follows
//     bimodal;
//   - a working set that changes (one that fits, then another that fits): mru adopts the new
//     one at once, LIP never does, dueling follows mru;
// and the model's JSON carries the class both ways, bad values refused.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "device/model_export.hpp"
#include "device/model_sequence.hpp"

namespace gpuprobe::device {
namespace {

constexpr std::uint32_t kLine = 128, kWays = 8, kSets = 64;

SetCache cache_with(Insertion insertion, std::uint32_t throttle = 32) {
  SetCache c(CacheConfig(std::uint64_t{kSets} * kWays * kLine, kLine, kWays, 0), 7);
  c.set_insertion(insertion, throttle);
  return c;
}

/// Hits over `passes` sweeps of `lines` consecutive lines from `first` (after `warm` sweeps).
std::uint64_t cyclic_hits(SetCache& c, std::uint64_t first, std::uint64_t lines, int warm,
                          int passes) {
  std::uint64_t hits = 0;
  for (int p = 0; p < warm + passes; ++p)
    for (std::uint64_t l = 0; l < lines; ++l) {
      const bool hit = c.access((first + l) * kLine);
      if (p >= warm) hits += hit ? 1 : 0;
    }
  return hits;
}

constexpr std::uint64_t kOver = std::uint64_t{kSets} * (kWays + 1);  // 9 lines per set
constexpr int kPasses = 20;

TEST(ModelInsertion, MruInsertionKeepsNothingOfACyclicSweepOverCapacity) {
  auto c = cache_with(Insertion::kMru);
  EXPECT_EQ(cyclic_hits(c, 0, kOver, 2, kPasses), 0u);
}

TEST(ModelInsertion, LruInsertionKeepsAllButOneWayOfEachSet) {
  auto c = cache_with(Insertion::kLru);
  // Each set keeps 7 of its 9 lines; the 8th way takes the other two in turn.
  EXPECT_EQ(cyclic_hits(c, 0, kOver, 2, kPasses), std::uint64_t{kSets} * 7 * kPasses);
}

TEST(ModelInsertion, BimodalKeepsSomeButLessThanLru) {
  auto bip = cache_with(Insertion::kBimodal, 32);
  const auto hits = cyclic_hits(bip, 0, kOver, 2, kPasses);
  const std::uint64_t lip = std::uint64_t{kSets} * 7 * kPasses;
  EXPECT_GT(hits, lip / 2);
  EXPECT_LT(hits, lip);
  // A throttle of 2 puts every other fill at MRU: nearer LRU's nothing than the throttle 32.
  auto loose = cache_with(Insertion::kBimodal, 2);
  EXPECT_LT(cyclic_hits(loose, 0, kOver, 2, kPasses), hits);
}

TEST(ModelInsertion, DuelingFollowsBimodalWhenTheSweepThrashes) {
  auto c = cache_with(Insertion::kDueling);
  const auto hits = cyclic_hits(c, 0, kOver, 4, kPasses);
  EXPECT_GT(hits, std::uint64_t{kSets} * 7 * kPasses / 2);
}

TEST(ModelInsertion, AChangedWorkingSetIsAdoptedByMruNotByLip) {
  const std::uint64_t fits = std::uint64_t{kSets} * kWays;
  for (auto [insertion, adopts] :
       {std::pair{Insertion::kMru, true}, std::pair{Insertion::kLru, false},
        std::pair{Insertion::kDueling, true}}) {
    auto c = cache_with(insertion);
    cyclic_hits(c, 0, fits, 8, 0);                                // the first working set, held
    const auto hits = cyclic_hits(c, 1 << 20, fits, 4, kPasses);  // then another one
    if (adopts)
      EXPECT_GT(hits, fits * kPasses * 3 / 4) << to_string(insertion);
    else
      EXPECT_LT(hits, fits * kPasses / 4) << to_string(insertion);
  }
}

TEST(ModelInsertion, EveryPolicyHitsAWorkingSetThatFitsFromTheStart) {
  for (auto i : {Insertion::kMru, Insertion::kLru, Insertion::kBimodal, Insertion::kDueling}) {
    auto c = cache_with(i);
    // Cold, each set fills its free ways first, so every policy holds a set that fits.
    EXPECT_EQ(cyclic_hits(c, 0, std::uint64_t{kSets} * kWays, 1, 3),
              std::uint64_t{kSets} * kWays * 3)
        << to_string(i);
  }
}

TEST(ModelInsertion, TheModelsJsonCarriesTheClassAndRefusesBadValues) {
  ModelConfig c = builtin_model_config("h200");
  EXPECT_EQ(c.l2_insertion, Insertion::kMru);  // the default: the behaviour before the class
  auto j = to_json(c);
  EXPECT_EQ(j.at("l2_insertion"), "mru");
  j["l2_insertion"] = "bimodal";
  j["l2_bimodal_throttle"] = 16;
  const ModelConfig back = model_config_from_json(j);
  EXPECT_EQ(back.l2_insertion, Insertion::kBimodal);
  EXPECT_EQ(back.l2_bimodal_throttle, 16u);
  EXPECT_EQ(to_json(back).at("l2_insertion"), "bimodal");
  j["l2_insertion"] = "newest";
  EXPECT_THROW(model_config_from_json(j), UsageError);
  j["l2_insertion"] = "lru";
  j["l2_bimodal_throttle"] = 1;
  EXPECT_THROW(model_config_from_json(j), UsageError);
  j["l2_bimodal_throttle"] = 32;
  j["l2_policy"] = "fifo";  // insertion places fills in a recency order: LRU only
  EXPECT_THROW(model_config_from_json(j), UsageError);
  // A model file written before the class reads as mru.
  j.erase("l2_insertion");
  j.erase("l2_bimodal_throttle");
  j["l2_policy"] = "lru";
  EXPECT_EQ(model_config_from_json(j).l2_insertion, Insertion::kMru);
}

}  // namespace
}  // namespace gpuprobe::device
