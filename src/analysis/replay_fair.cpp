#include "analysis/replay_fair.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "analysis/levels.hpp"
#include "core/confidence.hpp"
#include "core/finding_names.hpp"

namespace gpuprobe::analysis::replay_fair {

using nlohmann::json;

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::kPass:
      return "pass";
    case Verdict::kFail:
      return "fail";
    case Verdict::kUndecided:
      return "undecided";
  }
  return "undecided";
}

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double percent_of(double value, double reference) {
  return 100.0 * (value - reference) / reference;
}

/// The runs' band at every point measured by at least two runs, with the replay's distance
/// outside it.
void judge_points(const std::vector<replay::SweepPoint>& points,
                  const std::vector<double>& replayed, const Runs& runs, FairJudgement& j) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto& p = points[i];
    BandPoint b{p.working_set_bytes, p.measured_cycles, p.measured_cycles, replayed[i], 0, 0};
    for (const auto& curve : runs.curves) {
      const auto it = curve.find(p.working_set_bytes);
      if (it == curve.end()) continue;
      const double median = it->second.at("median").get<double>();
      b.low = b.runs == 0 ? median : std::min(b.low, median);
      b.high = b.runs == 0 ? median : std::max(b.high, median);
      ++b.runs;
    }
    if (b.runs < 2) continue;  // one run gives no range
    b.beyond_percent = replay::outside_percent(b.replayed, b.low, b.high, p.measured_cycles);
    ++j.points_judged;
    j.points_within += b.beyond_percent <= kTolerancePercent ? 1 : 0;
    j.band.push_back(b);
  }
}

/// The plateau latencies: the model's level is the median replayed latency over the points
/// whose measurement lies within the level finder's band (SegmentOptions::rel_tolerance) of
/// the main run's finding.
void judge_plateaus(const std::vector<replay::SweepPoint>& points,
                    const std::vector<double>& replayed, const Runs& runs, FairJudgement& j) {
  const double band = SegmentOptions{}.rel_tolerance;
  for (const FindingKey* key : {&finding::kL1HitLatency, &finding::kL2HitLatency,
                                &finding::kL2MixedLatency, &finding::kDramLatency}) {
    std::vector<double> of_runs;
    for (const auto& f : runs.findings)
      if (const auto it = f.find(key->name); it != f.end()) of_runs.push_back(it->second);
    const auto main = runs.findings.front().find(key->name);
    if (of_runs.empty() || main == runs.findings.front().end()) continue;
    std::vector<double> model;
    for (std::size_t i = 0; i < points.size(); ++i)
      if (std::fabs(points[i].measured_cycles - main->second) <= band * main->second)
        model.push_back(replayed[i]);
    if (model.empty()) continue;
    PlateauJudgement pj{key->name, median_of(model), median_of(of_runs), 0, model.size(), false};
    pj.error_percent = percent_of(pj.model, pj.median_run);
    pj.within = std::fabs(pj.error_percent) <= kTolerancePercent;
    j.plateaus_within += pj.within ? 1 : 0;
    j.plateaus.push_back(pj);
  }
}

/// The replay's L1 knee by the level finder over the replayed curve (exact: no noise).
void judge_knee(const std::vector<replay::SweepPoint>& points, const std::vector<double>& replayed,
                const Runs& runs, FairJudgement& j) {
  std::vector<double> of_runs;
  for (const auto& f : runs.findings)
    if (const auto it = f.find(finding::kL1Capacity.name); it != f.end())
      of_runs.push_back(it->second);
  if (of_runs.empty()) return;
  std::vector<CurvePoint> curve;
  for (std::size_t i = 0; i < points.size(); ++i)
    curve.push_back({points[i].working_set_bytes, replayed[i], 0});
  const auto levels = find_levels(curve);
  if (levels.transitions.empty()) return;
  const auto& t = levels.transitions.front();
  KneeJudgement k;
  k.model = t.estimate;
  k.first_off = t.x_first_off;
  k.median_run = median_of(of_runs);
  k.error_percent = percent_of(k.model, k.median_run);
  k.confidence = bracket_precision(t.x_last_on, t.x_first_off);
  k.within = std::fabs(k.error_percent) <= kTolerancePercent;
  j.knee = k;
}

std::string fixed(double v, int digits = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

void decide(FairJudgement& j) {
  if (j.points_judged > 0 && j.points_share() < kPointsShare)
    j.misses.push_back(std::to_string(j.points_within) + " of " + std::to_string(j.points_judged) +
                       " working sets (" + fixed(100 * j.points_share()) +
                       " %) within 3 % of the runs' range, " + fixed(100 * kPointsShare, 0) +
                       " % asked");
  for (const auto& p : j.plateaus)
    if (!p.within)
      j.misses.push_back(p.name + " " + fixed(p.error_percent, 2) + " % from the median run");
  if (j.knee && !j.knee->within)
    j.misses.push_back("the L1 knee " + fixed(j.knee->error_percent, 2) +
                       " % from the median run's l1.capacity");
  const bool complete = j.points_judged > 0 && j.knee && !j.plateaus.empty();
  if (j.runs < kMinRuns || !complete)
    j.verdict = Verdict::kUndecided;
  else
    j.verdict = j.misses.empty() ? Verdict::kPass : Verdict::kFail;
}

}  // namespace

FairJudgement judge_fair(const std::vector<replay::SweepPoint>& points,
                         const std::vector<double>& replayed, const Runs& runs) {
  if (replayed.size() != points.size())
    throw std::invalid_argument("judge_fair: one replayed latency per point");
  if (runs.curves.empty() || runs.findings.size() != runs.curves.size())
    throw std::invalid_argument("judge_fair: the main run's curve and findings first");
  FairJudgement j;
  j.runs = runs.curves.size();
  judge_points(points, replayed, runs, j);
  judge_plateaus(points, replayed, runs, j);
  judge_knee(points, replayed, runs, j);
  decide(j);
  return j;
}

namespace {

/// A criterion's confidence: its own, scaled down where fewer than kMinRuns runs judge it.
double with_runs(double c, std::size_t runs) {
  return runs >= kMinRuns ? c : c * static_cast<double>(runs) / (2.0 * kMinRuns);
}

const std::string kAgainst =
    " against the GPU's own runs of latency.sweep (this result and the --runs results; at "
    "least 4 asked)";

}  // namespace

std::vector<Finding> fair_findings(const FairJudgement& j) {
  std::vector<Finding> out;
  const json runs = {{"runs", j.runs}, {"min_runs", kMinRuns}};
  if (j.points_judged > 0)
    out.push_back({finding::kReplayFairPointsWithin.name,
                   j.points_share(),
                   finding::kReplayFairPointsWithin.unit,
                   with_runs(confidence::agreement(j.points_within, j.points_judged), j.runs),
                   "fraction of the working sets measured by at least two runs whose replay "
                   "lies within 3 % (of the measurement) of the runs' range (min..max)" +
                       kAgainst,
                   {{"points_judged", j.points_judged},
                    {"points_within", j.points_within},
                    {"asked", kPointsShare},
                    {"runs", j.runs}}});
  if (!j.plateaus.empty()) {
    json each = json::array();
    for (const auto& p : j.plateaus)
      each.push_back({{"finding", p.name},
                      {"model_cycles", p.model},
                      {"median_run_cycles", p.median_run},
                      {"error_percent", p.error_percent},
                      {"points", p.points}});
    out.push_back({finding::kReplayFairPlateausWithin.name,
                   static_cast<double>(j.plateaus_within) / j.plateaus.size(),
                   finding::kReplayFairPlateausWithin.unit,
                   with_runs(confidence::agreement(j.plateaus_within, j.plateaus.size()), j.runs),
                   "fraction of the plateau latencies (l1.hit_latency, l2.hit_latency, "
                   "l2.mixed_latency, dram.latency) whose replay (the median replayed latency "
                   "over the points whose measurement lies within 2.5 % of the level) is within "
                   "3 % of the median run's" +
                       kAgainst,
                   {{"plateaus", each}, {"runs", j.runs}}});
  }
  if (j.knee)
    out.push_back({finding::kReplayFairL1KneeError.name,
                   j.knee->error_percent,
                   finding::kReplayFairL1KneeError.unit,
                   with_runs(j.knee->confidence, j.runs),
                   "(replay's L1 knee - median run's l1.capacity) / median run's, the replay's "
                   "knee being the largest working set on the first plateau the level finder "
                   "gives over the replayed curve; confidence: the replayed bracket's precision" +
                       kAgainst,
                   {{"model_bytes", j.knee->model},
                    {"model_first_off_bytes", j.knee->first_off},
                    {"median_run_bytes", j.knee->median_run},
                    {"runs", j.runs}}});
  // The verdict: certain where every criterion was judged by enough runs and each is clear;
  // undecided (low confidence) with too few runs.
  double c = 0.2 * static_cast<double>(j.runs) / kMinRuns;
  if (j.verdict != Verdict::kUndecided) {
    c = confidence::agreement(j.points_within, j.points_judged);
    if (j.knee) c = std::min(c, std::max(j.knee->confidence, 0.5));
  }
  out.push_back({finding::kReplayFairVerdict.name,
                 static_cast<double>(static_cast<int>(j.verdict)),
                 finding::kReplayFairVerdict.unit,
                 std::min(c, 1.0),
                 "pass when, against at least 4 runs of the GPU, the replay lies within 3 % of "
                 "the runs' range at >= 95 % of the working sets and every plateau latency and "
                 "the L1 knee lie within 3 % of the median run's; fail otherwise; undecided with "
                 "fewer runs or a criterion that could not be judged",
                 {{"label", to_string(j.verdict)}, {"misses", j.misses}, {"runs", j.runs}}});
  return out;
}

}  // namespace gpuprobe::analysis::replay_fair
