#include "cli/result_commands.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "build_info.hpp"
#include "cli/from_file.hpp"
#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "core/files.hpp"
#include "core/finding_names.hpp"
#include "core/json_input.hpp"
#include "core/noise.hpp"
#include "core/progress.hpp"
#include "core/text_input.hpp"
#include "core/units.hpp"
#include "device/model_device.hpp"
#include "device/model_export.hpp"
#include "measure/chase_point.hpp"
#include "report/output_dir.hpp"
#include "report/summary.hpp"
#include "report/writer.hpp"

namespace gpuprobe::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

void write_or_fail(const std::string& path, const std::string& text) {
  try {
    report::write_file_atomically(path, text);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    throw UsageError("cannot write " + text_input::quoted(path) + " (" + first_line(e.what()) +
                     ")");
  }
}

}  // namespace

int analyze_command(const std::string& path, const std::string& format, std::ostream& out) {
  json recorded = json_input::load_result(path);
  auto& experiments = recorded["experiments"];
  for (std::size_t i = 0; i < experiments.size(); ++i) {
    auto& e = experiments[i];
    const std::string where =
        path + ": experiments[" + std::to_string(i) + "] (" + e.at("id").get<std::string>() + ")";
    const auto r = from_file(where, [&] { return replay_analysis(e); });
    if (!r) continue;
    json findings = json::array();
    for (const auto& f : r->findings) findings.push_back(to_json(f));
    e["findings"] = findings;
    if (!e.contains("statistics") || !e["statistics"].is_object()) e["statistics"] = json::object();
    e["statistics"].update(r->statistics);
    // The analysis finds failed checks too (rows failing verification): the experiment is an
    // error then, with its reason.
    if (r->status == Status::kError) {
      e["status"] = to_string(r->status);
      e["reason"] = r->reason;
    }
  }
  if (format == "json") {
    out << recorded.dump(1) << "\n";
    return 0;
  }
  out << from_file(path, [&] { return report::summary_table(recorded); });
  return 0;
}

int summary_command(const std::string& path, bool verbose, std::ostream& out) {
  const json recorded = json_input::load_result(path);
  // Both texts are made before anything is printed: a file they cannot read prints nothing.
  const std::string card =
      from_file(path, [&] { return report::summary_text(report::summary_card(recorded)); });
  const std::string table =
      verbose ? from_file(path, [&] { return report::summary_table(recorded); }) : std::string();
  out << card;
  if (verbose) out << "\n" << table;
  return 0;
}

int report_command(const std::string& path, std::string dir, std::ostream& out) {
  const json recorded = json_input::load_result(path);
  if (dir.empty()) dir = fs::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  report::check_writable(dir);
  // The samples the page draws are checked by the analysis that reads them (a wrong-typed field
  // is the file's fault, one line, exit 2), and the page is made before anything is created, so
  // a result it cannot draw leaves nothing.
  const auto& experiments = recorded.at("experiments");
  for (std::size_t i = 0; i < experiments.size(); ++i) {
    const auto& e = experiments[i];
    const std::string where =
        path + ": experiments[" + std::to_string(i) + "] (" + e.at("id").get<std::string>() + ")";
    from_file(where, [&] { return replay_analysis(e); });
  }
  report::ReportCounts counts;
  const std::string html = from_file(path, [&] {
    return report::html_report(recorded, fs::path(path).parent_path().string(), &counts);
  });
  const report::OutputLock lock(dir);  // creates dir; no other run writes it meanwhile
  const std::string findings = from_file(path, [&] { return report::findings_markdown(recorded); });
  const auto target = fs::path(dir) / "report.html";
  write_or_fail(target.string(), html);
  write_or_fail((fs::path(dir) / "FINDINGS.md").string(), findings);
  out << "report: " << target.string() << " (" << counts.charts << " charts)\n";
  // A curve the page could not draw is said there and here, never a silent gap.
  if (!counts.missing_curves.empty()) {
    std::cerr << "warning: " << counts.missing_curves.size()
              << " curves not found (no rows in result.json and no CSV beside it):";
    for (const auto& c : counts.missing_curves) std::cerr << " " << c;
    std::cerr << "\n";
  }
  return 0;
}

int export_model_command(const std::string& path, const std::string& model_path,
                         const std::string& format, std::ostream& out) {
  const json recorded = json_input::load_result(path);
  // Never the input itself (also through a link), a link, a device node, a FIFO or a socket.
  if (!model_path.empty()) files::check_output_target(model_path);
  const std::string model = from_file(path, [&] {
    const json m = device::model_from_result(recorded);
    return format == "accelsim" ? device::accelsim_config(m) : m.dump(2) + "\n";
  });
  if (model_path.empty()) {
    out << model;
    return 0;
  }
  write_or_fail(model_path, model);
  out << "model: " << model_path << " (use --device model:" << model_path << ")\n";
  return 0;
}

namespace {

/// Which measured level a working set falls in, from the result's own capacities.
std::string region_of(double ws, const std::map<std::string, double>& f) {
  const auto cap = [&](const char* n) { return f.count(n) ? f.at(n) : 0.0; };
  if (ws <= cap("l1.capacity")) return "l1";
  if (ws <= cap("l2.near_capacity")) return "l2_near";
  if (ws <= cap("l2.capacity")) return "l2_mixed";
  return "dram";
}

/// The index of column `name` of a curve; columns.size() when it has none.
std::size_t column_of(const Curve& c, const std::string& name) {
  return static_cast<std::size_t>(std::find(c.columns.begin(), c.columns.end(), name) -
                                  c.columns.begin());
}

/// How far `value` lies outside [lo, hi], in percent of `measured` (0 inside).
double outside_percent(double value, double lo, double hi, double measured) {
  const double out_by = value < lo ? lo - value : (value > hi ? value - hi : 0.0);
  return 100.0 * out_by / measured;
}

/// The passed latency.sweep of a loaded result; `file` names it in the error when there is none.
const json& passed_sweep(const json& result, const std::string& file, const char* for_what) {
  const json* sweep = nullptr;
  for (const auto& e : result.at("experiments"))
    if (e.at("id") == "latency.sweep" && e.value("status", "") == "passed") sweep = &e;
  if (sweep == nullptr) throw UsageError(file + ": no passed latency.sweep " + for_what);
  return *sweep;
}

/// Calls f(point, working set, median cycles) for every point of a sweep, each checked: a
/// non-empty list of points with positive working sets and latencies (one line naming `file`
/// otherwise).
template <class F>
void for_each_sweep_point(const json& sweep, const std::string& file, F&& f) {
  from_file(file, [&] {
    const auto& points = sweep.at("samples").at("points");
    if (!points.is_array() || points.empty())
      throw UsageError(file + ": latency.sweep's samples.points is empty or not a list");
    for (const auto& pt : points) {
      const double ws = pt.at("working_set_bytes").get<double>();
      const double m = pt.at("cycles_per_load").at("median").get<double>();
      if (!(m > 0) || !(ws > 0))
        throw UsageError(file + ": latency.sweep point at " + std::to_string(ws) + " B has " +
                         std::to_string(m) +
                         " cycles per load; allowed: a positive working set and latency");
      f(pt, ws, m);
    }
    return 0;
  });
}

}  // namespace

int replay_command(const std::string& path, const std::string& dir, std::ostream& out,
                   const std::vector<std::string>& runs) {
  const json recorded = json_input::load_result(path);
  // Other runs of the GPU (e.g. repeat's run*/result.json): their sweeps' medians by working
  // set, with each median's summary, read (and refused) before anything is written.
  std::vector<std::map<double, json>> run_curves;
  for (const auto& rp : runs) {
    const json other = json_input::load_result(rp);
    std::map<double, json> c;
    for_each_sweep_point(
        passed_sweep(other, rp, "to compare the replay with"), rp,
        [&](const json& pt, double ws, double) { c[ws] = pt.at("cycles_per_load"); });
    run_curves.push_back(std::move(c));
  }
  report::check_result_folder(dir);  // a new or empty folder, or an earlier replay's
  const json model = from_file(path, [&] { return device::model_from_result(recorded); });
  const json& sweep = passed_sweep(recorded, path, "to replay; run it first");
  std::map<std::string, double> measured_findings;
  for (const auto& e : recorded.at("experiments"))
    for (const auto& f : e.value("findings", json::array()))
      measured_findings[f.at("name").get<std::string>()] = f.at("value").get<double>();

  device::ModelDevice dev(device::model_config_from_json(model));
  RunOptions options;
  FindingBoard board;
  Context ctx{dev, options, board};
  Curve curve{
      "latency",
      {"working_set_bytes", "measured_cycles", "replayed_cycles", "error_percent", "region",
       "allocations_low_cycles", "allocations_high_cycles", "runs_low_cycles", "runs_high_cycles"},
      {},
      chart_hints("latency against working set: measured on the GPU (solid), replayed on the "
                  "model exported from the same result (dashed), and on the L2's slope the "
                  "lowest and highest over other allocations of one size (cache.l2.mixture)",
                  "working_set_bytes", "bytes", "measured_cycles", "cycles", true)
          .with_model({"replayed_cycles", "allocations_low_cycles", "allocations_high_cycles",
                       "runs_low_cycles", "runs_high_cycles"})};
  Curve errors{"error",
               {"working_set_bytes", "error_percent", "region"},
               {},
               chart_hints("replay error: (replayed - measured) / measured", "working_set_bytes",
                           "bytes", "error_percent", "%", true)};
  json points = json::array();
  struct Worst {
    double error = -1, ws = 0;
    std::string region;
    json summary;
  };
  std::map<std::string, Worst> worst;  // per region, and "all"
  std::size_t within = 0;
  // The sweep's points, checked once; every model below is measured at them as the sweep
  // measures (measure::chase_point_cycles).
  struct Point {
    double ws = 0, measured = 0;
    device::LoadOp op = device::LoadOp::kCa;
    std::string region;
    json summary;
  };
  std::vector<Point> sweep_points;
  for_each_sweep_point(sweep, path, [&](const json& pt, double ws, double measured) {
    Point p;
    p.ws = ws;
    p.measured = measured;
    p.op = device::parse_load_op(pt.value("load", std::string("ca")));
    p.region = region_of(p.ws, measured_findings);
    p.summary = pt.at("cycles_per_load");
    sweep_points.push_back(std::move(p));
  });
  // Progress on stderr (a terminal, without --quiet): one point per replayed working set.
  progress::begin(1, 1,
                  "replay of " + std::to_string(sweep_points.size()) +
                      " working sets on the exported model and its variants");
  struct ProgressEnd {
    ~ProgressEnd() { progress::end(); }
  } progress_end;
  const auto replay_at = [&](Context& c, const Point& p) {
    progress::point();
    return measure::chase_point_cycles(c, p.op, static_cast<std::uint64_t>(p.ws));
  };
  // The chase's latency over other allocations of the slope's working sets (cache.l2.mixture's
  // re-analysed "allocations": lowest and highest per drawn working set), to judge the replay
  // against what the GPU itself gives for one size.
  std::vector<std::array<double, 3>> drawn;  // working set, lowest, highest
  for (std::size_t i = 0; i < recorded.at("experiments").size(); ++i) {
    const auto& e = recorded.at("experiments")[i];
    if (e.at("id") != "cache.l2.mixture" || e.value("status", "") != "passed") continue;
    const auto r = from_file(path + ": experiments[" + std::to_string(i) + "] (cache.l2.mixture)",
                             [&] { return replay_analysis(e); });
    if (!r) continue;
    for (const auto& c : r->curves) {
      if (c.name != "allocations") continue;
      const auto ws = column_of(c, "working_set_bytes"), lo = column_of(c, "latency_min"),
                 hi = column_of(c, "latency_max");
      for (const auto& row : c.rows)
        drawn.push_back(
            {row.at(ws).get<double>(), row.at(lo).get<double>(), row.at(hi).get<double>()});
    }
  }
  std::sort(drawn.begin(), drawn.end());
  // Lowest and highest at `ws`, linear between the drawn working sets; nothing outside them.
  const auto envelope_at = [&](double ws) -> std::optional<std::pair<double, double>> {
    for (std::size_t k = 0; k + 1 < drawn.size(); ++k) {
      const auto &a = drawn[k], &b = drawn[k + 1];
      if (ws < a[0] || ws > b[0] || b[0] <= a[0]) continue;
      const double t = (ws - a[0]) / (b[0] - a[0]);
      return std::make_pair(a[1] + t * (b[1] - a[1]), a[2] + t * (b[2] - a[2]));
    }
    return std::nullopt;
  };
  Worst beyond;
  std::size_t enveloped = 0;
  // Against the other runs: the replay's distance outside their range (the point's own run
  // included), and the GPU's own largest spread between runs at one working set, with the z of
  // its two extremes (their medians' standard errors).
  Worst beyond_runs, runs_spread;
  double runs_spread_z = 0;
  std::size_t runs_judged = 0, within_runs = 0;
  // A model that cannot be measured is the result file's fault (it made the model): one line.
  from_file(path, [&] {
    for (const auto& p : sweep_points) {
      const double r = replay_at(ctx, p);
      const double err = 100.0 * (r - p.measured) / p.measured;
      json point = {{"working_set_bytes", p.ws},
                    {"measured_cycles", p.measured},
                    {"replayed_cycles", r},
                    {"error_percent", err},
                    {"region", p.region}};
      json low = nullptr, high = nullptr;
      if (const auto env = p.region == "l2_mixed" ? envelope_at(p.ws) : std::nullopt) {
        // The sweep's own point is one more allocation of this size.
        const double lo = std::min(env->first, p.measured), hi = std::max(env->second, p.measured);
        const double beyond_percent = outside_percent(r, lo, hi, p.measured);
        low = lo;
        high = hi;
        point["allocations_low_cycles"] = lo;
        point["allocations_high_cycles"] = hi;
        point["beyond_allocations_percent"] = beyond_percent;
        ++enveloped;
        if (beyond_percent > beyond.error) beyond = {beyond_percent, p.ws, p.region, p.summary};
      }
      json runs_low = nullptr, runs_high = nullptr;
      if (!run_curves.empty()) {
        const json* lo_summary = &p.summary;
        const json* hi_summary = &p.summary;
        double lo = p.measured, hi = p.measured;
        std::size_t at_point = 1;
        for (const auto& c : run_curves) {
          const auto it = c.find(p.ws);
          if (it == c.end()) continue;
          const double v = it->second.at("median").get<double>();
          ++at_point;
          if (v < lo) {
            lo = v;
            lo_summary = &it->second;
          }
          if (v > hi) {
            hi = v;
            hi_summary = &it->second;
          }
        }
        if (at_point >= 2) {
          runs_low = lo;
          runs_high = hi;
          const double beyond_percent = outside_percent(r, lo, hi, p.measured);
          const double spread_percent = 100.0 * (hi - lo) / lo;
          point["runs_low_cycles"] = lo;
          point["runs_high_cycles"] = hi;
          point["runs_at_point"] = at_point;
          point["beyond_runs_percent"] = beyond_percent;
          ++runs_judged;
          within_runs += beyond_percent <= 3.0 ? 1 : 0;
          if (beyond_percent > beyond_runs.error)
            beyond_runs = {beyond_percent, p.ws, p.region, p.summary};
          if (spread_percent > runs_spread.error) {
            runs_spread = {spread_percent, p.ws, p.region, p.summary};
            const double se = std::hypot(confidence::standard_error_of_summary(*lo_summary),
                                         confidence::standard_error_of_summary(*hi_summary));
            runs_spread_z = se > 0 ? (hi - lo) / se : (hi > lo ? 1e9 : 0.0);
          }
        }
      }
      curve.rows.push_back({p.ws, p.measured, r, err, p.region, low, high, runs_low, runs_high});
      errors.rows.push_back({p.ws, err, p.region});
      points.push_back(point);
      within += std::fabs(err) <= 3.0 ? 1 : 0;
      for (const std::string& key : {p.region, std::string("all")}) {
        auto& w = worst[key];
        if (std::fabs(err) > w.error) w = {std::fabs(err), p.ws, p.region, p.summary};
      }
    }
    return 0;
  });

  // Sensitivities: the same model with one part changed, at the sweep's working sets of one
  // region. Comparisons, not fits: the replay above keeps what the result's evidence gives.
  struct Variant {
    std::string label;
    std::function<void(json&)> change;  ///< edits the model; empty = not applicable
    std::string not_applicable;
  };
  const auto sensitivity_of = [&](const std::string& name, const std::string& title, double from,
                                  double to, const std::vector<Variant>& variants,
                                  json& worst_out) {
    std::vector<std::string> columns{"working_set_bytes", "measured_cycles"};
    for (const auto& v : variants) columns.push_back(v.label);
    Curve c{name,
            columns,
            {},
            chart_hints(title, "working_set_bytes", "bytes", "measured_cycles", "cycles", true)
                .with_model(std::vector<std::string>(columns.begin() + 2, columns.end()))};
    std::vector<const Point*> in_range;
    for (const auto& p : sweep_points)
      if (p.ws >= from && p.ws < to) {
        in_range.push_back(&p);
        c.rows.push_back({p.ws, p.measured});
      }
    if (in_range.empty()) return c;
    for (const auto& v : variants) {
      if (!v.change) {
        worst_out[v.label] = "not applicable: " + v.not_applicable;
        for (auto& row : c.rows) row.push_back(nullptr);
        continue;
      }
      json alt = model;
      v.change(alt);
      device::ModelDevice adev(device::model_config_from_json(alt));
      FindingBoard aboard;
      Context actx{adev, options, aboard};
      json worst_by_region = json::object();
      from_file(path, [&] {
        for (std::size_t k = 0; k < in_range.size(); ++k) {
          const Point& p = *in_range[k];
          const double r = replay_at(actx, p);
          c.rows[k].push_back(r);
          const double err = std::fabs(100.0 * (r - p.measured) / p.measured);
          if (!worst_by_region.contains(p.region) ||
              err > worst_by_region[p.region]["error_percent"].get<double>())
            worst_by_region[p.region] = {{"error_percent", err}, {"working_set_bytes", p.ws}};
        }
        return 0;
      });
      worst_out[v.label] = worst_by_region;
    }
    return c;
  };
  const auto policy_variants = [&](const std::string& lv) {
    std::vector<Variant> out;
    const auto ways = model.value(lv + "_ways", 0u);
    for (const char* policy : {"lru", "fifo", "tree_plru", "random"}) {
      // Tree-PLRU needs a power of two of at most 32 ways (a binary tree over the ways).
      if (std::string(policy) == "tree_plru" &&
          (ways == 0 || ways > 32 || (ways & (ways - 1)) != 0)) {
        out.push_back({policy, {}, std::to_string(ways) + " ways"});
        continue;
      }
      out.push_back({policy, [lv, policy](json& m) { m[lv + "_policy"] = policy; }, ""});
    }
    return out;
  };
  json policy_worst = json::object(), l1_worst = json::object();
  Curve sensitivity, l1_sensitivity;
  if (model.value("chase_structural", false) && measured_findings.count("l1.capacity")) {
    const double l1_cap = measured_findings["l1.capacity"];
    // With each replacement class, and with the model's own class over blocks of the measured
    // placement unit landing at random (the other bound to the exported model's contiguous
    // modulo placement, which spreads any range evenly over the sets).
    auto l2_variants = policy_variants("l2");
    Variant placed{"random_placement",
                   {},
                   "no l2.mixture.placement_unit in the result, or an L2 without ways"};
    const auto unit = measured_findings.find(finding::kL2MixturePlacementUnit);
    if (unit != measured_findings.end() && model.value("l2_ways", 0u) > 0) {
      const double v = unit->second;
      if (!(v >= 1 && v < 1e18 && std::floor(v) == v)) {
        placed.not_applicable = "l2.mixture.placement_unit is no whole number of bytes";
      } else {
        const auto bytes = static_cast<std::uint64_t>(v);
        const auto change = [bytes](json& m) {
          m["l2_set_index"] = "modulo";
          m["l2_placement_unit_bytes"] = bytes;
        };
        // The model's own check says which units it can place (a power of two from the line
        // to 1 GiB, over a modulo index).
        json alt = model;
        change(alt);
        try {
          device::validate(device::model_config_from_json(alt));
          placed.change = change;
          placed.not_applicable.clear();
        } catch (const UsageError& e) {
          placed.not_applicable = e.what();
        }
      }
    }
    l2_variants.push_back(placed);
    sensitivity = sensitivity_of("l2_policy_sensitivity",
                                 "the exported model with each L2 replacement class, and with "
                                 "its blocks of the measured placement unit placed at random "
                                 "(dashed), against the measurement (solid)",
                                 2 * l1_cap, std::numeric_limits<double>::infinity(), l2_variants,
                                 policy_worst);
    // The L1's knee: each replacement class, and a scrambled index (a contiguous range placed
    // as at random, the unevenness a hashed index could give) with LRU.
    auto l1_variants = policy_variants("l1");
    l1_variants.push_back({"lru_scrambled_index",
                           [](json& m) {
                             m["l1_policy"] = "lru";
                             m["l1_set_hash_masks"] = json::array();
                             m["l1_tag_bytes"] = 0;
                             m["l1_set_index"] = "scrambled";
                           },
                           ""});
    // A decoupled L1 (measured tags over more lines than it holds): each data victim, and the
    // coupled L1 the capacity alone gives (sets = capacity / (line x ways), modulo).
    if (model.value("l1_tag_bytes", 0u) > 0) {
      for (const auto dv : device::data_victims()) {
        const std::string v = device::to_string(dv);
        l1_variants.push_back({"data_victim_" + v, [v](json& m) { m["l1_data_victim"] = v; }, ""});
      }
      l1_variants.push_back({"coupled_modulo",
                             [](json& m) {
                               m["l1_set_hash_masks"] = json::array();
                               m["l1_tag_bytes"] = 0;
                             },
                             ""});
    }
    l1_sensitivity = sensitivity_of("l1_sensitivity",
                                    "the exported model with each L1 replacement class and with "
                                    "a scrambled L1 index (dashed) against the measurement (solid)",
                                    0.9 * l1_cap, 2 * l1_cap, l1_variants, l1_worst);
  }

  // Why a region's points miss: each point off by more than 3 % past 2 x l1.capacity is checked
  // against the other placement bound of the L2, the same model with its blocks of the
  // measured placement unit placed at random (random_placement). A measurement between the
  // replay (a contiguous range placed evenly) and that bound is one that some placement of the
  // allocation gives: where the allocation sits decides there, which user code neither sees nor
  // chooses. A point outside both is unexplained by placement. The L1's knee has no such bound:
  // its index uses address bits inside a 2 MiB page only (l1_set_hash_masks), so every
  // allocation places its lines alike (its points count as without a bound).
  struct OffRegion {
    std::size_t off = 0, between = 0, without_bound = 0;
    json unexplained = json::array(), bounds = json::object();
  };
  std::map<std::string, OffRegion> off_regions;
  const auto bound_at = [](const Curve& c, const char* label, double ws) -> std::optional<double> {
    const auto k = column_of(c, label);
    if (k == c.columns.size()) return std::nullopt;
    for (const auto& row : c.rows)
      if (row.size() > k && row[0].get<double>() == ws && row[k].is_number())
        return row[k].get<double>();
    return std::nullopt;
  };
  for (const auto& pt : points) {
    const double err = pt.at("error_percent").get<double>();
    if (std::fabs(err) <= 3.0) continue;
    const double ws = pt.at("working_set_bytes").get<double>();
    const double measured = pt.at("measured_cycles").get<double>();
    const double replayed = pt.at("replayed_cycles").get<double>();
    auto& o = off_regions[pt.at("region").get<std::string>()];
    ++o.off;
    const char* label = "random_placement";
    const auto b = bound_at(sensitivity, label, ws);
    if (!b) {
      ++o.without_bound;  // no placement bound in this result (not applicable: the statistics)
    } else if (measured >= std::min(replayed, *b) && measured <= std::max(replayed, *b)) {
      ++o.between;
      o.bounds[label] = o.bounds.value(label, 0) + 1;
    } else {
      o.unexplained.push_back({{"working_set_bytes", ws},
                               {"measured_cycles", measured},
                               {"replayed_cycles", replayed},
                               {"bound", label},
                               {"bound_cycles", *b}});
    }
  }

  ExperimentResult er;
  er.id = "model.replay";
  er.parameters = {{"source", path},
                   {"runs", runs},
                   {"source_git_sha", recorded.at("tool").value("git_sha", std::string(""))},
                   {"source_started_utc", recorded.value("started_utc", std::string(""))},
                   {"model", model}};
  er.samples = {{"points", points}};
  er.curves = {curve, errors};
  const auto add_sensitivity = [&](Curve& c, const json& worst_by, const char* note) {
    if (c.rows.empty()) return;
    er.curves.push_back(c);
    er.statistics[c.name] = {{"worst_error_percent_by_region", worst_by}, {"note", note}};
  };
  add_sensitivity(sensitivity, policy_worst,
                  "the exported model with each L2 replacement class, and (random_placement) "
                  "with every block of l2.mixture.placement_unit indexed as if placed at random "
                  "(as physical frames of that size handed out at random would be), everything "
                  "else equal, at the sweep's working sets past 2 x l1.capacity; a comparison, "
                  "not a fit: the replay's findings use what the result's evidence gives, and "
                  "the exported model places a contiguous range evenly");
  add_sensitivity(l1_sensitivity, l1_worst,
                  "the exported model with each L1 replacement class, with LRU over a scrambled "
                  "index (a contiguous range spread over the sets as a random placement would), "
                  "and, for a decoupled L1, with each data victim and as the coupled modulo L1 "
                  "its capacity alone gives; everything else equal, at the sweep's working sets "
                  "from 0.9 to 2 x l1.capacity; a comparison, not a fit: the replay keeps what "
                  "it exports");
  // The confidence of a replay error is the measured point's own precision: the model's side
  // is computed (its noise is the model's), the GPU's side is what could move.
  for (const auto& [key, w] : worst) {
    const std::string name =
        key == "all" ? "replay.worst_error_percent" : "replay." + key + ".worst_error_percent";
    er.findings.push_back(
        {name,
         w.error,
         "%",
         confidence::precision_of_summary(w.summary),
         "largest |replayed - measured| / measured over latency.sweep's points" +
             std::string(key == "all" ? "" : " in the " + key + " region") +
             ", the model exported from the same result (export-model) measured at the same "
             "working sets as latency.sweep measures them",
         {{"working_set_bytes", w.ws}, {"region", w.region}}});
  }
  if (enveloped > 0)
    er.findings.push_back(
        {"replay.l2_mixed.worst_beyond_allocations_percent",
         beyond.error,
         "%",
         confidence::precision_of_summary(beyond.summary),
         "largest distance of the replay outside the range the GPU itself gives for one "
         "working set on the L2's slope, relative to the measurement: the range of "
         "cache.l2.mixture's allocations of the drawn working sets (linear between them) and "
         "the sweep's own point; 0 where the replay lies inside it",
         {{"working_set_bytes", beyond.ws}, {"points_judged", enveloped}}});
  if (runs_judged > 0) {
    er.findings.push_back(
        {"replay.worst_beyond_runs_percent",
         beyond_runs.error,
         "%",
         confidence::precision_of_summary(beyond_runs.summary),
         "largest distance of the replay outside the range the GPU's own runs give at one "
         "working set (this result's sweep and the --runs results' sweeps at the same working "
         "sets), relative to the measurement; 0 where the replay lies inside it",
         {{"working_set_bytes", beyond_runs.ws},
          {"region", beyond_runs.region},
          {"points_judged", runs_judged},
          {"runs", run_curves.size() + 1}}});
    er.findings.push_back(
        {"replay.runs_worst_spread_percent",
         runs_spread.error,
         "%",
         confidence::separation(runs_spread_z),
         "the GPU's own largest run-to-run spread of the sweep at one working set, (highest - "
         "lowest) / lowest over this result and the --runs results; confidence: separation of "
         "the two extremes beyond their medians' standard errors. A model cannot be expected "
         "closer to one run than the runs are to each other",
         {{"working_set_bytes", runs_spread.ws},
          {"region", runs_spread.region},
          {"z", runs_spread_z}}});
    er.findings.push_back({"replay.points_within_3_percent_of_runs",
                           static_cast<double>(within_runs) / static_cast<double>(runs_judged),
                           "fraction",
                           confidence::agreement(within_runs, runs_judged),
                           "fraction of the judged working sets whose replay lies within 3 % "
                           "(of the measurement) of the range of the GPU's own runs",
                           {{"points_judged", runs_judged}}});
  }
  for (const auto& [region, o] : off_regions) {
    const std::size_t judged = o.off - o.without_bound;
    if (judged == 0) continue;  // no evidence: no finding (stdout says why)
    er.findings.push_back(
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
  er.findings.push_back(
      {"replay.points_within_3_percent",
       static_cast<double>(within) / points.size(),
       "fraction",
       confidence::agreement(within, points.size()),
       "fraction of latency.sweep's points whose replay lies within 3 % of the measurement",
       {{"points", points.size()}}});

  json header = {{"schema_version", kResultSchemaVersion},
                 {"tool",
                  {{"name", "gpuprobe"},
                   {"version", build::kVersion},
                   {"git_sha", build::kGitSha},
                   {"argv", json::array({"gpuprobe", "replay", path})}}},
                 {"command", "replay"},
                 {"started_utc", units::utc_now()},
                 {"device", recorded.at("device")},
                 {"environment", {{"replay_of", path}, {"model", model}}}};
  report::ResultWriter writer(dir, header);
  writer.add(er);
  writer.finish(json::object());
  out << "replay of " << path << ": worst error " << worst["all"].error << " % at "
      << units::format_bytes(static_cast<std::uint64_t>(worst["all"].ws)) << " ("
      << worst["all"].region << "); " << within << " of " << points.size() << " points within 3 %";
  if (enveloped > 0)
    out << "; on the L2's slope at most " << beyond.error
        << " % outside the range of the GPU's own allocations";
  if (runs_judged > 0)
    out << "\n  against " << run_curves.size() << " other run"
        << (run_curves.size() == 1 ? "" : "s") << " of the GPU (" << runs_judged
        << " working sets): the runs differ by up to " << runs_spread.error << " % (at "
        << units::format_bytes(static_cast<std::uint64_t>(runs_spread.ws))
        << "); the replay lies within 3 % of their range at " << within_runs << ", at most "
        << beyond_runs.error << " % outside it";
  for (const auto& [region, o] : off_regions) {
    out << "\n  " << region << ": " << o.off << " point" << (o.off == 1 ? "" : "s")
        << " off by more than 3 %; " << o.between
        << " between the even and a random placement (placement decides)";
    if (o.without_bound > 0) out << "; " << o.without_bound << " without a placement bound";
    if (!o.unexplained.empty()) {
      out << "; unexplained at";
      for (const auto& u : o.unexplained)
        out << " "
            << units::format_bytes(
                   static_cast<std::uint64_t>(u.at("working_set_bytes").get<double>()));
    }
  }
  out << "\nresults: " << dir << "/result.json, report: " << dir << "/report.html\n";
  return 0;
}

}  // namespace gpuprobe::cli
