// Latency family: dependent pointer chases through global and shared memory, the working-set
// sweep that finds the cache levels, and the L1 capacity under each shared-memory carveout.
#include "probes/latency/latency.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "analysis/levels.hpp"
#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/experiment.hpp"
#include "core/finding_names.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "counters/counters.hpp"
#include "measure/chase_point.hpp"
#include "measure/checks.hpp"
#include "measure/replicates.hpp"

namespace gpuprobe::probes {
namespace {

using device::LoadOp;
using nlohmann::json;

using measure::ChasePlan;
using measure::ChasePoint;
using measure::measure_chase;
using measure::plan_chase;
using units::kKiB;
using units::kMiB;

std::uint64_t default_max_working_set(const device::Device& dev) { return 4 * dev.info().l2_bytes; }

/// The SM clock used to turn cycles into ns: measured in-kernel when possible, else NVML's
/// reading, else the device's maximum (each choice is recorded).
json clock_for_ns(const std::vector<double>& measured, const device::Device& dev) {
  std::vector<double> valid;
  for (double c : measured)
    if (c > 0) valid.push_back(c);
  if (!valid.empty())
    return {{"sm_clock_mhz", stats::median(valid)},
            {"sm_clock_source", "clock64 cycles / %globaltimer ns during the chases"}};
  const auto reading = dev.read_clocks();
  if (reading.valid && reading.sm_mhz > 0)
    return {{"sm_clock_mhz", reading.sm_mhz}, {"sm_clock_source", "NVML current SM clock"}};
  return {{"sm_clock_mhz", dev.info().sm_clock_max_mhz},
          {"sm_clock_source", "device maximum SM clock (no reading available)"}};
}

double ns_of(double cycles, const json& parameters) {
  const double mhz = parameters.value("sm_clock_mhz", 0.0);
  return mhz > 0 ? cycles / mhz * 1e3 : 0.0;
}

Finding latency_finding(const std::string& name, double cycles, double confidence,
                        const std::string& method, const json& parameters) {
  Finding f{name, cycles, "cycles", confidence, method, json::object()};
  f.extra["value_ns"] = ns_of(cycles, parameters);
  return f;
}

/// A plateau's confidence is the level finder's (core/confidence.hpp: the precision of its level
/// times its separation from the neighbouring levels).
double plateau_confidence(const analysis::Plateau& p) { return p.confidence; }

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

std::vector<analysis::CurvePoint> curve_from_points(const json& points) {
  std::vector<analysis::CurvePoint> curve;
  for (const auto& p : points)
    curve.push_back({p.at("working_set_bytes").get<double>(),
                     p.at("cycles_per_load").at("median").get<double>(),
                     p.at("cycles_per_load").at("mad").get<double>()});
  return curve;
}

/// How analyze_sweep names knees: the first an L1 knee when it lies far below the reported L2
/// (the L2 size only as a prior), others L2 knees when within a factor of 8 of it.
bool is_l1_knee(std::size_t i, const analysis::Transition& t, bool l1_possible, double l2) {
  return i == 0 && l1_possible && t.estimate < 4.0 * kMiB && (l2 <= 0 || t.estimate < l2 / 16);
}
bool is_l2_knee(const analysis::Transition& t, double l2) {
  return l2 <= 0 || (t.estimate >= l2 / 8 && t.estimate <= 2 * l2);
}
/// The L2 near-partition knee: the first of two or more L2 knees.
std::optional<std::size_t> near_partition_knee(const analysis::LevelAnalysis& levels,
                                               bool l1_possible, double l2) {
  std::vector<std::size_t> l2_knees;
  for (std::size_t i = 0; i < levels.transitions.size(); ++i) {
    const auto& t = levels.transitions[i];
    if (is_l1_knee(i, t, l1_possible, l2)) continue;
    if (is_l2_knee(t, l2)) l2_knees.push_back(i);
  }
  if (l2_knees.size() < 2) return std::nullopt;
  return l2_knees.front();
}
/// Whether a point at `cycles` is on plateau `p`: the level finder's own band.
bool on_plateau(double cycles, const analysis::Plateau& p) {
  const analysis::SegmentOptions seg;
  return std::fabs(cycles - p.level) <=
         std::max(seg.rel_tolerance * p.level, seg.noise_k * p.noise);
}
/// A replicate's knee from its bisection points: the largest working set on the plateau below
/// the smallest one off it, with that bracket. Nothing when the points do not straddle it.
std::optional<std::pair<double, double>> replicate_knee(const json& points,
                                                        const analysis::Plateau& p) {
  std::vector<std::pair<double, bool>> v;
  for (const auto& q : points)
    v.emplace_back(q.at("working_set_bytes").get<double>(),
                   on_plateau(q.at("cycles_per_load").at("median").get<double>(), p));
  std::sort(v.begin(), v.end());
  for (std::size_t i = 1; i < v.size(); ++i)
    if (!v[i].second) {
      if (!v[i - 1].second) return std::nullopt;
      return std::make_pair(v[i - 1].first, v[i].first);
    }
  return std::nullopt;
}

Curve curve_table(const std::string& name, const json& points, const json& parameters) {
  Curve c{name,
          {"working_set_bytes", "cycles_median", "cycles_min", "cycles_p5", "cycles_p95",
           "cycles_mad", "n", "ns_median", "sm_clock_mhz_measured"},
          {}};
  for (const auto& p : points) {
    const auto& s = p.at("cycles_per_load");
    c.rows.push_back({p.at("working_set_bytes").get<double>(), s.at("median").get<double>(),
                      s.at("min").get<double>(), s.at("p5").get<double>(),
                      s.at("p95").get<double>(), s.at("mad").get<double>(), s.at("n").get<double>(),
                      ns_of(s.at("median").get<double>(), parameters),
                      p.at("sm_clock_mhz_measured").get<double>()});
  }
  std::sort(c.rows.begin(), c.rows.end(), [](const auto& a, const auto& b) {
    return a[0].template get<double>() < b[0].template get<double>();
  });
  c.hints = chart_hints("latency against working set: " + name, "working_set_bytes", "bytes",
                        "cycles_median", "cycles per load", true)
                .marked();
  return c;
}

analysis::SweepOptions sweep_options(std::uint64_t lo, std::uint64_t hi, std::uint32_t align) {
  analysis::SweepOptions s;
  s.x_min = static_cast<double>(std::max<std::uint64_t>(lo, align));
  s.x_max = static_cast<double>(hi);
  s.coarse_per_octave = 2;
  s.resolution = 0.015;
  s.align = align;
  return s;
}

/// The adaptive sweep of chases with `op` at `carveout`: every point measured (sorted by working
/// set), each one's in-kernel SM clock appended to `clocks`.
json sweep_points(Context& ctx, LoadOp op, int carveout, const analysis::SweepOptions& sweep,
                  std::vector<double>& clocks) {
  json points = json::array();
  auto measure = [&](double x) {
    const auto p = measure_chase(ctx, op, static_cast<std::uint64_t>(x), carveout);
    points.push_back(to_json(p));
    clocks.push_back(p.clock_mhz);
    return analysis::CurvePoint{static_cast<double>(p.working_set), p.cycles.summary.median,
                                p.cycles.summary.mad};
  };
  analysis::adaptive_sweep(measure, sweep);
  std::sort(points.begin(), points.end(), [](const json& a, const json& b) {
    return a.at("working_set_bytes").get<double>() < b.at("working_set_bytes").get<double>();
  });
  return points;
}

void check_sizes(const device::Device& dev, const RunOptions& o) {
  if (o.node_stride < 8 || o.node_stride % 8 != 0 || o.node_stride > 4096)
    throw UsageError("node stride " + std::to_string(o.node_stride) +
                     " B is not allowed; use a multiple of 8 between 8 and 4096");
  const std::uint64_t hi = o.max_size ? o.max_size : default_max_working_set(dev);
  const std::uint64_t lo = o.min_size ? o.min_size : kKiB;
  if (lo < o.node_stride)
    throw UsageError("--min-size " + units::format_bytes(lo) + " is smaller than one node (" +
                     std::to_string(o.node_stride) + " B)");
  if (hi < lo)
    throw UsageError("--max-size " + units::format_bytes(hi) + " is smaller than --min-size " +
                     units::format_bytes(lo));
  const std::uint64_t free = dev.free_memory();
  // The chain, its successor table and the L2 flush buffer must fit.
  const std::uint64_t need = hi + hi / o.node_stride * 4 + 2 * dev.info().l2_bytes + (512 * kMiB);
  if (need > free)
    throw UsageError("working set " + units::format_bytes(hi) +
                     " does not fit in free GPU memory (" + units::format_bytes(free) +
                     " free); choose --max-size below " +
                     units::format_bytes(free > need - hi ? free - (need - hi) : 0));
}

/// The L1 knee to one node: the sweep brackets it to 1.5 %, and on the H200 that bracket (1730
/// .. 1749 lines) spans a 20 % rise of the curve, so a model given the bracket's low end misses
/// lines the GPU holds. A chase over n nodes of which the L1 holds fewer than n misses at least
/// n - held times per pass (every pass reads all n), so "held" is a median below the L1 level
/// plus half a miss per pass: (next level - L1 level) / (2 n). Bisection over node counts
/// between the sweep's bracket; null when the sweep found no L1 knee.
json refine_l1_knee(Context& ctx, LoadOp op, const analysis::LevelAnalysis& levels,
                    std::uint32_t stride, double l2) {
  if (!device::caches_in_l1(op) || levels.transitions.empty() ||
      !is_l1_knee(0, levels.transitions[0], true, l2))
    return nullptr;
  const auto& t = levels.transitions[0];
  const double hit = levels.plateaus[t.below].level;
  const double next = levels.plateaus[t.below + 1].level;
  std::uint64_t a = static_cast<std::uint64_t>(t.x_last_on) / stride;
  std::uint64_t b = static_cast<std::uint64_t>(t.x_first_off) / stride;
  json pts = json::array();
  const auto held = [&](std::uint64_t nodes) {
    const auto p = measure_chase(ctx, op, nodes * stride, -1);
    const double limit = hit + (next - hit) / (2.0 * static_cast<double>(nodes));
    const bool all = p.cycles.summary.median <= limit;
    json j = to_json(p);
    j["nodes"] = nodes;
    j["held_limit_cycles"] = limit;
    j["all_held"] = all;
    pts.push_back(j);
    return all;
  };
  bool found = false;
  if (b > a && held(a) && !held(b)) {
    found = true;
    while (b - a > 1) {
      const std::uint64_t m = a + (b - a) / 2;
      (held(m) ? a : b) = m;
    }
  }
  return {{"found", found},
          {"nodes_held", found ? a : 0},
          {"nodes_not_held", found ? b : 0},
          {"node_stride_bytes", stride},
          {"l1_level_cycles", hit},
          {"next_level_cycles", next},
          {"criterion",
           "all held: median cycles per load <= L1 level + (next level - L1 level) / (2 nodes), "
           "fewer than half a miss per pass"},
          {"points", pts}};
}

// ---------------------------------------------------------------------------------------------

class LatencySweep : public Experiment {
 public:
  std::string id() const override { return "latency.sweep"; }
  std::vector<std::string> produces() const override {
    return {finding::kL1HitLatency,   finding::kL1Capacity,     finding::kL2HitLatency,
            finding::kL2NearCapacity, finding::kL2MixedLatency, finding::kL2Capacity,
            finding::kDramLatency};
  }
  std::string description() const override {
    return "dependent chase over working sets from 1 KiB to 4x L2, sampled adaptively; finds "
           "the L1, L2 near-partition, mixed near/far/DRAM and DRAM regions and the capacities "
           "between them";
  }
  std::vector<Axis> typed_axes() const override {
    return {
        fixed(int_axis("working_set_bytes", {}, "B",
                       "adaptive: 1 KiB .. 4 x L2 (--min-size/--max-size), log-spaced, "
                       "refined at knees")),
        fixed(string_axis("load", {"ca"}, "load operator (--loads takes the first)",
                          {"default", "ca", "cg", "cv", "nc"})),
        fixed(int_axis("node_stride_bytes", {128}, "B", "bytes between nodes (--node-stride)"))};
  }
  void validate(const device::Device& dev, const RunOptions& o) const override {
    check_sizes(dev, o);
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    r.protocol["l2_flush"] = device::kChainL2FlushProtocol;
    const auto& o = ctx.options;
    const LoadOp op = o.loads.empty() ? LoadOp::kCa : o.loads.front();
    const std::uint64_t lo = o.min_size ? o.min_size : kKiB;
    const std::uint64_t hi = o.max_size ? o.max_size : default_max_working_set(ctx.device);
    std::vector<double> clocks;
    const auto sweep = sweep_options(lo, hi, o.node_stride);
    const json points = sweep_points(ctx, op, -1, sweep, clocks);
    r.parameters = {{"load", device::to_string(op)},
                    {"caches_in_l1", device::caches_in_l1(op)},
                    {"node_stride_bytes", o.node_stride},
                    {"min_working_set_bytes", lo},
                    {"max_working_set_bytes", hi},
                    {"l2_bytes_reported", ctx.device.info().l2_bytes},
                    {"coarse_points_per_octave", sweep.coarse_per_octave},
                    {"knee_resolution", sweep.resolution},
                    {"chain", "random single cycle, one node per stride, Fisher-Yates seed " +
                                  std::to_string(o.seed)},
                    {"node_type", "64-bit address of the next node"},
                    {"buffer_alignment_bytes", 256}};
    // The near-partition knee moved 25.2 .. 28.0 MiB between runs (issue 9, "Run to run"): it
    // depends on where a fresh chain's lines land, i.e. on the physical pages an allocation
    // gets (cache.l2.mixture's allocations). So it is located again in further independent
    // replicates, each with its own chain (another seed) on other pages: replicate j's chains
    // sit (j + 1) x the bisection's largest working set (rounded up to 2 MiB) into a fresh
    // allocation (an allocator hands a block just freed straight back, so without the offset
    // every replicate would read the sweep's own pages), by bisection between the near plateau
    // and the next one with the finder's own on-plateau band; analyze_sweep takes the knee's
    // confidence from the spread of the knees.
    json knees = json::array();
    const auto levels = analysis::find_levels(curve_from_points(points));
    const json l1_refinement = refine_l1_knee(ctx, op, levels, o.node_stride,
                                              static_cast<double>(ctx.device.info().l2_bytes));
    if (const auto near = near_partition_knee(levels, device::caches_in_l1(op),
                                              static_cast<double>(ctx.device.info().l2_bytes))) {
      const auto& tn = levels.transitions[*near];
      const auto& plateau = levels.plateaus[tn.below];
      const double align = sweep.align;
      auto aligned = [&](double x) { return std::max(align, std::floor(x / align) * align); };
      gpuprobe::measure::replicate(gpuprobe::measure::kReplicates - 1, [&](int j) {
        const std::uint64_t seed = o.seed + 1 + static_cast<std::uint64_t>(j);
        json pts = json::array();
        double a = aligned(std::max(plateau.x_min, tn.x_last_on / 1.25));
        double b = aligned(levels.plateaus[tn.below + 1].x_min);
        std::uint64_t offset = static_cast<std::uint64_t>(j + 1) *
                               units::round_up(static_cast<std::uint64_t>(b), 2 * kMiB);
        // Where the larger allocation does not fit, the replicate reads the sweep's pages.
        if (offset + static_cast<std::uint64_t>(b) + 2 * ctx.device.info().l2_bytes + 512 * kMiB >
            ctx.device.free_memory())
          offset = 0;
        auto on = [&](double x) {
          const auto p = measure_chase(ctx, op, static_cast<std::uint64_t>(x), -1, seed, offset);
          pts.push_back(to_json(p));
          return on_plateau(p.cycles.summary.median, plateau);
        };
        if (b > a && on(a) && !on(b))
          while (b / a > 1 + sweep.resolution) {
            const double m = aligned(std::sqrt(a * b));
            if (m <= a || m >= b) break;
            (on(m) ? a : b) = m;
          }
        knees.push_back({{"seed", seed}, {"offset_bytes", offset}, {"points", pts}});
        return 0;
      });
    }
    r.parameters.update(clock_for_ns(clocks, ctx.device));
    r.samples = {{"points", points}, {"near_knee_replicates", knees}};
    if (!l1_refinement.is_null()) r.samples["l1_knee_refinement"] = l1_refinement;
    r.statistics = {{"points_measured", points.size()}};
    r.curves.push_back(curve_table("curve", points, r.parameters));
  }
  void analyze(ExperimentResult& r) const override { analyze_sweep(r); }
};

/// --counters for latency.chase: L1 and L2 sector hit rates of one ld.ca chase at each level's
/// working set, against what a cache holding the working set (or not) predicts.
json chase_counters(Context& ctx,
                    const std::vector<std::pair<std::string, std::uint64_t>>& levels) {
  auto& dev = ctx.device;
  const auto& o = ctx.options;
  const double l2 = static_cast<double>(dev.info().l2_bytes);
  const double l1 = dev.info().l1_shared_unified_bytes ? dev.info().l1_shared_unified_bytes
                                                       : 256.0 * 1024;  // H100/H200 L1 + shared
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
    for (const auto& p : rows) {
      const auto& s = p.at("cycles_per_load");
      c.rows.push_back({p.at("load"), p.at("level"), p.at("working_set_bytes"), s.at("median"),
                        s.at("p5"), s.at("p95"), s.at("n"),
                        ns_of(s.at("median").get<double>(), r.parameters)});
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
    for (const auto& p : r.samples.at("points")) {
      const std::string level = p.at("level");
      const std::string load = p.at("load");
      const auto& s = p.at("cycles_per_load");
      const double med = s.at("median").get<double>();
      auto f =
          latency_finding(chase_finding_name(level, load), med, summary_precision(s),
                          "median of repeated single-thread chases at " +
                              units::format_bytes(p.at("working_set_bytes").get<std::uint64_t>()),
                          r.parameters);
      f.extra["working_set_bytes"] = p.at("working_set_bytes");
      f.extra["load"] = load;
      f.extra["working_set_level"] = level;
      r.findings.push_back(f);
    }
  }
};

class LatencyShared : public Experiment {
 public:
  std::string id() const override { return "latency.shared"; }
  std::vector<std::string> produces() const override { return {finding::kSharedLatency}; }
  std::string description() const override {
    return "dependent chase through shared memory (ld.shared, one thread)";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(int_axis("working_set_bytes", {4096, 32768, 98304}, "B",
                           "shared-memory chase footprint (those above the opt-in limit skipped)")),
            fixed(int_axis("node_stride_bytes", {4}, "B", "bytes between nodes"))};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const std::uint64_t optin = ctx.device.info().shared_per_block_optin_bytes;
    std::vector<std::uint32_t> sizes = {4096, 32768, 98304};
    json points = json::array();
    for (auto bytes : sizes) {
      if (optin && bytes > optin) continue;
      std::vector<double> clocks;
      auto once = [&](int) { return ctx.device.shared_chase(bytes, 4, 16384).cycles_per_step; };
      const auto m = repeat_until_stable(once, ctx.options.protocol);
      points.push_back({{"working_set_bytes", bytes},
                        {"node_stride_bytes", 4},
                        {"timed_steps", 16384},
                        {"cycles_per_load", to_json(m)}});
    }
    r.parameters = clock_for_ns({}, ctx.device);
    r.samples = {{"points", points}};
  }
  void analyze(ExperimentResult& r) const override {
    std::vector<double> medians;
    for (const auto& p : r.samples.at("points"))
      medians.push_back(p.at("cycles_per_load").at("median").get<double>());
    if (medians.empty()) return;
    const double med = stats::median(medians);
    // The working sets are repetitions of one measurement (shared memory has no levels): the
    // precision of the median over them.
    r.findings.push_back(latency_finding(
        "shared.latency", med, confidence::precision(medians, med),
        "median over working sets of single-thread ld.shared chases", r.parameters));
  }
};

class LatencyCarveout : public Experiment {
 public:
  std::string id() const override { return "latency.carveout"; }
  std::vector<std::string> produces() const override { return {"l1.capacity.*"}; }
  std::string description() const override {
    return "L1 capacity under each preferred shared-memory carveout (knee of a .ca chase sweep)";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(int_axis("carveout_percent", {-1, 0, 25, 50, 100}, "%",
                           "preferred shared-memory carveout (-1 = driver default; --carveouts)",
                           -1, 100)),
            fixed(int_axis("working_set_bytes", {}, "B", "adaptive: 4 KiB .. 1 MiB"))};
  }
  void validate(const device::Device&, const RunOptions& o) const override {
    for (int c : o.carveouts)
      if (c < -1 || c > 100)
        throw UsageError(
            "carveout " + std::to_string(c) +
            " is not allowed; use -1 (driver default) or 0..100 percent shared memory");
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    r.protocol["l2_flush"] = device::kChainL2FlushProtocol;
    const auto carveouts = ctx.options.carveouts.empty() ? std::vector<int>{-1, 0, 25, 50, 100}
                                                         : ctx.options.carveouts;
    const std::uint64_t hi = std::min<std::uint64_t>(kMiB, ctx.device.info().l2_bytes / 4);
    json sets = json::array();
    std::vector<double> clocks;
    for (int c : carveouts) {
      const json points = sweep_points(
          ctx, LoadOp::kCa, c, sweep_options(4 * kKiB, hi, ctx.options.node_stride), clocks);
      sets.push_back({{"carveout_percent", c}, {"points", points}});
    }
    r.parameters = {{"load", "ca"},
                    {"node_stride_bytes", ctx.options.node_stride},
                    {"carveouts_percent", carveouts}};
    r.parameters.update(clock_for_ns(clocks, ctx.device));
    r.samples = {{"carveouts", sets}};
    for (const auto& s : sets)
      r.curves.push_back(
          curve_table(carveout_label(s.at("carveout_percent")), s.at("points"), r.parameters));
  }
  void analyze(ExperimentResult& r) const override {
    for (const auto& s : r.samples.at("carveouts")) {
      const int c = s.at("carveout_percent");
      const auto levels = analysis::find_levels(curve_from_points(s.at("points")));
      if (levels.transitions.empty()) continue;
      const auto& t = levels.transitions.front();
      Finding f{"l1.capacity." + carveout_label(c),
                t.estimate,
                "bytes",
                t.confidence,
                "largest working set on the L1 plateau of a .ca chase sweep; " + levels.method,
                json::object()};
      f.extra["carveout_percent"] = c;
      f.extra["bracket_bytes"] = {t.x_last_on, t.x_first_off};
      f.extra["l1_hit_cycles"] = t.level_below;
      r.findings.push_back(f);
    }
  }

 private:
  static std::string carveout_label(int c) {
    return c < 0 ? "carveout_default" : c == 0 ? "max_l1" : "carveout_" + std::to_string(c);
  }
};

}  // namespace

void analyze_sweep(ExperimentResult& r) {
  const auto levels = analysis::find_levels(curve_from_points(r.samples.at("points")));
  const auto& P = r.parameters;
  const bool l1_possible = P.value("caches_in_l1", true);
  const double l2 = P.value("l2_bytes_reported", 0.0);
  const std::string method = levels.method;
  std::size_t next_plateau = 0;
  std::vector<std::size_t> l2_transitions;
  for (std::size_t i = 0; i < levels.transitions.size(); ++i) {
    const auto& t = levels.transitions[i];
    // Naming uses the reported L2 size only as a prior: an L1 knee lies far below it, the L2
    // knees within a factor of 8 of it.
    if (is_l1_knee(i, t, l1_possible, l2)) {
      const auto& p = levels.plateaus[t.below];
      r.findings.push_back(latency_finding("l1.hit_latency", p.level, plateau_confidence(p),
                                           "median of the first plateau; " + method, P));
      r.findings.back().extra["working_set_bytes_range"] = {p.x_min, p.x_max};
      Finding cap{"l1.capacity",
                  t.estimate,
                  "bytes",
                  t.confidence,
                  "largest working set on the L1 plateau (knee bracketed by bisection); " + method,
                  json::object()};
      cap.extra["bracket_bytes"] = {t.x_last_on, t.x_first_off};
      // Refined to one node (refine_l1_knee) when the refinement straddled the knee inside the
      // sweep's bracket.
      // An optional record: a wrong-typed one is ignored (the sweep's bracket stands).
      const auto number = [](const json& j, const char* k) {
        return j.contains(k) && j[k].is_number() ? j[k].get<double>() : 0.0;
      };
      if (const auto it = r.samples.find("l1_knee_refinement");
          it != r.samples.end() && it->is_object() && it->contains("found") &&
          (*it)["found"].is_boolean() && (*it)["found"].get<bool>()) {
        const double stride = number(*it, "node_stride_bytes");
        const double on = number(*it, "nodes_held") * stride;
        const double off = number(*it, "nodes_not_held") * stride;
        if (on > 0 && on >= t.x_last_on && off <= t.x_first_off && off > on) {
          cap.value = on;
          cap.extra["bracket_bytes"] = {on, off};
          cap.extra["sweep_bracket_bytes"] = {t.x_last_on, t.x_first_off};
          cap.confidence =
              confidence::combine({t.step_separation, analysis::bracket_precision(on, off)});
          cap.method +=
              "; refined to one node: the largest chase with fewer than half a miss "
              "per pass (samples.l1_knee_refinement)";
        }
      }
      r.findings.push_back(cap);
      next_plateau = t.below + 1;
      continue;
    }
    if (is_l2_knee(t, l2)) l2_transitions.push_back(i);
  }
  if (next_plateau < levels.plateaus.size()) {
    const auto& p = levels.plateaus[next_plateau];
    r.findings.push_back(latency_finding("l2.hit_latency", p.level, plateau_confidence(p),
                                         "median of the first plateau past L1; " + method, P));
    r.findings.back().extra["working_set_bytes_range"] = {p.x_min, p.x_max};
  }
  auto capacity = [&](const std::string& name, const analysis::Transition& t,
                      const std::string& what) {
    Finding f{
        name,
        t.estimate,
        "bytes",
        t.confidence,
        "largest working set on the " + what + " plateau (knee bracketed by bisection); " + method,
        json::object()};
    f.extra["bracket_bytes"] = {t.x_last_on, t.x_first_off};
    r.findings.push_back(f);
  };
  if (l2_transitions.size() >= 2) {
    const auto& tn = levels.transitions[l2_transitions.front()];
    const auto& tc = levels.transitions[l2_transitions.back()];
    capacity("l2.near_capacity", tn, "L2 near-partition");
    // Replicated knees (run's near_knee_replicates): the knee's figure is the median of this
    // sweep's knee and the replicates', and the bracket's precision gives way to the
    // replicates' (confidence::summarize_replicates; each knee's own error: its bisection
    // bracket as a uniform interval, width / sqrt(12)). The separation factor is kept.
    if (r.samples.contains("near_knee_replicates") && !r.samples["near_knee_replicates"].empty()) {
      std::vector<double> knees{tn.estimate},
          ses{(tn.x_first_off - tn.x_last_on) / std::sqrt(12.0)};
      std::size_t missing = 0;
      for (const auto& k : r.samples["near_knee_replicates"]) {
        const auto kn = replicate_knee(k.at("points"), levels.plateaus[tn.below]);
        if (!kn) {
          ++missing;
          continue;
        }
        knees.push_back(kn->first);
        ses.push_back((kn->second - kn->first) / std::sqrt(12.0));
      }
      const auto rs = confidence::summarize_replicates(knees, ses);
      Finding& f = r.findings.back();
      f.value = rs.value;
      // A replicate whose bisection did not straddle the knee is evidence against it: it counts
      // as a replicate that disagrees (agreement of the replicates that found a knee).
      f.confidence = confidence::combine(
          {tn.step_separation, rs.precision,
           missing ? confidence::agreement(knees.size(), knees.size() + missing) : 1.0});
      f.extra["replicates"] = confidence::to_json(rs);
      f.extra["replicates_without_knee"] = missing;
      f.method += "; median of this sweep's knee and " +
                  std::to_string(r.samples["near_knee_replicates"].size()) +
                  " replicates' (fresh chains on other pages of a fresh allocation, bisection), "
                  "confidence from their spread";
    }
    // The mixed region's level: of the plateaus between the near-partition knee and the L2's,
    // the widest (in log working set; then the most points). A slope can leave short steps on
    // its way (a few points at the near knee's onset or on the rise into DRAM; seen on the
    // H200: 293.7 cycles at 25.8-28.4 MiB and 553.7 at 56.0-57.9 MiB beside 527.3 at
    // 42.8-55.4 MiB), which are not the region's level.
    const auto extent = [&](std::size_t k) {  // (log width, points - 1), compared in order
      const auto& p = levels.plateaus[k];
      return std::pair{p.x_max > 0 && p.x_min > 0 ? std::log(p.x_max / p.x_min) : 0.0,
                       p.last - p.first};
    };
    std::size_t widest = tc.below;
    for (std::size_t k = tn.below + 1; k < tc.below; ++k)
      if (extent(k) > extent(widest)) widest = k;
    const auto& far = levels.plateaus[widest];
    // Not a far-partition hit latency: that region mixes near hits, far hits and DRAM misses
    // (issue 10; cache.l2.far_hit measures the far hit itself).
    r.findings.push_back(latency_finding("l2.mixed_latency", far.level, plateau_confidence(far),
                                         "median of the mixed region between the L2 "
                                         "near-partition and L2 capacity knees (near hits, far "
                                         "hits and DRAM misses; not a far-hit latency): its "
                                         "widest plateau; " +
                                             method,
                                         P));
    r.findings.back().extra["working_set_bytes_range"] = {far.x_min, far.x_max};
    // The L2's knee is where that plateau ends (as the near partition's is where the slope
    // first rises): a step on the rise into DRAM belongs to the knee, not to the region.
    const analysis::Transition* end = &tc;
    for (auto i : l2_transitions)
      if (levels.transitions[i].below == widest) end = &levels.transitions[i];
    capacity("l2.capacity", *end, "L2 (far)");
  } else if (l2_transitions.size() == 1) {
    capacity("l2.capacity", levels.transitions[l2_transitions.front()], "L2");
  }
  if (!l2_transitions.empty()) {
    const auto& tc = levels.transitions[l2_transitions.back()];
    if (tc.below + 1 < levels.plateaus.size()) {
      const auto& d = levels.plateaus[tc.below + 1];
      auto f = latency_finding("dram.latency", d.level, plateau_confidence(d),
                               "median of the first plateau past the L2 capacity (cold chase "
                               "from a flushed L2); " +
                                   method,
                               P);
      f.extra["working_set_bytes_range"] = {d.x_min, d.x_max};
      r.findings.push_back(f);
    }
  }
  json plateaus = json::array();
  for (const auto& p : levels.plateaus)
    plateaus.push_back({{"level_cycles", p.level},
                        {"noise_cycles", p.noise},
                        {"working_set_bytes_min", p.x_min},
                        {"working_set_bytes_max", p.x_max},
                        {"points", p.last - p.first + 1}});
  json transitions = json::array();
  for (const auto& t : levels.transitions)
    transitions.push_back({{"last_on_bytes", t.x_last_on},
                           {"first_off_bytes", t.x_first_off},
                           {"level_below_cycles", t.level_below},
                           {"level_above_cycles", t.level_above},
                           {"confidence", t.confidence}});
  r.statistics["plateaus"] = plateaus;
  r.statistics["transitions"] = transitions;
}

void register_latency_experiments(Registry& registry) {
  registry.add(std::make_unique<LatencySweep>());
  registry.add(std::make_unique<LatencyChase>());
  registry.add(std::make_unique<LatencyShared>());
  registry.add(std::make_unique<LatencyCarveout>());
}

}  // namespace gpuprobe::probes
