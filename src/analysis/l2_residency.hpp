#pragma once
// cache.l2.persisting and cache.l2.eviction_priority: their samples and their judging (pure, no
// device). A trial places a region of a probe buffer (plain loads, loads under an access-policy
// window, or loads carrying an eviction priority), streams other traffic, then loads sampled
// lines of the region once each, timed, from one SM. A sampled line "stayed" when its first
// load took fewer cycles than a threshold between two controls: lines just placed (every one
// in the L2, near or far) and lines after a flush (none).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpuprobe::analysis::residency {

/// One trial (samples version 1 of both experiments).
struct Trial {
  std::string group;                  ///< what the trial asks (see the experiments' descriptions)
  int repeat = 0;                     ///< which repetition of the same question
  std::uint64_t set_aside_bytes = 0;  ///< cudaLimitPersistingL2CacheSize during the trial
  std::uint64_t region_offset = 0, region_bytes = 0;  ///< 0 bytes: nothing placed
  bool windowed = false;                              ///< placed under an access-policy window
  double hit_ratio = 0;
  std::string hit_prop = "normal", miss_prop = "normal";
  std::string hint = "none";  ///< the placing loads' eviction priority
  double hint_fraction = 1.0;
  std::uint64_t traffic_bytes = 0;  ///< plain loads of other lines after placing
  std::vector<double> cycles;       ///< the first load of each sampled line
  /// A scattered placement: only the 128-B lines of the region that core/line_select.hpp
  /// selects at this share and seed were placed (and sampled). 1: every line (results recorded
  /// before scattered placements have neither field).
  double select_share = 1.0;
  std::uint64_t select_seed = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Trial, group, repeat, set_aside_bytes,
                                                region_offset, region_bytes, windowed, hit_ratio,
                                                hit_prop, miss_prop, hint, hint_fraction,
                                                traffic_bytes, cycles, select_share, select_seed)

/// Bytes a trial placed: its region, or the selected lines of it when scattered.
std::uint64_t placed_bytes(const Trial& t);

/// One request of cudaLimitPersistingL2CacheSize and what the driver kept.
struct SetAsideRequest {
  std::uint64_t requested_bytes = 0;
  bool accepted = false;
  std::uint64_t read_back_bytes = 0;  ///< cudaDeviceGetLimit after the request
  std::string error;                  ///< the driver's words when refused
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SetAsideRequest, requested_bytes, accepted, read_back_bytes,
                                   error)

/// What discard.global.L2 did to dirty lines: a region of marked stores (dirty in the L2), then
/// the discard or not, an L2 flush, and a census of what the region reads back (every word).
struct DiscardTrial {
  bool discarded = false;  ///< discard.global.L2 of every line between the stores and the flush
  int repeat = 0;
  std::uint64_t region_bytes = 0;
  std::uint64_t own_words = 0;     ///< still the value from before the stores
  std::uint64_t marked_words = 0;  ///< the stored value
  std::uint64_t other_words = 0;   ///< neither
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DiscardTrial, discarded, repeat, region_bytes, own_words,
                                   marked_words, other_words)

/// Both experiments' samples. `discard` (cache.l2.eviction_priority only) may be absent: results
/// recorded before it was measured load with none.
struct Samples {
  /// Experiment::samples_version of cache.l2.persisting and cache.l2.eviction_priority.
  static constexpr int kVersion = 1;
  std::uint64_t l2_bytes = 0;
  int l2_ways = 0;  ///< of one set, from cache.l2.ways when known (0: unknown)
  std::uint64_t max_set_aside_bytes = 0, max_window_bytes = 0, set_aside_found_bytes = 0;
  std::vector<SetAsideRequest> requests;
  std::vector<Trial> trials;
  std::vector<DiscardTrial> discard;
  /// What makes the samples unjudgeable ("" when nothing does): a trial without cycles, or a
  /// missing control or L2 size (core samples_as reports it naming the experiment).
  std::string problem() const;
};
void to_json(nlohmann::json& j, const Samples& s);
void from_json(const nlohmann::json& j, Samples& s);

/// The verdict on discard.global.L2 of dirty lines. A trial without the discard (the control)
/// must read back the stored value (the stores happened and are visible); a discarded trial
/// "dropped" the dirty data when at least 95 % of the region reads the value from before the
/// stores, was "written_back" when at least 95 % reads the stored value, else "mixed".
struct DiscardVerdict {
  std::string outcome = "undecided";  ///< dropped, written_back, mixed or undecided
  double stored_kept = 0;             ///< controls: mean share of words reading the stored value
  double discarded_kept = 0;          ///< discarded trials: mean share reading the stored value
  double discarded_old = 0;  ///< discarded trials: mean share reading the value from before
  std::size_t controls = 0, controls_ok = 0, discarded = 0, agreeing = 0;
  double confidence = 0;  ///< agreement of the controls x agreement of the discarded trials
};
DiscardVerdict judge_discard(const std::vector<DiscardTrial>& trials);

/// Where "stayed" ends, from the controls.
struct Classifier {
  double threshold = 0;   ///< cycles: below = the line was in the L2
  double separation = 0;  ///< confidence::separation of the two controls
  double there_median = 0, gone_median = 0;
};
Classifier classify(const std::vector<Trial>& trials);

/// Fraction of a trial's sampled lines that stayed.
double stayed(const Trial& t, const Classifier& c);

/// The mean fraction that stayed over the repetitions of trials matching `match`, and whether
/// the repetitions agree within `tolerance`.
struct Retention {
  double fraction = 0;
  bool repeats_agree = true;
  std::size_t trials = 0;
};
template <class Match>
Retention retention_of(const std::vector<Trial>& trials, const Classifier& c, Match match,
                       double tolerance = 0.1) {
  Retention r;
  double lo = 1, hi = 0, sum = 0;
  for (const auto& t : trials) {
    if (!match(t)) continue;
    const double f = stayed(t, c);
    sum += f;
    lo = f < lo ? f : lo;
    hi = f > hi ? f : hi;
    ++r.trials;
  }
  if (r.trials) r.fraction = sum / static_cast<double>(r.trials);
  r.repeats_agree = r.trials < 2 || hi - lo <= tolerance;
  return r;
}

/// How much persisting data a set-aside holds. Candidate rules for the capacity C(L) at
/// set-aside L: "bytes" C = k x L (k fitted), "ways_floor" / "ways_round" C = whole ways of
/// every set, L2 x q(ways x L / L2) / ways. A window of W bytes at hit ratio h keeps
/// min(h, C(L) / W) of its lines.
struct RulePoint {
  std::uint64_t set_aside_bytes = 0, window_bytes = 0;
  double hit_ratio = 1;
  double measured = 0;
};
struct RuleFit {
  std::string rule = "undecided";  ///< the best rule, "none" when no window kept more than
                                   ///< plain loads, "undecided" when rules fit equally
  double share = 0;                ///< the bytes rule's k
  double rms = 0;                  ///< of the best rule over the points
  double runner_up_rms = 0;
  std::string runner_up;       ///< the next rule ("" when there is none)
  double runner_up_share = 0;  ///< its share, for the bytes rule
  std::size_t points = 0;
};
double rule_capacity(const std::string& rule, double share, std::uint64_t set_aside,
                     std::uint64_t l2_bytes, int ways);
double rule_predict(const RuleFit& fit, const RulePoint& p, std::uint64_t l2_bytes, int ways);
/// `plain` is what plain loads kept under the same traffic (a floor a window cannot go below).
RuleFit fit_rule(const std::vector<RulePoint>& points, std::uint64_t l2_bytes, int ways,
                 double plain);

/// Whether the lines evict_last may protect are capped per set (the set-aside's ways of every
/// set) or by a byte budget over the whole L2. Two placements of about the set-aside's bytes,
/// each under plain traffic of 2 x L2: "cap_even" (a contiguous region, which a hashed index
/// spreads evenly: every set gets about the same lines) and "cap_scattered" (lines picked at
/// random over a span `1 / share` times larger: a set's count is Binomial(n, share), n the
/// span's lines per set). A byte budget keeps both alike; a per-set cap of k ways loses in the
/// scattered placement what each set gets beyond k: E[min(X, k)] / E[X] of it stays.
struct CapRuleVerdict {
  std::string outcome = "undecided";  ///< per_set, byte_budget, neither or undecided
  std::uint64_t set_aside_bytes = 0;
  int cap_ways = 0;          ///< k: whole ways of a set that the set-aside names
  double lines_per_set = 0;  ///< the scattered placement's mean selected lines per set
  double even_kept = 0, scattered_kept = 0;
  double predicted_per_set = 0, predicted_byte_budget = 0;
  double z_per_set = 0, z_byte_budget = 0;  ///< the measurement from each, in standard errors
  double z_between = 0;  ///< the two predictions apart, in standard errors (< 2: undecided)
  std::size_t even_lines = 0, scattered_lines = 0;  ///< sampled lines, over the repeats
  double confidence = 0;
};
/// E[min(X, k)] / E[X] for X ~ Binomial(n, p) (1 when E[X] is 0).
double binomial_capped_share(int n, double p, int k);
/// The verdict at one set-aside (trials of the two groups at it; undecided without them, without
/// the ways or with a set-aside below one way). Its confidence: the classifier's separation x
/// separation(z from the rejected rule); "neither" (the nearer rule more than 3 standard errors
/// and 0.05 away) has separation(z from the nearer one).
CapRuleVerdict judge_cap_rule(const std::vector<Trial>& trials, const Classifier& c,
                              std::uint64_t l2_bytes, int ways, std::uint64_t set_aside);

}  // namespace gpuprobe::analysis::residency
