// Compute-pipe probes: dependent-chain latency and peak throughput of FFMA, HFMA2, IMAD and
// DFMA. They use the CUDA runtime directly (the Device seam covers latency only) and are waived
// on a modelled GPU.
#include "probes/compute/compute.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "core/confidence.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/stats.hpp"
#include "measure/block_timing.hpp"
#include "measure/gpu.hpp"
#include "probes/compute/compute_kernels.hpp"
#include "probes/compute/compute_samples.hpp"

namespace gpuprobe::probes {
namespace {

using nlohmann::json;
namespace compute_kernels = kernels;

using measure::LaunchSummary;
using measure::summarize_blocks;
using stats::median_or_zero;

// ---- compute.latency / compute.throughput ---------------------------------------------------

struct OpInfo {
  compute_kernels::FmaOp op;
  const char* name;  ///< finding prefix: compute.<name>.*
  const char* instruction;
  const char* unit;    ///< throughput unit (instructions per clock per SM, per lane)
  double work_per_op;  ///< FLOP (or integer ops for IMAD) per lane-instruction
  const char* work;    ///< "FLOP" or "int ops"
  int halves;          ///< values per lane (2 for HFMA2)
  double a, b;         ///< x <- x * a + b
};

// a = 1, b = 1 counts (x0 + steps, exact below 2^24 for FP32); HFMA2 cannot count far in half
// precision, so it alternates x <- 3 - x (period 2; the step count is odd).
Axis op_axis() {
  return string_axis("op", {"ffma", "hfma2", "imad", "dfma"},
                     "the instruction of x <- x * a + b: FFMA (fp32), HFMA2 (2 x fp16), IMAD "
                     "(u32), DFMA (fp64)");
}

constexpr OpInfo kOps[] = {
    {compute_kernels::FmaOp::kFfma, "ffma", "FFMA", "FMA/clk/SM", 2, "FLOP", 1, 1, 1},
    {compute_kernels::FmaOp::kHfma2, "hfma2", "HFMA2", "HFMA2/clk/SM", 4, "FLOP", 2, -1, 3},
    {compute_kernels::FmaOp::kImad, "imad", "IMAD", "IMAD/clk/SM", 2, "int ops", 1, 1, 1},
    {compute_kernels::FmaOp::kDfma, "dfma", "DFMA", "DFMA/clk/SM", 2, "FLOP", 1, 1, 1},
};

/// Lane-instructions per clock per SM the CUDA C++ Programming Guide's arithmetic-throughput
/// table gives (HFMA2 as instructions: 256 half-precision results = 128 HFMA2); 0 = not known.
double peak_per_clk(const Gpu& g, compute_kernels::FmaOp op) {
  const int cc = g.cc_major * 10 + g.cc_minor;
  if (cc == 90) {
    switch (op) {
      case compute_kernels::FmaOp::kFfma:
        return 128;
      case compute_kernels::FmaOp::kHfma2:
        return 128;
      case compute_kernels::FmaOp::kImad:
        return 64;
      case compute_kernels::FmaOp::kDfma:
        return 64;
    }
  }
  if (cc == 80) {
    switch (op) {
      case compute_kernels::FmaOp::kFfma:
        return 64;
      case compute_kernels::FmaOp::kHfma2:
        return 128;
      case compute_kernels::FmaOp::kImad:
        return 64;
      case compute_kernels::FmaOp::kDfma:
        return 32;
    }
  }
  return 0;
}

/// The value one thread must write: the sum over its accumulators (and halves) of x after
/// `steps` steps of x <- x * a + b from its seed.
double expected_sum(const OpInfo& op, std::uint64_t thread, int accumulators, std::uint64_t steps) {
  double sum = 0;
  for (int k = 0; k < accumulators; ++k) {
    for (int h = 0; h < op.halves; ++h) {
      const double x0 = compute_kernels::fma_seed(thread, k, h);
      double x;
      if (op.a == 1) {
        x = x0 + static_cast<double>(steps) * op.b;
        if (op.op == compute_kernels::FmaOp::kImad)
          x = static_cast<double>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(x)));
      } else {  // a == -1
        x = steps % 2 ? op.b - x0 : x0;
      }
      sum += x;
    }
  }
  return sum;
}

void verify_fma(const OpInfo& op, const compute_kernels::FmaLaunch& l,
                const std::vector<double>& out, const std::string& where) {
  const std::uint64_t threads = static_cast<std::uint64_t>(l.blocks) * l.threads_per_block;
  const std::uint64_t steps = compute_kernels::fma_steps(l);
  // Up to a few hundred thousand threads' sums per point, on the host's cores.
  std::vector<std::uint64_t> part_wrong(parallel::parts_for(threads, 4096), 0),
      part_first(part_wrong.size(), threads);
  parallel::for_ranges(
      threads,
      [&](unsigned k, std::size_t a, std::size_t b) {
        for (std::uint64_t t = a; t < b; ++t) {
          if (out[t] == expected_sum(op, t, l.accumulators, steps)) continue;
          if (!part_wrong[k]) part_first[k] = t;
          ++part_wrong[k];
        }
      },
      4096);
  std::uint64_t wrong = 0, first = threads;
  for (std::size_t k = 0; k < part_wrong.size(); ++k) {
    wrong += part_wrong[k];
    if (part_wrong[k]) first = std::min(first, part_first[k]);
  }
  const double got = wrong ? out[first] : 0.0;
  const double want = wrong ? expected_sum(op, first, l.accumulators, steps) : 0.0;
  if (wrong)
    throw VerificationError(where + ": " + std::to_string(wrong) + " of " +
                            std::to_string(threads) + " threads wrote a wrong result (thread " +
                            std::to_string(first) + ": " + std::to_string(got) + ", expected " +
                            std::to_string(want) + ")");
}

/// Largest step count per accumulator whose result is still exact (FP32 counts below 2^24).
std::uint64_t max_exact_steps(const OpInfo& op) {
  return op.op == compute_kernels::FmaOp::kFfma ? (1u << 24) - 256
                                                : std::numeric_limits<std::uint32_t>::max();
}

const OpInfo& op_named(const std::string& name) {
  for (const auto& op : kOps)
    if (name == op.name) return op;
  throw std::logic_error("compute: no op " + name);
}

/// compute.latency, one op per point: one warp's dependent chain.
class LatencySweep : public Sweep {
 public:
  explicit LatencySweep(Context& ctx) : ctx_(ctx), gpu_(open_gpu(ctx.device)) {}
  void run_point(const AxisPoint& point) override {
    const OpInfo& op = op_named(point.string("op"));
    compute_kernels::FmaLaunch l;
    l.op = op.op;
    l.accumulators = 1;
    l.threads_per_block = 32;
    l.blocks = 1;
    l.iterations = 512;  // 512 x 512 + 1 dependent steps
    l.a = op.a;
    l.b = op.b;
    const double steps = static_cast<double>(compute_kernels::fma_steps(l));
    std::vector<double> clocks;
    auto once = [&](int rep) {
      compute_kernels::launch_fma(l, out_.get(), records_.get(), nullptr);
      synchronize();
      const auto timings = records_.to_host();
      const auto s = summarize_blocks(timings, 0);
      if (rep >= 0 && s.clock_mhz > 0) clocks.push_back(s.clock_mhz);
      return static_cast<double>(timings[0].c1 - timings[0].c0) / steps;
    };
    const auto m = repeat_until_stable(once, ctx_.options.protocol);
    verify_fma(op, l, out_.to_host(), "compute.latency " + std::string(op.instruction));
    points_.push_back({{"op", op.name},
                       {"instruction", op.instruction},
                       {"steps", compute_kernels::fma_steps(l)},
                       {"a", op.a},
                       {"b", op.b},
                       {"cycles_per_instruction", to_json(m)},
                       {"sm_clock_mhz_measured", median_or_zero(clocks)},
                       {"verified", true}});
  }
  void finish(ExperimentResult& r) override {
    r.parameters = {{"chain",
                     "one warp, one accumulator per thread, x <- x * a + b with a, b "
                     "kernel arguments (inline PTX fma.rn.f32 / fma.rn.f16x2 / mad.lo.u32 "
                     "/ fma.rn.f64), 512 steps unrolled per loop iteration"},
                    {"cycles_per_instruction",
                     "clock64 over the chain / steps; loop overhead and "
                     "the final store are included (< 0.1%)"},
                    {"gpu", to_json(gpu_)}};
    r.samples = {{"points", points_}};
    Curve c{"table", {"op", "cycles_per_instruction_median", "p5", "p95", "sm_clock_mhz"}, {}};
    for (const auto& p : points_.get<std::vector<compute::LatencyPoint>>()) {
      const auto& s = p.cycles_per_instruction;
      c.rows.push_back(
          {p.op, s.median, s.p5_or_throw(), s.p95_or_throw(), p.sm_clock_mhz_measured});
    }
    c.hints = table_hints("dependent instruction latency per op");
    r.curves.push_back(c);
  }

 private:
  Context& ctx_;
  const Gpu gpu_;
  compute_kernels::DeviceArray<double> out_{32};
  compute_kernels::DeviceArray<measure::BlockTiming> records_{1};
  json points_ = json::array();
};

class ComputeLatency : public CudaRuntimeExperiment {
 public:
  std::string id() const override { return "compute.latency"; }
  std::vector<std::string> produces() const override { return {"compute.*.latency"}; }
  std::string description() const override {
    return "dependent chains x <- x * a + b of FFMA, HFMA2, IMAD and DFMA (one warp): cycles "
           "per instruction";
  }
  std::vector<Axis> typed_axes() const override { return {op_axis()}; }
  bool is_sweep() const override { return true; }
  std::unique_ptr<Sweep> begin_sweep(Context& ctx, ExperimentResult&) const override {
    return std::make_unique<LatencySweep>(ctx);
  }
  int samples_version() const override { return compute::LatencySamples::kVersion; }
  void analyze(ExperimentResult& r) const override {
    const auto samples = samples_as<compute::LatencySamples>(r);
    for (const auto& p : samples.points) {
      const double cycles = p.cycles_per_instruction.median;
      const double mhz = p.sm_clock_mhz_measured;
      Finding f{"compute." + p.op + ".latency",
                cycles,
                "cycles",
                p.cycles_per_instruction.precision(),
                "one warp's dependent chain of " + p.instruction +
                    ": clock64 cycles / instructions (" + std::to_string(p.steps) +
                    " steps, output verified)",
                json::object()};
      if (mhz > 0) f.extra["value_ns"] = cycles / mhz * 1e3;
      f.extra["sm_clock_mhz"] = mhz;
      r.findings.push_back(f);
    }
  }
};

constexpr int kThroughputThreads = 256;
constexpr double kThroughputSeconds = 1.0e-3;  // per launch at the op's peak rate

/// Dynamic shared memory per block that lets exactly `blocks` blocks share an SM.
std::uint32_t occupancy_smem(const Gpu& g, int blocks) {
  if (blocks * kThroughputThreads >= g.max_threads_per_sm || g.shared_per_sm <= 0) return 0;
  std::int64_t per = g.shared_per_sm / blocks - g.reserved_shared_per_block;
  per = std::min<std::int64_t>(per / 128 * 128, g.shared_per_block_optin);
  return static_cast<std::uint32_t>(std::max<std::int64_t>(per, 0));
}

/// compute.throughput, one (op, warps per SM, accumulators) per point: every SM full of
/// independent chains. A point whose (accumulators, blocks per SM) the op already measured
/// (registers limit the blocks), or whose warps do not fit an SM, adds nothing.
class ThroughputSweep : public Sweep {
 public:
  explicit ThroughputSweep(Context& ctx)
      : ctx_(ctx),
        gpu_(open_gpu(ctx.device)),
        max_threads_(static_cast<std::size_t>(gpu_.sm_count) * gpu_.max_threads_per_sm),
        out_(max_threads_),
        records_(max_threads_ / kThroughputThreads + 1) {}
  void run_point(const AxisPoint& point) override {
    const OpInfo& op = op_named(point.string("op"));
    const int warps = point.int32("warps_per_sm"), acc = point.int32("accumulators");
    const double peak = peak_per_clk(gpu_, op.op);
    const double rate = (peak > 0 ? peak : 64.0) * gpu_.sm_count * gpu_.clock_max_mhz * 1e6;
    const int level = warps * 32 / kThroughputThreads;  // blocks of 256 threads per SM
    if (level * kThroughputThreads > gpu_.max_threads_per_sm) return;
    const std::uint32_t smem = occupancy_smem(gpu_, level);
    const int resident = compute_kernels::fma_blocks_per_sm(op.op, acc, kThroughputThreads, smem);
    const int per_sm = std::min(level, resident);
    if (per_sm < 1 || !done_.insert({op.name, acc, per_sm}).second) return;
    compute_kernels::FmaLaunch l;
    l.op = op.op;
    l.accumulators = acc;
    l.threads_per_block = kThroughputThreads;
    l.blocks = per_sm * gpu_.sm_count;
    l.dynamic_smem_bytes = smem;
    l.a = op.a;
    l.b = op.b;
    const double threads = static_cast<double>(l.blocks) * l.threads_per_block;
    const double steps = std::min<double>(rate * kThroughputSeconds / (threads * acc),
                                          static_cast<double>(max_exact_steps(op)));
    l.iterations = std::max<std::uint32_t>(
        1, static_cast<std::uint32_t>(steps / compute_kernels::fma_steps_per_iteration(acc)));
    const double ops_per_block =
        static_cast<double>(compute_kernels::fma_steps(l)) * acc * l.threads_per_block;
    std::vector<double> clocks, per_s;
    LaunchSummary last;
    auto once = [&](int rep) {
      compute_kernels::launch_fma(l, out_.get(), records_.get(), nullptr);
      synchronize();
      const auto s =
          summarize_blocks(records_.to_host(static_cast<std::size_t>(l.blocks)), ops_per_block);
      if (rep >= 0) {
        clocks.push_back(s.clock_mhz);
        if (s.elapsed_ns > 0) per_s.push_back(ops_per_block * l.blocks / s.elapsed_ns * 1e9);
        last = s;
      }
      return s.rate_median;
    };
    const auto m = repeat_until_stable(once, ctx_.options.protocol);
    verify_fma(op, l, out_.to_host(static_cast<std::size_t>(threads)),
               "compute.throughput " + std::string(op.instruction) + " x" + std::to_string(acc));
    points_.push_back({{"op", op.name},
                       {"accumulators", acc},
                       {"blocks_per_sm", per_sm},
                       {"warps_per_sm", per_sm * kThroughputThreads / 32},
                       {"blocks_per_sm_requested", level},
                       {"blocks_per_sm_observed", {last.min_blocks_per_sm, last.max_blocks_per_sm}},
                       {"sms_observed", last.sms},
                       {"dynamic_smem_bytes", smem},
                       {"steps_per_accumulator", compute_kernels::fma_steps(l)},
                       {"ops_per_clk_per_sm", to_json(m)},
                       {"ops_per_s_median", median_or_zero(per_s)},
                       {"sm_clock_mhz_measured", median_or_zero(clocks)},
                       {"verified", true}});
  }
  void finish(ExperimentResult& r) override;

 private:
  Context& ctx_;
  const Gpu gpu_;
  const std::size_t max_threads_;
  compute_kernels::DeviceArray<double> out_;
  compute_kernels::DeviceArray<measure::BlockTiming> records_;
  std::set<std::tuple<std::string, int, int>> done_;  // (op, accumulators, blocks per SM)
  json points_ = json::array();
};

void ThroughputSweep::finish(ExperimentResult& r) {
  json peaks = json::object();
  for (const auto& op : kOps) peaks[op.name] = peak_per_clk(gpu_, op.op);
  r.parameters = {{"kernel",
                   "every thread runs K independent chains x <- x * a + b (a, b "
                   "kernel arguments; ~512 instructions unrolled per loop iteration) "
                   "and writes the sum of its accumulators, checked on the host"},
                  {"occupancy",
                   "blocks of 256 threads; dynamic shared memory sized so that "
                   "exactly n blocks fit on an SM (fewer where registers limit)"},
                  {"ops_per_clk_per_sm",
                   "per SM: lane-instructions of its blocks / (last end "
                   "- first start) in its clock64; median over SMs"},
                  {"ops_per_s",
                   "all lane-instructions / (last %globaltimer end - first "
                   "start over all blocks)"},
                  {"peak_per_clk_per_sm", peaks},
                  {"peak_source",
                   "CUDA C++ Programming Guide arithmetic-instruction throughput "
                   "table (results per clock per SM; HFMA2 counted as "
                   "instructions: 256 half results = 128); 0 = not known for "
                   "this compute capability"},
                  {"sm_count", gpu_.sm_count},
                  {"gpu", to_json(gpu_)}};
  r.samples = {{"points", points_}};
  Curve c{"sweep",
          {"op", "accumulators", "warps_per_sm", "ops_per_clk_per_sm_median", "p5", "p95",
           "ops_per_s", "sm_clock_mhz"},
          {}};
  for (const auto& p : points_.get<std::vector<compute::ThroughputPoint>>()) {
    const auto& s = p.ops_per_clk_per_sm;
    c.rows.push_back({p.op, p.accumulators, p.warps_per_sm, s.median, s.p5_or_throw(),
                      s.p95_or_throw(), p.ops_per_s_median, p.sm_clock_mhz_measured});
  }
  c.hints = chart_hints("throughput against warps per SM (best accumulator count)", "warps_per_sm",
                        "", "ops_per_clk_per_sm_median", "ops/clk/SM", true)
                .by({"op"})
                .best("max");
  r.curves.push_back(c);
}

class ComputeThroughput : public CudaRuntimeExperiment {
 public:
  std::string id() const override { return "compute.throughput"; }
  std::vector<std::string> produces() const override { return {"compute.*.throughput"}; }
  std::string description() const override {
    return "independent FFMA/HFMA2/IMAD/DFMA chains on every SM, 1..16 accumulators x 8..64 "
           "warps per SM: instructions per clock per SM and FLOP/s against the peak at the "
           "measured clock";
  }
  std::vector<Axis> typed_axes() const override {
    Axis warps =
        int_axis("warps_per_sm", {8, 16, 32, 64}, "warps",
                 "resident warps per SM: blocks of 256 threads, dynamic shared memory "
                 "sized so that exactly that many blocks fit (fewer where registers limit)");
    for (int w = 8; w <= 64; w += 8) warps.allowed.emplace_back(w);
    // Declared in run order: op outermost, then warps per SM, accumulators innermost.
    return {
        op_axis(), warps,
        int_axis("accumulators", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, "chains",
                 "independent chains per thread", 1, compute_kernels::kMaxAccumulators)};
  }
  bool is_sweep() const override { return true; }
  std::unique_ptr<Sweep> begin_sweep(Context& ctx, ExperimentResult&) const override {
    return std::make_unique<ThroughputSweep>(ctx);
  }
  int samples_version() const override { return compute::ThroughputSamples::kVersion; }
  void analyze(ExperimentResult& r) const override {
    const auto samples = samples_as<compute::ThroughputSamples>(r);
    const auto& parameters = r.parameters;
    const double sms = parameters.value("sm_count", 0.0);
    std::map<std::string, const compute::ThroughputPoint*> best;  // per op
    for (const auto& p : samples.points) {
      const double v = p.ops_per_clk_per_sm.median;
      if (!best.count(p.op) || v > best[p.op]->ops_per_clk_per_sm.median) best[p.op] = &p;
    }
    for (const auto& o : kOps) {
      if (!best.count(o.name)) continue;
      const auto& p = *best[o.name];
      const double v = p.ops_per_clk_per_sm.median;
      const double mhz = p.sm_clock_mhz_measured;
      const double peak = parameters.contains("peak_per_clk_per_sm")
                              ? parameters["peak_per_clk_per_sm"].value(o.name, 0.0)
                              : 0.0;
      const double work_per_s = p.ops_per_s_median * o.work_per_op;
      Finding f{"compute." + std::string(o.name) + ".throughput",
                v,
                o.unit,
                p.ops_per_clk_per_sm.precision(),
                "best of the accumulators x occupancy sweep: lane-instructions per SM cycle "
                "(median over SMs), output verified",
                json::object()};
      const std::string w = std::string(o.work) == "FLOP" ? "tflops" : "tops";
      f.extra[w] = work_per_s / 1e12;
      f.extra["accumulators"] = p.accumulators;
      f.extra["warps_per_sm"] = p.warps_per_sm;
      f.extra["sm_clock_mhz"] = mhz;
      if (peak > 0) {
        const double peak_work_per_s = peak * sms * mhz * 1e6 * o.work_per_op;
        f.extra["peak_per_clk_per_sm"] = peak;
        f.extra["peak_" + w] = peak_work_per_s / 1e12;
        // Achieved work per second over peak x SMs x the clock measured during the run.
        f.extra["percent_of_peak"] = peak_work_per_s > 0 ? work_per_s / peak_work_per_s * 100 : 0;
        f.extra["percent_of_peak_per_sm_cycles"] = v / peak * 100;
      }
      r.findings.push_back(f);
    }
  }
};
}  // namespace

void register_compute_experiments(Registry& registry) {
  registry.add(std::make_unique<ComputeLatency>());
  registry.add(std::make_unique<ComputeThroughput>());
}

}  // namespace gpuprobe::probes
