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
#include "probes/latency/latency_common.hpp"
#include "probes/latency/latency_samples.hpp"

namespace gpuprobe::probes {
namespace latency {
namespace {

using device::LoadOp;
using nlohmann::json;

using measure::measure_chase;
using units::kKiB;
using units::kMiB;

/// The L1 knee to one node: the sweep brackets it to 1.5 %, and so steep a knee can rise by a
/// fifth within that bracket, so a model given the bracket's low end misses lines the GPU holds. A
/// chase over n nodes of which the L1 holds fewer than n misses at least n - held times per pass
/// (every pass reads all n), so "held" is a median below the L1 level plus half a miss per pass:
/// (next level - L1 level) / (2 n). Bisection over node counts between the sweep's bracket; null
/// when the sweep found no L1 knee.
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

/// The near-partition knee moves between runs (issue 9, "Run to run"): it depends on where a
/// fresh chain's lines land, i.e. on the physical pages an allocation gets (cache.l2.mixture's
/// allocations). So it is located again in further independent replicates, each with its own
/// chain (another seed) on other pages: replicate j's chains sit (j + 1) x the bisection's
/// largest working set (rounded up to 2 MiB) into a fresh allocation (an allocator hands a block
/// just freed straight back, so without the offset every replicate would read the sweep's own
/// pages), by bisection between the near plateau and the next one with the finder's own
/// on-plateau band; analyze_sweep takes the knee's confidence from the spread of the knees.
json near_knee_replicates(Context& ctx, LoadOp op, const analysis::LevelAnalysis& levels,
                          const analysis::Transition& tn, const analysis::SweepOptions& sweep) {
  const auto& o = ctx.options;
  json knees = json::array();
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
  return knees;
}

// ---------------------------------------------------------------------------------------------

class LatencySweep : public Experiment {
 public:
  std::string id() const override { return "latency.sweep"; }
  int samples_version() const override { return SweepSamples::kVersion; }
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
    const auto levels = analysis::find_levels(curve_of(points.get<std::vector<ChaseSample>>()));
    const double l2 = static_cast<double>(ctx.device.info().l2_bytes);
    const json l1_refinement = refine_l1_knee(ctx, op, levels, o.node_stride, l2);
    json knees = json::array();
    if (const auto near = near_partition_knee(levels, device::caches_in_l1(op), l2))
      knees = near_knee_replicates(ctx, op, levels, levels.transitions[*near], sweep);
    r.parameters.update(clock_for_ns(clocks, ctx.device));
    r.samples = {{"points", points}, {"near_knee_replicates", knees}};
    if (!l1_refinement.is_null()) r.samples["l1_knee_refinement"] = l1_refinement;
    r.statistics = {{"points_measured", points.size()}};
    r.curves.push_back(curve_table("curve", points.get<std::vector<ChaseRow>>(), r.parameters));
  }
  void analyze(ExperimentResult& r) const override { analyze_sweep(r); }
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
  int samples_version() const override { return SharedSamples::kVersion; }
  void analyze(ExperimentResult& r) const override {
    std::vector<double> medians;
    for (const auto& p : samples_as<SharedSamples>(r).points) medians.push_back(p.cycles_median);
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
    return {
        int_axis("carveout_percent", {-1, 0, 25, 50, 100}, "%",
                 "preferred shared-memory carveout (-1 = driver default; --carveouts)", -1, 100),
        fixed(int_axis("working_set_bytes", {}, "B", "adaptive: 4 KiB .. 1 MiB"))};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    r.protocol["l2_flush"] = device::kChainL2FlushProtocol;
    const auto carveouts = axis_values(ctx.options).int32s("carveout_percent");
    const std::uint64_t hi = std::min<std::uint64_t>(kMiB, ctx.device.info().l2_bytes / 4);
    json sets = json::array();
    std::vector<std::pair<int, std::vector<ChaseRow>>> tables;
    std::vector<double> clocks;
    for (int c : carveouts) {
      const json points = sweep_points(
          ctx, LoadOp::kCa, c, sweep_options(4 * kKiB, hi, ctx.options.node_stride), clocks);
      sets.push_back({{"carveout_percent", c}, {"points", points}});
      tables.emplace_back(c, points.get<std::vector<ChaseRow>>());
    }
    r.parameters = {{"load", "ca"},
                    {"node_stride_bytes", ctx.options.node_stride},
                    {"carveouts_percent", carveouts}};
    r.parameters.update(clock_for_ns(clocks, ctx.device));
    r.samples = {{"carveouts", sets}};
    for (const auto& [c, rows] : tables)
      r.curves.push_back(curve_table(carveout_label(c), rows, r.parameters));
  }
  int samples_version() const override { return CarveoutSamples::kVersion; }
  void analyze(ExperimentResult& r) const override {
    for (const auto& s : samples_as<CarveoutSamples>(r).carveouts) {
      const int c = s.carveout_percent;
      const auto levels = analysis::find_levels(curve_of(s.points));
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
}  // namespace latency

void register_latency_experiments(Registry& registry) {
  using namespace latency;
  registry.add(std::make_unique<LatencySweep>());
  registry.add(make_latency_chase());
  registry.add(std::make_unique<LatencyShared>());
  registry.add(std::make_unique<LatencyCarveout>());
}

}  // namespace gpuprobe::probes
