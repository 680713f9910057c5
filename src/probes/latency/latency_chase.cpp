// latency.chase: dependent chases with each load operator at one working set per level that
// latency.sweep found, with --counters' hit-rate cross-checks.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "core/experiment.hpp"
#include "core/finding_names.hpp"
#include "core/units.hpp"
#include "counters/counters.hpp"
#include "measure/chase_point.hpp"
#include "measure/checks.hpp"
#include "probes/latency/latency_common.hpp"

namespace gpuprobe::probes::latency {
namespace {

using device::LoadOp;
using nlohmann::json;

using measure::measure_chase;
using measure::plan_chase;
using units::kKiB;

/// The name of a chase finding: for the level of the cache that served the load, not the
/// working set's label. .cg and .cv loads do not allocate in (or, for .cv, are not served by)
/// the L1, so at the L1's working set they measure an L2 hit. The sweep's region between the
/// near-partition and L2 capacity knees mixes near hits, far hits and DRAM misses (issue 10).
std::string chase_finding_name(const std::string& level, const std::string& load) {
  const bool bypasses_l1 = load == "cg" || load == "cv";
  if (level == "l1")
    return (bypasses_l1 ? "l2.hit_latency_at_l1_working_set." : "l1.hit_latency.") + load;
  if (level == "l2_near") return "l2.hit_latency." + load;
  if (level == "l2_far" || level == "l2_mixed") return "l2.mixed_latency." + load;
  return "dram.latency." + load;
}

/// --counters for latency.chase: L1 and L2 sector hit rates of one ld.ca chase at each level's
/// working set, against what a cache holding the working set (or not) predicts.
json chase_counters(Context& ctx,
                    const std::vector<std::pair<std::string, std::uint64_t>>& levels) {
  auto& dev = ctx.device;
  const auto& o = ctx.options;
  const double l2 = static_cast<double>(dev.info().l2_bytes);
  const double l1 = dev.info().l1_shared_unified_bytes ? dev.info().l1_shared_unified_bytes
                                                       : 256.0 * 1024;  // Hopper's L1 + shared
  std::vector<std::unique_ptr<device::Chain>> chains;
  counters::Declaration d;
  // Two L2 partitions (the sweep found a near-partition knee, so a mixed level exists): past the
  // SM's own partition a load is looked up there and again at its home (cache.l2.far_hit), so
  // the sector hit rate counts lookups of both and no per-load model of it is known.
  const bool two_partitions = std::any_of(levels.begin(), levels.end(),
                                          [](const auto& lv) { return lv.first == "l2_mixed"; });
  for (const auto& [name, ws] : levels) {
    chains.push_back(dev.make_chain({ws, o.node_stride, o.seed}));
    device::Chain& chain = *chains.back();
    const double set = static_cast<double>(chain.nodes()) * o.node_stride;
    const auto plan =
        plan_chase(chain.nodes(), static_cast<std::uint64_t>(set), dev.info().l2_bytes);
    device::ChaseParams p;
    p.op = LoadOp::kCa;
    p.warmup_steps = plan.warmup_steps;
    p.timed_steps = plan.timed_steps;
    const double steps = static_cast<double>(p.warmup_steps + p.timed_steps);
    const double first_touch = std::min(1.0, static_cast<double>(chain.nodes()) / steps);
    std::vector<counters::Expectation> checks;
    const auto rate = [](const char* what, const char* metric, double expected, double tol,
                         const std::string& model) {
      counters::Expectation e{what, metric, "", "%", expected, tol, false, model};
      e.valid_min = 0;      // a hit rate
      e.valid_max = 100.5;  // 100 % and the metric's rounding
      return e;
    };
    if (set <= l1 / 2) {
      checks.push_back(
          rate("L1 sector hit rate", "l1tex__t_sector_hit_rate.pct", 100 * (1 - first_touch), 5,
               "the set fits the L1: only each node's first load in the launch misses"));
    } else {
      checks.push_back(rate("L1 sector hit rate", "l1tex__t_sector_hit_rate.pct", 0,
                            std::max(2.0, 100 * l1 / set),
                            "the set exceeds the L1: at most L1 / set of random loads hit"));
      if (two_partitions && (name == "l2_mixed" || name == "dram"))
        d.not_checked.push_back(
            {name, "L2 sector hit rate",
             "two L2 partitions: past the SM's own partition a load is looked up there and "
             "again at its home, so lts__t_sector_hit_rate counts lookups of both partitions; "
             "no per-load expectation of it is modelled"});
      else
        checks.push_back(
            plan.cold ? rate("L2 sector hit rate", "lts__t_sector_hit_rate.pct", 0, 100 * l2 / set,
                             "the set exceeds the L2: at most L2 / set of random loads hit")
                      : rate("L2 sector hit rate", "lts__t_sector_hit_rate.pct", 100, 10,
                             "the set fits the L2, warmed by a full pass before the launch"));
    }
    std::function<void()> prepare;
    if (!plan.cold) {
      device::ChaseParams warm = p;
      warm.warmup_steps = chain.nodes();
      warm.timed_steps = 1024;
      prepare = [&dev, &chain, warm] { dev.chase(chain, warm); };
    }
    d.probes.push_back({name + " " + units::format_bytes(static_cast<std::uint64_t>(set)),
                        {{"level", name}, {"working_set_bytes", set}, {"load", "ca"}},
                        [&dev, &chain, p] { dev.chase(chain, p); },
                        checks,
                        prepare});
  }
  return counters::collect(ctx, d);
}

class LatencyChase : public Experiment {
 public:
  std::string id() const override { return "latency.chase"; }
  int samples_version() const override { return ChaseSamples::kVersion; }
  std::string description() const override {
    return "dependent chase with each load operator (default, ca, cg, cv, nc) at one working set "
           "per level: L1, L2 near, the mixed near/far/DRAM region, DRAM";
  }
  std::vector<Axis> typed_axes() const override {
    return {
        fixed(string_axis("load", {"default", "ca", "cg", "cv", "nc"}, "load operator (--loads)")),
        fixed(string_axis("level", {"l1", "l2_near", "l2_mixed", "dram"},
                          "the plateau whose latency is measured")),
        fixed(int_axis("working_set_bytes", {}, "B",
                       "the geometric middle of each plateau latency.sweep found, else "
                       "fractions of L2"))};
  }
  std::vector<std::string> depends_on() const override { return {"latency.sweep"}; }
  void validate(const device::Device& dev, const RunOptions& o) const override {
    RunOptions copy = o;
    copy.max_size = 0;
    copy.min_size = 0;
    check_sizes(dev, copy);
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    r.protocol["l2_flush"] = device::kChainL2FlushProtocol;
    const auto& o = ctx.options;
    const std::uint64_t l2 = ctx.device.info().l2_bytes;
    // Each level is measured in the middle (geometric) of the plateau latency.sweep found for
    // it; without a sweep, at fixed fractions of the reported L2.
    auto align = [&](double x) {
      const auto s = static_cast<std::uint64_t>(x) / o.node_stride * o.node_stride;
      return std::max<std::uint64_t>(s, o.node_stride);
    };
    auto middle_of = [&](const FindingKey& key) -> std::optional<std::uint64_t> {
      const auto f = ctx.prior.get(key, 0.0);
      if (!f || !f->extra.contains("working_set_bytes_range")) return std::nullopt;
      const auto& range = f->extra["working_set_bytes_range"];
      return align(std::sqrt(range[0].get<double>() * range[1].get<double>()));
    };
    struct Level {
      std::string name;
      std::uint64_t ws;
      std::string chosen_by;
    };
    std::vector<Level> levels;
    auto levels_of = [](const std::vector<Level>& v) {
      std::vector<std::pair<std::string, std::uint64_t>> out;
      for (const auto& lv : v) out.emplace_back(lv.name, lv.ws);
      return out;
    };
    const auto l1 = middle_of(finding::kL1HitLatency);
    levels.push_back(l1 ? Level{"l1", *l1, "middle of the L1 plateau (latency.sweep)"}
                        : Level{"l1", 16 * kKiB, "default 16 KiB"});
    const auto near = middle_of(finding::kL2HitLatency);
    levels.push_back(near ? Level{"l2_near", *near, "middle of the L2 plateau (latency.sweep)"}
                          : Level{"l2_near", align(static_cast<double>(l2) / 8),
                                  "an eighth of the reported L2"});
    if (const auto mixed = middle_of(finding::kL2MixedLatency))
      levels.push_back({"l2_mixed", *mixed,
                        "middle of the mixed region between the L2 near-partition and L2 capacity "
                        "knees (latency.sweep)"});
    levels.push_back({"dram", align(4.0 * static_cast<double>(l2)), "4 x the reported L2"});
    const auto ops = o.loads.empty() ? device::all_load_ops() : o.loads;
    json rows = json::array();
    std::vector<double> clocks;
    for (const auto op : ops) {
      for (const auto& lv : levels) {
        const auto p = measure_chase(ctx, op, lv.ws, -1);
        auto j = to_json(p);
        j["level"] = lv.name;
        j["working_set_chosen_by"] = lv.chosen_by;
        rows.push_back(j);
        clocks.push_back(p.clock_mhz);
      }
    }
    r.parameters = {{"node_stride_bytes", o.node_stride},
                    {"loads", json::array()},
                    {"node_type", "64-bit address of the next node"},
                    {"buffer_alignment_bytes", 256},
                    {"chain_seed", o.seed}};
    for (auto op : ops) r.parameters["loads"].push_back(device::to_string(op));
    r.parameters.update(clock_for_ns(clocks, ctx.device));
    r.samples = {{"points", rows}};
    Curve c{"table",
            {"load", "level", "working_set_bytes", "cycles_median", "cycles_p5", "cycles_p95", "n",
             "ns_median"},
            {}};
    for (const auto& p : rows.get<std::vector<LevelChase>>()) {
      const auto& s = p.cycles_per_load;
      c.rows.push_back({p.load, p.level, p.working_set_bytes, s.median, s.p5_or_throw(),
                        s.p95_or_throw(), s.required_n(), ns_of(s.median, r.parameters)});
    }
    c.hints = chart_hints("latency.chase: each load operator at each level's working set",
                          "working_set_bytes", "bytes", "cycles_median", "cycles per load", true)
                  .by({"load"});
    r.curves.push_back(c);
    r.statistics = {{"points_measured", rows.size()}};
    if (counters::requested(ctx)) r.samples["counters"] = chase_counters(ctx, levels_of(levels));
  }
  void analyze(ExperimentResult& r) const override {
    counters::cross_check(r);
    for (const auto& p : samples_as<ChaseSamples>(r).points) {
      const std::string& level = p.level;
      const std::string& load = p.load;
      const double med = p.cycles_per_load.median;
      auto f = latency_finding(
          chase_finding_name(level, load), med, p.cycles_per_load.precision(),
          "median of repeated single-thread chases at " + units::format_bytes(p.working_set_bytes),
          r.parameters);
      f.extra["working_set_bytes"] = p.working_set_bytes;
      f.extra["load"] = load;
      f.extra["working_set_level"] = level;
      r.findings.push_back(f);
    }
  }
};

}  // namespace

std::unique_ptr<Experiment> make_latency_chase() { return std::make_unique<LatencyChase>(); }

}  // namespace gpuprobe::probes::latency
