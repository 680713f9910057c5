#pragma once
// The building blocks the cache-structure searches (measure/cache_search.hpp) share: a level's
// base sequence, candidate lines, and sequences longer than one call.
#include <cstddef>
#include <cstdint>
#include <random>
#include <unordered_set>
#include <vector>

#include "measure/cache_search.hpp"

namespace gpuprobe::measure::cache::detail {

/// The tests run each sequence of a conflict check this many times over; the first round is
/// untimed (it fills an empty set: the L1 is invalidated by the launch, the L2 flushed).
inline constexpr int kRounds = 4;
/// Misses a conflict needs: one could be a stray slow access on real hardware. (Not a fraction
/// of the accesses: a capacity test just past the capacity overflows a single set.)
inline int min_misses(std::size_t) { return 2; }

/// A sequence of `level`'s load on the probe's SM (the L2's flushed first).
AccessSequence base_sequence(const Probe& p, Level level);

inline int log2_floor(std::uint64_t v) { return 63 - __builtin_clzll(v); }

/// The offsets of lines 0 .. n-1 from the buffer's start.
std::vector<std::uint64_t> consecutive_lines(std::uint64_t n, std::uint32_t line_bytes);

/// Up to `n` random offsets below `span` at `alignment`, none in `used` (which they join).
std::vector<std::uint64_t> random_lines(std::mt19937_64& rng, std::uint64_t span,
                                        std::uint64_t alignment, std::size_t n,
                                        std::unordered_set<std::uint64_t>& used);

/// Runs a sequence longer than one call may hold as consecutive calls (the L2 keeps its state
/// between launches; only the first call flushes). The L1 is invalidated by every launch, so an
/// L1 sequence must fit in one call.
SequenceTiming run_long(Probe& p, Level level, const AccessSequence& s);

}  // namespace gpuprobe::measure::cache::detail
