#include "probes/cache/partition_sides.hpp"

#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "core/error.hpp"
#include "core/stats.hpp"

namespace gpuprobe::probes::sides {

bool is_warm_line(std::uint64_t offset) { return offset % kRegion == kRegion - kLine; }

std::vector<std::uint64_t> warm_lines(std::uint64_t pages) {
  std::vector<std::uint64_t> w;
  for (std::uint64_t o = 0; o < pages * kPage; o += kRegion) w.push_back(o + kRegion - kLine);
  return w;
}

std::vector<std::uint64_t> random_lines(std::uint64_t pages, int per_page, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint64_t> pick(0, kPage / kLine - 1);
  std::vector<std::uint64_t> out;
  for (std::uint64_t pg = 0; pg < pages; ++pg) {
    std::set<std::uint64_t> in_page;
    while (in_page.size() < static_cast<std::size_t>(per_page)) {
      const std::uint64_t o = pick(rng) * kLine;
      if (!is_warm_line(o)) in_page.insert(o);
    }
    for (std::uint64_t o : in_page) out.push_back(pg * kPage + o);
  }
  // Random order: no regular stride for a prefetcher to follow.
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

Round run_round(Sequencer& seq, ProbeBuffer& buf, const std::vector<std::uint64_t>& warm,
                const std::vector<std::uint64_t>& lines, int reference, int measured, bool second) {
  AccessSequence s;
  s.op = device::LoadOp::kCg;
  s.flush_l2 = true;
  if (reference >= 0) {
    s.place = lines;
    s.place_sm = reference;
  }
  s.sm = measured;
  s.sequence = warm;
  s.sequence.insert(s.sequence.end(), lines.begin(), lines.end());
  if (second) s.sequence.insert(s.sequence.end(), lines.begin(), lines.end());
  s.timed_from = static_cast<std::uint32_t>(warm.size());
  const auto t = seq.run_sequence(buf, s);
  const std::size_t want = (second ? 2 : 1) * lines.size();
  if (!t.verified || t.cycles.size() != want)
    throw VerificationError("partition sides: a sequence returned " +
                            std::to_string(t.cycles.size()) + " timings for " +
                            std::to_string(want) + " timed loads");
  Round r;
  r.first.assign(t.cycles.begin(), t.cycles.begin() + lines.size());
  r.second.assign(t.cycles.begin() + lines.size(), t.cycles.end());
  return r;
}

Reference find_reference(Sequencer& seq, ProbeBuffer& buf, const std::vector<std::uint64_t>& warm,
                         const std::vector<std::uint64_t>& lines, int measured, int sm_count,
                         int candidates) {
  Reference ref;
  // Candidates spread evenly over the SM ids (neighbouring ids tend to share a side).
  for (int k = 1; k <= candidates && ref.sm < 0; ++k) {
    const int cand = (measured + k * sm_count / (candidates + 1)) % sm_count;
    if (cand == measured) continue;
    const Round rd = run_round(seq, buf, warm, lines, cand, measured);
    analysis::FarHitInput in;
    in.offsets = lines;
    in.rounds.push_back({rd.first, rd.second});
    const auto a = analysis::analyze_far_hit(in);
    ref.tried.push_back({{"sm", cand},
                         {"split", a.split},
                         {"first_median_cycles", stats::median(rd.first)},
                         {"far_fraction", a.far_line_fraction}});
    if (a.split) {
      ref.sm = cand;
      ref.first_round = a;
    }
  }
  return ref;
}

}  // namespace gpuprobe::probes::sides
