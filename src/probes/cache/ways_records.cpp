#include "probes/cache/ways_records.hpp"

#include <algorithm>
#include <cmath>

#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"

namespace gpuprobe::probes::cache_structure {

namespace {

/// The cycle again with lines of other sets between its accesses (as many as one staged
/// sequence holds, at most kMaxFillersPerAccess): the one-bit flips of its members that
/// infer_set_index found to leave the set.
constexpr std::size_t kMaxFillersPerAccess = 64;
constexpr int kInterleavedRounds = 8, kInterleavedOrders = 2;

}  // namespace

analysis::cache::SetIndexResult rejudged_set_index(const WaysSamples& rec) {
  auto si = *rec.set_index;
  // A record made without a line size was not judged (kind "unknown"): nothing to re-judge.
  const std::uint32_t recorded_line = rec.line_bytes.value_or(0);
  if (recorded_line == 0 || !rec.line || !rec.line->found ||
      si.kind == analysis::cache::SetIndexKind::kUnknown || !rec.conflict_set)
    return si;
  const auto bit = [](int b) {
    if (b < 0 || b > 62)
      throw UsageError("set_index: bit " + std::to_string(b) + " is out of range; allowed: 0..62");
  };
  for (int b : si.bits) bit(b);
  for (int b : si.page_bits) bit(b);
  for (const auto& [a, b] : si.equal_pairs) {
    bit(a);
    bit(b);
  }
  const ConflictRecord& cs = *rec.conflict_set;
  const std::uint64_t contiguous =
      si.first_page_bit >= 0 && si.first_page_bit < 63 ? std::uint64_t{1} << si.first_page_bit : 0;
  analysis::cache::judge_set_index_kind(si, cs.lines, cs.ways, recorded_line,
                                        rec.capacity_bytes_used.value_or(0), contiguous);
  return si;
}

LineRecord line_record(measure::cache::Probe& p, Level level, const LevelRun& lr,
                       WaysSamples& rec) {
  LineRecord out;
  for (const auto& set : lr.sets) {
    const auto line = measure::cache::infer_line_size(p, level, lr.cal, set);
    out.pools.push_back(
        {line.found, line.line_bytes, line.agreeing, line.trials_at_answer, line.trials});
    out.agreeing += line.agreeing;
    out.trials_at_answer += line.trials_at_answer;
  }
  bool same = !out.pools.empty();
  for (const auto& l : out.pools)
    same = same && l.found && l.line_bytes == out.pools.front().line_bytes;
  if (!same) rec.line_note = "the pools' conflict sets give different line sizes";
  out.found = same;
  out.line_bytes = out.pools.empty() ? 0 : out.pools.front().line_bytes;
  return out;
}

void line_finding(const std::string& lv, const WaysSamples& rec, std::vector<Finding>& out) {
  if (!rec.line || !rec.line->found) return;
  const LineRecord& line = *rec.line;
  out.push_back(
      {"cache." + lv + ".line_size",
       static_cast<double>(line.line_bytes),
       "bytes",
       confidence::combine({confidence::agreement(line.agreeing, line.trials_at_answer),
                            rec.calibration.separation()}),
       "smallest address delta that moves a conflict-set member out of its line (the conflict "
       "ends); smaller deltas keep it (same line, whatever the sector); the conflict sets of "
       "independent pools agree",
       {{"pools", line.pools}}});
}

PolicyRecord policy_record(measure::cache::Probe& p, Level level, const LevelRun& lr) {
  return PolicyRecord::of(measure::cache::infer_policy(p, level, lr.cal, lr.set));
}

void policy_finding(const std::string& lv, const WaysSamples& rec, std::vector<Finding>& out) {
  using analysis::cache::PolicyClass;
  if (!rec.policy && rec.conflict_set) {
    // No repeatable set, but targets whose eviction by fixed lines comes and goes. LRU and FIFO
    // evict a target once enough lines of its set were filled after it, in any order; a
    // random victim, or an order-dependent policy (tree-PLRU) under the sweep's parallel,
    // unordered loads, does not. The sequencer cannot order a sweep, so the two stay tied.
    const EvictionSummary et = eviction_summary(rec.pools);
    const auto n = static_cast<std::size_t>(et.swept);
    const auto k = static_cast<std::size_t>(et.probabilistic);
    if (k >= 2 && 2 * k > n)
      out.push_back(
          {"cache." + lv + ".replacement",
           -1.0,
           "class",
           confidence::combine({targets_confidence(k, n, rec), 0.5}),
           "value -1 (tied: random or tree-PLRU; not LRU, not FIFO): for most eviction "
           "targets, the same lines swept the same way evict the target in some trials "
           "and not in others (8 trials each, with the set and with one line or group "
           "less). LRU and FIFO evict after enough fills in any order; a random victim "
           "or an order-dependent tree-PLRU under the sweep's unordered parallel loads "
           "does not, and the sweeps cannot tell those two apart (confidence x 0.5: either class "
           "explains the evidence)",
           {{"policy", "random_or_tree_plru"},
            {"excluded", {"lru", "fifo"}},
            {"targets", n},
            {"probabilistic_targets", k}}});
    return;
  }
  if (!rec.policy) return;
  const PolicyRecord& pol = *rec.policy;
  // The value's codes are the classes' order: 0 lru, 1 fifo, 2 tree_plru, 3 random, 4 none.
  static_assert(static_cast<int>(PolicyClass::kLru) == 0 &&
                static_cast<int>(PolicyClass::kNone) == 4);
  double code = -1;  // a tie between classes
  if (pol.classes.size() == 1) code = static_cast<int>(pol.classes.front());
  double conf = confidence::agreement(pol.agreeing, pol.tests);
  if (code < 0) conf = confidence::combine({conf, 0.5});  // two classes explain the evidence
  out.push_back({"cache." + lv + ".replacement",
                 code,
                 "class",
                 confidence::combine({conf, rec.calibration.separation()}),
                 "value: 0 lru, 1 fifo, 2 tree_plru, 3 random, 4 none of these, -1 tied (see "
                 "policy); victims observed per sequence against each class's prediction",
                 {{"policy", pol.label()}, {"deterministic", pol.deterministic}}});
}

CyclicRecord cyclic_record(measure::cache::Probe& p, Level level, const LevelRun& lr) {
  CyclicRecord c;
  static_cast<CyclicRun&>(c) =
      CyclicRun::of(measure::cache::cyclic_retention(p, level, lr.cal, lr.set));
  return c;
}

CyclicRun interleaved_cyclic_record(measure::cache::Probe& p, Level level, const LevelRun& lr,
                                    const analysis::cache::SetIndexResult& idx,
                                    std::uint64_t span) {
  const auto fillers =
      analysis::cache::out_of_set_lines(lr.set, idx.bits, idx.first_page_bit, span);
  const std::size_t per_round = lr.set.lines.size() * kInterleavedRounds;
  const std::size_t limit =
      p.max_sequence ? std::min(p.max_sequence, kSequenceStagedAccesses) : kSequenceStagedAccesses;
  const std::size_t fit = limit / per_round;
  if (fillers.empty() || fit < 2) return CyclicRun{};
  return CyclicRun::of(measure::cache::cyclic_retention(
      p, level, lr.cal, lr.set, kInterleavedOrders, kInterleavedRounds, fillers,
      std::min(kMaxFillersPerAccess, fit - 1)));
}

void cyclic_finding(const std::string& lv, const WaysSamples& rec, std::vector<Finding>& out) {
  if (!rec.cyclic || !rec.cyclic->measured) return;
  const CyclicRecord& c = *rec.cyclic;
  const double value = c.retention;
  const double lines = static_cast<double>(c.lines);
  // The rounds whose retention lies within one line of the cycle of the whole's, as agreement
  // times the calibration's separation.
  const auto round_confidence = [&](const CyclicRun& cycle, double whole) {
    std::size_t agreeing = 0, rounds = 0;
    for (const double x : cycle.round_retention) {
      ++rounds;
      agreeing += std::fabs(x - whole) <= 1.0 / lines ? 1 : 0;
    }
    return confidence::combine(
        {confidence::agreement(agreeing, rounds), rec.calibration.separation()});
  };
  out.push_back(
      {"cache." + lv + ".cyclic_retention",
       value,
       "fraction",
       round_confidence(c, value),
       "the conflict set's ways + 1 lines read in one fixed random order round after "
       "round (as a chase past the cache visits each set): the share of accesses after "
       "the first round that hit. LRU, FIFO and tree-PLRU keep none (predicted); random "
       "victims or an insertion below the most recent place keep some. The policy "
       "sequences see which line leaves, not where a new line is placed",
       {{"predicted", c.predicted}, {"round_retention", c.round_retention}, {"lines", c.lines}}});
  if (!c.interleaved || !c.interleaved->measured) return;
  const CyclicRun& in = *c.interleaved;
  const double iv = in.retention;
  out.push_back({"cache." + lv + ".interleaved_retention",
                 iv,
                 "fraction",
                 round_confidence(in, iv),
                 "the same cycle with fillers_per_access lines of other sets (members with one "
                 "set-index bit flipped) read after each of its accesses, as a chase's other "
                 "lines come between two visits to one set: the share of the set's accesses "
                 "after the first round that hit. A policy confined to the set keeps what it "
                 "keeps without them (cyclic_retention); a different share means the sets "
                 "share their replacement state or their storage",
                 {{"predicted", in.predicted},
                  {"round_retention", in.round_retention},
                  {"fillers", in.fillers},
                  {"fillers_per_access", in.fillers_per_access},
                  {"without_fillers", value}}});
}

}  // namespace gpuprobe::probes::cache_structure
