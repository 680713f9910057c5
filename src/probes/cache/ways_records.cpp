#include "probes/cache/ways_records.hpp"

#include <algorithm>
#include <cmath>

#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "probes/cache/sequence_session.hpp"

namespace gpuprobe::probes::cache_structure {

namespace {

/// The cycle again with lines of other sets between its accesses (as many as one staged
/// sequence holds, at most kMaxFillersPerAccess): the one-bit flips of its members that
/// infer_set_index found to leave the set.
constexpr std::size_t kMaxFillersPerAccess = 64;
constexpr int kInterleavedRounds = 8, kInterleavedOrders = 2;

}  // namespace

analysis::cache::SetIndexResult rejudged_set_index(const json& rec) {
  auto si = rec.at("set_index").get<analysis::cache::SetIndexResult>();
  // A record made without a line size was not judged (kind "unknown"): nothing to re-judge.
  const auto recorded_line = rec.value("line_bytes", 0u);
  if (recorded_line == 0 || !rec.contains("line") || !rec["line"].value("found", false) ||
      si.kind == analysis::cache::SetIndexKind::kUnknown)
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
  const auto& cs = rec.at("conflict_set");
  const auto lines = cs.value("lines", std::vector<std::uint64_t>{});
  const std::uint64_t contiguous =
      si.first_page_bit >= 0 && si.first_page_bit < 63 ? std::uint64_t{1} << si.first_page_bit : 0;
  analysis::cache::judge_set_index_kind(si, lines, cs.value("ways", 0u), recorded_line,
                                        rec.value("capacity_bytes_used", std::uint64_t{0}),
                                        contiguous);
  return si;
}

json line_record(measure::cache::Probe& p, Level level, const LevelRun& lr, json& rec) {
  json per_pool = json::array();
  std::size_t agreeing = 0, at_answer = 0;
  for (const auto& set : lr.sets) {
    const auto line = measure::cache::infer_line_size(p, level, lr.cal, set);
    per_pool.push_back({{"found", line.found},
                        {"line_bytes", line.line_bytes},
                        {"agreeing", line.agreeing},
                        {"trials_at_answer", line.trials_at_answer},
                        {"trials", line.trials}});
    agreeing += line.agreeing;
    at_answer += line.trials_at_answer;
  }
  bool same = !per_pool.empty();
  for (const auto& l : per_pool)
    same = same && l.at("found").get<bool>() &&
           l.at("line_bytes") == per_pool.front().at("line_bytes");
  if (!same) rec["line_note"] = "the pools' conflict sets give different line sizes";
  return {{"found", same},
          {"line_bytes", per_pool.empty() ? json(0) : per_pool.front().at("line_bytes")},
          {"agreeing", agreeing},
          {"trials_at_answer", at_answer},
          {"pools", per_pool}};
}

void line_finding(const std::string& lv, const json& rec, std::vector<Finding>& out) {
  if (!rec.contains("line")) return;
  const auto& line = rec["line"];
  if (!line.value("found", false)) return;
  out.push_back(
      {"cache." + lv + ".line_size",
       line.at("line_bytes").get<double>(),
       "bytes",
       confidence::combine({confidence::agreement(line.at("agreeing").get<std::size_t>(),
                                                  line.at("trials_at_answer").get<std::size_t>()),
                            calibration_separation(rec.at("calibration"))}),
       "smallest address delta that moves a conflict-set member out of its line (the conflict "
       "ends); smaller deltas keep it (same line, whatever the sector); the conflict sets of "
       "independent pools agree",
       {{"pools", line.at("pools")}}});
}

json policy_record(measure::cache::Probe& p, Level level, const LevelRun& lr) {
  const auto pol = measure::cache::infer_policy(p, level, lr.cal, lr.set);
  return {{"class", pol.label()},
          {"agreeing", pol.agreeing},
          {"tests", pol.tests},
          {"deterministic", pol.deterministic},
          {"evidence", pol.evidence}};
}

void policy_finding(const std::string& lv, const json& rec, std::vector<Finding>& out) {
  static const char* const kClasses[] = {"lru", "fifo", "tree_plru", "random", "none"};
  if (!rec.contains("policy") && rec.contains("pools")) {
    // No repeatable set, but targets whose eviction by fixed lines comes and goes. LRU and FIFO
    // evict a target once enough lines of its set were filled after it, in any order; a
    // random victim, or an order-dependent policy (tree-PLRU) under the sweep's parallel,
    // unordered loads, does not. The sequencer cannot order a sweep, so the two stay tied.
    const json et = eviction_summary(rec["pools"]);
    const auto n = et.at("swept").get<std::size_t>(), k = et.at("probabilistic").get<std::size_t>();
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
  if (!rec.contains("policy")) return;
  const auto& pol = rec["policy"];
  const std::string cls = pol.at("class");
  double code = -1;  // a tie between classes
  for (int i = 0; i < 5; ++i)
    if (cls == kClasses[i]) code = i;
  double conf = confidence::agreement(pol.at("agreeing").get<std::size_t>(),
                                      pol.at("tests").get<std::size_t>());
  if (code < 0) conf = confidence::combine({conf, 0.5});  // two classes explain the evidence
  out.push_back({"cache." + lv + ".replacement",
                 code,
                 "class",
                 confidence::combine({conf, calibration_separation(rec.at("calibration"))}),
                 "value: 0 lru, 1 fifo, 2 tree_plru, 3 random, 4 none of these, -1 tied (see "
                 "policy); victims observed per sequence against each class's prediction",
                 {{"policy", cls}, {"deterministic", pol.at("deterministic")}}});
}

json cyclic_json(const analysis::cache::CyclicResult& c) {
  if (!c.measured) return {{"measured", false}};
  json j = {
      {"measured", true},        {"retention", c.retention}, {"round_retention", c.round_retention},
      {"rounds", c.rounds},      {"orders", c.orders},       {"lines", c.lines},
      {"predicted", c.predicted}};
  if (c.fillers_per_access) {
    j["fillers"] = c.fillers;
    j["fillers_per_access"] = c.fillers_per_access;
  }
  return j;
}

json cyclic_record(measure::cache::Probe& p, Level level, const LevelRun& lr) {
  return cyclic_json(measure::cache::cyclic_retention(p, level, lr.cal, lr.set));
}

json interleaved_cyclic_record(measure::cache::Probe& p, Level level, const LevelRun& lr,
                               const analysis::cache::SetIndexResult& idx, std::uint64_t span) {
  const auto fillers =
      analysis::cache::out_of_set_lines(lr.set, idx.bits, idx.first_page_bit, span);
  const std::size_t per_round = lr.set.lines.size() * kInterleavedRounds;
  const std::size_t limit =
      p.max_sequence ? std::min(p.max_sequence, kSequenceStagedAccesses) : kSequenceStagedAccesses;
  const std::size_t fit = limit / per_round;
  if (fillers.empty() || fit < 2) return {{"measured", false}};
  return cyclic_json(measure::cache::cyclic_retention(p, level, lr.cal, lr.set, kInterleavedOrders,
                                                      kInterleavedRounds, fillers,
                                                      std::min(kMaxFillersPerAccess, fit - 1)));
}

void cyclic_finding(const std::string& lv, const json& rec, std::vector<Finding>& out) {
  if (!rec.contains("cyclic") || !rec["cyclic"].value("measured", false)) return;
  const auto& c = rec["cyclic"];
  const double value = c.at("retention").get<double>();
  const double lines = c.at("lines").get<double>();
  // The rounds whose retention lies within one line of the cycle of the whole's, as agreement
  // times the calibration's separation.
  const auto round_confidence = [&](const json& cycle, double whole) {
    std::size_t agreeing = 0, rounds = 0;
    for (const auto& x : cycle.at("round_retention")) {
      ++rounds;
      agreeing += std::fabs(x.get<double>() - whole) <= 1.0 / lines ? 1 : 0;
    }
    return confidence::combine(
        {confidence::agreement(agreeing, rounds), calibration_separation(rec.at("calibration"))});
  };
  out.push_back({"cache." + lv + ".cyclic_retention",
                 value,
                 "fraction",
                 round_confidence(c, value),
                 "the conflict set's ways + 1 lines read in one fixed random order round after "
                 "round (as a chase past the cache visits each set): the share of accesses after "
                 "the first round that hit. LRU, FIFO and tree-PLRU keep none (predicted); random "
                 "victims or an insertion below the most recent place keep some. The policy "
                 "sequences see which line leaves, not where a new line is placed",
                 {{"predicted", c.at("predicted")},
                  {"round_retention", c.at("round_retention")},
                  {"lines", c.at("lines")}}});
  if (!c.contains("interleaved") || !c["interleaved"].value("measured", false)) return;
  const auto& in = c["interleaved"];
  const double iv = in.at("retention").get<double>();
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
                 {{"predicted", in.at("predicted")},
                  {"round_retention", in.at("round_retention")},
                  {"fillers", in.at("fillers")},
                  {"fillers_per_access", in.at("fillers_per_access")},
                  {"without_fillers", value}}});
}

}  // namespace gpuprobe::probes::cache_structure
