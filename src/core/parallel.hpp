#pragma once
// Host work split over the host's cores: the checks of large kernel outputs (tens of MB per
// launch) and the host's own images of large data sets. Single-threaded they cost more than the
// kernels they check (issue 10, "Performance").
#include <algorithm>
#include <cstddef>
#include <system_error>
#include <thread>
#include <vector>

namespace gpuprobe::parallel {

/// Below this many items a range is done on the calling thread (threads cost more).
inline constexpr std::size_t kMinItemsPerThread = std::size_t{1} << 16;

/// The parts [0, n) is split into: one per core (at most 32), each at least `min_items` items.
inline unsigned parts_for(std::size_t n, std::size_t min_items = kMinItemsPerThread) {
  const unsigned cores = std::clamp(std::thread::hardware_concurrency(), 1u, 32u);
  const std::size_t by_size = std::max<std::size_t>(1, n / std::max<std::size_t>(min_items, 1));
  return static_cast<unsigned>(std::min<std::size_t>(cores, by_size));
}

/// Calls work(part, begin, end) for consecutive ranges covering [0, n), one per part, in
/// parallel (parts_for(n, min_items) of them); returns the number of parts. A part whose thread
/// cannot be had runs on the calling thread. `work` must not throw.
template <class Work>
unsigned for_ranges(std::size_t n, Work&& work, std::size_t min_items = kMinItemsPerThread) {
  const unsigned parts = parts_for(n, min_items);
  auto range = [&](unsigned k) {
    const std::size_t a = n / parts * k + std::min<std::size_t>(k, n % parts);
    const std::size_t b = a + n / parts + (k < n % parts ? 1 : 0);
    work(k, a, b);
  };
  if (parts == 1) {
    range(0);
    return 1;
  }
  std::vector<std::thread> threads;
  threads.reserve(parts - 1);
  for (unsigned k = 1; k < parts; ++k) {
    try {
      threads.emplace_back(range, k);
    } catch (const std::system_error&) {
      range(k);
    }
  }
  range(0);
  for (auto& t : threads) t.join();
  return parts;
}

/// The mismatches of got[i] against want[i] (operator==, so a NaN never matches) over [0, n),
/// and the first index that differs (n when none).
struct Mismatches {
  std::size_t count = 0;
  std::size_t first = 0;
};
template <class T>
Mismatches count_mismatches(const T* got, const T* want, std::size_t n) {
  std::vector<std::size_t> count(parts_for(n), 0), first(parts_for(n), n);
  for_ranges(n, [&](unsigned k, std::size_t a, std::size_t b) {
    std::size_t c = 0, f = n;
    for (std::size_t i = a; i < b; ++i) {
      if (got[i] == want[i]) continue;
      if (!c) f = i;
      ++c;
    }
    count[k] = c;
    first[k] = f;
  });
  Mismatches m;
  m.first = n;
  for (std::size_t k = 0; k < count.size(); ++k) {
    m.count += count[k];
    m.first = std::min(m.first, first[k]);
  }
  return m;
}

}  // namespace gpuprobe::parallel
