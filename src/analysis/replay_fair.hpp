#pragma once
// The replay judged fairly (issue 27 item 5): the replayed model curve against at least
// kMinRuns runs of the same GPU's latency.sweep, not against one. Three criteria, each in
// percent of what the GPU's runs give:
//   - points: every working set's replay within kTolerancePercent (of the measurement) of the
//     range (min..max) of the runs that measured it, at >= kPointsShare of the working sets;
//   - plateaus: each plateau latency (l1.hit_latency, l2.hit_latency, l2.mixed_latency,
//     dram.latency) of the replay within kTolerancePercent of the median run's;
//   - the L1 knee: the replay's largest working set on its L1 plateau within kTolerancePercent
//     of the median run's l1.capacity.
// With fewer than kMinRuns runs the verdict is "undecided" at a low confidence, never a pass.
// Pure: numbers in, a judgement and findings out (analysis/replay.hpp reads the points).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "analysis/replay.hpp"
#include "core/finding.hpp"

namespace gpuprobe::analysis::replay_fair {

inline constexpr std::size_t kMinRuns = 4;
inline constexpr double kTolerancePercent = 3.0;
inline constexpr double kPointsShare = 0.95;

/// The verdict's codes (finding::kReplayFairVerdict's labels).
enum class Verdict { kPass = 0, kFail = 1, kUndecided = -1 };
std::string to_string(Verdict v);

/// What the runs of the GPU give: each run's sweep (the main result's first) and findings.
struct Runs {
  std::vector<replay::RunCurve> curves;           ///< one per run, the main result's included
  std::vector<replay::MeasuredFindings> findings;  ///< same order
};

/// One plateau latency: the replay's (median of the replayed points whose measurement lies on
/// the main run's level) against the median run's finding.
struct PlateauJudgement {
  std::string name;  ///< the finding, e.g. "l2.hit_latency"
  double model = 0, median_run = 0, error_percent = 0;
  std::size_t points = 0;  ///< replayed points the model's level is the median of
  bool within = false;
};

/// The L1 knee: the replay's largest working set on its L1 plateau (the level finder on the
/// replayed curve) against the median run's l1.capacity.
struct KneeJudgement {
  double model = 0, median_run = 0, error_percent = 0;
  double first_off = 0;     ///< the replay's first working set off the L1 plateau
  double confidence = 0;    ///< the replayed bracket's precision (levels' bracket_precision)
  bool within = false;
};

/// The runs' band at one working set (min..max over the runs that measured it).
struct BandPoint {
  double working_set_bytes = 0, low = 0, high = 0, replayed = 0;
  std::size_t runs = 0;
  double beyond_percent = 0;  ///< the replay's distance outside the band, % of the measurement
};

struct FairJudgement {
  std::size_t runs = 0;  ///< the main result and the other runs
  std::vector<BandPoint> band;
  std::size_t points_judged = 0, points_within = 0;
  std::vector<PlateauJudgement> plateaus;
  std::size_t plateaus_within = 0;
  std::optional<KneeJudgement> knee;
  Verdict verdict = Verdict::kUndecided;
  std::vector<std::string> misses;  ///< where it fails, in words (empty on a pass)
  double points_share() const {
    return points_judged == 0 ? 0.0 : static_cast<double>(points_within) / points_judged;
  }
};

/// Judges the replay (`replayed[i]` is points[i] replayed; points are the main run's sweep).
/// A std::invalid_argument when the sizes differ or `runs` is empty.
FairJudgement judge_fair(const std::vector<replay::SweepPoint>& points,
                         const std::vector<double>& replayed, const Runs& runs);

/// replay.fair.points_within, .plateaus_within, .l1_knee_error, .verdict.
std::vector<Finding> fair_findings(const FairJudgement& judged);

}  // namespace gpuprobe::analysis::replay_fair
