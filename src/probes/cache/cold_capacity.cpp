// cache.cold_capacity: for each level, a fresh random chain (built, then the L2 flushed) is
// chased twice in one launch: the first pass from the cold cache fills it, the second pass is
// timed. The capacity is the largest working set whose second pass still hits, found by
// bisection in log space between a set that surely hits and one that surely misses (the
// midpoint of their second-pass latencies decides). L1: ld.global.ca with the largest L1
// carveout; L2: ld.global.cg. The final bracket is confirmed by fresh chains just inside and
// just outside it (5 % and 10 %). Runs on any device with chases (the modelled GPU too).
#include "probes/cache/cold_capacity.hpp"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/confidence.hpp"
#include "core/samples.hpp"
#include "core/units.hpp"
#include "measure/capacity_bisection.hpp"
#include "probes/cache/cache_samples.hpp"

namespace gpuprobe::probes {
namespace {

using cache_samples::ColdCapacityLevel;
using cache_samples::ColdCapacitySamples;
using units::kKiB;
using units::kMiB;

constexpr std::uint32_t kLine = 128;
constexpr std::uint64_t kTimedSteps = 32768;
constexpr int kBisections = 7;
// Confirmation chains this far inside and outside the final bracket.
constexpr double kConfirmMargin = 0.05;

struct Level {
  const char* name;
  device::LoadOp op;
  int carveout;
  std::uint64_t lo, hi;
};

class ColdCapacity : public Experiment {
 public:
  std::string id() const override { return "cache.cold_capacity"; }
  std::string description() const override {
    return "L1 and L2 capacity after a flush: a fresh chain chased twice in one launch (the "
           "first pass fills the cold cache, the second is timed); bisection on the working set";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(string_axis("level", {"l1", "l2"},
                              "l1: ld.global.ca at carveout 0; l2: ld.global.cg")),
            fixed(int_axis("bisections", {static_cast<std::int64_t>(kBisections)}, "steps",
                           "log-space bisections of the working set")),
            fixed(int_axis("timed_steps", {static_cast<std::int64_t>(kTimedSteps)}, "loads",
                           "timed loads per probe"))};
  }

  int samples_version() const override { return ColdCapacitySamples::kVersion; }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto& info = ctx.device.info();
    const std::uint64_t l2 = std::max<std::uint64_t>(info.l2_bytes, 4 * kMiB);
    const std::uint64_t l1_max =
        info.l1_shared_unified_bytes ? info.l1_shared_unified_bytes : 256 * kKiB;
    const std::vector<Level> levels = {{"l1", device::LoadOp::kCa, 0, 4 * kKiB, 2 * l1_max},
                                       {"l2", device::LoadOp::kCg, -1, l2 / 16, l2 + l2 / 2}};
    std::uint64_t seed = ctx.options.seed * 1000;
    ColdCapacitySamples samples;
    for (const auto& lv : levels) {
      auto second_pass = [&](std::uint64_t bytes) {
        auto chain = ctx.device.make_chain({bytes, kLine, ++seed});
        device::ChaseParams p;
        p.op = lv.op;
        p.carveout_percent = lv.carveout;
        p.warmup_steps = chain->nodes();
        p.timed_steps = std::min<std::uint64_t>(chain->nodes(), kTimedSteps);
        return ctx.device.chase(*chain, p).cycles_per_step;
      };
      const auto s = measure::search_capacity(second_pass, lv.lo, lv.hi, kBisections, kLine);
      ColdCapacityLevel level{
          lv.name,     device::to_string(lv.op), lv.carveout, {}, s.hit_cycles, s.miss_cycles,
          std::nullopt};
      for (const auto& p : s.probes) level.probes.emplace_back(p.bytes, p.cycles);
      if (s.valid) {
        level.confirm.emplace();
        for (int m = 1; m <= 2; ++m) {
          const auto in =
              static_cast<std::uint64_t>(s.lo * (1 - m * kConfirmMargin)) / kLine * kLine;
          const auto out =
              static_cast<std::uint64_t>(s.hi * (1 + m * kConfirmMargin)) / kLine * kLine;
          level.confirm->emplace_back(in, second_pass(in), true);
          level.confirm->emplace_back(out, second_pass(out), false);
        }
      }
      samples.levels.push_back(std::move(level));
    }
    r.parameters = {{"line_bytes", kLine},
                    {"timed_steps", kTimedSteps},
                    {"protocol",
                     "per probe: a fresh random cyclic chain (128 B nodes) is built and the L2 "
                     "flushed; one launch chases it for one full pass (untimed: the cold cache "
                     "fills) and times the next min(nodes, 32768) steps"}};
    r.samples = samples;
  }

  void analyze(ExperimentResult& r) const override {
    const auto samples = samples_as<ColdCapacitySamples>(r);
    for (const auto& lv : samples.levels) {
      const std::string& name = lv.level;
      const double hit = lv.hit_cycles, miss = lv.miss_cycles;
      const double threshold = 0.5 * (hit + miss);
      std::uint64_t lo = 0, hi = 0;
      Curve cv{name + "_second_pass", {"working_set_bytes", "cycles_per_load"}, {}};
      for (const auto& [bytes, c] : lv.probes) {
        cv.rows.push_back({bytes, c});
        if (c < threshold) lo = std::max(lo, bytes);
      }
      for (const auto& [bytes, c] : lv.probes)
        if (c >= threshold && bytes > lo && (hi == 0 || bytes < hi)) hi = bytes;
      r.curves.push_back(cv);
      if (!lv.confirm || lo == 0 || hi == 0) {
        r.statistics[name] = "hit and miss levels too close (or no bracket): no capacity";
        continue;
      }
      const auto& cf = *lv.confirm;
      std::size_t agreeing = 0;
      for (const auto& [bytes, c, inside] : cf) agreeing += (c < threshold) == inside;
      const double cap = 0.5 * (static_cast<double>(lo) + static_cast<double>(hi));
      // With the capacity anywhere in the final bracket, the chance that the midpoint is within
      // the tolerance of it.
      const double half = (static_cast<double>(hi) - lo) / 2;
      const double within =
          half > 0 ? std::min(1.0, confidence::kDefaultTolerance * cap / half) : 1.0;
      r.findings.push_back(
          Finding{name + ".cold_capacity",
                  cap,
                  "bytes",
                  confidence::combine({confidence::agreement(agreeing, cf.size()), within}),
                  "largest working set whose second pass after a first pass from a flushed cache "
                  "still hits (bisection; midpoint of the final bracket)",
                  {{"bracket_bytes", {lo, hi}},
                   {"hit_cycles", hit},
                   {"miss_cycles", miss},
                   {"op", lv.op},
                   {"confirm", cf}}});
    }
  }
};

}  // namespace

void register_cold_capacity_experiments(Registry& registry) {
  registry.add(std::make_unique<ColdCapacity>());
}

}  // namespace gpuprobe::probes
