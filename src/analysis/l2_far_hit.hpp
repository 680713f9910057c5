#pragma once
// cache.l2.far_hit's inference (pure host code, tested on synthetic samples): the pure far-hit
// latency of the L2 (the first read of a line that the far partition holds and the near one does
// not), moved onto the pointer chase's scale; whether the near partition keeps a copy of a
// far-homed line after an SM has read it (replication); how many such copies fit and which go
// first.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuprobe::analysis {

/// One round: a reference SM on the other side placed every probed line after a flush; the
/// measured SM then timed its first and its second read of each line (in the same order).
struct FarHitRound {
  std::vector<double> first;   ///< cycles, one per probed line
  std::vector<double> second;  ///< cycles, one per probed line
};

struct FarHitInput {
  std::vector<std::uint64_t> offsets;  ///< probed lines (bytes from a 2 MiB-aligned base)
  std::vector<FarHitRound> rounds;
  /// Cycles per step of a hot single-thread chase (same operator) over a working set far below
  /// one partition: the chase's own scale.
  double chase_cycles = 0;
};

struct FarHitResult {
  bool split = false;         ///< first reads fall into two classes (near and far hits)
  double threshold = 0;       ///< between the classes (cycles)
  std::vector<int> line_far;  ///< per line: 1 when most rounds found its first read far
  double consistency = 0;     ///< fraction of (round, line) first reads that agree with line_far
  std::size_t far_lines = 0;
  std::vector<double> near_first, far_first, far_second;  ///< per line, median over rounds
  double near_first_cycles = 0, far_first_cycles = 0, far_second_cycles = 0;  ///< medians
  /// Means over lines of the per-line medians. The chase's cycles per step are a mean over
  /// the lines it walks, so the scale moves by means: the first reads of one side are bimodal
  /// on the H200 (slices nearer and farther from the SM, ~30 cycles apart, about half each)
  /// and their median jumps between the modes from run to run while the mean does not.
  double near_first_mean = 0, far_first_mean = 0;
  double difference_cycles = 0;  ///< far_first_mean - near_first_mean on the sequence's scale
  double difference_standard_error = 0;  ///< of the difference of the two means
  // Replication: far lines whose second read is below the threshold, out of far lines.
  std::size_t replicated = 0;
  bool replication = false;
  /// The chase scale's near hit: the hot chase itself when far lines are replicated (then a
  /// steady-state chase only sees near hits); otherwise the chase less its far share.
  double chase_near_cycles = 0;
  double far_hit_cycles = 0;  ///< chase_near_cycles + difference_cycles
  double far_line_fraction = 0;
};

/// Two classes over all first reads (1-D two-means; split when the upper class is at least 10 %
/// slower and both hold at least 5 % of the reads), per-line majority over rounds, medians and
/// the replication vote.
FarHitResult analyze_far_hit(const FarHitInput& in);

/// DRAM latency by home: after a flush the measured SM's first read of each probed line is a
/// DRAM miss; the lines are split by the side found in the latency rounds (r.line_far), and each
/// side's median moved onto the chase's scale like the far hit (chase near hit + (cold read -
/// near first read of the same sequences)).
struct DramByHome {
  bool found = false;
  std::vector<double> near_lines, far_lines;  ///< per line: median cold first read over rounds
  double near_sequence_cycles = 0, far_sequence_cycles = 0;
  double near_cycles = 0, far_cycles = 0;  ///< on the chase's scale
  /// Cold reads at or below the hot rounds' near/far threshold (an L2 hit: a line the flush
  /// left): counted, not used.
  std::size_t not_cold = 0, reads = 0;
};
/// `cold_rounds[k][i]`: round k's cold first read of line i (the lines of `in`). Needs a split
/// far-hit analysis `r` of the same lines and at least 3 lines of each side.
DramByHome analyze_dram_by_home(const FarHitResult& r,
                                const std::vector<std::vector<double>>& cold_rounds);

/// 1-D two-means: the threshold between two classes of `values` (midpoint of their means);
/// returns false when all values are equal or there are fewer than 2.
bool two_means_threshold(const std::vector<double>& values, double& threshold);

/// The partition side of a line as a GF(2)-linear function of its in-page offset bits: for
/// lines a, b of one 2 MiB page, far(a) ^ far(b) = parity(mask & (a ^ b)).
struct SideFit {
  bool found = false;
  std::uint64_t mask = 0;
  std::size_t rank = 0;
  double accuracy = 0;  ///< fraction of lines the fit predicts (with each page's constant)
  std::vector<std::uint64_t> pages;  ///< page index (offset / 2 MiB) of each constant
  std::vector<int> page_constant;    ///< far(line) = parity(mask & in_page) ^ constant
};
/// Fits the side of lines (0/1) from their offsets; `prior_mask` (0 = none) is tried first and
/// kept when it predicts at least as many lines as the fitted one.
SideFit fit_side(const std::vector<std::uint64_t>& offsets, const std::vector<int>& far,
                 std::uint64_t prior_mask);
/// parity(mask & the offset's bits inside its 2 MiB page): a line's side up to its page's
/// constant.
int in_page_parity(std::uint64_t mask, std::uint64_t offset);
/// far(offset) by a fit (the page must be among fit.pages); -1 when it is not.
int predict_side(const SideFit& fit, std::uint64_t offset);

/// One capacity step: `lines` far-homed lines read once (first reads) and then again in the
/// same order; `second` holds the second reads.
struct ReplicaStep {
  std::size_t lines = 0;
  std::vector<double> second;
};
struct ReplicaResult {
  bool evicted = false;               ///< some step kept fewer than 90 % of its copies
  std::size_t kept_lines = 0;         ///< the largest step whose copies (>= 90 %) all stayed near
  std::size_t first_evicting = 0;     ///< lines of the first step that lost copies (0: none)
  std::vector<double> near_fraction;  ///< per step
  /// In the first evicting step: mean position (0 = read first, 1 = read last) of the lines
  /// whose copy was gone; ~0.5 when the copies that go are unrelated to the read order.
  double evicted_position = 0;
  std::size_t evicted_count = 0;
};
ReplicaResult analyze_replica_steps(const std::vector<ReplicaStep>& steps, double threshold);

}  // namespace gpuprobe::analysis
