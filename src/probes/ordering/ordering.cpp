// Memory-ordering probes: what a fence costs, what a scoped atomic costs (latency and
// throughput, by scope and memory order), and whether a message-passing protocol between two
// SMs ever lets the consumer read stale data. CUDA runtime directly; waived on a modelled GPU.
#include "probes/ordering/ordering.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/confidence.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "measure/block_timing.hpp"
#include "measure/checks.hpp"
#include "measure/gpu.hpp"
#include "measure/replicates.hpp"
#include "probes/ordering/ordering_kernels.hpp"
#include "probes/ordering/ordering_samples.hpp"

namespace gpuprobe::probes {
namespace {

using nlohmann::json;
namespace ok = ordering;

constexpr const char* kModelWaiver =
    "needs a CUDA GPU: the modelled GPU has no memory-ordering model";

void synchronize() { GP_CUDA_CHECK(cudaDeviceSynchronize()); }

using stats::median_or_zero;

class OrderingExperiment : public Experiment {
 public:
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    return waive_on_model(info, kModelWaiver);
  }
};

/// Over a set of block/warp records: the wall span (%globaltimer) and the SM clock in MHz
/// (median over records of clock64 cycles / ns).
struct Span {
  double ns = 0;
  double clock_mhz = 0;
};

Span span_of(const std::vector<ok::TimeRecord>& recs) {
  const auto s = measure::summarize_blocks(recs, 0);
  return {s.elapsed_ns, s.clock_mhz};
}

// ---- ordering.fence --------------------------------------------------------------------------

struct FenceConfig {
  const char* name;
  int threads;
};
constexpr FenceConfig kFenceConfigs[] = {{"warp", 32}, {"sm", 1024}};
constexpr std::uint32_t kFenceIterations = 256;  // x kFenceUnroll = 2048 steps per thread

class OrderingFence : public OrderingExperiment {
 public:
  std::string id() const override { return "ordering.fence"; }
  int samples_version() const override { return ok::FenceSamples::kVersion; }
  std::string description() const override {
    return "cost of fence.acq_rel / fence.sc at cta, gpu and sys scope in cycles: a dependent "
           "loop of store + fence minus the same loop without the fence; one warp and a full "
           "block of 1024 threads on one SM";
  }
  std::vector<Axis> typed_axes() const override {
    std::vector<std::string> fences;
    for (auto f : ok::kAllFences) fences.push_back(ok::fence_name(f));
    return {fixed(string_axis("fence", fences, "the fence between the stores (none = baseline)")),
            fixed(string_axis("config", {"warp", "sm"},
                              "warp: 32 threads; sm: one block of 1024 threads"))};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const Gpu gpu = open_gpu(ctx.device);
    ok::DeviceBuffer<std::uint32_t> scratch(1024), out(1024);
    ok::DeviceBuffer<ok::TimeRecord> records(32);
    const std::uint64_t steps = static_cast<std::uint64_t>(kFenceIterations) * ok::kFenceUnroll;
    ok::FenceSamples samples;
    for (const auto& cfg : kFenceConfigs) {
      std::vector<std::uint32_t> expected(cfg.threads);
      for (int t = 0; t < cfg.threads; ++t) expected[t] = ok::fence_expected(t, steps);
      for (auto f : ok::kAllFences) {
        std::vector<double> worst, clocks;
        auto once = [&](int rep) {
          ok::launch_fence(f, cfg.threads, kFenceIterations, scratch.get(), out.get(),
                           records.get());
          synchronize();
          const auto o = out.download(cfg.threads);
          const auto s = scratch.download(cfg.threads);
          for (int t = 0; t < cfg.threads; ++t)
            if (o[t] != expected[t] || s[t] != expected[t])
              throw VerificationError("ordering.fence: thread " + std::to_string(t) + " (" +
                                      ok::fence_name(f) + ", " + cfg.name + ") ended with " +
                                      std::to_string(o[t]) + " / stored " + std::to_string(s[t]) +
                                      ", expected " + std::to_string(expected[t]));
          const auto recs = records.download(cfg.threads / 32);
          std::vector<double> per_warp;
          for (const auto& timing : recs)
            per_warp.push_back(static_cast<double>(timing.c1 - timing.c0) / steps);
          if (rep >= 0) {
            worst.push_back(*std::max_element(per_warp.begin(), per_warp.end()));
            clocks.push_back(span_of(recs).clock_mhz);
          }
          return stats::median(per_warp);
        };
        const auto m = repeat_until_stable(once, ctx.options.protocol);
        ok::FenceCase c;
        c.config = cfg.name;
        c.threads = cfg.threads;
        c.fence = ok::fence_name(f);
        c.steps_per_thread = steps;
        c.cycles_per_step = RecordedSummary::of(m);
        c.slowest_warp_cycles_per_step_median = median_or_zero(worst);
        c.sm_clock_mhz_measured = median_or_zero(clocks);
        samples.cases.push_back(c);
      }
    }
    r.parameters = {{"loop",
                     "per step: x = 3x + 1 (dependent), st.global.u32 of x to the thread's own "
                     "word, then the fence (asm volatile; none for the baseline); " +
                         std::to_string(ok::kFenceUnroll) + " steps unrolled per iteration"},
                    {"steps_per_thread", steps},
                    {"cycles_per_step",
                     "clock64 of each warp's lane 0 around the loop / steps; "
                     "median over warps"},
                    {"cost", "cycles_per_step(fence) - cycles_per_step(none), same config"},
                    {"sm_count", gpu.sm_count}};
    r.samples = samples;
    Curve c{"table", {"config", "fence", "cycles_per_step_median", "p5", "p95", "cost_cycles"}, {}};
    for (const auto& cs : samples.cases) {
      double base = 0;
      for (const auto& b : samples.cases)
        if (b.config == cs.config && b.fence == "none") base = b.cycles_per_step.median;
      const auto& m = cs.cycles_per_step;
      c.rows.push_back(
          {cs.config, cs.fence, m.median, m.p5_or_throw(), m.p95_or_throw(), m.median - base});
    }
    c.hints = table_hints("fence cost per configuration");
    r.curves.push_back(c);
  }
  void analyze(ExperimentResult& r) const override {
    const auto cases = samples_as<ok::FenceSamples>(r).cases;
    for (const auto& cs : cases) {
      if (cs.fence == "none") continue;
      const ok::FenceCase* base = nullptr;
      for (const auto& b : cases)
        if (b.config == cs.config && b.fence == "none") base = &b;
      if (!base) continue;
      const double with = cs.cycles_per_step.median;
      const double without = base->cycles_per_step.median;
      const double mhz = cs.sm_clock_mhz_measured;
      Finding f{"ordering.fence." + cs.fence + "." + cs.config, with - without, "cycles",
                // The cost is a difference of two medians: as sure as it is clear of both
                // loops' noise, and as precise as the slower loop's median.
                confidence::combine(
                    {gpuprobe::summary_separation(cs.cycles_per_step, base->cycles_per_step),
                     cs.cycles_per_step.precision()}),
                "median over warps of clock64 cycles per (store + fence) step minus the same "
                "loop without the fence (" +
                    cs.config + ", " + std::to_string(cs.threads) + " threads)",
                json::object()};
      f.extra["cycles_per_step_with_fence"] = with;
      f.extra["cycles_per_step_without_fence"] = without;
      f.extra["slowest_warp_cycles_per_step"] = cs.slowest_warp_cycles_per_step_median;
      if (mhz > 0) f.extra["value_ns"] = (with - without) / mhz * 1e3;
      f.extra["sm_clock_mhz"] = mhz;
      r.findings.push_back(f);
    }
  }
};

// ---- ordering.atomic -------------------------------------------------------------------------

constexpr std::uint32_t kLatencySteps = 4096;

std::uint32_t throughput_steps(ok::AtomicMode m) {
  switch (m) {
    case ok::AtomicMode::kIndependent:
      return 64;
    case ok::AtomicMode::kContendedBlock:
      return 16;
    case ok::AtomicMode::kContendedGrid:
      return 4;
  }
  return 1;
}

class OrderingAtomic : public OrderingExperiment {
 public:
  std::string id() const override { return "ordering.atomic"; }
  int samples_version() const override { return ok::AtomicSamples::kVersion; }
  std::string description() const override {
    return "cuda::atomic_ref<unsigned, scope>::fetch_add by scope (block, device, system) and "
           "order (relaxed, acq_rel, seq_cst): dependent-chain latency in cycles, and throughput "
           "(ops/s) at full occupancy on independent addresses, one address per block and one "
           "address for the whole grid; every count checked on the host";
  }
  std::vector<Axis> typed_axes() const override {
    return {
        fixed(string_axis("scope", {"block", "device", "system"}, "atomic scope")),
        fixed(string_axis("order", {"relaxed", "acq_rel", "seq_cst"}, "memory order")),
        fixed(string_axis("mode", {"latency", "independent", "contended_block", "contended_grid"},
                          "dependent chain, independent addresses, or one contended word"))};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const Gpu gpu = open_gpu(ctx.device);
    // Latency: one thread, a dependent chain on counters[0].
    ok::DeviceBuffer<std::uint32_t> lat_counters(32);
    ok::DeviceBuffer<unsigned long long> lat_sum(1);
    ok::DeviceBuffer<ok::TimeRecord> lat_rec(1);
    ok::AtomicSamples samples;
    const unsigned long long want_sum =
        static_cast<unsigned long long>(kLatencySteps) * (kLatencySteps - 1) / 2;
    for (auto s : ok::kAllScopes) {
      for (auto o : ok::kAllOrders) {
        std::vector<double> ns;
        auto once = [&](int rep) {
          lat_counters.zero();
          ok::launch_atomic_latency(s, o, kLatencySteps, 0u, lat_counters.get(), lat_sum.get(),
                                    lat_rec.get());
          synchronize();
          const auto c = lat_counters.download(1);
          const auto sum = lat_sum.download();
          if (c[0] != kLatencySteps || sum[0] != want_sum)
            throw VerificationError(
                std::string("ordering.atomic latency (") + ok::scope_name(s) + ", " +
                ok::order_name(o) + "): counter " + std::to_string(c[0]) + " (expected " +
                std::to_string(kLatencySteps) + "), sum of results " + std::to_string(sum[0]) +
                " (expected " + std::to_string(want_sum) + ")");
          const auto timing = lat_rec.download();
          if (rep >= 0)
            ns.push_back(static_cast<double>(timing[0].g1 - timing[0].g0) / kLatencySteps);
          return static_cast<double>(timing[0].c1 - timing[0].c0) / kLatencySteps;
        };
        const auto m = repeat_until_stable(once, ctx.options.protocol);
        ok::AtomicLatency l;
        l.scope = ok::scope_name(s);
        l.order = ok::order_name(o);
        l.steps = kLatencySteps;
        l.cycles_per_op = RecordedSummary::of(m);
        l.ns_per_op_median = median_or_zero(ns);
        samples.latency.push_back(l);
      }
    }
    // Throughput: full occupancy, 1024-thread blocks.
    const int threads = 1024;
    const int per_sm = std::max(1, gpu.max_threads_per_sm / threads);
    const int blocks = per_sm * gpu.sm_count;
    const std::uint64_t total_threads = static_cast<std::uint64_t>(blocks) * threads;
    // Each (mode, scope, order) is measured as kReplicates independent replicates, each with
    // fresh counters and launches; the repetitions are shared among them. One replicate's
    // repetitions agree far more closely than runs do (issue 9, "Run to run").
    const ProtocolOptions per_rep = measure::per_replicate(ctx.options.protocol);
    // Every replicate's counters are allocated up front and held to the end: a block freed and
    // allocated again comes back at the same place, and placement is what moves between runs.
    struct Counters {
      Counters(std::uint64_t threads, int blocks)
          : counters(threads), sums(threads), recs(static_cast<std::size_t>(blocks)) {}
      ok::DeviceBuffer<std::uint32_t> counters;
      ok::DeviceBuffer<unsigned long long> sums;
      ok::DeviceBuffer<ok::TimeRecord> recs;
    };
    std::vector<std::unique_ptr<Counters>> held;
    for (int j = 0; j < measure::kReplicates; ++j)
      held.push_back(std::make_unique<Counters>(total_threads, blocks));
    for (auto mode : {ok::AtomicMode::kIndependent, ok::AtomicMode::kContendedBlock,
                      ok::AtomicMode::kContendedGrid}) {
      const std::uint32_t steps = throughput_steps(mode);
      const double ops = static_cast<double>(total_threads) * steps;
      for (auto s : ok::kAllScopes) {
        // A block-scope atomic is atomic only among the threads of one block: a grid-wide
        // counter updated at block scope is a race by the memory model, not a measurement.
        if (s == ok::AtomicScope::kBlock && mode == ok::AtomicMode::kContendedGrid) continue;
        for (auto o : ok::kAllOrders) {
          std::vector<double> clocks, per_clk, pooled;
          std::vector<RecordedSummary> replicates;
          measure::replicate(measure::kReplicates, [&](int j) {
            auto& counters = held[static_cast<std::size_t>(j)]->counters;
            auto& sums = held[static_cast<std::size_t>(j)]->sums;
            auto& recs = held[static_cast<std::size_t>(j)]->recs;
            auto once = [&](int rep) {
              counters.zero();
              ok::launch_atomic_throughput(s, o, mode, blocks, threads, steps, counters.get(),
                                           sums.get(), recs.get());
              synchronize();
              verify_throughput(mode, s, o, blocks, threads, steps, counters.download(),
                                sums.download());
              const auto span = span_of(recs.download());
              if (span.ns <= 0) throw VerificationError("ordering.atomic: no %globaltimer span");
              if (rep >= 0) {
                clocks.push_back(span.clock_mhz);
                if (span.clock_mhz > 0) per_clk.push_back(ops / (span.ns * span.clock_mhz * 1e-3));
              }
              return ops / span.ns * 1e9;
            };
            const auto m = repeat_until_stable(once, per_rep);
            pooled.insert(pooled.end(), m.values.begin(), m.values.end());
            replicates.push_back(RecordedSummary::of(m));
            return 0;
          });
          ok::AtomicThroughput t;
          t.mode = ok::mode_name(mode);
          t.scope = ok::scope_name(s);
          t.order = ok::order_name(o);
          t.steps_per_thread = steps;
          t.ops_per_launch = ops;
          t.ops_per_s = RecordedSummary::of(stats::summarize(pooled));
          t.ops_per_s_replicates = replicates;
          t.ops_per_clk_gpu_median = median_or_zero(per_clk);
          t.sm_clock_mhz_measured = median_or_zero(clocks);
          samples.throughput.push_back(t);
        }
      }
    }
    r.parameters = {{"latency",
                     "one thread; old = atomic_ref(counters[idx]).fetch_add(1, order); "
                     "idx = old & mask (mask = 0 at run time) so each address waits for "
                     "the previous result; clock64 around " +
                         std::to_string(kLatencySteps) + " steps"},
                    {"throughput", "every SM at full occupancy (" + std::to_string(blocks) + " x " +
                                       std::to_string(threads) +
                                       " threads); results summed so that "
                                       "fetch_add stays a fetch (ATOM, not RED); ops/s = ops / "
                                       "(last block end - first block start, %globaltimer)"},
                    {"modes",
                     {{"independent", "thread i: counters[i] (adjacent 4-B words)"},
                      {"contended_block", "all threads of block b: counters[32 b]"},
                      {"contended_grid",
                       "all threads: counters[0] (device and system "
                       "scope only: block scope is not atomic across blocks)"}}},
                    {"checks",
                     "every counter equals the increments it got, and the results "
                     "returned on each counter are exactly 0..n-1 (their sum is n(n-1)/2)"},
                    {"sm_count", gpu.sm_count}};
    r.samples = samples;
    Curve lc{"latency", {"scope", "order", "cycles_per_op_median", "p5", "p95", "ns_per_op"}, {}};
    for (const auto& l : samples.latency)
      lc.rows.push_back({l.scope, l.order, l.cycles_per_op.median, l.cycles_per_op.p5_or_throw(),
                         l.cycles_per_op.p95_or_throw(), l.ns_per_op_median});
    lc.hints = table_hints("atomic latency per scope and order");
    r.curves.push_back(lc);
    Curve tc{"throughput",
             {"mode", "scope", "order", "ops_per_s_median", "p5", "p95", "ops_per_clk_gpu"},
             {}};
    for (const auto& t : samples.throughput)
      tc.rows.push_back({t.mode, t.scope, t.order, t.ops_per_s.median, t.ops_per_s.p5_or_throw(),
                         t.ops_per_s.p95_or_throw(), t.ops_per_clk_gpu_median});
    tc.hints = table_hints("atomic throughput per mode, scope and order");
    r.curves.push_back(tc);
  }
  void analyze(ExperimentResult& r) const override {
    const auto samples = samples_as<ok::AtomicSamples>(r);
    for (const auto& l : samples.latency) {
      Finding f{"ordering.atomic.latency." + l.scope + "." + l.order,
                l.cycles_per_op.median,
                "cycles",
                l.cycles_per_op.precision(),
                "one thread, dependent chain of fetch_add(1) on global memory (each result "
                "selects the next address); clock64 / steps, loop overhead included",
                json::object()};
      f.extra["value_ns"] = l.ns_per_op_median;
      r.findings.push_back(f);
    }
    for (const auto& t : samples.throughput) {
      // Results written before replicates existed hold one summary.
      std::vector<json> reps;
      for (const auto& rep : t.ops_per_s_replicates.value_or(std::vector{t.ops_per_s}))
        reps.push_back(rep);
      const auto rs = confidence::summarize_replicate_summaries(reps);
      Finding f{
          "ordering.atomic.throughput." + t.mode + "." + t.scope + "." + t.order,
          rs.replicates == 1 ? t.ops_per_s.median : rs.value,
          "ops/s",
          rs.precision,
          std::string("fetch_add(1) by every thread of a full-occupancy grid; ops / "
                      "%globaltimer span; median over independent replicates (fresh "
                      "counters) of the median over repetitions") +
              (t.mode == "independent"
                   ? ""
                   : "; ops are lane operations: nvcc combines a warp's fetch_adds to one address "
                     "(sm_90a SASS: VOTE.ANY + SHFL.UP scan + one ATOM per warp), so the memory "
                     "system sees about 1/32 as many atomics"),
          json::object()};
      const double per_clk = t.ops_per_clk_gpu_median;
      f.extra["ops_per_clk_gpu"] = per_clk;
      if (per_clk > 0) f.extra["cycles_per_op_gpu"] = 1.0 / per_clk;
      f.extra["sm_clock_mhz"] = t.sm_clock_mhz_measured;
      f.extra["replicates"] = confidence::to_json(rs);
      r.findings.push_back(f);
    }
  }

 private:
  static void verify_throughput(ok::AtomicMode mode, ok::AtomicScope s, ok::AtomicOrder o,
                                int blocks, int threads, std::uint32_t steps,
                                const std::vector<std::uint32_t>& c,
                                const std::vector<unsigned long long>& sums) {
    const std::string where = std::string("ordering.atomic throughput (") + ok::mode_name(mode) +
                              ", " + ok::scope_name(s) + ", " + ok::order_name(o) + "): ";
    auto tri = [](unsigned long long n) { return n * (n - 1) / 2; };
    const std::size_t total = static_cast<std::size_t>(blocks) * threads;
    if (mode == ok::AtomicMode::kIndependent) {
      for (std::size_t t = 0; t < total; ++t)
        if (c[t] != steps || sums[t] != tri(steps))
          throw VerificationError(where + "thread " + std::to_string(t) + ": counter " +
                                  std::to_string(c[t]) + ", sum of results " +
                                  std::to_string(sums[t]) + " (expected " + std::to_string(steps) +
                                  ", " + std::to_string(tri(steps)) + ")");
    } else if (mode == ok::AtomicMode::kContendedBlock) {
      const unsigned long long n = static_cast<unsigned long long>(threads) * steps;
      for (int b = 0; b < blocks; ++b) {
        unsigned long long sum = 0;
        for (int t = 0; t < threads; ++t) sum += sums[static_cast<std::size_t>(b) * threads + t];
        const std::uint32_t cnt = c[static_cast<std::size_t>(b) * 32];
        if (cnt != n || sum != tri(n))
          throw VerificationError(where + "block " + std::to_string(b) + ": counter " +
                                  std::to_string(cnt) + ", sum of results " + std::to_string(sum) +
                                  " (expected " + std::to_string(n) + ", " +
                                  std::to_string(tri(n)) + ")");
      }
    } else {
      const unsigned long long n = static_cast<unsigned long long>(total) * steps;
      unsigned long long sum = 0;
      for (auto x : sums) sum += x;
      if (c[0] != n || sum != tri(n))
        throw VerificationError(where + "counter " + std::to_string(c[0]) + ", sum of results " +
                                std::to_string(sum) + " (expected " + std::to_string(n) + ", " +
                                std::to_string(tri(n)) + ")");
    }
  }
};

// ---- ordering.litmus -------------------------------------------------------------------------

constexpr std::uint32_t kLitmusIterations = 100000;
constexpr std::uint64_t kLitmusTimeoutNs = 50'000'000;  // per spin

const char* litmus_protocol(ok::LitmusVariant v) {
  switch (v) {
    case ok::LitmusVariant::kReleaseAcquire:
      return "producer: st.global data; st.release.gpu flag. consumer: ld.acquire.gpu flag (spin); "
             "ld.global data";
    case ok::LitmusVariant::kFence:
      return "producer: st.global data; fence.acq_rel.gpu; st.relaxed.gpu flag. consumer: "
             "ld.relaxed.gpu flag (spin); fence.acq_rel.gpu; ld.global data";
    case ok::LitmusVariant::kRelaxed:
      return "producer: st.global data; st.relaxed.gpu flag. consumer: ld.relaxed.gpu flag (spin); "
             "ld.global data (no fence anywhere)";
    case ok::LitmusVariant::kVolatile:
      return "producer: st.volatile data; st.volatile flag. consumer: ld.volatile flag (spin); "
             "ld.volatile data (no fence)";
    case ok::LitmusVariant::kWeak:
      return "producer: st.global data; st.global flag. consumer: ld.global flag (spin); ld.global "
             "data (plain weak accesses, no fence)";
  }
  return "?";
}

class OrderingLitmus : public OrderingExperiment {
 public:
  std::string id() const override { return "ordering.litmus"; }
  int samples_version() const override { return ok::LitmusSamples::kVersion; }
  std::string description() const override {
    return "message passing between two blocks on different SMs (data, then flag; the consumer "
           "spins on the flag, then reads the data), 100k alternating iterations: release/acquire "
           "and fenced protocols must never read stale data; relaxed, volatile and plain ones "
           "report what was observed";
  }
  std::vector<Axis> typed_axes() const override {
    std::vector<std::string> v;
    for (auto x : ok::kAllLitmus) v.push_back(ok::litmus_name(x));
    return {fixed(string_axis("variant", v, "litmus test")),
            fixed(int_axis("iterations", {kLitmusIterations}, "rounds", "rounds per variant"))};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const Gpu gpu = open_gpu(ctx.device);
    const std::uint32_t smem = ok::litmus_prepare(gpu.ordinal);
    ok::DeviceBuffer<std::uint32_t> words(ok::kLitmusWords);
    ok::DeviceBuffer<ok::LitmusResult> result(1);
    ok::LitmusSamples samples;
    std::string violation;
    for (auto v : ok::kAllLitmus) {
      words.zero();
      result.zero();
      ok::launch_litmus(v, kLitmusIterations, kLitmusTimeoutNs, smem, words.get(), result.get());
      synchronize();
      const auto res = result.download()[0];
      const auto w = words.download();
      const bool sync = ok::litmus_is_synchronizing(v);
      const double ns = res.g1 > res.g0 ? static_cast<double>(res.g1 - res.g0) : 0;
      ok::LitmusRun run;
      run.variant = ok::litmus_name(v);
      run.protocol = litmus_protocol(v);
      run.synchronizing = sync;
      run.iterations = kLitmusIterations;
      run.completed = res.completed;
      run.stale_reads = res.stale;
      run.timed_out = res.timed_out != 0;
      run.first_stale_iteration = res.first_stale_iteration;
      run.first_stale_value = res.first_stale_value;
      run.producer_smid = res.smid[0];
      run.consumer_smid = res.smid[1];
      run.final_data = w[ok::kLitmusData];
      run.final_flag = w[ok::kLitmusFlag];
      run.final_ack = w[ok::kLitmusAck];
      run.ns_per_iteration = res.completed ? ns / res.completed : 0.0;
      samples.variants.push_back(run);
      // Host checks: a complete run leaves data = flag = ack = iterations.
      if (!res.timed_out &&
          (res.completed != kLitmusIterations || w[ok::kLitmusData] != kLitmusIterations ||
           w[ok::kLitmusFlag] != kLitmusIterations || w[ok::kLitmusAck] != kLitmusIterations))
        throw VerificationError(
            std::string("ordering.litmus ") + ok::litmus_name(v) +
            ": the run did not end in the state the protocol implies (completed " +
            std::to_string(res.completed) + ", data " + std::to_string(w[ok::kLitmusData]) +
            ", flag " + std::to_string(w[ok::kLitmusFlag]) + ", ack " +
            std::to_string(w[ok::kLitmusAck]) + ")");
      if (res.smid[0] == res.smid[1])
        throw VerificationError(std::string("ordering.litmus ") + ok::litmus_name(v) +
                                ": producer and consumer ran on the same SM " +
                                std::to_string(res.smid[0]));
      if (sync && (res.stale || res.timed_out) && violation.empty())
        violation = std::string(ok::litmus_name(v)) + ": " + std::to_string(res.stale) +
                    " stale reads, timed out: " + (res.timed_out ? "yes" : "no") +
                    " (first stale at iteration " + std::to_string(res.first_stale_iteration) +
                    ", value " + std::to_string(res.first_stale_value) + ")";
    }
    r.parameters = {
        {"iterations", kLitmusIterations},
        {"timeout_ns_per_spin", kLitmusTimeoutNs},
        {"layout", "data, flag, ack and abort words 256 B apart (different 128-B lines)"},
        {"handshake",
         "the producer writes iteration k only after ld.acquire.gpu of ack == k-1; "
         "the consumer st.release.gpu's ack = k after reading data (this "
         "channel is correct in every variant)"},
        {"placement", "2 blocks, each with " + std::to_string(smem) +
                          " B of dynamic shared memory, so that no SM can hold both"},
        {"stale", "the consumer saw flag == k but read data != k"},
        {"sm_count", gpu.sm_count}};
    r.samples = samples;
    Curve c{
        "table",
        {"variant", "synchronizing", "completed", "stale_reads", "timed_out", "ns_per_iteration"},
        {}};
    for (const auto& x : samples.variants)
      c.rows.push_back({x.variant, x.synchronizing ? 1 : 0, x.completed, x.stale_reads,
                        x.timed_out ? 1 : 0, x.ns_per_iteration});
    c.hints = table_hints("litmus outcomes per variant");
    r.curves.push_back(c);
    if (!violation.empty())
      throw VerificationError(
          "ordering.litmus: a correctly synchronized protocol read stale data or hung: " +
          violation);
  }
  void analyze(ExperimentResult& r) const override {
    for (const auto& x : samples_as<ok::LitmusSamples>(r).variants) {
      const bool sync = x.synchronizing;
      const auto stale = static_cast<double>(x.stale_reads);
      const bool timed_out = x.timed_out;
      std::string method = "count of consumer reads that saw flag == k but data != k over " +
                           std::to_string(static_cast<std::uint32_t>(x.completed)) +
                           " completed iterations; " + x.protocol;
      if (sync)
        method += ". Guaranteed zero by the PTX memory model";
      else
        method +=
            ". Not synchronized: stale reads are allowed; a count of zero is a legitimate "
            "observation (this run, this GPU), not a guarantee";
      if (timed_out) method += ". A spin timed out: the consumer never saw the flag (run aborted)";
      // The evidence is the iterations that completed and were checked, out of those planned
      // (a run cut short by a spin timeout has less of it; one with none has no finding).
      const auto completed = static_cast<std::size_t>(x.completed);
      const auto planned = r.parameters.value("iterations", completed);
      if (completed == 0) {
        r.statistics["not_reported"]["ordering.litmus." + x.variant + ".stale_reads"] =
            "no iteration completed (a spin timed out first): no evidence either way";
        continue;
      }
      Finding f{"ordering.litmus." + x.variant + ".stale_reads",
                stale,
                "reads",
                confidence::agreement(completed, std::max(planned, completed)),
                method,
                json::object()};
      f.extra["completed"] = x.completed;
      f.extra["timed_out"] = timed_out;
      f.extra["synchronizing"] = sync;
      f.extra["ns_per_iteration"] = x.ns_per_iteration;
      f.extra["smids"] = {x.producer_smid, x.consumer_smid};
      r.findings.push_back(f);
    }
  }
};

}  // namespace

void register_ordering_experiments(Registry& registry) {
  registry.add(std::make_unique<OrderingFence>());
  registry.add(std::make_unique<OrderingAtomic>());
  registry.add(std::make_unique<OrderingLitmus>());
}

}  // namespace gpuprobe::probes
