// `gpuprobe replay`: reads the result and the other runs, has measure/replay_model.hpp chase
// the exported model and its variants, analysis/replay.hpp judge them, and writes and prints
// the judgement.
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "analysis/replay.hpp"
#include "analysis/replay_fair.hpp"
#include "build_info.hpp"
#include "cli/from_file.hpp"
#include "cli/result_commands.hpp"
#include "core/experiment.hpp"
#include "core/json_input.hpp"
#include "core/progress.hpp"
#include "core/units.hpp"
#include "device/model_export.hpp"
#include "measure/replay_model.hpp"
#include "report/output_dir.hpp"
#include "report/writer.hpp"

namespace gpuprobe::cli {
namespace {

using nlohmann::json;
namespace rp = analysis::replay;
namespace fair = analysis::replay_fair;

/// Other runs of the GPU (e.g. repeat's run*/result.json): their sweeps' medians by working
/// set, each with its summary, and their findings, read (and refused) before anything is
/// written.
fair::Runs load_runs(const std::vector<std::string>& runs) {
  fair::Runs loaded;
  for (const auto& file : runs) {
    const json other = json_input::load_result(file);
    const json& sweep = rp::passed_sweep(other, file, "to compare the replay with");
    loaded.curves.push_back(from_file(file, [&] { return rp::run_curve(sweep, file); }));
    loaded.findings.push_back(rp::measured_findings(other));
  }
  return loaded;
}

/// The replay judged fairly: against this result and the other runs (at least four asked).
fair::FairJudgement judge_fairly(const std::string& path, const json& sweep,
                                 const rp::MeasuredFindings& findings,
                                 const std::vector<rp::SweepPoint>& points,
                                 const rp::ReplayJudgement& judged, const fair::Runs& others) {
  fair::Runs all;
  all.curves.push_back(from_file(path, [&] { return rp::run_curve(sweep, path); }));
  all.findings.push_back(findings);
  all.curves.insert(all.curves.end(), others.curves.begin(), others.curves.end());
  all.findings.insert(all.findings.end(), others.findings.begin(), others.findings.end());
  std::vector<double> replayed;
  for (const auto& j : judged.points) replayed.push_back(j.replayed_cycles);
  return fair::judge_fair(points, replayed, all);
}

/// The chase's latency over other allocations of the slope's working sets (cache.l2.mixture's
/// re-analysed "allocations"), to judge the replay against what the GPU itself gives for one
/// size.
rp::AllocationEnvelope mixture_allocations(const json& recorded, const std::string& path) {
  rp::AllocationEnvelope envelope;
  const auto& experiments = recorded.at("experiments");
  for (std::size_t i = 0; i < experiments.size(); ++i) {
    const auto& e = experiments[i];
    if (e.at("id") != "cache.l2.mixture" || e.value("status", "") != "passed") continue;
    const auto r = from_file(path + ": experiments[" + std::to_string(i) + "] (cache.l2.mixture)",
                             [&] { return replay_analysis(e); });
    if (!r) continue;
    for (const auto& c : r->curves) envelope.add_allocations(c);
  }
  return envelope;
}

/// The replay's two curves: latency (measured, replayed, the GPU's ranges) and error.
std::vector<Curve> replay_curves(const rp::ReplayJudgement& judged) {
  Curve latency{
      "latency",
      {"working_set_bytes", "measured_cycles", "replayed_cycles", "error_percent", "region",
       "allocations_low_cycles", "allocations_high_cycles", "runs_low_cycles", "runs_high_cycles"},
      {},
      chart_hints("latency against working set: measured on the GPU (solid), replayed on the "
                  "model exported from the same result (dashed), on the L2's slope the "
                  "lowest and highest over other allocations of one size (cache.l2.mixture), "
                  "and behind them the range of the GPU's runs (shaded: min..max of this "
                  "result and the --runs results)",
                  "working_set_bytes", "bytes", "measured_cycles", "cycles", true)
          .with_model({"replayed_cycles", "allocations_low_cycles", "allocations_high_cycles"})
          .banded("runs_low_cycles", "runs_high_cycles")};
  Curve errors{"error",
               {"working_set_bytes", "error_percent", "region"},
               {},
               chart_hints("replay error: (replayed - measured) / measured", "working_set_bytes",
                           "bytes", "error_percent", "%", true)};
  for (const auto& j : judged.points) {
    const auto& p = *j.point;
    const json low = j.allocations ? json(j.allocations->low) : json(nullptr);
    const json high = j.allocations ? json(j.allocations->high) : json(nullptr);
    const json runs_low = j.runs ? json(j.runs->range.low) : json(nullptr);
    const json runs_high = j.runs ? json(j.runs->range.high) : json(nullptr);
    latency.rows.push_back({p.working_set_bytes, p.measured_cycles, j.replayed_cycles,
                            j.error_percent, p.region, low, high, runs_low, runs_high});
    errors.rows.push_back({p.working_set_bytes, j.error_percent, p.region});
  }
  return {latency, errors};
}

/// What a replay consists of, for the result it writes and the lines it prints.
struct Replay {
  std::string path, dir;
  std::vector<std::string> runs;
  json recorded, model;
  rp::ReplayJudgement judged;
  measure::Sensitivities sensitivities;
  std::map<std::string, rp::OffRegion> off_regions;
  fair::FairJudgement fair;
};

ExperimentResult replay_result(const Replay& r) {
  ExperimentResult er;
  er.id = "model.replay";
  er.parameters = {{"source", r.path},
                   {"runs", r.runs},
                   {"source_git_sha", r.recorded.at("tool").value("git_sha", std::string(""))},
                   {"source_started_utc", r.recorded.value("started_utc", std::string(""))},
                   {"model", r.model}};
  json points = json::array();
  for (const auto& j : r.judged.points) points.push_back(rp::to_json(j));
  er.samples = {{"points", points}};
  er.curves = replay_curves(r.judged);
  for (const auto* s : {&r.sensitivities.l2_policy, &r.sensitivities.l1}) {
    if (s->curve.rows.empty()) continue;
    er.curves.push_back(s->curve);
    er.statistics[s->curve.name] = {{"worst_error_percent_by_region", s->worst_by_region},
                                    {"note", s->note}};
  }
  er.findings = rp::replay_findings(r.judged.summary, r.off_regions);
  for (auto& f : fair::fair_findings(r.fair)) er.findings.push_back(std::move(f));
  return er;
}

void write_replay(const Replay& r) {
  json header = {{"schema_version", kResultSchemaVersion},
                 {"tool",
                  {{"name", "gpuprobe"},
                   {"version", build::kVersion},
                   {"git_sha", build::kGitSha},
                   {"argv", json::array({"gpuprobe", "replay", r.path})}}},
                 {"command", "replay"},
                 {"started_utc", units::utc_now()},
                 {"device", r.recorded.at("device")},
                 {"environment", {{"replay_of", r.path}, {"model", r.model}}}};
  report::ResultWriter writer(r.dir, header);
  writer.add(replay_result(r));
  writer.finish(json::object());
}

std::string bytes_text(double bytes) {
  return units::format_bytes(static_cast<std::uint64_t>(bytes));
}

void print_replay(const Replay& r, std::ostream& out) {
  const auto& s = r.judged.summary;
  const auto& all = s.worst.at("all");
  out << "replay of " << r.path << ": worst error " << all.error << " % at "
      << bytes_text(all.working_set_bytes) << " (" << all.region << "); " << s.within << " of "
      << s.points << " points within 3 %";
  if (s.enveloped > 0)
    out << "; on the L2's slope at most " << s.beyond_allocations.error
        << " % outside the range of the GPU's own allocations";
  if (s.runs_judged > 0)
    out << "\n  against " << s.other_runs << " other run" << (s.other_runs == 1 ? "" : "s")
        << " of the GPU (" << s.runs_judged << " working sets): the runs differ by up to "
        << s.runs_spread.error << " % (at " << bytes_text(s.runs_spread.working_set_bytes)
        << "); the replay lies within 3 % of their range at " << s.within_runs << ", at most "
        << s.beyond_runs.error << " % outside it";
  for (const auto& [region, o] : r.off_regions) {
    out << "\n  " << region << ": " << o.off << " point" << (o.off == 1 ? "" : "s")
        << " off by more than 3 %; " << o.between
        << " between the even and a random placement (placement decides)";
    if (o.without_bound > 0) out << "; " << o.without_bound << " without a placement bound";
    if (!o.unexplained.empty()) {
      out << "; unexplained at";
      for (const auto& u : o.unexplained)
        out << " " << bytes_text(u.at("working_set_bytes").get<double>());
    }
  }
  const auto& f = r.fair;
  out << "\n  judged fairly against " << f.runs << " run" << (f.runs == 1 ? "" : "s")
      << " of the GPU (at least " << fair::kMinRuns << " asked): " << fair::to_string(f.verdict)
      << "; " << f.points_within << " of " << f.points_judged
      << " working sets within 3 % of the runs' range, " << f.plateaus_within << " of "
      << f.plateaus.size() << " plateaus within 3 % of the median run";
  if (f.knee) out << ", the L1 knee " << f.knee->error_percent << " % from the median run's";
  for (const auto& m : f.misses) out << "\n    misses: " << m;
  out << "\nresults: " << r.dir << "/result.json, report: " << r.dir << "/report.html\n";
}

}  // namespace

int replay_command(const std::string& path, const std::string& dir, std::ostream& out,
                   const std::vector<std::string>& runs) {
  Replay r{path, dir, runs, json_input::load_result(path), {}, {}, {}, {}, {}};
  const auto others = load_runs(runs);
  report::check_result_folder(dir);  // a new or empty folder, or an earlier replay's
  r.model = from_file(path, [&] { return device::model_from_result(r.recorded); });
  const json& sweep = rp::passed_sweep(r.recorded, path, "to replay; run it first");
  const auto findings = rp::measured_findings(r.recorded);
  measure::ModelReplay replay(r.model);
  // The sweep's points, checked once; every model below is measured at them as the sweep
  // measures them (measure::chase_point_cycles).
  const auto points = from_file(path, [&] { return rp::sweep_points(sweep, path, findings); });
  // Progress on stderr (a terminal, without --quiet): one point per replayed working set.
  progress::begin(1, 1,
                  "replay of " + std::to_string(points.size()) +
                      " working sets on the exported model and its variants");
  struct ProgressEnd {
    ~ProgressEnd() { progress::end(); }
  } progress_end;
  const auto allocations = mixture_allocations(r.recorded, path);
  // A model that cannot be measured is the result file's fault (it made the model): one line.
  r.judged = from_file(path, [&] {
    return rp::judge_replay(points, replay.cycles_at(points), allocations, others.curves);
  });
  r.fair = judge_fairly(path, sweep, findings, points, r.judged, others);
  // Comparisons, not fits: the replay above keeps what the result's evidence gives.
  r.sensitivities =
      from_file(path, [&] { return measure::replay_sensitivities(r.model, findings, points); });
  // The L1's knee has no placement bound: its index uses address bits inside a 2 MiB page
  // only (l1_set_hash_masks), so every allocation places its lines alike.
  r.off_regions = rp::classify_off_points(r.judged.points, r.sensitivities.l2_policy.curve);
  write_replay(r);
  print_replay(r, out);
  return 0;
}

}  // namespace gpuprobe::cli
