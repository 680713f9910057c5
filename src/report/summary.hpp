#pragma once
// The summary card: what this GPU is, at one glance. The same content is printed at the end of
// `characterize` and `run`, by `gpuprobe summary`, and opens FINDINGS.md and report.html:
// the GPU and its run; the memory hierarchy level by level (latency in cycles and ns, capacity,
// bandwidth, line and sector, ways and sets, replacement policy, the L2's partitions and hash,
// the TLB); the headline ceilings as a percent of the theoretical peak; and the findings whose
// evidence is weak, named. Everything is read from result.json alone.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gpuprobe::report {

/// One row of the hierarchy: each cell is already formatted ("-" where not measured).
struct LevelRow {
  std::string name;     ///< "L1", "shared memory", "L2 near partition", ...
  std::string scope;    ///< "per SM", "whole GPU"
  std::string latency;  ///< "32.02 cy"
  std::string latency_ns;
  std::string capacity;
  std::string bandwidth;
  std::string line;      ///< "128 B / 32 B" (line / sector)
  std::string geometry;  ///< "4 ways x 512 sets"
  std::string policy;    ///< "LRU"
  int depth = 0;         ///< steps from the SM: L1 and shared memory 0, L2 near 1, ...
};

/// One headline ceiling: the measured rate and its share of the theoretical peak.
struct Ceiling {
  std::string group;              ///< "DRAM", "on chip", "compute", "links"
  std::string label;              ///< "read", "L1", "FFMA"
  std::string measured;           ///< "4582.4 GB/s"
  std::optional<double> percent;  ///< of the theoretical peak, when one is known
  std::string peak;               ///< how the peak was computed, or why there is none
};

/// A finding whose evidence is weak, or an experiment that failed, named with the reason.
struct Doubt {
  std::string experiment;
  std::string name;
  std::string why;  ///< a confidence ("0.31"), "check failed: ...", "counters disagree ..."
};

struct SummaryCard {
  bool simulated = false;                    ///< a modelled or replayed GPU
  std::string simulated_what;                ///< what was simulated, in words (empty when measured)
  std::string title;                         ///< "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)"
  std::vector<std::string> run_lines;        ///< card, clocks, driver, version, wall time, counts
  std::vector<LevelRow> levels;              ///< from the registers outwards
  std::vector<std::string> structure_lines;  ///< L2 partitions and hash, TLB
  std::vector<Ceiling> ceilings;
  std::vector<Doubt> doubts;
  std::vector<std::string> not_measured;  ///< levels or ceilings this run did not measure
  /// What the reader must know about the run itself: counters asked for and not read, clock
  /// drift or throttling during an experiment, an interrupted run.
  std::vector<std::string> warnings;
};

/// The card of a result (its JSON as result.json holds it). Never throws on missing findings:
/// what was not measured is left out and named in not_measured.
SummaryCard summary_card(const nlohmann::json& result);

/// The card as terminal text: at most 30 lines, at most 100 columns.
std::string summary_text(const SummaryCard& card);
/// The card as a markdown section (FINDINGS.md).
std::string summary_markdown(const SummaryCard& card);
/// The card as HTML with the hierarchy drawn as an inline SVG (report.html).
std::string summary_html(const SummaryCard& card);

/// FINDINGS.md: the card, then every finding grouped by experiment family, values typed.
std::string findings_markdown(const nlohmann::json& result);

}  // namespace gpuprobe::report
