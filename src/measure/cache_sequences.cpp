#include "measure/cache_sequences.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace gpuprobe::measure::cache::detail {

using device::LoadOp;

AccessSequence base_sequence(const Probe& p, Level level) {
  AccessSequence s;
  s.op = level == Level::kL1 ? LoadOp::kCa : LoadOp::kCg;
  s.sm = p.sm;
  s.flush_l2 = level == Level::kL2;
  return s;
}

/// The offsets of lines 0 .. n-1 from the buffer's start.
std::vector<std::uint64_t> consecutive_lines(std::uint64_t n, std::uint32_t line_bytes) {
  std::vector<std::uint64_t> v(n);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = i * line_bytes;
  return v;
}

std::vector<std::uint64_t> random_lines(std::mt19937_64& rng, std::uint64_t span,
                                        std::uint64_t alignment, std::size_t n,
                                        std::unordered_set<std::uint64_t>& used) {
  std::vector<std::uint64_t> out;
  const std::uint64_t slots = span / alignment;
  while (out.size() < n && used.size() < slots) {
    const std::uint64_t o = (rng() % slots) * alignment;
    if (used.insert(o).second) out.push_back(o);
  }
  return out;
}

SequenceTiming run_long(Probe& p, Level level, const AccessSequence& s) {
  if (p.max_sequence == 0 || s.sequence.size() <= p.max_sequence) return p.call(s);
  if (level == Level::kL1)
    throw UsageError("an L1 test needs " + std::to_string(s.sequence.size()) +
                     " accesses in one launch; the sequencer holds " +
                     std::to_string(p.max_sequence));
  SequenceTiming all;
  all.verified = true;
  for (std::size_t a = 0; a < s.sequence.size(); a += p.max_sequence) {
    const std::size_t b = std::min(s.sequence.size(), a + p.max_sequence);
    AccessSequence part = s;
    part.sequence.assign(s.sequence.begin() + static_cast<std::ptrdiff_t>(a),
                         s.sequence.begin() + static_cast<std::ptrdiff_t>(b));
    part.flush_l2 = s.flush_l2 && a == 0;
    part.place.clear();
    part.timed_from = static_cast<std::uint32_t>(
        s.timed_from <= a ? 0 : std::min<std::size_t>(s.timed_from - a, b - a));
    const auto t = p.call(part);
    all.cycles.insert(all.cycles.end(), t.cycles.begin(), t.cycles.end());
    all.smid = t.smid;
  }
  return all;
}

}  // namespace gpuprobe::measure::cache::detail
