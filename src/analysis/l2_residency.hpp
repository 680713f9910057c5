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
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Trial, group, repeat, set_aside_bytes, region_offset,
                                   region_bytes, windowed, hit_ratio, hit_prop, miss_prop, hint,
                                   hint_fraction, traffic_bytes, cycles)

/// One request of cudaLimitPersistingL2CacheSize and what the driver kept.
struct SetAsideRequest {
  std::uint64_t requested_bytes = 0;
  bool accepted = false;
  std::uint64_t read_back_bytes = 0;  ///< cudaDeviceGetLimit after the request
  std::string error;                  ///< the driver's words when refused
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SetAsideRequest, requested_bytes, accepted, read_back_bytes,
                                   error)

/// Both experiments' samples.
struct Samples {
  /// Experiment::samples_version of cache.l2.persisting and cache.l2.eviction_priority.
  static constexpr int kVersion = 1;
  std::uint64_t l2_bytes = 0;
  int l2_ways = 0;  ///< of one set, from cache.l2.ways when known (0: unknown)
  std::uint64_t max_set_aside_bytes = 0, max_window_bytes = 0, set_aside_found_bytes = 0;
  std::vector<SetAsideRequest> requests;
  std::vector<Trial> trials;
  /// What makes the samples unjudgeable ("" when nothing does): a trial without cycles, or a
  /// missing control or L2 size (core samples_as reports it naming the experiment).
  std::string problem() const;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Samples, l2_bytes, l2_ways, max_set_aside_bytes,
                                   max_window_bytes, set_aside_found_bytes, requests, trials)

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

}  // namespace gpuprobe::analysis::residency
