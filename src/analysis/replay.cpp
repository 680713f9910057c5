#include "analysis/replay.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/finding_names.hpp"

namespace gpuprobe::analysis::replay {

using nlohmann::json;

MeasuredFindings measured_findings(const json& result) {
  MeasuredFindings found;
  for (const auto& e : result.at("experiments"))
    for (const auto& f : e.value("findings", json::array()))
      found[f.at("name").get<std::string>()] = f.at("value").get<double>();
  return found;
}

std::string region_of(double working_set_bytes, const MeasuredFindings& findings) {
  const auto capacity = [&](const std::string& name) {
    const auto it = findings.find(name);
    return it == findings.end() ? 0.0 : it->second;
  };
  if (working_set_bytes <= capacity(finding::kL1Capacity)) return "l1";
  if (working_set_bytes <= capacity(finding::kL2NearCapacity)) return "l2_near";
  if (working_set_bytes <= capacity(finding::kL2Capacity)) return "l2_mixed";
  return "dram";
}

const json& passed_sweep(const json& result, const std::string& file, const char* for_what) {
  const json* sweep = nullptr;
  for (const auto& e : result.at("experiments"))
    if (e.at("id") == "latency.sweep" && e.value("status", "") == "passed") sweep = &e;
  if (sweep == nullptr) throw UsageError(file + ": no passed latency.sweep " + for_what);
  return *sweep;
}

namespace {

/// The sweep's list of points, refused when empty or no list.
const json& points_of(const json& sweep, const std::string& file) {
  const auto& points = sweep.at("samples").at("points");
  if (!points.is_array() || points.empty())
    throw UsageError(file + ": latency.sweep's samples.points is empty or not a list");
  return points;
}

/// A point's working set and median latency, refused unless both are positive.
std::pair<double, double> checked_point(const json& point, const std::string& file) {
  const double working_set = point.at("working_set_bytes").get<double>();
  const double median = point.at("cycles_per_load").at("median").get<double>();
  if (!(median > 0) || !(working_set > 0))
    throw UsageError(file + ": latency.sweep point at " + std::to_string(working_set) + " B has " +
                     std::to_string(median) +
                     " cycles per load; allowed: a positive working set and latency");
  return {working_set, median};
}

}  // namespace

std::vector<SweepPoint> sweep_points(const json& sweep, const std::string& file,
                                     const MeasuredFindings& findings) {
  std::vector<SweepPoint> points;
  for (const auto& recorded : points_of(sweep, file)) {
    const auto [working_set, median] = checked_point(recorded, file);
    SweepPoint p;
    p.working_set_bytes = working_set;
    p.measured_cycles = median;
    p.op = device::parse_load_op(recorded.value("load", std::string("ca")));
    p.region = region_of(working_set, findings);
    p.summary = recorded.at("cycles_per_load");
    points.push_back(std::move(p));
  }
  return points;
}

RunCurve run_curve(const json& sweep, const std::string& file) {
  RunCurve curve;
  for (const auto& recorded : points_of(sweep, file))
    curve[checked_point(recorded, file).first] = recorded.at("cycles_per_load");
  return curve;
}

double error_percent(double replayed, double measured) {
  return 100.0 * (replayed - measured) / measured;
}

double outside_percent(double value, double low, double high, double measured) {
  const double out_by = value < low ? low - value : (value > high ? value - high : 0.0);
  return 100.0 * out_by / measured;
}

AllocationEnvelope::AllocationEnvelope(std::vector<Drawn> drawn) : drawn_(std::move(drawn)) {
  std::sort(drawn_.begin(), drawn_.end(), [](const Drawn& a, const Drawn& b) {
    return std::tie(a.working_set_bytes, a.low_cycles, a.high_cycles) <
           std::tie(b.working_set_bytes, b.low_cycles, b.high_cycles);
  });
}

void AllocationEnvelope::add_allocations(const Curve& curve) {
  if (curve.name != "allocations") return;
  const auto column = [&](const char* name) {
    return static_cast<std::size_t>(std::find(curve.columns.begin(), curve.columns.end(), name) -
                                    curve.columns.begin());
  };
  const auto ws = column("working_set_bytes"), low = column("latency_min"),
             high = column("latency_max");
  std::vector<Drawn> drawn = drawn_;
  for (const auto& row : curve.rows)
    drawn.push_back(
        {row.at(ws).get<double>(), row.at(low).get<double>(), row.at(high).get<double>()});
  *this = AllocationEnvelope(std::move(drawn));
}

std::optional<Range> AllocationEnvelope::at(double working_set_bytes) const {
  for (std::size_t k = 0; k + 1 < drawn_.size(); ++k) {
    const auto &a = drawn_[k], &b = drawn_[k + 1];
    if (working_set_bytes < a.working_set_bytes || working_set_bytes > b.working_set_bytes ||
        b.working_set_bytes <= a.working_set_bytes)
      continue;
    const double t =
        (working_set_bytes - a.working_set_bytes) / (b.working_set_bytes - a.working_set_bytes);
    return Range{a.low_cycles + t * (b.low_cycles - a.low_cycles),
                 a.high_cycles + t * (b.high_cycles - a.high_cycles)};
  }
  return std::nullopt;
}

std::optional<RunsRange> runs_range_at(const SweepPoint& point, const std::vector<RunCurve>& runs) {
  RunsRange r{{point.measured_cycles, point.measured_cycles}, &point.summary, &point.summary, 1};
  for (const auto& run : runs) {
    const auto it = run.find(point.working_set_bytes);
    if (it == run.end()) continue;
    const double median = it->second.at("median").get<double>();
    ++r.runs_at_point;
    if (median < r.range.low) {
      r.range.low = median;
      r.low_summary = &it->second;
    }
    if (median > r.range.high) {
      r.range.high = median;
      r.high_summary = &it->second;
    }
  }
  if (r.runs_at_point < 2) return std::nullopt;
  return r;
}

JudgedPoint judge_point(const SweepPoint& point, double replayed,
                        const AllocationEnvelope& allocations, const std::vector<RunCurve>& runs) {
  JudgedPoint j;
  j.point = &point;
  j.replayed_cycles = replayed;
  j.error_percent = error_percent(replayed, point.measured_cycles);
  if (const auto drawn =
          point.region == "l2_mixed" ? allocations.at(point.working_set_bytes) : std::nullopt) {
    // The sweep's own point is one more allocation of this size.
    j.allocations = Range{std::min(drawn->low, point.measured_cycles),
                          std::max(drawn->high, point.measured_cycles)};
    j.beyond_allocations_percent =
        outside_percent(replayed, j.allocations->low, j.allocations->high, point.measured_cycles);
  }
  j.runs = runs_range_at(point, runs);
  if (j.runs)
    j.beyond_runs_percent =
        outside_percent(replayed, j.runs->range.low, j.runs->range.high, point.measured_cycles);
  return j;
}

json to_json(const JudgedPoint& judged) {
  const SweepPoint& p = *judged.point;
  json j = {{"working_set_bytes", p.working_set_bytes},
            {"measured_cycles", p.measured_cycles},
            {"replayed_cycles", judged.replayed_cycles},
            {"error_percent", judged.error_percent},
            {"region", p.region}};
  if (judged.allocations) {
    j["allocations_low_cycles"] = judged.allocations->low;
    j["allocations_high_cycles"] = judged.allocations->high;
    j["beyond_allocations_percent"] = judged.beyond_allocations_percent;
  }
  if (judged.runs) {
    j["runs_low_cycles"] = judged.runs->range.low;
    j["runs_high_cycles"] = judged.runs->range.high;
    j["runs_at_point"] = judged.runs->runs_at_point;
    j["beyond_runs_percent"] = judged.beyond_runs_percent;
  }
  return j;
}

bool Worst::take(double value, const SweepPoint& point) {
  if (!(value > error)) return false;
  error = value;
  working_set_bytes = point.working_set_bytes;
  region = point.region;
  summary = point.summary;
  return true;
}

void ReplaySummary::add(const JudgedPoint& judged) {
  const SweepPoint& p = *judged.point;
  ++points;
  const double error = std::fabs(judged.error_percent);
  within += error <= kWithinPercent ? 1 : 0;
  worst[p.region].take(error, p);
  worst["all"].take(error, p);
  if (judged.allocations) {
    ++enveloped;
    beyond_allocations.take(judged.beyond_allocations_percent, p);
  }
  if (!judged.runs) return;
  const auto& runs = *judged.runs;
  ++runs_judged;
  within_runs += judged.beyond_runs_percent <= kWithinPercent ? 1 : 0;
  beyond_runs.take(judged.beyond_runs_percent, p);
  const double spread = 100.0 * (runs.range.high - runs.range.low) / runs.range.low;
  if (runs_spread.take(spread, p)) {
    const double se = std::hypot(confidence::standard_error_of_summary(*runs.low_summary),
                                 confidence::standard_error_of_summary(*runs.high_summary));
    runs_spread_z = se > 0 ? (runs.range.high - runs.range.low) / se
                           : (runs.range.high > runs.range.low ? 1e9 : 0.0);
  }
}

ReplayJudgement judge_replay(const std::vector<SweepPoint>& points,
                             const std::vector<double>& replayed,
                             const AllocationEnvelope& allocations,
                             const std::vector<RunCurve>& runs) {
  if (replayed.size() != points.size())
    throw std::invalid_argument("judge_replay: one replayed latency per point");
  ReplayJudgement j;
  j.summary.other_runs = runs.size();
  for (std::size_t i = 0; i < points.size(); ++i) {
    j.points.push_back(judge_point(points[i], replayed[i], allocations, runs));
    j.summary.add(j.points.back());
  }
  return j;
}

std::optional<double> column_value_at(const Curve& curve, const std::string& label,
                                      double working_set_bytes) {
  const auto k = static_cast<std::size_t>(
      std::find(curve.columns.begin(), curve.columns.end(), label) - curve.columns.begin());
  if (k == curve.columns.size()) return std::nullopt;
  for (const auto& row : curve.rows)
    if (row.size() > k && row[0].get<double>() == working_set_bytes && row[k].is_number())
      return row[k].get<double>();
  return std::nullopt;
}

std::map<std::string, OffRegion> classify_off_points(const std::vector<JudgedPoint>& points,
                                                     const Curve& placement) {
  // A measurement between the replay (a contiguous range placed evenly) and the same model
  // with its blocks of the measured placement unit placed at random is one that some placement
  // of the allocation gives: where the allocation sits decides there, which user code neither
  // sees nor chooses. A point outside both is unexplained by placement.
  const std::string label = "random_placement";
  std::map<std::string, OffRegion> regions;
  for (const auto& judged : points) {
    if (std::fabs(judged.error_percent) <= kWithinPercent) continue;
    const SweepPoint& p = *judged.point;
    const double measured = p.measured_cycles, replayed = judged.replayed_cycles;
    auto& o = regions[p.region];
    ++o.off;
    const auto bound = column_value_at(placement, label, p.working_set_bytes);
    if (!bound) {
      ++o.without_bound;  // no placement bound in this result (not applicable: the statistics)
    } else if (measured >= std::min(replayed, *bound) && measured <= std::max(replayed, *bound)) {
      ++o.between;
      o.bounds[label] = o.bounds.value(label, 0) + 1;
    } else {
      o.unexplained.push_back({{"working_set_bytes", p.working_set_bytes},
                               {"measured_cycles", measured},
                               {"replayed_cycles", replayed},
                               {"bound", label},
                               {"bound_cycles", *bound}});
    }
  }
  return regions;
}

void note_worst_by_region(json& worst_by_region, const SweepPoint& point, double replayed) {
  const double error = std::fabs(error_percent(replayed, point.measured_cycles));
  if (!worst_by_region.contains(point.region) ||
      error > worst_by_region[point.region]["error_percent"].get<double>())
    worst_by_region[point.region] = {{"error_percent", error},
                                     {"working_set_bytes", point.working_set_bytes}};
}

namespace {

// The confidence of a replay error is the measured point's own precision: the model's side is
// computed (its noise is the model's), the GPU's side is what could move.
void add_error_findings(const ReplaySummary& s, std::vector<Finding>& out) {
  for (const auto& [key, w] : s.worst) {
    const std::string name =
        key == "all" ? "replay.worst_error_percent" : "replay." + key + ".worst_error_percent";
    out.push_back({name,
                   w.error,
                   "%",
                   confidence::precision_of_summary(w.summary),
                   "largest |replayed - measured| / measured over latency.sweep's points" +
                       std::string(key == "all" ? "" : " in the " + key + " region") +
                       ", the model exported from the same result (export-model) measured at the "
                       "same working sets as latency.sweep measures them",
                   {{"working_set_bytes", w.working_set_bytes}, {"region", w.region}}});
  }
  if (s.enveloped == 0) return;
  out.push_back(
      {"replay.l2_mixed.worst_beyond_allocations_percent",
       s.beyond_allocations.error,
       "%",
       confidence::precision_of_summary(s.beyond_allocations.summary),
       "largest distance of the replay outside the range the GPU itself gives for one "
       "working set on the L2's slope, relative to the measurement: the range of "
       "cache.l2.mixture's allocations of the drawn working sets (linear between them) and "
       "the sweep's own point; 0 where the replay lies inside it",
       {{"working_set_bytes", s.beyond_allocations.working_set_bytes},
        {"points_judged", s.enveloped}}});
}

void add_runs_findings(const ReplaySummary& s, std::vector<Finding>& out) {
  if (s.runs_judged == 0) return;
  out.push_back(
      {"replay.worst_beyond_runs_percent",
       s.beyond_runs.error,
       "%",
       confidence::precision_of_summary(s.beyond_runs.summary),
       "largest distance of the replay outside the range the GPU's own runs give at one "
       "working set (this result's sweep and the --runs results' sweeps at the same working "
       "sets), relative to the measurement; 0 where the replay lies inside it",
       {{"working_set_bytes", s.beyond_runs.working_set_bytes},
        {"region", s.beyond_runs.region},
        {"points_judged", s.runs_judged},
        {"runs", s.other_runs + 1}}});
  out.push_back(
      {"replay.runs_worst_spread_percent",
       s.runs_spread.error,
       "%",
       confidence::separation(s.runs_spread_z),
       "the GPU's own largest run-to-run spread of the sweep at one working set, (highest - "
       "lowest) / lowest over this result and the --runs results; confidence: separation of "
       "the two extremes beyond their medians' standard errors. A model cannot be expected "
       "closer to one run than the runs are to each other",
       {{"working_set_bytes", s.runs_spread.working_set_bytes},
        {"region", s.runs_spread.region},
        {"z", s.runs_spread_z}}});
  out.push_back({"replay.points_within_3_percent_of_runs",
                 static_cast<double>(s.within_runs) / static_cast<double>(s.runs_judged),
                 "fraction",
                 confidence::agreement(s.within_runs, s.runs_judged),
                 "fraction of the judged working sets whose replay lies within 3 % "
                 "(of the measurement) of the range of the GPU's own runs",
                 {{"points_judged", s.runs_judged}}});
}

void add_off_region_findings(const std::map<std::string, OffRegion>& regions,
                             std::vector<Finding>& out) {
  for (const auto& [region, o] : regions) {
    const std::size_t judged = o.off - o.without_bound;
    if (judged == 0) continue;  // no evidence: no finding (stdout says why)
    out.push_back(
        {"replay." + region + ".off_points_between_placements",
         static_cast<double>(o.between) / judged,
         "fraction",
         // The verdict the judged points give, whichever way most of them go.
         confidence::agreement(std::max(o.between, judged - o.between), judged),
         "of latency.sweep's points in the " + region +
             " region whose replay is off by more than 3 % and that have a placement bound, the "
             "fraction whose measurement lies "
             "between the replay (the exported model: a contiguous range placed evenly) and the "
             "same model with its blocks of l2.mixture.placement_unit placed at random "
             "(random_placement, past 2 x l1.capacity; the L1's knee has no placement bound): "
             "there the allocation's placement, which user code neither sees nor chooses, "
             "decides; the others are unexplained by placement; confidence: agreement of the "
             "judged points with the verdict most of them give",
         {{"off_points", o.off},
          {"judged", judged},
          {"without_bound", o.without_bound},
          {"between_placements", o.between},
          {"bounds", o.bounds},
          {"unexplained", o.unexplained}}});
  }
}

}  // namespace

std::vector<Finding> replay_findings(const ReplaySummary& summary,
                                     const std::map<std::string, OffRegion>& off_regions) {
  std::vector<Finding> found;
  add_error_findings(summary, found);
  add_runs_findings(summary, found);
  add_off_region_findings(off_regions, found);
  found.push_back(
      {"replay.points_within_3_percent",
       static_cast<double>(summary.within) / summary.points,
       "fraction",
       confidence::agreement(summary.within, summary.points),
       "fraction of latency.sweep's points whose replay lies within 3 % of the measurement",
       {{"points", summary.points}}});
  return found;
}

}  // namespace gpuprobe::analysis::replay
