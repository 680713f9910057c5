#pragma once
// Replicates: one quantity measured k times independently, so that its confidence can see what
// moves between repetitions (fresh allocations, fresh launches, the OS's page cache, clocks),
// not only the sampling noise inside one (core/confidence.hpp, "replicates"; docs/METHOD.md,
// "Confidence"). Each replicate sets itself up afresh (the caller's `one(j)` allocates and warms
// up its own buffers) and runs the usual protocol with a share of the repetitions, so that k
// replicates cost about as many timed repetitions as one measurement did.
#include <algorithm>
#include <memory>
#include <vector>

#include "core/protocol.hpp"

namespace gpuprobe::measure {

/// Replicates per replicated quantity: the fewest from which a spread (and Student's t with 2
/// degrees of freedom) can be estimated.
inline constexpr int kReplicates = 3;

/// The protocol of one of k replicates: the repetitions and the time budget shared among them
/// (never fewer than kMinRepetitions; the warm-up kept, since each replicate starts cold).
inline ProtocolOptions per_replicate(const ProtocolOptions& p, int k = kReplicates) {
  ProtocolOptions q = p;
  k = std::max(1, k);
  q.max_repetitions = std::max(kMinRepetitions, p.max_repetitions / k);
  q.min_repetitions = std::min(q.min_repetitions, q.max_repetitions);
  q.budget_s = p.budget_s / k;
  return q;
}

/// Runs `one(j)` for j = 0 .. k-1 and returns what each returned, in order. `one` must set up
/// its replicate afresh; an exception from any replicate propagates (the quantity is then an
/// error, as a single measurement's would be).
template <typename F>
auto replicate(int k, F&& one) -> std::vector<decltype(one(0))> {
  std::vector<decltype(one(0))> out;
  out.reserve(static_cast<std::size_t>(std::max(0, k)));
  for (int j = 0; j < k; ++j) out.push_back(one(j));
  return out;
}

/// Like replicate(), with resources: `make(j)` returns a std::unique_ptr to replicate j's own
/// buffers, all made before the first replicate runs and kept until the last has run, so that
/// each replicate's allocations are really fresh memory (an allocator hands the block just
/// freed straight back: buffers freed between replicates would put every replicate on the
/// same pages, and placement is one of the things that moves between runs). Then
/// `one(j, resources_j)` measures replicate j.
template <typename Make, typename One>
auto replicate_fresh(int k, Make&& make, One&& one) {
  std::vector<decltype(make(0))> held;
  for (int j = 0; j < k; ++j) held.push_back(make(j));
  return replicate(k, [&](int j) { return one(j, *held[static_cast<std::size_t>(j)]); });
}

}  // namespace gpuprobe::measure
