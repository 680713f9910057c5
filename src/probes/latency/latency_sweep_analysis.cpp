// latency.sweep's analysis of its typed samples (latency_samples.hpp): the levels,
// latencies and capacities named from the level finder's plateaus and knees.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis/levels.hpp"
#include "core/confidence.hpp"
#include "core/experiment.hpp"
#include "probes/latency/latency.hpp"
#include "probes/latency/latency_common.hpp"
#include "probes/latency/latency_samples.hpp"

namespace gpuprobe::probes {
namespace latency {

using nlohmann::json;

namespace {

/// A replicate's knee from its bisection points: the largest working set on the plateau below
/// the smallest one off it, with that bracket. Nothing when the points do not straddle it.
std::optional<std::pair<double, double>> replicate_knee(const std::vector<ChaseSample>& points,
                                                        const analysis::Plateau& p) {
  std::vector<std::pair<double, bool>> on;  // (working set, on the plateau)
  for (const auto& q : points) on.emplace_back(q.working_set_bytes, on_plateau(q.cycles_median, p));
  std::sort(on.begin(), on.end());
  for (std::size_t i = 1; i < on.size(); ++i)
    if (!on[i].second) {
      if (!on[i - 1].second) return std::nullopt;
      return std::make_pair(on[i - 1].first, on[i].first);
    }
  return std::nullopt;
}

/// What every finding of one analysis shares.
struct SweepAnalysis {
  const analysis::LevelAnalysis& levels;
  const json& parameters;
  ExperimentResult& result;

  void add_plateau_latency(const std::string& name, const analysis::Plateau& p,
                           const std::string& method) const {
    auto f =
        latency_finding(name, p.level, plateau_confidence(p), method + levels.method, parameters);
    f.extra["working_set_bytes_range"] = {p.x_min, p.x_max};
    result.findings.push_back(f);
  }
  Finding capacity(const std::string& name, const analysis::Transition& t,
                   const std::string& what) const {
    Finding f{name,
              t.estimate,
              "bytes",
              t.confidence,
              "largest working set on the " + what + " plateau (knee bracketed by bisection); " +
                  levels.method,
              json::object()};
    f.extra["bracket_bytes"] = {t.x_last_on, t.x_first_off};
    return f;
  }
};

/// The L1 capacity refined to one node (refine_l1_knee) when the refinement straddled the knee
/// inside the sweep's bracket.
void apply_l1_refinement(Finding& capacity, const analysis::Transition& t,
                         const L1KneeRefinement& refinement) {
  const double on = refinement.nodes_held * refinement.node_stride_bytes;
  const double off = refinement.nodes_not_held * refinement.node_stride_bytes;
  if (!(on > 0 && on >= t.x_last_on && off <= t.x_first_off && off > on)) return;
  capacity.value = on;
  capacity.extra["bracket_bytes"] = {on, off};
  capacity.extra["sweep_bracket_bytes"] = {t.x_last_on, t.x_first_off};
  capacity.confidence =
      confidence::combine({t.step_separation, analysis::bracket_precision(on, off)});
  capacity.method +=
      "; refined to one node: the largest chase with fewer than half a miss "
      "per pass (samples.l1_knee_refinement)";
}

void add_l1_findings(const SweepAnalysis& a, const analysis::Transition& t,
                     const std::optional<L1KneeRefinement>& refinement) {
  a.add_plateau_latency("l1.hit_latency", a.levels.plateaus[t.below],
                        "median of the first plateau; ");
  Finding capacity = a.capacity("l1.capacity", t, "L1");
  if (refinement) apply_l1_refinement(capacity, t, *refinement);
  a.result.findings.push_back(capacity);
}

/// Replicated knees (run's near_knee_replicates): the knee's figure is the median of this
/// sweep's knee and the replicates', and the bracket's precision gives way to the replicates'
/// (confidence::summarize_replicates; each knee's own error: its bisection bracket as a uniform
/// interval, width / sqrt(12)). The separation factor is kept.
void apply_knee_replicates(Finding& near_capacity, const analysis::Transition& tn,
                           const analysis::Plateau& near_plateau,
                           const std::vector<KneeReplicate>& replicates) {
  std::vector<double> knees{tn.estimate}, ses{(tn.x_first_off - tn.x_last_on) / std::sqrt(12.0)};
  std::size_t missing = 0;
  for (const auto& replicate : replicates) {
    const auto knee = replicate_knee(replicate.points, near_plateau);
    if (!knee) {
      ++missing;
      continue;
    }
    knees.push_back(knee->first);
    ses.push_back((knee->second - knee->first) / std::sqrt(12.0));
  }
  const auto summary = confidence::summarize_replicates(knees, ses);
  near_capacity.value = summary.value;
  // A replicate whose bisection did not straddle the knee is evidence against it: it counts as a
  // replicate that disagrees (agreement of the replicates that found a knee).
  near_capacity.confidence = confidence::combine(
      {tn.step_separation, summary.precision,
       missing ? confidence::agreement(knees.size(), knees.size() + missing) : 1.0});
  near_capacity.extra["replicates"] = confidence::to_json(summary);
  near_capacity.extra["replicates_without_knee"] = missing;
  near_capacity.method += "; median of this sweep's knee and " + std::to_string(replicates.size()) +
                          " replicates' (fresh chains on other pages of a fresh allocation, "
                          "bisection), confidence from their spread";
}

/// The mixed region's level: of the plateaus between the near-partition knee and the L2's, the
/// widest (in log working set; then the most points). A slope can leave short steps on its way
/// (a few points at the near knee's onset or on the rise into DRAM), which are not the region's
/// level.
std::size_t widest_mixed_plateau(const analysis::LevelAnalysis& levels,
                                 const analysis::Transition& tn, const analysis::Transition& tc) {
  const auto extent = [&](std::size_t k) {  // (log width, points - 1), compared in order
    const auto& p = levels.plateaus[k];
    return std::pair{p.x_max > 0 && p.x_min > 0 ? std::log(p.x_max / p.x_min) : 0.0,
                     p.last - p.first};
  };
  std::size_t widest = tc.below;
  for (std::size_t k = tn.below + 1; k < tc.below; ++k)
    if (extent(k) > extent(widest)) widest = k;
  return widest;
}

/// Two or more L2 knees: the near partition's capacity, the mixed region's latency and the L2's
/// capacity.
void add_partitioned_l2_findings(const SweepAnalysis& a, const std::vector<std::size_t>& l2_knees,
                                 const std::vector<KneeReplicate>& replicates) {
  const auto& levels = a.levels;
  const auto& tn = levels.transitions[l2_knees.front()];
  const auto& tc = levels.transitions[l2_knees.back()];
  Finding near_capacity = a.capacity("l2.near_capacity", tn, "L2 near-partition");
  if (!replicates.empty())
    apply_knee_replicates(near_capacity, tn, levels.plateaus[tn.below], replicates);
  a.result.findings.push_back(near_capacity);
  const std::size_t widest = widest_mixed_plateau(levels, tn, tc);
  // Not a far-partition hit latency: that region mixes near hits, far hits and DRAM misses
  // (issue 10; cache.l2.far_hit measures the far hit itself).
  a.add_plateau_latency("l2.mixed_latency", levels.plateaus[widest],
                        "median of the mixed region between the L2 near-partition and L2 "
                        "capacity knees (near hits, far hits and DRAM misses; not a far-hit "
                        "latency): its widest plateau; ");
  // The L2's knee is where that plateau ends (as the near partition's is where the slope first
  // rises): a step on the rise into DRAM belongs to the knee, not to the region.
  const analysis::Transition* end = &tc;
  for (auto i : l2_knees)
    if (levels.transitions[i].below == widest) end = &levels.transitions[i];
  a.result.findings.push_back(a.capacity("l2.capacity", *end, "L2 (far)"));
}

/// The level finder's plateaus and knees, recorded in the statistics.
void record_levels(json& statistics, const analysis::LevelAnalysis& levels) {
  json plateaus = json::array();
  for (const auto& p : levels.plateaus)
    plateaus.push_back({{"level_cycles", p.level},
                        {"noise_cycles", p.noise},
                        {"working_set_bytes_min", p.x_min},
                        {"working_set_bytes_max", p.x_max},
                        {"points", p.last - p.first + 1}});
  json transitions = json::array();
  for (const auto& t : levels.transitions)
    transitions.push_back({{"last_on_bytes", t.x_last_on},
                           {"first_off_bytes", t.x_first_off},
                           {"level_below_cycles", t.level_below},
                           {"level_above_cycles", t.level_above},
                           {"confidence", t.confidence}});
  statistics["plateaus"] = plateaus;
  statistics["transitions"] = transitions;
}

}  // namespace
}  // namespace latency

void analyze_sweep(ExperimentResult& r) {
  using namespace latency;
  const auto samples = samples_as<SweepSamples>(r);
  const auto levels = analysis::find_levels(curve_of(samples.points));
  const SweepAnalysis a{levels, r.parameters, r};
  const bool l1_possible = r.parameters.value("caches_in_l1", true);
  const double l2 = r.parameters.value("l2_bytes_reported", 0.0);
  std::size_t next_plateau = 0;
  std::vector<std::size_t> l2_knees;
  for (std::size_t i = 0; i < levels.transitions.size(); ++i) {
    const auto& t = levels.transitions[i];
    // Naming uses the reported L2 size only as a prior: an L1 knee lies far below it, the L2
    // knees within a factor of 8 of it.
    if (is_l1_knee(i, t, l1_possible, l2)) {
      add_l1_findings(a, t, samples.l1_knee_refinement);
      next_plateau = t.below + 1;
      continue;
    }
    if (is_l2_knee(t, l2)) l2_knees.push_back(i);
  }
  if (next_plateau < levels.plateaus.size())
    a.add_plateau_latency("l2.hit_latency", levels.plateaus[next_plateau],
                          "median of the first plateau past L1; ");
  if (l2_knees.size() >= 2)
    add_partitioned_l2_findings(a, l2_knees, samples.near_knee_replicates);
  else if (l2_knees.size() == 1)
    r.findings.push_back(a.capacity("l2.capacity", levels.transitions[l2_knees.front()], "L2"));
  if (!l2_knees.empty()) {
    const auto& tc = levels.transitions[l2_knees.back()];
    if (tc.below + 1 < levels.plateaus.size())
      a.add_plateau_latency("dram.latency", levels.plateaus[tc.below + 1],
                            "median of the first plateau past the L2 capacity (cold chase from a "
                            "flushed L2); ");
  }
  record_levels(r.statistics, levels);
}

}  // namespace gpuprobe::probes
