#include "measure/chase_point.hpp"

#include <algorithm>
#include <vector>

#include "core/stats.hpp"

namespace gpuprobe::measure {

using device::LoadOp;
using nlohmann::json;

namespace {
// Timed steps of one chase: enough to amortise the timer read (a few cycles) to < 0.1%, few
// enough that a DRAM-latency chase takes milliseconds.
constexpr std::uint64_t kMinTimedSteps = 4096;
constexpr std::uint64_t kMaxTimedSteps = 16384;

/// The L1 is invalidated at every kernel launch (measured on the H200: without an in-kernel
/// warm-up a 16 KiB chase averaged 39.5 cycles instead of 32), so every timed run of a hot set
/// first walks up to kL1WarmSteps nodes inside the same launch: a full pass for any set that
/// an L1 can hold.
constexpr std::uint64_t kL1WarmSteps = 16384;

}  // namespace

ChasePlan plan_chase(std::uint64_t nodes, std::uint64_t working_set, std::uint64_t l2_bytes) {
  ChasePlan p;
  p.cold = working_set > 2 * l2_bytes;
  if (p.cold) {
    p.timed_steps = std::clamp<std::uint64_t>(nodes / 32, 1024, kMaxTimedSteps);
  } else {
    p.first_warmup_steps = nodes;
    p.warmup_steps = std::min(nodes, kL1WarmSteps);
    p.timed_steps = std::clamp<std::uint64_t>(nodes, kMinTimedSteps, kMaxTimedSteps);
  }
  return p;
}

json to_json(const ChasePoint& p) {
  json j = {{"working_set_bytes", p.working_set},
            {"load", device::to_string(p.op)},
            {"carveout_percent", p.carveout},
            {"regime", p.plan.cold ? "cold" : "hot"},
            {"first_warmup_steps", p.plan.first_warmup_steps},
            {"warmup_steps_per_run", p.plan.warmup_steps},
            {"timed_steps", p.plan.timed_steps},
            {"cycles_per_load", to_json(p.cycles)},
            {"sm_clock_mhz_measured", p.clock_mhz},
            {"smid", p.smid}};
  if (p.offset_bytes) j["offset_bytes"] = p.offset_bytes;
  return j;
}

ChasePoint measure_chase(Context& ctx, LoadOp op, std::uint64_t working_set, int carveout,
                         std::optional<std::uint64_t> seed, std::uint64_t offset_bytes) {
  auto& dev = ctx.device;
  device::ChainSpec spec{working_set, ctx.options.node_stride, seed.value_or(ctx.options.seed),
                         offset_bytes};
  auto chain = dev.make_chain(spec);
  ChasePoint point;
  point.offset_bytes = offset_bytes;
  point.working_set = chain->nodes() * spec.node_stride_bytes;
  point.op = op;
  point.carveout = carveout;
  point.plan = plan_chase(chain->nodes(), point.working_set, dev.info().l2_bytes);
  std::uint64_t position = 0;
  std::vector<double> clocks;
  auto once = [&](int rep) {
    device::ChaseParams params;
    params.op = op;
    params.carveout_percent = carveout;
    params.start_step = position;
    params.timed_steps = point.plan.timed_steps;
    // The warm-up run walks the whole hot chain; repetitions continue where it stopped.
    params.warmup_steps = rep < 0 ? point.plan.first_warmup_steps : point.plan.warmup_steps;
    const auto t = dev.chase(*chain, params);
    position += params.warmup_steps + params.timed_steps;
    if (rep >= 0) {
      point.smid = t.smid;
      if (t.elapsed_ns > 0) clocks.push_back(t.total_cycles / t.elapsed_ns * 1e3);
    }
    return t.cycles_per_step;
  };
  point.cycles = repeat_until_stable(once, ctx.options.protocol);
  if (!clocks.empty()) point.clock_mhz = stats::median(clocks);
  return point;
}

double chase_point_cycles(Context& ctx, LoadOp op, std::uint64_t working_set,
                          std::uint32_t node_stride, std::optional<std::uint64_t> seed) {
  if (node_stride == 0 || node_stride == ctx.options.node_stride)
    return measure_chase(ctx, op, working_set, -1, seed).cycles.summary.median;
  RunOptions o = ctx.options;
  o.node_stride = node_stride;
  Context c{ctx.device, o, ctx.prior};
  return measure_chase(c, op, working_set, -1, seed).cycles.summary.median;
}

}  // namespace gpuprobe::measure
