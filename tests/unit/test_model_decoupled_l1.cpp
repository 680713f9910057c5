// The decoupled L1 (ModelConfig::l1_tag_bytes over the carve-out's data capacity, victim rule
// l1_data_victim): a chase's L1 knee follows the data array, not the tag array, and past it
// the hits fall off gradually while the tags still name every line, where a coupled L1 of the
// same capacity loses them faster. One cache level (SetCache) under a pointer chase's access
// order: a fixed random cyclic order over the working set's lines, round after round.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "device/model_sequence.hpp"

namespace gpuprobe::device {
namespace {

constexpr std::uint32_t kLine = 128, kWays = 4;

CacheConfig decoupled(std::uint64_t tag_lines, std::uint64_t data_lines, DataVictim victim) {
  CacheConfig c(tag_lines * kLine, kLine, kWays, 0);
  c.data_capacity_bytes = data_lines * kLine;
  c.data_victim = victim;
  return c;
}

/// The share of hits over `rounds` rounds (after two that fill) of a chase over `lines` lines.
double chase_hits(const CacheConfig& config, std::uint64_t lines, int rounds = 6) {
  SetCache c(config, 11);
  std::vector<std::uint64_t> order(lines);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(lines);
  std::shuffle(order.begin(), order.end(), rng);
  std::uint64_t hits = 0;
  for (int r = 0; r < 2 + rounds; ++r)
    for (auto l : order) {
      const bool hit = c.access(l * kLine);
      if (r >= 2) hits += hit ? 1 : 0;
    }
  return static_cast<double>(hits) / static_cast<double>(lines * rounds);
}

/// The knee: the largest working set (in steps of 4 lines) that the chase hits entirely.
std::uint64_t knee_lines(const CacheConfig& config, std::uint64_t up_to) {
  std::uint64_t knee = 0;
  for (std::uint64_t w = 4; w <= up_to; w += 4)
    if (chase_hits(config, w) == 1.0) knee = w;
  return knee;
}

TEST(ModelDecoupledL1, TheKneeFollowsTheDataArrayNotTheTags) {
  for (auto victim : {DataVictim::kSetCycle, DataVictim::kOwnSet, DataVictim::kGlobalLru}) {
    // 256 tags (64 sets x 4 ways) over 192 lines of data.
    EXPECT_EQ(knee_lines(decoupled(256, 192, victim), 320), 192u) << to_string(victim);
    // A larger carve-out leaves 160 lines: the knee moves with them.
    EXPECT_EQ(knee_lines(decoupled(256, 160, victim), 320), 160u) << to_string(victim);
    // More tags over the same data: the knee stays.
    EXPECT_EQ(knee_lines(decoupled(512, 192, victim), 320), 192u) << to_string(victim);
  }
}

TEST(ModelDecoupledL1, PastTheKneeHitsFallGraduallyWhileTheTagsNameEveryLine) {
  const auto cfg = decoupled(256, 192, DataVictim::kSetCycle);
  // Between the data's 192 lines and the tags' 256 the chase still hits a share of its lines.
  double last = 1.0;
  for (std::uint64_t w : {200u, 216u, 232u, 248u}) {
    const double h = chase_hits(cfg, w);
    EXPECT_GT(h, 0.15) << w;
    EXPECT_LT(h, 1.0) << w;
    EXPECT_LE(h, last + 0.05) << w;  // falling, up to the victim rule's unevenness
    last = h;
  }
  // A coupled L1 of the same 192 lines (48 sets x 4 ways, modulo) loses more just past it.
  const CacheConfig coupled(192 * kLine, kLine, kWays, 0);
  EXPECT_EQ(knee_lines(coupled, 320), 192u);
  EXPECT_LT(chase_hits(coupled, 232), chase_hits(cfg, 232));
}

}  // namespace
}  // namespace gpuprobe::device
