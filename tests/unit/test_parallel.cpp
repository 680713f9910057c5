// core/parallel.hpp: the host-side splitting that the large output checks run on. A wrong split
// (a range missed or done twice) or a wrong first index would pass broken kernels or name the
// wrong element.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/parallel.hpp"

namespace gpuprobe::parallel {
namespace {

TEST(Parallel, ForRangesCoversEveryItemOnce) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000},
                        std::size_t{3 * 65536 + 7}}) {
    for (std::size_t min_items : {std::size_t{1}, std::size_t{3}, kMinItemsPerThread}) {
      std::vector<std::atomic<int>> seen(n);
      std::vector<std::size_t> lo(64, 0), hi(64, 0);
      const unsigned parts = for_ranges(
          n,
          [&](unsigned k, std::size_t a, std::size_t b) {
            lo[k] = a;
            hi[k] = b;
            for (std::size_t i = a; i < b; ++i) ++seen[i];
          },
          min_items);
      EXPECT_EQ(parts, parts_for(n, min_items));
      EXPECT_GE(parts, 1u);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << n << " " << i;
      // Consecutive ranges in part order, from 0 to n.
      EXPECT_EQ(lo[0], 0u);
      for (unsigned k = 1; k < parts; ++k) EXPECT_EQ(lo[k], hi[k - 1]);
      EXPECT_EQ(hi[parts - 1], n);
    }
  }
}

TEST(Parallel, PartsRespectTheMinimumPerPart) {
  EXPECT_EQ(parts_for(0), 1u);
  EXPECT_EQ(parts_for(kMinItemsPerThread - 1), 1u);
  EXPECT_EQ(parts_for(100, 50), std::min(2u, parts_for(1u << 30, 1)));
  EXPECT_LE(parts_for(std::size_t{1} << 40, 1), 32u);
}

TEST(Parallel, CountMismatchesCountsAndFindsTheFirst) {
  const std::size_t n = 4 * kMinItemsPerThread + 11;  // several parts where cores allow
  std::vector<float> want(n), got(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = got[i] = static_cast<float>(i % 1000) * 0.25f;
  auto none = count_mismatches(got.data(), want.data(), n);
  EXPECT_EQ(none.count, 0u);
  EXPECT_EQ(none.first, n);
  for (std::size_t i : {n - 1, 2 * kMinItemsPerThread + 5, std::size_t{70000}}) got[i] += 1.0f;
  got[3 * kMinItemsPerThread] = std::numeric_limits<float>::quiet_NaN();  // unwritten: wrong
  const auto m = count_mismatches(got.data(), want.data(), n);
  EXPECT_EQ(m.count, 4u);
  EXPECT_EQ(m.first, 70000u);
  // Signed zeros compare equal, as operator== says.
  want[0] = 0.0f;
  got[0] = -0.0f;
  EXPECT_EQ(count_mismatches(got.data(), want.data(), n).count, 4u);
  const auto empty = count_mismatches(got.data(), want.data(), 0);
  EXPECT_EQ(empty.count, 0u);
  EXPECT_EQ(empty.first, 0u);
}

}  // namespace
}  // namespace gpuprobe::parallel
