#pragma once
// cache.prefetch's samples and their judging: pure, no device. A line "was there" when its
// first load took fewer cycles than a threshold between the level's hits (second loads of lines
// just loaded) and its controls (first loads of untouched lines far from any pattern).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace gpuprobe::analysis::prefetch {

/// The distances (in strides past the last trained line) whose lines are probed.
inline constexpr int kDistances[] = {1, 2, 4, 8};

/// One (level, stride) of cache.prefetch: the timed loads of every trial, grouped by role. This
/// is the experiment's samples type (samples version 1): written and read by one conversion.
struct StrideSamples {
  std::string level;  ///< "dram" (DRAM -> L2, .cg after a flush) or "l2" (L2 -> L1, .ca)
  std::string op;     ///< the load operator
  std::uint64_t stride_bytes = 0;
  /// trained[t][i]: cycles of trial t's i-th pattern load (i = 0 .. trained lines - 1).
  std::vector<std::vector<double>> trained;
  /// probes[t][k]: cycles of trial t's load kDistances[k] strides past its last trained line.
  std::vector<std::vector<double>> probes;
  std::vector<double> hits;      ///< second loads of trained lines: the "was there" reference
  std::vector<double> controls;  ///< untouched lines far from any pattern: the "was not" one
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StrideSamples, level, op, stride_bytes, trained, probes, hits,
                                   controls)

/// What one level's samples say.
struct LevelVerdict {
  std::string level;
  double threshold = 0;   ///< cycles: below = the line was there
  double separation = 0;  ///< how clearly hits and controls differ (confidence::separation)
  bool detected = false;  ///< some stride's nearest probe was there in most trials
  std::uint64_t max_stride_bytes = 0;    ///< the largest stride whose nearest probe was there
  int max_distance = 0;                  ///< the farthest distance that was there at some stride
  std::size_t agreeing = 0, probes = 0;  ///< nearest probes on the side their stride's verdict says
  /// Per stride: fraction of trials whose probe at each distance was there.
  std::vector<std::pair<std::uint64_t, std::vector<double>>> fraction_there;
  /// Per stride: median cycles of the probes at each distance (0 where none).
  std::vector<std::pair<std::uint64_t, std::vector<double>>> median_cycles;
  /// Per stride: fraction of the later half of the trained loads that were there.
  std::vector<std::pair<std::uint64_t, double>> trained_late_there;
};

/// Judges one level's strides (all of the same level): pure, no device.
LevelVerdict judge_level(const std::vector<StrideSamples>& strides);

}  // namespace gpuprobe::analysis::prefetch
