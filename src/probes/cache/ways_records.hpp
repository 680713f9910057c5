#pragma once
// cache.l1.ways and cache.l2.ways, what follows the conflict sets: line size, replacement policy
// and cyclic retention, each a record written by run() and a finding drawn from it by
// analyze(), and the set index judged again from its record.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/experiment.hpp"
#include "measure/cache_search.hpp"
#include "probes/cache/ways_conflict_sets.hpp"
#include "probes/cache/ways_samples.hpp"

namespace gpuprobe::probes::cache_structure {

/// The set-index record with its kind, sets and modulo refutation judged again from its flips
/// and the conflict set's lines (analysis::cache::judge_set_index_kind), so that a recorded
/// result is judged by the current rules.
analysis::cache::SetIndexResult rejudged_set_index(const WaysSamples& rec);

/// The line size from every pool's conflict set; it counts when they all agree (else
/// rec.line_note says why not).
LineRecord line_record(measure::cache::Probe& p, Level level, const LevelRun& lr, WaysSamples& rec);

void line_finding(const std::string& lv, const WaysSamples& rec, std::vector<Finding>& out);

PolicyRecord policy_record(measure::cache::Probe& p, Level level, const LevelRun& lr);

void policy_finding(const std::string& lv, const WaysSamples& rec, std::vector<Finding>& out);

CyclicRecord cyclic_record(measure::cache::Probe& p, Level level, const LevelRun& lr);

CyclicRun interleaved_cyclic_record(measure::cache::Probe& p, Level level, const LevelRun& lr,
                                    const analysis::cache::SetIndexResult& idx, std::uint64_t span);

/// cache.<level>.cyclic_retention: the share of a ways + 1 line cycle that still hits (see
/// measure::cache::cyclic_retention). Confidence: the rounds that agree with it within one
/// line of the cycle (agreement), times the calibration's hit/miss separation.
void cyclic_finding(const std::string& lv, const WaysSamples& rec, std::vector<Finding>& out);

}  // namespace gpuprobe::probes::cache_structure
