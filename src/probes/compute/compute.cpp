// Shared-memory, compute-pipe and timer probes: bank conflicts against the host bank model,
// shared-memory bandwidth per SM, dependent-chain latency and peak throughput of FFMA, HFMA2,
// IMAD and DFMA, and the cost and resolution of the GPU's timers. These use the CUDA runtime
// directly (the Device seam covers latency only) and are waived on a modelled GPU.
#include "probes/compute/compute.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "analysis/bank_model.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "counters/counters.hpp"
#include "probes/compute/compute_kernels.hpp"
#include "measure/gpu.hpp"

namespace gpuprobe::probes {
namespace {

using nlohmann::json;
namespace kn = kernels;

constexpr const char* kModelWaiver = "needs a CUDA GPU: the modelled GPU has no pipe model";

void synchronize() { GP_CUDA_CHECK(cudaDeviceSynchronize()); }

class CudaEvent {
 public:
  CudaEvent() { GP_CUDA_CHECK(cudaEventCreate(&e_)); }
  ~CudaEvent() {
    if (e_) cudaEventDestroy(e_);
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

double event_ns(const CudaEvent& a, const CudaEvent& b) {
  float ms = 0;
  GP_CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
  return static_cast<double>(ms) * 1e6;
}

/// One launch's block records reduced to per-SM rates: work per cycle of each SM (the work of
/// its blocks over the span from its first block's start to its last block's end, in that SM's
/// clock64), the SM clock (cycles over %globaltimer ns, median over blocks) and the wall span.
struct LaunchSummary {
  double rate_median = 0;  ///< work per cycle per SM, median over SMs
  double rate_min = 0;
  double clock_mhz = 0;
  double elapsed_ns = 0;  ///< last %globaltimer end - first start, over all blocks
  int sms = 0;
  int min_blocks_per_sm = 0, max_blocks_per_sm = 0;
  std::uint64_t bad = 0;
};

LaunchSummary summarize_blocks(const std::vector<kn::BlockRecord>& records, double work_per_block) {
  struct Sm {
    int blocks = 0;
    std::uint64_t c0 = std::numeric_limits<std::uint64_t>::max(), c1 = 0;
  };
  std::map<std::uint32_t, Sm> sms;
  std::vector<double> clocks;
  std::uint64_t g0 = std::numeric_limits<std::uint64_t>::max(), g1 = 0;
  LaunchSummary s;
  for (const auto& r : records) {
    auto& sm = sms[r.smid];
    ++sm.blocks;
    sm.c0 = std::min(sm.c0, r.c0);
    sm.c1 = std::max(sm.c1, r.c1);
    g0 = std::min(g0, r.g0);
    g1 = std::max(g1, r.g1);
    if (r.g1 > r.g0 && r.c1 > r.c0)
      clocks.push_back(static_cast<double>(r.c1 - r.c0) / static_cast<double>(r.g1 - r.g0) * 1e3);
    s.bad += r.bad;
  }
  std::vector<double> rates;
  s.min_blocks_per_sm = std::numeric_limits<int>::max();
  for (const auto& [id, sm] : sms) {
    if (sm.c1 > sm.c0)
      rates.push_back(work_per_block * sm.blocks / static_cast<double>(sm.c1 - sm.c0));
    s.min_blocks_per_sm = std::min(s.min_blocks_per_sm, sm.blocks);
    s.max_blocks_per_sm = std::max(s.max_blocks_per_sm, sm.blocks);
  }
  if (sms.empty()) s.min_blocks_per_sm = 0;
  s.sms = static_cast<int>(sms.size());
  if (!rates.empty()) {
    s.rate_median = stats::median(rates);
    s.rate_min = *std::min_element(rates.begin(), rates.end());
  }
  if (!clocks.empty()) s.clock_mhz = stats::median(clocks);
  if (g1 > g0) s.elapsed_ns = static_cast<double>(g1 - g0);
  return s;
}

using stats::median_or_zero;
using stats::spread_confidence;

class CudaExperiment : public Experiment {
 public:
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    return waive_on_model(info, kModelWaiver);
  }
};

std::vector<int> word_sizes_of(const RunOptions& o) {
  std::set<int> s(o.word_sizes.begin(), o.word_sizes.end());
  if (s.empty()) s = {4, 8, 16};
  return {s.begin(), s.end()};
}

void check_word_sizes(const RunOptions& o) {
  for (int w : o.word_sizes)
    if (!analysis::valid_word_bytes(w))
      throw UsageError("word size " + std::to_string(w) +
                       " B is not allowed for shared-memory loads; use 4, 8 or 16 (--word-sizes)");
}

// ---- smem.bank_conflicts ----------------------------------------------------------------------

struct BankMode {
  const char* name;
  int threads;
  int chains;
  std::uint32_t iterations;
  const char* what;
};

// "block" is the throughput the N-way is derived from: 32 warps x 4 chains keep the shared
// pipe busy, so cycles per warp-wide access = wavefronts x cycles per wavefront. One warp alone
// is shown too: its stream (32 chains) may be limited by issue, its dependent chain by latency.
constexpr BankMode kBankModes[] = {
    {"block", 1024, 4, 1024,
     "one block of 32 warps on one SM, 4 independent self-loop chains per thread (throughput)"},
    {"warp_stream", 32, 32, 256,
     "one warp, 32 independent self-loop chains per thread (one warp's throughput)"},
    {"warp_chain", 32, 1, 2048, "one warp, one dependent self-loop chain per thread (latency)"},
};
constexpr std::uint32_t kBankChainOffset = 128;  // keeps every chain's bank pattern

std::vector<int> bank_strides(const RunOptions& o) {
  std::set<int> s(o.strides.begin(), o.strides.end());
  if (s.empty())
    for (int i = 1; i <= 32; ++i) s.insert(i);
  s.insert(1);  // the conflict-free baseline of every word size
  return {s.begin(), s.end()};
}

/// The measured table next to the model, from the samples (pure).
json bank_rows(const json& cases) {
  std::map<std::pair<int, int>, json> medians;  // (word, stride) -> {mode: median cycles}
  std::map<std::pair<std::string, int>, double> baseline;  // (mode, word) -> stride-1 cycles
  for (const auto& c : cases) {
    const int w = c.at("word_bytes"), s = c.at("stride");
    const std::string mode = c.at("mode");
    const double med = c.at("cycles_per_access").at("median").get<double>();
    medians[{w, s}][mode] = med;
    if (s == 1) baseline[{mode, w}] = med;
  }
  json rows = json::array();
  for (const auto& [key, m] : medians) {
    const auto [w, s] = key;
    const auto model = analysis::strided_access(s, w);
    json row = {{"word_bytes", w},
                {"stride", s},
                {"model_ways", model.ways},
                {"model_wavefronts", model.wavefronts},
                {"model_phases", model.phases}};
    for (const auto& mode : kBankModes) {
      if (!m.contains(mode.name)) continue;
      const double cycles = m.at(mode.name).get<double>();
      const auto b = baseline.find({mode.name, w});
      const double base = b != baseline.end() ? b->second : 0;
      row[std::string(mode.name) + "_cycles"] = cycles;
      row[std::string(mode.name) + "_ratio"] = base > 0 ? cycles / base : 0;
    }
    if (row.contains("block_ratio")) {
      const double ratio = row["block_ratio"].get<double>();
      row["measured_ways"] = ratio;
      row["agrees"] = std::lround(ratio) == model.ways;
    }
    if (row.contains("warp_stream_ratio"))
      row["warp_stream_agrees"] = std::lround(row["warp_stream_ratio"].get<double>()) == model.ways;
    if (row.contains("warp_chain_cycles") && baseline.count({"warp_chain", w}))
      row["warp_chain_extra_cycles"] =
          row["warp_chain_cycles"].get<double>() - baseline.at({"warp_chain", w});
    rows.push_back(row);
  }
  return rows;
}

Curve bank_curve(const json& rows) {
  Curve c{"table",
          {"word_bytes", "stride", "model_ways", "model_wavefronts", "block_cycles_per_access",
           "measured_ways", "agrees", "warp_stream_cycles_per_access", "warp_stream_ratio",
           "warp_chain_cycles_per_access", "warp_chain_extra_cycles"},
          {}};
  for (const auto& r : rows)
    c.rows.push_back({r.at("word_bytes"), r.at("stride"), r.at("model_ways"),
                      r.at("model_wavefronts"), r.value("block_cycles", 0.0),
                      r.value("measured_ways", 0.0), r.value("agrees", false) ? 1 : 0,
                      r.value("warp_stream_cycles", 0.0), r.value("warp_stream_ratio", 0.0),
                      r.value("warp_chain_cycles", 0.0), r.value("warp_chain_extra_cycles", 0.0)});
  c.hints = chart_hints("measured N-way bank conflict against the bank model", "stride", "words",
                        "measured_ways", "ways", true)
                .by({"word_bytes"})
                .with_model({"model_ways"});
  return c;
}

class SmemBankConflicts : public CudaExperiment {
 public:
  std::string id() const override { return "smem.bank_conflicts"; }
  std::string description() const override {
    return "warp-wide shared loads at word index lane*stride (4-, 8-, 16-byte words, stride "
           "1..32): cycles per access and measured N-way against the host bank model";
  }
  json axes() const override {
    return {{"stride_words", "1..32 (--strides; stride 1 is always measured as the baseline)"},
            {"word_bytes", {4, 8, 16}},
            {"mode", {"block", "warp_stream", "warp_chain"}}};
  }
  void validate(const device::Device&, const RunOptions& o) const override {
    for (int s : o.strides)
      if (s < 1 || s > 32)
        throw UsageError("stride " + std::to_string(s) +
                         " is not allowed for smem.bank_conflicts; use 1..32 words (--strides)");
    check_word_sizes(o);
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const Gpu gpu = open_gpu(ctx.device);
    kn::DeviceArray<kn::BlockRecord> records(1);
    json cases = json::array();
    const auto words = word_sizes_of(ctx.options);
    const auto strides = bank_strides(ctx.options);
    for (int w : words) {
      for (int s : strides) {
        for (const auto& mode : kBankModes) {
          kn::SmemLaunch l;
          l.word_bytes = w;
          l.chains = mode.chains;
          l.stride_bytes = static_cast<std::uint32_t>(s * w);
          l.chain_offset_bytes = kBankChainOffset;
          l.threads_per_block = mode.threads;
          l.iterations = mode.iterations;
          const double accesses =
              static_cast<double>(mode.threads / 32) * mode.chains * mode.iterations;
          auto once = [&](int) {
            kn::launch_smem_chase(l, records.get(), nullptr);
            synchronize();
            const auto rec = records.to_host();
            if (rec[0].bad)
              throw VerificationError("smem.bank_conflicts: " + std::to_string(rec[0].bad) +
                                      " threads' chains did not return to their start (" +
                                      std::to_string(w) + " B, stride " + std::to_string(s) + ")");
            return static_cast<double>(rec[0].c1 - rec[0].c0) / accesses;
          };
          const auto m = repeat_until_stable(once, ctx.options.protocol);
          cases.push_back({{"word_bytes", w},
                           {"stride", s},
                           {"mode", mode.name},
                           {"threads", mode.threads},
                           {"chains_per_thread", mode.chains},
                           {"loads_per_chain", mode.iterations},
                           {"cycles_per_access", to_json(m)}});
        }
      }
    }
    json modes = json::array();
    for (const auto& m : kBankModes)
      modes.push_back({{"mode", m.name},
                       {"threads", m.threads},
                       {"chains_per_thread", m.chains},
                       {"loads_per_chain", m.iterations},
                       {"what", m.what}});
    r.parameters = {{"word_bytes", words},
                    {"strides", strides},
                    {"modes", modes},
                    {"chain_offset_bytes", kBankChainOffset},
                    {"access",
                     "lane l reads the word at byte l * stride * word_bytes (+ a "
                     "multiple of 128 B per chain); ld.volatile.shared.{u32,v2.u32,v4.u32}"},
                    {"cycles_per_access",
                     "clock64 of thread 0 from a barrier before the loads to a "
                     "barrier counting wrong chains after them, over warps x "
                     "chains x loads; no overhead subtracted"},
                    {"measured_ways",
                     "block cycles per access / block cycles at stride 1 (the "
                     "1-way baseline) of the same word size"},
                    {"model",
                     "32 banks x 4 B; 4-B words one 32-thread phase, 8-B two 16-thread "
                     "phases, 16-B four 8-thread phases; N-way = max over phases and "
                     "banks of distinct 4-byte words (same word = broadcast)"},
                    {"gpu", to_json(gpu)}};
    r.samples = {{"cases", cases}};
    r.curves.push_back(bank_curve(bank_rows(cases)));
    if (counters::requested(ctx)) {  // shared-load wavefronts against the bank model
      counters::Declaration d;
      const auto& mode = kBankModes[1];  // one warp: every wavefront is this pattern's
      for (int w : words)
        for (int s : strides) {
          kn::SmemLaunch l;
          l.word_bytes = w;
          l.chains = mode.chains;
          l.stride_bytes = static_cast<std::uint32_t>(s * w);
          l.chain_offset_bytes = kBankChainOffset;
          l.threads_per_block = mode.threads;
          l.iterations = mode.iterations;
          d.probes.push_back(
              {std::to_string(w) + " B words, stride " + std::to_string(s),
               {{"word_bytes", w}, {"stride", s}, {"mode", mode.name}},
               [l, &records] {
                 kn::launch_smem_chase(l, records.get(), nullptr);
                 synchronize();
               },
               {{"shared-load wavefronts per instruction",
                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                 "smsp__inst_executed_op_shared_ld.sum", "wavefronts",
                 static_cast<double>(analysis::strided_access(s, w).wavefronts), 0.1, true,
                 "bank model: 32 banks x 4 B, phases by word size, same word broadcast"}}});
        }
      r.samples["counters"] = counters::collect(ctx, d);
    }
  }
  void analyze(ExperimentResult& r) const override {
    counters::cross_check(r);
    const json rows = bank_rows(r.samples.at("cases"));
    int total = 0, agree = 0, stream_total = 0, stream_agree = 0;
    double worst_dev = 0;
    json disagreements = json::array();
    std::vector<double> per_wavefront, warp_per_wavefront, warp_cycles, chain_per_extra;
    for (const auto& row : rows) {
      const double wavefronts = row.at("model_wavefronts").get<double>();
      const double phases = row.at("model_phases").get<double>();
      // One warp alone: its stream's cost per wavefront where conflicts dominate (>= 8
      // wavefronts), its fastest access, and the latency each extra wavefront adds to a chain.
      if (row.contains("warp_stream_cycles")) {
        warp_cycles.push_back(row.at("warp_stream_cycles").get<double>());
        if (wavefronts >= 8) warp_per_wavefront.push_back(warp_cycles.back() / wavefronts);
      }
      if (row.contains("warp_chain_extra_cycles") && wavefronts > phases)
        chain_per_extra.push_back(row.at("warp_chain_extra_cycles").get<double>() /
                                  (wavefronts - phases));
      if (row.contains("agrees")) {
        ++total;
        const double measured = row.at("measured_ways").get<double>();
        const int model = row.at("model_ways").get<int>();
        worst_dev = std::max(worst_dev, std::fabs(measured - model) / model);
        per_wavefront.push_back(row.at("block_cycles").get<double>() /
                                row.at("model_wavefronts").get<double>());
        if (row.at("agrees").get<bool>()) {
          ++agree;
        } else {
          disagreements.push_back({{"word_bytes", row.at("word_bytes")},
                                   {"stride", row.at("stride")},
                                   {"model_ways", model},
                                   {"measured_ways", measured}});
        }
      }
      if (row.contains("warp_stream_agrees")) {
        ++stream_total;
        stream_agree += row.at("warp_stream_agrees").get<bool>() ? 1 : 0;
      }
    }
    r.statistics["table"] = rows;
    if (total == 0) return;
    Finding f{"smem.bank_model_agreement",
              static_cast<double>(agree) / total,
              "fraction",
              1.0 / (1.0 + worst_dev / 0.05),
              "fraction of (word size, stride) cases whose measured N-way (block throughput "
              "cycles / stride-1 cycles), rounded, equals the host bank model's N-way",
              json::object()};
    f.extra["cases"] = total;
    f.extra["agreeing"] = agree;
    f.extra["disagreements"] = disagreements;
    f.extra["max_relative_deviation"] = worst_dev;
    if (stream_total)
      f.extra["warp_stream_agreement"] = static_cast<double>(stream_agree) / stream_total;
    r.findings.push_back(f);
    const auto s = stats::summarize(per_wavefront);
    Finding wf{"smem.wavefront_cycles",
               s.median,
               "cycles",
               s.median > 0 ? stats::confidence_from_spread((s.p95 - s.p5) / s.median) : 0,
               "median over cases of block cycles per access / model wavefronts (128 B each)",
               json::object()};
    wf.extra["p5"] = s.p5;
    wf.extra["p95"] = s.p95;
    if (!warp_per_wavefront.empty())
      wf.extra["one_warp_stream_cycles_per_wavefront"] = stats::median(warp_per_wavefront);
    if (!warp_cycles.empty())
      wf.extra["one_warp_stream_min_cycles_per_access"] =
          *std::min_element(warp_cycles.begin(), warp_cycles.end());
    if (!chain_per_extra.empty())
      wf.extra["one_warp_chain_latency_per_extra_wavefront"] = stats::median(chain_per_extra);
    r.findings.push_back(wf);
  }
};

// ---- smem.bandwidth ---------------------------------------------------------------------------

constexpr int kBandwidthChains = 4;
constexpr double kBandwidthCyclesPerLaunch = 2.0e6;  // per SM; block start skew < 0.1%

class SmemBandwidth : public CudaExperiment {
 public:
  std::string id() const override { return "smem.bandwidth"; }
  std::string description() const override {
    return "conflict-free shared loads on every SM at full occupancy: bytes per clock per SM "
           "(16-B vector loads for the finding; 4 and 8 B shown too)";
  }
  json axes() const override { return {{"word_bytes", {4, 8, 16}}}; }
  void validate(const device::Device&, const RunOptions& o) const override { check_word_sizes(o); }
  void run(Context& ctx, ExperimentResult& r) const override {
    const Gpu gpu = open_gpu(ctx.device);
    json points = json::array();
    for (int w : word_sizes_of(ctx.options)) {
      kn::SmemLaunch l;
      l.word_bytes = w;
      l.chains = kBandwidthChains;
      l.stride_bytes = static_cast<std::uint32_t>(w);
      l.chain_offset_bytes = static_cast<std::uint32_t>(32 * w);
      l.warp_offset_bytes = static_cast<std::uint32_t>(kBandwidthChains * 32 * w);
      l.threads_per_block = 1024;
      const int per_sm = kn::smem_chase_blocks_per_sm(l);
      if (per_sm < 1)
        throw VerificationError("smem.bandwidth: the chase kernel does not fit on an SM");
      l.blocks = per_sm * gpu.sm_count;
      const double wavefronts_per_load = w / 4.0;
      const double loads_per_iteration = per_sm * 32.0 * kBandwidthChains;
      l.iterations = std::max<std::uint32_t>(
          64, static_cast<std::uint32_t>(kBandwidthCyclesPerLaunch /
                                         (loads_per_iteration * wavefronts_per_load)) /
                  4 * 4);
      const double bytes_per_block = 32.0 * kBandwidthChains * l.iterations * 32.0 * w;
      kn::DeviceArray<kn::BlockRecord> records(static_cast<std::size_t>(l.blocks));
      std::vector<double> clocks, per_s, mins;
      LaunchSummary last;
      auto once = [&](int rep) {
        kn::launch_smem_chase(l, records.get(), nullptr);
        synchronize();
        const auto s = summarize_blocks(records.to_host(), bytes_per_block);
        if (s.bad)
          throw VerificationError("smem.bandwidth: " + std::to_string(s.bad) +
                                  " threads' chains did not return to their start");
        if (rep >= 0) {
          clocks.push_back(s.clock_mhz);
          mins.push_back(s.rate_min);
          if (s.elapsed_ns > 0) per_s.push_back(bytes_per_block * l.blocks / s.elapsed_ns * 1e9);
          last = s;
        }
        return s.rate_median;
      };
      const auto m = repeat_until_stable(once, ctx.options.protocol);
      points.push_back(
          {{"word_bytes", w},
           {"blocks_per_sm", per_sm},
           {"threads_per_block", l.threads_per_block},
           {"chains_per_thread", l.chains},
           {"loads_per_chain", l.iterations},
           {"shared_bytes_per_block", kn::smem_chase_bytes(l)},
           {"bytes_per_clk_per_sm", to_json(m)},
           {"slowest_sm_bytes_per_clk_median", median_or_zero(mins)},
           {"bytes_per_s_median", median_or_zero(per_s)},
           {"sm_clock_mhz_measured", median_or_zero(clocks)},
           {"sms_observed", last.sms},
           {"blocks_per_sm_observed", {last.min_blocks_per_sm, last.max_blocks_per_sm}}});
    }
    r.parameters = {{"access",
                     "each warp-wide load reads 32 consecutive words (conflict-free); "
                     "every warp and chain its own addresses; self-loop chains"},
                    {"bytes_per_clk_per_sm",
                     "per SM: bytes its blocks loaded / (its last block's "
                     "end - its first block's start) in its clock64; "
                     "median over SMs"},
                    {"limit_bytes_per_clk_per_sm", analysis::kWavefrontBytes},
                    {"gpu", to_json(gpu)}};
    r.samples = {{"points", points}};
    Curve c{"table",
            {"word_bytes", "bytes_per_clk_per_sm_median", "p5", "p95", "slowest_sm", "bytes_per_s",
             "sm_clock_mhz"},
            {}};
    for (const auto& p : points) {
      const auto& s = p.at("bytes_per_clk_per_sm");
      c.rows.push_back({p.at("word_bytes"), s.at("median"), s.at("p5"), s.at("p95"),
                        p.at("slowest_sm_bytes_per_clk_median"), p.at("bytes_per_s_median"),
                        p.at("sm_clock_mhz_measured")});
    }
    c.hints = chart_hints("shared-memory bandwidth against word size", "word_bytes", "bytes",
                          "bytes_per_clk_per_sm_median", "B/clk/SM")
                  .points();
    r.curves.push_back(c);
  }
  void analyze(ExperimentResult& r) const override {
    const auto& points = r.samples.at("points");
    if (points.empty()) return;
    const json* chosen = nullptr;
    json by_word = json::object();
    for (const auto& p : points) {
      by_word[std::to_string(p.at("word_bytes").get<int>())] =
          p.at("bytes_per_clk_per_sm").at("median");
      if (!chosen || p.at("word_bytes").get<int>() > chosen->at("word_bytes").get<int>())
        chosen = &p;
    }
    const auto& p = *chosen;
    const double v = p.at("bytes_per_clk_per_sm").at("median").get<double>();
    Finding f{"smem.bandwidth",
              v,
              "B/clk/SM",
              spread_confidence(p.at("bytes_per_clk_per_sm")),
              "self-loop ld.shared chains of " + std::to_string(p.at("word_bytes").get<int>()) +
                  "-B conflict-free loads on every SM at full occupancy; median over SMs of "
                  "bytes / SM cycles",
              json::object()};
    f.extra["word_bytes"] = p.at("word_bytes");
    f.extra["percent_of_128"] = v / analysis::kWavefrontBytes * 100.0;
    f.extra["by_word_bytes"] = by_word;
    f.extra["total_tb_per_s"] = p.at("bytes_per_s_median").get<double>() / 1e12;
    f.extra["sm_clock_mhz"] = p.at("sm_clock_mhz_measured");
    r.findings.push_back(f);
  }
};

// ---- compute.latency / compute.throughput ---------------------------------------------------

struct OpInfo {
  kn::FmaOp op;
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
constexpr OpInfo kOps[] = {
    {kn::FmaOp::kFfma, "ffma", "FFMA", "FMA/clk/SM", 2, "FLOP", 1, 1, 1},
    {kn::FmaOp::kHfma2, "hfma2", "HFMA2", "HFMA2/clk/SM", 4, "FLOP", 2, -1, 3},
    {kn::FmaOp::kImad, "imad", "IMAD", "IMAD/clk/SM", 2, "int ops", 1, 1, 1},
    {kn::FmaOp::kDfma, "dfma", "DFMA", "DFMA/clk/SM", 2, "FLOP", 1, 1, 1},
};

/// Lane-instructions per clock per SM the CUDA C++ Programming Guide's arithmetic-throughput
/// table gives (HFMA2 as instructions: 256 half-precision results = 128 HFMA2); 0 = not known.
double peak_per_clk(const Gpu& g, kn::FmaOp op) {
  const int cc = g.cc_major * 10 + g.cc_minor;
  if (cc == 90) {
    switch (op) {
      case kn::FmaOp::kFfma:
        return 128;
      case kn::FmaOp::kHfma2:
        return 128;
      case kn::FmaOp::kImad:
        return 64;
      case kn::FmaOp::kDfma:
        return 64;
    }
  }
  if (cc == 80) {
    switch (op) {
      case kn::FmaOp::kFfma:
        return 64;
      case kn::FmaOp::kHfma2:
        return 128;
      case kn::FmaOp::kImad:
        return 64;
      case kn::FmaOp::kDfma:
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
      const double x0 = kn::fma_seed(thread, k, h);
      double x;
      if (op.a == 1) {
        x = x0 + static_cast<double>(steps) * op.b;
        if (op.op == kn::FmaOp::kImad)
          x = static_cast<double>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(x)));
      } else {  // a == -1
        x = steps % 2 ? op.b - x0 : x0;
      }
      sum += x;
    }
  }
  return sum;
}

void verify_fma(const OpInfo& op, const kn::FmaLaunch& l, const std::vector<double>& out,
                const std::string& where) {
  const std::uint64_t threads = static_cast<std::uint64_t>(l.blocks) * l.threads_per_block;
  const std::uint64_t steps = kn::fma_steps(l);
  std::uint64_t wrong = 0, first = 0;
  double got = 0, want = 0;
  for (std::uint64_t t = 0; t < threads; ++t) {
    const double e = expected_sum(op, t, l.accumulators, steps);
    if (out[t] != e) {
      if (!wrong) {
        first = t;
        got = out[t];
        want = e;
      }
      ++wrong;
    }
  }
  if (wrong)
    throw VerificationError(where + ": " + std::to_string(wrong) + " of " +
                            std::to_string(threads) + " threads wrote a wrong result (thread " +
                            std::to_string(first) + ": " + std::to_string(got) + ", expected " +
                            std::to_string(want) + ")");
}

/// Largest step count per accumulator whose result is still exact (FP32 counts below 2^24).
std::uint64_t max_exact_steps(const OpInfo& op) {
  return op.op == kn::FmaOp::kFfma ? (1u << 24) - 256 : std::numeric_limits<std::uint32_t>::max();
}

class ComputeLatency : public CudaExperiment {
 public:
  std::string id() const override { return "compute.latency"; }
  std::string description() const override {
    return "dependent chains x <- x * a + b of FFMA, HFMA2, IMAD and DFMA (one warp): cycles "
           "per instruction";
  }
  json axes() const override { return {{"op", {"ffma", "hfma2", "imad", "dfma"}}}; }
  void run(Context& ctx, ExperimentResult& r) const override {
    const Gpu gpu = open_gpu(ctx.device);
    kn::DeviceArray<double> out(32);
    kn::DeviceArray<kn::BlockRecord> records(1);
    json points = json::array();
    for (const auto& op : kOps) {
      kn::FmaLaunch l;
      l.op = op.op;
      l.accumulators = 1;
      l.threads_per_block = 32;
      l.blocks = 1;
      l.iterations = 512;  // 512 x 512 + 1 dependent steps
      l.a = op.a;
      l.b = op.b;
      const double steps = static_cast<double>(kn::fma_steps(l));
      std::vector<double> clocks;
      auto once = [&](int rep) {
        kn::launch_fma(l, out.get(), records.get(), nullptr);
        synchronize();
        const auto rec = records.to_host();
        const auto s = summarize_blocks(rec, 0);
        if (rep >= 0 && s.clock_mhz > 0) clocks.push_back(s.clock_mhz);
        return static_cast<double>(rec[0].c1 - rec[0].c0) / steps;
      };
      const auto m = repeat_until_stable(once, ctx.options.protocol);
      verify_fma(op, l, out.to_host(), "compute.latency " + std::string(op.instruction));
      points.push_back({{"op", op.name},
                        {"instruction", op.instruction},
                        {"steps", kn::fma_steps(l)},
                        {"a", op.a},
                        {"b", op.b},
                        {"cycles_per_instruction", to_json(m)},
                        {"sm_clock_mhz_measured", median_or_zero(clocks)},
                        {"verified", true}});
    }
    r.parameters = {{"chain",
                     "one warp, one accumulator per thread, x <- x * a + b with a, b "
                     "kernel arguments (inline PTX fma.rn.f32 / fma.rn.f16x2 / mad.lo.u32 "
                     "/ fma.rn.f64), 512 steps unrolled per loop iteration"},
                    {"cycles_per_instruction",
                     "clock64 over the chain / steps; loop overhead and "
                     "the final store are included (< 0.1%)"},
                    {"gpu", to_json(gpu)}};
    r.samples = {{"points", points}};
    Curve c{"table", {"op", "cycles_per_instruction_median", "p5", "p95", "sm_clock_mhz"}, {}};
    for (const auto& p : points) {
      const auto& s = p.at("cycles_per_instruction");
      c.rows.push_back(
          {p.at("op"), s.at("median"), s.at("p5"), s.at("p95"), p.at("sm_clock_mhz_measured")});
    }
    c.hints = table_hints("dependent instruction latency per op");
    r.curves.push_back(c);
  }
  void analyze(ExperimentResult& r) const override {
    for (const auto& p : r.samples.at("points")) {
      const auto& s = p.at("cycles_per_instruction");
      const double cycles = s.at("median").get<double>();
      const double mhz = p.value("sm_clock_mhz_measured", 0.0);
      Finding f{"compute." + p.at("op").get<std::string>() + ".latency",
                cycles,
                "cycles",
                spread_confidence(s),
                "one warp's dependent chain of " + p.at("instruction").get<std::string>() +
                    ": clock64 cycles / instructions (" +
                    std::to_string(p.at("steps").get<std::uint64_t>()) + " steps, output verified)",
                json::object()};
      if (mhz > 0) f.extra["value_ns"] = cycles / mhz * 1e3;
      f.extra["sm_clock_mhz"] = mhz;
      r.findings.push_back(f);
    }
  }
};

constexpr int kThroughputThreads = 256;
constexpr int kOccupancyLevels[] = {1, 2, 4, 8};  // blocks of 256 threads per SM
constexpr double kThroughputSeconds = 1.0e-3;     // per launch at the op's peak rate

/// Dynamic shared memory per block that lets exactly `blocks` blocks share an SM.
std::uint32_t occupancy_smem(const Gpu& g, int blocks) {
  if (blocks * kThroughputThreads >= g.max_threads_per_sm || g.shared_per_sm <= 0) return 0;
  std::int64_t per = g.shared_per_sm / blocks - g.reserved_shared_per_block;
  per = std::min<std::int64_t>(per / 128 * 128, g.shared_per_block_optin);
  return static_cast<std::uint32_t>(std::max<std::int64_t>(per, 0));
}

class ComputeThroughput : public CudaExperiment {
 public:
  std::string id() const override { return "compute.throughput"; }
  std::string description() const override {
    return "independent FFMA/HFMA2/IMAD/DFMA chains on every SM, 1..16 accumulators x 8..64 "
           "warps per SM: instructions per clock per SM and FLOP/s against the peak at the "
           "measured clock";
  }
  json axes() const override {
    return {{"op", {"ffma", "hfma2", "imad", "dfma"}},
            {"accumulators", "1..16"},
            {"warps_per_sm", {8, 16, 32, 64}}};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const Gpu gpu = open_gpu(ctx.device);
    const std::size_t max_threads = static_cast<std::size_t>(gpu.sm_count) * gpu.max_threads_per_sm;
    kn::DeviceArray<double> out(max_threads);
    kn::DeviceArray<kn::BlockRecord> records(max_threads / kThroughputThreads + 1);
    json points = json::array();
    json peaks = json::object();
    for (const auto& op : kOps) {
      const double peak = peak_per_clk(gpu, op.op);
      peaks[op.name] = peak;
      const double rate = (peak > 0 ? peak : 64.0) * gpu.sm_count * gpu.clock_max_mhz * 1e6;
      std::set<std::pair<int, int>> done;  // (accumulators, blocks per SM)
      for (int level : kOccupancyLevels) {
        if (level * kThroughputThreads > gpu.max_threads_per_sm) continue;
        const std::uint32_t smem = occupancy_smem(gpu, level);
        for (int acc = 1; acc <= kn::kMaxAccumulators; ++acc) {
          const int resident = kn::fma_blocks_per_sm(op.op, acc, kThroughputThreads, smem);
          const int per_sm = std::min(level, resident);
          if (per_sm < 1 || !done.insert({acc, per_sm}).second) continue;
          kn::FmaLaunch l;
          l.op = op.op;
          l.accumulators = acc;
          l.threads_per_block = kThroughputThreads;
          l.blocks = per_sm * gpu.sm_count;
          l.dynamic_smem_bytes = smem;
          l.a = op.a;
          l.b = op.b;
          const double threads = static_cast<double>(l.blocks) * l.threads_per_block;
          const double steps = std::min<double>(rate * kThroughputSeconds / (threads * acc),
                                                static_cast<double>(max_exact_steps(op)));
          l.iterations = std::max<std::uint32_t>(
              1, static_cast<std::uint32_t>(steps / kn::fma_steps_per_iteration(acc)));
          const double ops_per_block =
              static_cast<double>(kn::fma_steps(l)) * acc * l.threads_per_block;
          std::vector<double> clocks, per_s;
          LaunchSummary last;
          auto once = [&](int rep) {
            kn::launch_fma(l, out.get(), records.get(), nullptr);
            synchronize();
            const auto s = summarize_blocks(records.to_host(static_cast<std::size_t>(l.blocks)),
                                            ops_per_block);
            if (rep >= 0) {
              clocks.push_back(s.clock_mhz);
              if (s.elapsed_ns > 0) per_s.push_back(ops_per_block * l.blocks / s.elapsed_ns * 1e9);
              last = s;
            }
            return s.rate_median;
          };
          const auto m = repeat_until_stable(once, ctx.options.protocol);
          verify_fma(
              op, l, out.to_host(static_cast<std::size_t>(threads)),
              "compute.throughput " + std::string(op.instruction) + " x" + std::to_string(acc));
          points.push_back(
              {{"op", op.name},
               {"accumulators", acc},
               {"blocks_per_sm", per_sm},
               {"warps_per_sm", per_sm * kThroughputThreads / 32},
               {"blocks_per_sm_requested", level},
               {"blocks_per_sm_observed", {last.min_blocks_per_sm, last.max_blocks_per_sm}},
               {"sms_observed", last.sms},
               {"dynamic_smem_bytes", smem},
               {"steps_per_accumulator", kn::fma_steps(l)},
               {"ops_per_clk_per_sm", to_json(m)},
               {"ops_per_s_median", median_or_zero(per_s)},
               {"sm_clock_mhz_measured", median_or_zero(clocks)},
               {"verified", true}});
        }
      }
    }
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
                    {"sm_count", gpu.sm_count},
                    {"gpu", to_json(gpu)}};
    r.samples = {{"points", points}};
    Curve c{"sweep",
            {"op", "accumulators", "warps_per_sm", "ops_per_clk_per_sm_median", "p5", "p95",
             "ops_per_s", "sm_clock_mhz"},
            {}};
    for (const auto& p : points) {
      const auto& s = p.at("ops_per_clk_per_sm");
      c.rows.push_back({p.at("op"), p.at("accumulators"), p.at("warps_per_sm"), s.at("median"),
                        s.at("p5"), s.at("p95"), p.at("ops_per_s_median"),
                        p.at("sm_clock_mhz_measured")});
    }
    c.hints = chart_hints("throughput against warps per SM (best accumulator count)",
                          "warps_per_sm", "", "ops_per_clk_per_sm_median", "ops/clk/SM", true)
                  .by({"op"})
                  .best("max");
    r.curves.push_back(c);
  }
  void analyze(ExperimentResult& r) const override {
    const auto& P = r.parameters;
    const double sms = P.value("sm_count", 0.0);
    std::map<std::string, const json*> best;
    for (const auto& p : r.samples.at("points")) {
      const std::string op = p.at("op");
      const double v = p.at("ops_per_clk_per_sm").at("median").get<double>();
      if (!best.count(op) || v > best[op]->at("ops_per_clk_per_sm").at("median").get<double>())
        best[op] = &p;
    }
    for (const auto& o : kOps) {
      if (!best.count(o.name)) continue;
      const auto& p = *best[o.name];
      const auto& s = p.at("ops_per_clk_per_sm");
      const double v = s.at("median").get<double>();
      const double mhz = p.at("sm_clock_mhz_measured").get<double>();
      const double peak =
          P.contains("peak_per_clk_per_sm") ? P["peak_per_clk_per_sm"].value(o.name, 0.0) : 0.0;
      const double work_per_s = p.at("ops_per_s_median").get<double>() * o.work_per_op;
      Finding f{"compute." + std::string(o.name) + ".throughput",
                v,
                o.unit,
                spread_confidence(s),
                "best of the accumulators x occupancy sweep: lane-instructions per SM cycle "
                "(median over SMs), output verified",
                json::object()};
      const std::string w = std::string(o.work) == "FLOP" ? "tflops" : "tops";
      f.extra[w] = work_per_s / 1e12;
      f.extra["accumulators"] = p.at("accumulators");
      f.extra["warps_per_sm"] = p.at("warps_per_sm");
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

// ---- timer.overhead ---------------------------------------------------------------------------

constexpr int kTimerRuns = 3;
constexpr int kEventSamples = 64;
constexpr std::uint32_t kMaxSpinReads = 4u << 20;

template <std::size_t N>
void append(json& a, const std::uint32_t (&v)[N], std::size_t n = N) {
  for (std::size_t i = 0; i < std::min(n, N); ++i) a.push_back(v[i]);
}

std::vector<double> numbers(const json& a) {
  std::vector<double> v;
  for (const auto& x : a) v.push_back(x.get<double>());
  return v;
}

std::uint64_t gcd_of_positive(const std::vector<double>& v) {
  std::uint64_t g = 0;
  for (double x : v)
    if (x > 0) g = std::gcd(g, static_cast<std::uint64_t>(x));
  return g;
}

double min_positive(const std::vector<double>& v) {
  double m = 0;
  for (double x : v)
    if (x > 0 && (m == 0 || x < m)) m = x;
  return m;
}

/// Smallest gap between distinct values: the quantum the values come in.
double min_distinct_gap(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  double gap = 0;
  for (std::size_t i = 1; i < v.size(); ++i) {
    const double d = v[i] - v[i - 1];
    if (d > 1e-6 && (gap == 0 || d < gap)) gap = d;
  }
  return gap;
}

class TimerOverhead : public CudaExperiment {
 public:
  std::string id() const override { return "timer.overhead"; }
  std::string description() const override {
    return "cost and resolution of %clock, clock64 and %globaltimer in a kernel, and of CUDA "
           "events around nothing and around an empty kernel";
  }
  json axes() const override {
    return {{"timer", {"clock", "clock64", "globaltimer", "cuda_event"}}};
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const Gpu gpu = open_gpu(ctx.device);
    kn::DeviceArray<kn::TimerProbeOut> probe(1);
    json s = {{"clock64_pair", json::array()},     {"clock32_pair", json::array()},
              {"clock64_gap", json::array()},      {"clock32_gap", json::array()},
              {"clock64_stream", json::array()},   {"clock32_stream", json::array()},
              {"globaltimer_read", json::array()}, {"globaltimer_pair", json::array()},
              {"change_ns", json::array()},        {"change_cycles", json::array()},
              {"spin_reads", json::array()}};
    kn::launch_timer_probe(probe.get(), 1024, nullptr);  // warm-up (module load, caches)
    synchronize();
    for (int run = 0; run < kTimerRuns; ++run) {
      kn::launch_timer_probe(probe.get(), kMaxSpinReads, nullptr);
      synchronize();
      const auto t = probe.to_host().front();
      append(s["clock64_pair"], t.clock64_pair);
      append(s["clock32_pair"], t.clock32_pair);
      append(s["clock64_gap"], t.clock64_gap);
      append(s["clock32_gap"], t.clock32_gap);
      // Span from the first to the last of 32 consecutive reads.
      s["clock64_stream"].push_back(t.clock64_stream[kn::kTimerStreamReads - 1]);
      s["clock32_stream"].push_back(t.clock32_stream[kn::kTimerStreamReads - 1]);
      append(s["globaltimer_read"], t.globaltimer_read);
      append(s["globaltimer_pair"], t.globaltimer_pair);
      // The first change of a spin ends a period that began before the spin: dropped.
      const std::size_t n = std::min<std::size_t>(t.changes, kn::kTimerMaxChanges);
      for (std::size_t i = 1; i < n; ++i) {
        s["change_ns"].push_back(t.change_ns[i]);
        s["change_cycles"].push_back(t.change_cycles[i]);
      }
      s["spin_reads"].push_back(t.spin_reads);
    }
    // CUDA events: back to back, around one empty kernel, around two.
    CudaEvent e0, e1;
    json b2b = json::array(), one = json::array(), two = json::array(), host = json::array();
    kn::launch_empty(nullptr);
    synchronize();
    for (int i = 0; i < kEventSamples; ++i) {
      GP_CUDA_CHECK(cudaEventRecord(e0.get(), nullptr));
      GP_CUDA_CHECK(cudaEventRecord(e1.get(), nullptr));
      GP_CUDA_CHECK(cudaEventSynchronize(e1.get()));
      b2b.push_back(event_ns(e0, e1));
      GP_CUDA_CHECK(cudaEventRecord(e0.get(), nullptr));
      kn::launch_empty(nullptr);
      GP_CUDA_CHECK(cudaEventRecord(e1.get(), nullptr));
      GP_CUDA_CHECK(cudaEventSynchronize(e1.get()));
      one.push_back(event_ns(e0, e1));
      GP_CUDA_CHECK(cudaEventRecord(e0.get(), nullptr));
      kn::launch_empty(nullptr);
      kn::launch_empty(nullptr);
      GP_CUDA_CHECK(cudaEventRecord(e1.get(), nullptr));
      GP_CUDA_CHECK(cudaEventSynchronize(e1.get()));
      two.push_back(event_ns(e0, e1));
      const auto h0 = std::chrono::steady_clock::now();
      kn::launch_empty(nullptr);
      synchronize();
      host.push_back(
          std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - h0).count());
    }
    s["event_back_to_back_ns"] = b2b;
    s["event_one_empty_kernel_ns"] = one;
    s["event_two_empty_kernels_ns"] = two;
    s["host_launch_and_sync_ns"] = host;
    r.parameters = {{"kernel",
                     "one thread; back-to-back pairs, reads around 0..31 dependent adds, "
                     "32 consecutive reads, and a spin on %globaltimer recording each "
                     "change (its size in ns and the clock64 cycles since the last)"},
                    {"runs", kTimerRuns},
                    {"event_samples", kEventSamples},
                    {"gpu", to_json(gpu)}};
    r.samples = s;
  }
  void analyze(ExperimentResult& r) const override {
    const auto& s = r.samples;
    auto add = [&](const std::string& name, double v, const std::string& unit, double conf,
                   const std::string& method, json extra = json::object()) {
      Finding f{name, v, unit, conf, method, extra};
      r.findings.push_back(f);
    };
    const auto c64 = numbers(s.at("clock64_pair"));
    const auto c32 = numbers(s.at("clock32_pair"));
    const auto change_cycles = numbers(s.at("change_cycles"));
    const auto change_ns = numbers(s.at("change_ns"));
    if (!c64.empty()) {
      const double stream =
          stats::median(numbers(s.at("clock64_stream"))) / (kn::kTimerStreamReads - 1);
      add("timer.clock64.overhead", *std::min_element(c64.begin(), c64.end()), "cycles", 0.9,
          "smallest difference of two back-to-back clock64 reads",
          {{"median", stats::median(c64)}, {"cycles_per_read_in_a_stream", stream}});
      auto all = c64;
      for (double x : numbers(s.at("clock64_gap"))) all.push_back(x);
      for (double x : change_cycles) all.push_back(x);
      add("timer.clock64.resolution", static_cast<double>(gcd_of_positive(all)), "cycles", 0.8,
          "greatest common divisor of every non-zero clock64 difference observed (back-to-back, "
          "around 0..31 dependent adds, between %globaltimer changes): the tick is at most this",
          {{"smallest_nonzero_difference", min_positive(all)}});
    }
    if (!c32.empty()) {
      const double stream =
          stats::median(numbers(s.at("clock32_stream"))) / (kn::kTimerStreamReads - 1);
      add("timer.clock.overhead", *std::min_element(c32.begin(), c32.end()), "cycles", 0.9,
          "smallest difference of two back-to-back %clock reads",
          {{"median", stats::median(c32)}, {"cycles_per_read_in_a_stream", stream}});
      auto all = c32;
      for (double x : numbers(s.at("clock32_gap"))) all.push_back(x);
      add("timer.clock.resolution", static_cast<double>(gcd_of_positive(all)), "cycles", 0.8,
          "greatest common divisor of every non-zero %clock difference observed (back-to-back "
          "and around 0..31 dependent adds)",
          {{"smallest_nonzero_difference", min_positive(all)}});
    }
    const auto gread = numbers(s.at("globaltimer_read"));
    if (!gread.empty() && !c64.empty())
      add("timer.globaltimer.overhead",
          *std::min_element(gread.begin(), gread.end()) - *std::min_element(c64.begin(), c64.end()),
          "cycles", 0.8,
          "smallest clock64 span around one %globaltimer read whose value is used, minus the "
          "clock64 back-to-back overhead");
    if (!change_ns.empty()) {
      const double sum_cycles = std::accumulate(change_cycles.begin(), change_cycles.end(), 0.0);
      const double sum_ns = std::accumulate(change_ns.begin(), change_ns.end(), 0.0);
      const double mhz = sum_ns > 0 ? sum_cycles / sum_ns * 1e3 : 0;
      std::map<std::uint64_t, int> sizes;
      for (double x : change_ns) ++sizes[static_cast<std::uint64_t>(x)];
      json common = json::array();
      for (const auto& [ns, count] : sizes)
        common.push_back({{"increment_ns", ns}, {"count", count}});
      if (common.size() > 8) common.erase(common.begin() + 8, common.end());
      add("timer.globaltimer.resolution", min_positive(change_ns), "ns", 0.9,
          "smallest non-zero change of %globaltimer seen while spinning on it",
          {{"median_increment_ns", stats::median(change_ns)},
           {"increments", common},
           {"changes_observed", change_ns.size()},
           {"back_to_back_smallest_nonzero_ns", min_positive(numbers(s.at("globaltimer_pair")))}});
      // Intervals between observed changes are quantised to whole spin iterations, and when
      // the spin reads no faster than the timer updates (about one read per change) they only
      // bound the period from above. Every observed increment is a whole number of updates, so
      // when the timer tracks real time (the SM clock computed from it is plausible) the
      // update period is the greatest common divisor of the increments.
      const double spins =
          std::accumulate(s.at("spin_reads").begin(), s.at("spin_reads").end(), 0.0,
                          [](double a, const json& x) { return a + x.get<double>(); });
      const double mean_cycles = sum_cycles / static_cast<double>(change_cycles.size());
      const double cycles_per_read = spins > 0 ? sum_cycles / spins : 0.0;
      const double reads_per_change = cycles_per_read > 0 ? mean_cycles / cycles_per_read : 0.0;
      const bool resolved = reads_per_change >= 2.0;
      const double gcd_ns = static_cast<double>(gcd_of_positive(change_ns));
      if (mhz > 0)
        add("timer.globaltimer.update_period", resolved ? mean_cycles / mhz * 1e3 : gcd_ns, "ns",
            resolved ? 0.9 : 0.6,
            resolved ? "mean clock64 cycles between %globaltimer changes seen in a spin that reads "
                       "at least twice per change / SM clock (clock64 cycles over %globaltimer ns)"
                     : "the spin reads about once per change, so intervals only bound the period; "
                       "value = greatest common divisor of the observed increments (each a whole "
                       "number of updates of a timer that tracks real time)",
            {{"spin_resolves_updates", resolved},
             {"mean_interval_between_changes_ns", mean_cycles / mhz * 1e3},
             {"mean_cycles_between_changes", mean_cycles},
             {"spin_read_interval_ns", cycles_per_read / mhz * 1e3},
             {"reads_per_change", reads_per_change},
             {"increment_gcd_ns", gcd_ns},
             {"mean_increment_ns", sum_ns / static_cast<double>(change_ns.size())},
             {"sm_clock_mhz_from_globaltimer", mhz}});
    }
    const auto b2b = numbers(s.at("event_back_to_back_ns"));
    const auto one = numbers(s.at("event_one_empty_kernel_ns"));
    const auto two = numbers(s.at("event_two_empty_kernels_ns"));
    if (!one.empty()) {
      auto all = b2b;
      all.insert(all.end(), one.begin(), one.end());
      all.insert(all.end(), two.begin(), two.end());
      add("timer.event.resolution", min_distinct_gap(all), "ns", 0.7,
          "smallest gap between distinct cudaEventElapsedTime values over all event samples",
          {{"smallest_nonzero_elapsed_ns", min_positive(all)}});
      add("timer.event.back_to_back", stats::median(b2b), "ns", 0.8,
          "median cudaEventElapsedTime of two events recorded back to back",
          {{"min_ns", *std::min_element(b2b.begin(), b2b.end())}});
      add("timer.event.empty_kernel", stats::median(one), "ns", 0.8,
          "median cudaEventElapsedTime around one empty <<<1,1>>> kernel",
          {{"min_ns", *std::min_element(one.begin(), one.end())},
           {"second_kernel_adds_ns", stats::median(two) - stats::median(one)},
           {"host_launch_and_sync_median_ns",
            stats::median(numbers(s.at("host_launch_and_sync_ns")))}});
    }
  }
};

}  // namespace

void register_compute_experiments(Registry& registry) {
  registry.add(std::make_unique<SmemBankConflicts>());
  registry.add(std::make_unique<SmemBandwidth>());
  registry.add(std::make_unique<ComputeLatency>());
  registry.add(std::make_unique<ComputeThroughput>());
  registry.add(std::make_unique<TimerOverhead>());
}

}  // namespace gpuprobe::probes
