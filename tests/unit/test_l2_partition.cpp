// cache.l2.partition's inference on synthetic hierarchies: two SM groups, lines whose partition
// is an XOR of address bits (plus a per-page constant, as physical pages do), noisy latencies.
#include <gtest/gtest.h>

#include <bitset>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "analysis/l2_partition.hpp"
#include "core/experiment.hpp"

namespace gpuprobe {
namespace {

using analysis::analyze_l2_partition;
using analysis::PartitionInput;

int parity(std::uint64_t x) { return static_cast<int>(std::bitset<64>(x).count() & 1u); }

struct Synthetic {
  PartitionInput in;
  std::vector<int> group;      // true group of each row
  std::vector<int> partition;  // true partition of each line
};

/// `rows` SMs in two interleaved groups (row 0 in group 1), 4 pages x 128 lines; partition(a)
/// = parity(mask & a) ^ page_bit(page) (^ an AND of two bits when `nonlinear`); near 270
/// cycles, far 510, +-8 of noise. placed_by_group0: every line was last placed by an SM of row
/// 0's group, which therefore finds every line near, and the other group finds its own lines
/// near; otherwise each group finds exactly its own partition near.
Synthetic make(std::uint64_t mask, int rows, std::uint64_t seed, bool nonlinear = false,
               bool placed_by_group0 = false) {
  Synthetic s;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint64_t> line(1, (2u << 20) / 128 - 1);
  std::uniform_real_distribution<double> noise(-8, 8);
  for (std::uint64_t pg = 0; pg < 4; ++pg) {
    s.in.offsets.push_back(pg << 21);
    for (int b = 7; b < 21; ++b) s.in.offsets.push_back((pg << 21) + (std::uint64_t{1} << b));
    for (int k = 0; k < 113; ++k) s.in.offsets.push_back((pg << 21) + line(rng) * 128);
  }
  const int page_bit[4] = {0, 1, 1, 0};
  for (std::uint64_t off : s.in.offsets) {
    int p = parity(mask & off & ((2u << 20) - 1)) ^ page_bit[off >> 21];
    if (nonlinear) p ^= static_cast<int>((off >> 9) & (off >> 10) & 1u);  // an AND: not linear
    s.partition.push_back(p);
  }
  for (int r = 0; r < rows; ++r) {
    const int g = (r * 7 + 1) % 2;  // groups interleaved, row 0 in group 1
    s.group.push_back(g);
    std::vector<double> lat;
    for (int p : s.partition) {
      const bool is_near = placed_by_group0 ? (g == s.group[0] || p == g) : p == g;
      lat.push_back((is_near ? 270.0 : 510.0) + noise(rng));
    }
    s.in.latency.push_back(lat);
  }
  return s;
}

void expect_recovered(const Synthetic& s, std::uint64_t mask) {
  const auto a = analyze_l2_partition(s.in);
  ASSERT_TRUE(a.split);
  EXPECT_NEAR(a.near_cycles, 270, 3);
  EXPECT_NEAR(a.far_cycles, 510, 3);
  EXPECT_EQ(a.group_size[0], 66u);
  EXPECT_EQ(a.group_size[1], 66u);
  // Group 0 is row 0's group; a line is on side 1 when the other group finds it near.
  const int other = 1 - s.group[0];
  for (std::size_t r = 0; r < s.group.size(); ++r)
    EXPECT_EQ(a.row_group[r], s.group[r] == s.group[0] ? 0 : 1) << r;
  for (std::size_t j = 0; j < s.partition.size(); ++j)
    EXPECT_EQ(a.line_partition[j], s.partition[j] == other ? 1 : 0) << j;
  EXPECT_DOUBLE_EQ(a.consistency, 1.0);
  ASSERT_TRUE(a.hash_found);
  EXPECT_EQ(a.page_bytes, 2u << 20);
  EXPECT_EQ(a.hash_mask, mask);
  EXPECT_EQ(a.rank, 14u);
  EXPECT_DOUBLE_EQ(a.hash_accuracy, 1.0);
}

TEST(L2Partition, RecoversComplementaryPartitionsAndTheHashMask) {
  const std::uint64_t mask = (1u << 8) | (1u << 11) | (1u << 12) | (1u << 17) | (1u << 20);
  expect_recovered(make(mask, 132, 7), mask);
}

TEST(L2Partition, RecoversLinesPlacedByTheReferenceGroup) {
  // Row 0's group finds every line near (it placed them); the other group only its own side.
  const std::uint64_t mask = (1u << 7) | (1u << 9) | (1u << 14) | (1u << 19);
  expect_recovered(make(mask, 132, 11, false, true), mask);
}

TEST(L2Partition, ARowOfTheWrongLengthIsRefusedNotReadPastItsEnd) {
  for (const std::size_t keep : {std::size_t{0}, std::size_t{1}}) {
    auto s = make(0x100, 8, 3);
    s.in.latency[2].resize(keep);  // emptied, or cut short
    EXPECT_THROW(analyze_l2_partition(s.in), std::invalid_argument) << keep;
  }
}

TEST(L2Partition, NoSplitWhenEveryLineCostsTheSame) {
  auto s = make(0x100, 8, 3);
  for (auto& row : s.in.latency)
    for (auto& v : row) v = 300;
  const auto a = analyze_l2_partition(s.in);
  EXPECT_FALSE(a.split);
  EXPECT_FALSE(a.hash_found);
}

TEST(L2Partition, ANonLinearPartitionIsNotReportedAsAMask) {
  const auto s = make(0x900, 16, 5, true);
  const auto a = analyze_l2_partition(s.in);
  ASSERT_TRUE(a.split);
  EXPECT_FALSE(a.hash_found && a.hash_accuracy == 1.0 && a.page_bytes == (2u << 20));
}

TEST(L2Partition, SolvesAndRejectsGf2Systems) {
  std::uint64_t mask = 0;
  std::size_t rank = 0;
  // x0 = 0b011 -> 1, x1 = 0b110 -> 0, x2 = 0b100 -> 1: bit 2 = 1, then bit 1 = 1, bit 0 = 0.
  ASSERT_TRUE(analysis::solve_gf2({0b011, 0b110, 0b100}, {1, 0, 1}, mask, rank));
  EXPECT_EQ(mask, 0b110u);
  EXPECT_EQ(rank, 3u);
  // 0b101 = 0b011 ^ 0b110 must give 1 ^ 0 = 1: consistent with rank 2; 0 contradicts.
  EXPECT_TRUE(analysis::solve_gf2({0b011, 0b110, 0b101}, {1, 0, 1}, mask, rank));
  EXPECT_EQ(rank, 2u);
  EXPECT_FALSE(analysis::solve_gf2({0b011, 0b110, 0b101}, {1, 0, 0}, mask, rank));
}

TEST(L2Partition, RegisteredAndWaivedOnTheModel) {
  const auto* e = Registry::builtin().find("cache.l2.partition");
  ASSERT_NE(e, nullptr);
  device::DeviceInfo info;
  info.kind = "model";
  EXPECT_EQ(e->waiver(info).value_or(""), kNeedsCudaGpu);
  info.kind = "cuda";
  EXPECT_FALSE(e->waiver(info).has_value());
}

}  // namespace
}  // namespace gpuprobe
