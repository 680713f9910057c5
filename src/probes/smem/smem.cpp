// Shared-memory probes: bank conflicts against the host bank model and shared-memory bandwidth
// per SM. They use the CUDA runtime directly (the Device seam covers latency only) and are
// waived on a modelled GPU.
#include "probes/smem/smem.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/bank_model.hpp"
#include "core/confidence.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/finding_names.hpp"
#include "core/stats.hpp"
#include "counters/counters.hpp"
#include "measure/block_timing.hpp"
#include "measure/gpu.hpp"
#include "probes/smem/smem_kernels.hpp"
#include "probes/smem/smem_samples.hpp"

namespace gpuprobe::probes {
namespace {

using nlohmann::json;
namespace smem_kernels = kernels;

using measure::LaunchSummary;
using measure::summarize_blocks;
using stats::median_or_zero;

Axis word_bytes_axis() {
  return int_axis("word_bytes", {4, 8, 16}, "B",
                  "bytes per shared load (ld.volatile.shared .u32, .v2.u32, .v4.u32); "
                  "--word-sizes sets it too",
                  4, 16);
}

/// The word_bytes axis (--axis <id>.word_bytes or --word-sizes), sorted, unique.
std::vector<int> word_sizes_of(const AxisValues& axes) {
  const auto v = axes.int32s("word_bytes");
  std::set<int> s(v.begin(), v.end());
  return {s.begin(), s.end()};
}

void check_word_sizes(const AxisValues& axes) {
  for (int w : word_sizes_of(axes))
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

/// The stride_words axis (--axis smem.bank_conflicts.stride_words or --strides), sorted,
/// unique, with the baseline 1.
std::vector<int> bank_strides(const AxisValues& axes) {
  const auto v = axes.int32s("stride_words");
  std::set<int> s(v.begin(), v.end());
  s.insert(1);  // the conflict-free baseline of every word size
  return {s.begin(), s.end()};
}

/// One (word size, stride) row of the measured table next to the model.
struct BankRow {
  int word_bytes = 0, stride = 0;
  analysis::BankAccess model;
  struct ModeCost {
    double cycles = 0, ratio = 0;  ///< median cycles per access; over the stride-1 baseline
  };
  std::map<std::string, ModeCost> modes;  ///< by mode name, those measured
  std::optional<double> warp_chain_extra_cycles;
  const ModeCost* mode(const char* name) const {
    const auto it = modes.find(name);
    return it == modes.end() ? nullptr : &it->second;
  }
  /// block cycles / stride-1 block cycles: the measured N-way (when block was measured).
  std::optional<double> measured_ways() const {
    const auto* b = mode("block");
    return b ? std::optional(b->ratio) : std::nullopt;
  }
  std::optional<bool> agrees() const {
    const auto m = measured_ways();
    return m ? std::optional(std::lround(*m) == model.ways) : std::nullopt;
  }
  std::optional<bool> warp_stream_agrees() const {
    const auto* w = mode("warp_stream");
    return w ? std::optional(std::lround(w->ratio) == model.ways) : std::nullopt;
  }
};

json to_json(const BankRow& row) {
  json j = {{"word_bytes", row.word_bytes},
            {"stride", row.stride},
            {"model_ways", row.model.ways},
            {"model_wavefronts", row.model.wavefronts},
            {"model_phases", row.model.phases}};
  for (const auto& [name, cost] : row.modes) {
    j[name + "_cycles"] = cost.cycles;
    j[name + "_ratio"] = cost.ratio;
  }
  if (const auto m = row.measured_ways()) {
    j["measured_ways"] = *m;
    j["agrees"] = *row.agrees();
  }
  if (const auto w = row.warp_stream_agrees()) j["warp_stream_agrees"] = *w;
  if (row.warp_chain_extra_cycles) j["warp_chain_extra_cycles"] = *row.warp_chain_extra_cycles;
  return j;
}

/// smem.bank_conflicts' samples, converted and checked whole: every case of a modelled word
/// size, a stride the model takes and a known mode (one line naming the case otherwise).
smem::BankSamples typed_bank_samples(const json& samples) {
  smem::BankSamples s;
  try {
    s = samples.get<smem::BankSamples>();
  } catch (const json::exception& e) {
    throw UsageError("smem.bank_conflicts: samples.cases is not what this gpuprobe writes (" +
                     std::string(e.what()) + ")");
  }
  for (std::size_t i = 0; i < s.cases.size(); ++i) {
    const auto& c = s.cases[i];
    const bool known_mode = std::any_of(std::begin(kBankModes), std::end(kBankModes),
                                        [&](const BankMode& m) { return c.mode == m.name; });
    if (!analysis::valid_word_bytes(c.word_bytes) || c.stride < 1 || c.stride > 32 || !known_mode)
      throw UsageError("smem.bank_conflicts: samples.cases[" + std::to_string(i) +
                       "] needs word_bytes 4, 8 or 16, a stride of 1..32 words and a mode of "
                       "block, warp_stream or warp_chain");
  }
  return s;
}

/// The measured table next to the model, from the samples (pure).
std::vector<BankRow> bank_rows(const std::vector<smem::BankCase>& cases) {
  std::map<std::pair<int, int>, std::map<std::string, double>> medians;  // (word, stride) -> mode
  std::map<std::pair<std::string, int>, double> baseline;  // (mode, word) -> stride-1 cycles
  for (const auto& c : cases) {
    const double med = c.cycles_per_access.median;
    medians[{c.word_bytes, c.stride}][c.mode] = med;
    if (c.stride == 1) baseline[{c.mode, c.word_bytes}] = med;
  }
  std::vector<BankRow> rows;
  for (const auto& [key, m] : medians) {
    BankRow row;
    std::tie(row.word_bytes, row.stride) = key;
    row.model = analysis::strided_access(row.stride, row.word_bytes);
    for (const auto& mode : kBankModes) {
      const auto it = m.find(mode.name);
      if (it == m.end()) continue;
      const auto b = baseline.find({mode.name, row.word_bytes});
      const double base = b != baseline.end() ? b->second : 0;
      row.modes[mode.name] = {it->second, base > 0 ? it->second / base : 0};
    }
    const auto* chain = row.mode("warp_chain");
    const auto chain_base = baseline.find({"warp_chain", row.word_bytes});
    if (chain && chain_base != baseline.end())
      row.warp_chain_extra_cycles = chain->cycles - chain_base->second;
    rows.push_back(std::move(row));
  }
  return rows;
}

Curve bank_curve(const std::vector<BankRow>& rows) {
  Curve c{"table",
          {"word_bytes", "stride", "model_ways", "model_wavefronts", "block_cycles_per_access",
           "measured_ways", "agrees", "warp_stream_cycles_per_access", "warp_stream_ratio",
           "warp_chain_cycles_per_access", "warp_chain_extra_cycles"},
          {}};
  const auto cycles = [](const BankRow::ModeCost* m) { return m ? m->cycles : 0.0; };
  for (const auto& r : rows) {
    const auto* stream = r.mode("warp_stream");
    c.rows.push_back({r.word_bytes, r.stride, r.model.ways, r.model.wavefronts,
                      cycles(r.mode("block")), r.measured_ways().value_or(0.0),
                      r.agrees().value_or(false) ? 1 : 0, cycles(stream),
                      stream ? stream->ratio : 0.0, cycles(r.mode("warp_chain")),
                      r.warp_chain_extra_cycles.value_or(0.0)});
  }
  c.hints = chart_hints("measured N-way bank conflict against the bank model", "stride", "words",
                        "measured_ways", "ways", true)
                .by({"word_bytes"})
                .with_model({"model_ways"});
  return c;
}

class SmemBankConflicts : public CudaRuntimeExperiment {
 public:
  std::string id() const override { return "smem.bank_conflicts"; }
  std::vector<std::string> produces() const override {
    return {"smem.bank_model_agreement", "smem.wavefront_cycles"};
  }
  std::string description() const override {
    return "warp-wide shared loads at word index lane*stride (4-, 8-, 16-byte words, stride "
           "1..32): cycles per access and measured N-way against the host bank model";
  }
  std::vector<Axis> typed_axes() const override {
    std::vector<std::string> modes;
    for (const auto& m : kBankModes) modes.push_back(m.name);
    return {
        int_axis("stride_words", {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                                  17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32},
                 "words",
                 "lane l reads the word at index l * stride; stride 1 (the conflict-free "
                 "baseline) is always measured; --strides sets it too",
                 1, 32),
        word_bytes_axis(),
        string_axis("mode", modes,
                    "block: 32 warps x 4 chains (throughput, the N-way); warp_stream: one "
                    "warp x 32 chains; warp_chain: one warp, one dependent chain")};
  }
  void validate(const device::Device&, const RunOptions& o) const override {
    check_word_sizes(axis_values(o));
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const Gpu gpu = open_gpu(ctx.device);
    smem_kernels::DeviceArray<measure::BlockTiming> records(1);
    json cases = json::array();
    const auto axes = axis_values(ctx.options);
    const auto words = word_sizes_of(axes);
    const auto strides = bank_strides(axes);
    for (int w : words) {
      for (int s : strides) {
        for (const auto& mode : kBankModes) {
          if (!axes.contains("mode", mode.name)) continue;
          smem_kernels::SmemLaunch l;
          l.word_bytes = w;
          l.chains = mode.chains;
          l.stride_bytes = static_cast<std::uint32_t>(s * w);
          l.chain_offset_bytes = kBankChainOffset;
          l.threads_per_block = mode.threads;
          l.iterations = mode.iterations;
          const double accesses =
              static_cast<double>(mode.threads / 32) * mode.chains * mode.iterations;
          auto once = [&](int) {
            smem_kernels::launch_smem_chase(l, records.get(), nullptr);
            synchronize();
            const auto timings = records.to_host();
            if (timings[0].bad)
              throw VerificationError("smem.bank_conflicts: " + std::to_string(timings[0].bad) +
                                      " threads' chains did not return to their start (" +
                                      std::to_string(w) + " B, stride " + std::to_string(s) + ")");
            return static_cast<double>(timings[0].c1 - timings[0].c0) / accesses;
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
    r.curves.push_back(bank_curve(bank_rows(typed_bank_samples(r.samples).cases)));
    if (counters::requested(ctx)) {  // shared-load wavefronts against the bank model
      counters::Declaration d;
      const auto& mode = kBankModes[1];  // one warp: every wavefront is this pattern's
      for (int w : words)
        for (int s : strides) {
          smem_kernels::SmemLaunch l;
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
                 smem_kernels::launch_smem_chase(l, records.get(), nullptr);
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
  int samples_version() const override { return smem::BankSamples::kVersion; }
  void analyze(ExperimentResult& r) const override {
    counters::cross_check(r);
    const auto rows = bank_rows(typed_bank_samples(r.samples).cases);
    int total = 0, agree = 0, stream_total = 0, stream_agree = 0;
    double worst_dev = 0;
    json disagreements = json::array(), table = json::array();
    std::vector<double> per_wavefront, warp_per_wavefront, warp_cycles, chain_per_extra;
    for (const auto& row : rows) {
      table.push_back(to_json(row));
      const double wavefronts = row.model.wavefronts, phases = row.model.phases;
      // One warp alone: its stream's cost per wavefront where conflicts dominate (>= 8
      // wavefronts), its fastest access, and the latency each extra wavefront adds to a chain.
      if (const auto* stream = row.mode("warp_stream")) {
        warp_cycles.push_back(stream->cycles);
        if (wavefronts >= 8) warp_per_wavefront.push_back(warp_cycles.back() / wavefronts);
      }
      if (row.warp_chain_extra_cycles && wavefronts > phases)
        chain_per_extra.push_back(*row.warp_chain_extra_cycles / (wavefronts - phases));
      if (const auto agrees = row.agrees()) {
        ++total;
        const double measured = *row.measured_ways();
        const int model = row.model.ways;
        worst_dev = std::max(worst_dev, std::fabs(measured - model) / model);
        per_wavefront.push_back(row.mode("block")->cycles / wavefronts);
        if (*agrees) {
          ++agree;
        } else {
          disagreements.push_back({{"word_bytes", row.word_bytes},
                                   {"stride", row.stride},
                                   {"model_ways", model},
                                   {"measured_ways", measured}});
        }
      }
      if (const auto stream_agrees = row.warp_stream_agrees()) {
        ++stream_total;
        stream_agree += *stream_agrees ? 1 : 0;
      }
    }
    r.statistics["table"] = table;
    if (total == 0) return;
    Finding f{
        "smem.bank_model_agreement",
        static_cast<double>(agree) / total,
        "fraction",
        confidence::agreement(static_cast<std::size_t>(agree), static_cast<std::size_t>(total)),
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
               confidence::precision(per_wavefront, s.median),
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

class SmemBandwidth : public CudaRuntimeExperiment {
 public:
  std::string id() const override { return "smem.bandwidth"; }
  std::vector<std::string> produces() const override { return {finding::kSmemBandwidth}; }
  std::string description() const override {
    return "conflict-free shared loads on every SM at full occupancy: bytes per clock per SM "
           "(16-B vector loads for the finding; 4 and 8 B shown too)";
  }
  std::vector<Axis> typed_axes() const override { return {word_bytes_axis()}; }
  void validate(const device::Device&, const RunOptions& o) const override {
    check_word_sizes(axis_values(o));
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const Gpu gpu = open_gpu(ctx.device);
    json points = json::array();
    for (int w : word_sizes_of(axis_values(ctx.options))) {
      smem_kernels::SmemLaunch l;
      l.word_bytes = w;
      l.chains = kBandwidthChains;
      l.stride_bytes = static_cast<std::uint32_t>(w);
      l.chain_offset_bytes = static_cast<std::uint32_t>(32 * w);
      l.warp_offset_bytes = static_cast<std::uint32_t>(kBandwidthChains * 32 * w);
      l.threads_per_block = 1024;
      const int per_sm = smem_kernels::smem_chase_blocks_per_sm(l);
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
      smem_kernels::DeviceArray<measure::BlockTiming> records(static_cast<std::size_t>(l.blocks));
      std::vector<double> clocks, per_s, mins;
      LaunchSummary last;
      auto once = [&](int rep) {
        smem_kernels::launch_smem_chase(l, records.get(), nullptr);
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
           {"shared_bytes_per_block", smem_kernels::smem_chase_bytes(l)},
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
  int samples_version() const override { return smem::BandwidthSamples::kVersion; }
  void analyze(ExperimentResult& r) const override {
    smem::BandwidthSamples samples;
    try {
      samples = r.samples.get<smem::BandwidthSamples>();
    } catch (const json::exception& e) {
      throw UsageError("smem.bandwidth: samples.points is not what this gpuprobe writes (" +
                       std::string(e.what()) + ")");
    }
    const auto& points = samples.points;
    if (points.empty()) return;
    const smem::BandwidthPoint* chosen = nullptr;
    json by_word = json::object();
    for (const auto& p : points) {
      by_word[std::to_string(p.word_bytes)] = p.bytes_per_clk_per_sm.median;
      if (!chosen || p.word_bytes > chosen->word_bytes) chosen = &p;
    }
    const auto& p = *chosen;
    const double v = p.bytes_per_clk_per_sm.median;
    Finding f{"smem.bandwidth",
              v,
              "B/clk/SM",
              p.bytes_per_clk_per_sm.precision(),
              "self-loop ld.shared chains of " + std::to_string(p.word_bytes) +
                  "-B conflict-free loads on every SM at full occupancy; median over SMs of "
                  "bytes / SM cycles",
              json::object()};
    f.extra["word_bytes"] = p.word_bytes;
    f.extra["percent_of_128"] = v / analysis::kWavefrontBytes * 100.0;
    f.extra["by_word_bytes"] = by_word;
    f.extra["total_tb_per_s"] = p.bytes_per_s_median / 1e12;
    f.extra["sm_clock_mhz"] = p.sm_clock_mhz_measured;
    r.findings.push_back(f);
  }
};
}  // namespace

void register_smem_experiments(Registry& registry) {
  registry.add(std::make_unique<SmemBankConflicts>());
  registry.add(std::make_unique<SmemBandwidth>());
}

}  // namespace gpuprobe::probes
