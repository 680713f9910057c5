// cache.prefetch: does the GPU fetch lines a strided pattern is about to load before it loads
// them? One thread on SM 0 loads, as a dependent chain, 16 lines one stride apart (the
// pattern), then loads lines 8, 4, 2 and 1 strides past the last one (the probes, farthest
// first so that no probe directly follows its neighbour), then two pattern lines again (hits:
// the latency of a line that is there) and two untouched lines far away (controls: one that is
// not). A probe as fast as the hits was fetched ahead. Two levels:
//   dram: after an L2 flush, ld.global.cg: does a DRAM -> L2 prefetcher fill the L2 ahead?
//   l2:   every line first placed in the L2 by another SM, then ld.global.ca: does an L2 -> L1
//         prefetcher fill the L1 ahead?
// 12 trials per stride, each in its own 2 MiB region at a random 4 KiB step (so no trial
// warms another), the translations of every region warmed first (untimed).
#include "probes/cache/prefetch.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "analysis/prefetch.hpp"
#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/sequence.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "probes/cache/sequence_session.hpp"

namespace gpuprobe::probes {
namespace {

using nlohmann::json;
using units::kKiB;
using units::kMiB;
namespace pf = analysis::prefetch;

constexpr int kTrials = 12;
constexpr int kTrained = 16;
constexpr int kHitsPerTrial = 2, kControlsPerTrial = 2;
constexpr std::uint64_t kRegion = 2 * kMiB;
constexpr std::uint64_t kControlRegions = 4;
constexpr std::uint64_t kLine = 128;
constexpr std::uint64_t kMaxStride = 64 * kKiB;
/// Lines of one trial's span: the pattern and the farthest probe.
constexpr std::uint64_t kSpanStrides = kTrained + 8;

struct Layout {
  std::vector<std::uint64_t> warm;      ///< one line per region, untimed
  std::vector<std::uint64_t> timed;     ///< every trial's loads, in order
  std::vector<std::uint64_t> distinct;  ///< every line the timed loads touch (for placing)
};

/// The loads of one (stride) sequence: per trial the pattern, the probes (farthest first),
/// two pattern lines again and two controls.
Layout layout_for(std::uint64_t stride, std::mt19937_64& rng) {
  Layout l;
  const std::uint64_t regions = kTrials + kControlRegions;
  for (std::uint64_t r = 0; r < regions; ++r) l.warm.push_back(r * kRegion + kRegion - kLine);
  const std::uint64_t span = kSpanStrides * stride;
  // At least one 4 KiB step from the region's start, so the previous region's warm line (its
  // last) is never the line just before a pattern.
  std::uniform_int_distribution<std::uint64_t> step(1, (kRegion - span - kLine) / (4 * kKiB));
  std::uniform_int_distribution<std::uint64_t> control_step(
      0, kControlRegions * kRegion / (4 * kKiB) - 2);
  for (int t = 0; t < kTrials; ++t) {
    const std::uint64_t base = static_cast<std::uint64_t>(t) * kRegion + step(rng) * 4 * kKiB;
    for (int i = 0; i < kTrained; ++i) l.timed.push_back(base + i * stride);
    for (auto it = std::rbegin(pf::kDistances); it != std::rend(pf::kDistances); ++it)
      l.timed.push_back(base + static_cast<std::uint64_t>(kTrained - 1 + *it) * stride);
    l.timed.push_back(base + (kTrained - 2) * stride);
    l.timed.push_back(base + (kTrained - 4) * stride);
    for (int c = 0; c < kControlsPerTrial; ++c)
      l.timed.push_back(kTrials * kRegion + control_step(rng) * 4 * kKiB + 2 * kKiB);
  }
  l.distinct = l.timed;
  std::sort(l.distinct.begin(), l.distinct.end());
  l.distinct.erase(std::unique(l.distinct.begin(), l.distinct.end()), l.distinct.end());
  return l;
}

/// Splits one sequence's timings back into the roles layout_for() gave them.
pf::StrideSamples split_timings(const std::string& level, device::LoadOp op, std::uint64_t stride,
                                const std::vector<double>& cycles) {
  pf::StrideSamples s{level, device::to_string(op), stride, {}, {}, {}, {}};
  const std::size_t distances = std::size(pf::kDistances);
  std::size_t i = 0;
  for (int t = 0; t < kTrials; ++t) {
    s.trained.emplace_back(cycles.begin() + i, cycles.begin() + i + kTrained);
    i += kTrained;
    // Stored nearest first (the loads ran farthest first).
    std::vector<double> probes(cycles.begin() + i, cycles.begin() + i + distances);
    std::reverse(probes.begin(), probes.end());
    s.probes.push_back(probes);
    i += distances;
    s.hits.insert(s.hits.end(), cycles.begin() + i, cycles.begin() + i + kHitsPerTrial);
    i += kHitsPerTrial;
    s.controls.insert(s.controls.end(), cycles.begin() + i, cycles.begin() + i + kControlsPerTrial);
    i += kControlsPerTrial;
  }
  return s;
}

const char* level_words(const std::string& level) {
  return level == "dram" ? "DRAM -> L2 (after an L2 flush, ld.global.cg)"
                         : "L2 -> L1 (lines placed in the L2 by another SM, ld.global.ca)";
}

/// cache.prefetch, one (level, stride) per point: one sequence of kTrials trials, each in its
/// own region of one probe buffer, the regions' offsets drawn from one generator in run order.
class PrefetchSweep : public Sweep {
 public:
  PrefetchSweep(Context& ctx, Sequencer& seq, AxisValues axes)
      : seq_(seq),
        axes_(std::move(axes)),
        buf_(seq.alloc_probe_buffer((kTrials + kControlRegions) * kRegion)),
        rng_(ctx.options.seed),
        sms_(ctx.device.info().sm_count) {}
  void run_point(const AxisPoint& point) override {
    const std::string level = point.string("level");
    const auto stride = static_cast<std::uint64_t>(point.integer("stride_bytes"));
    const auto l = layout_for(stride, rng_);
    AccessSequence s;
    s.flush_l2 = true;
    s.sm = 0;
    s.op = level == "dram" ? device::LoadOp::kCg : device::LoadOp::kCa;
    if (level == "l2") {
      s.place = l.distinct;
      s.place_sm = sms_ > 1 ? 1 : 0;
    }
    s.sequence = l.warm;
    s.sequence.insert(s.sequence.end(), l.timed.begin(), l.timed.end());
    s.timed_from = static_cast<std::uint32_t>(l.warm.size());
    const auto t = seq_.run_sequence(*buf_, s);
    if (!t.verified || t.cycles.size() != l.timed.size())
      throw VerificationError("cache.prefetch: a sequence returned " +
                              std::to_string(t.cycles.size()) + " timings for " +
                              std::to_string(l.timed.size()) + " loads, or a wrong value");
    rows_.push_back(split_timings(level, s.op, stride, t.cycles));
  }
  void finish(ExperimentResult& r) override {
    r.parameters = {{"axes", axes_.to_json()},
                    {"trials_per_stride", kTrials},
                    {"trained_lines", kTrained},
                    {"probe_distances_strides", pf::kDistances},
                    {"region_bytes", kRegion},
                    {"sm", 0},
                    {"timing",
                     "one dependent load each, %clock64 around it (the sequencer's timing); the "
                     "first load of every region untimed, to warm its translation"}};
    r.protocol["l2_flush"] = "before every stride's sequence (the sequencer's flush)";
    r.samples = {{"strides", rows_}};
  }

 private:
  Sequencer& seq_;
  const AxisValues axes_;
  std::unique_ptr<ProbeBuffer> buf_;
  std::mt19937_64 rng_;
  const int sms_;
  json rows_ = json::array();
};

class Prefetch : public Experiment {
 public:
  std::string id() const override { return "cache.prefetch"; }
  std::string description() const override {
    return "whether lines 1, 2, 4 and 8 strides past a pattern of 16 dependent loads (strides "
           "128 B .. 64 KiB) are already in the L2 (after a flush, .cg) or the L1 (.ca) when "
           "first loaded, against hits and untouched controls; 12 trials per stride";
  }
  std::vector<Axis> typed_axes() const override {
    // Declared in run order: level outermost, stride innermost.
    return {
        string_axis("level", {"dram", "l2"},
                    "dram: DRAM -> L2 after a flush (.cg); l2: L2 -> L1 (.ca)"),
        int_axis("stride_bytes", {128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}, "B",
                 "bytes between the pattern's lines", 128, static_cast<double>(kMaxStride))};
  }
  void validate(const device::Device&, const RunOptions& o) const override {
    for (auto s : axis_values(o).ints("stride_bytes"))
      if (s % static_cast<std::int64_t>(kLine) != 0)
        throw UsageError("cache.prefetch: stride_bytes " + std::to_string(s) +
                         " is not a multiple of the 128-B line (allowed: 128 .. 65536, "
                         "multiples of 128)");
  }
  bool is_sweep() const override { return true; }
  std::unique_ptr<Sweep> begin_sweep(Context& ctx, ExperimentResult& r) const override {
    auto* seq = as_sequencer(ctx.device);
    if (!seq) {
      cache_structure::waive(r, cache_structure::kNoSequencer);
      return nullptr;
    }
    return std::make_unique<PrefetchSweep>(ctx, *seq, axis_values(ctx.options));
  }
  void analyze(ExperimentResult& r) const override;
};

/// The samples, typed: one conversion, a one-line error naming what is wrong.
/// The samples, typed and checked whole: every stride of a known level with its probes at
/// every distance in each trial, and hits and controls to judge them by.
std::vector<pf::StrideSamples> typed_samples(const ExperimentResult& r) {
  std::vector<pf::StrideSamples> strides;
  try {
    strides = r.samples.at("strides").get<std::vector<pf::StrideSamples>>();
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("cache.prefetch: samples.strides is not what this gpuprobe writes (" +
                     std::string(e.what()) + ")");
  }
  for (std::size_t i = 0; i < strides.size(); ++i) {
    const auto& s = strides[i];
    const bool trials_whole =
        !s.probes.empty() && std::all_of(s.probes.begin(), s.probes.end(), [](const auto& t) {
          return t.size() == std::size(pf::kDistances);
        });
    if ((s.level != "dram" && s.level != "l2") || !trials_whole || s.hits.empty() ||
        s.controls.empty())
      throw UsageError("cache.prefetch: samples.strides[" + std::to_string(i) +
                       "] needs level dram or l2, probes at " +
                       std::to_string(std::size(pf::kDistances)) +
                       " distances in every trial, and hits and controls");
  }
  return strides;
}

Finding verdict_finding(const pf::LevelVerdict& v) {
  const double conf =
      confidence::combine({v.separation, confidence::agreement(v.agreeing, v.probes)});
  Finding f{
      v.level == "dram" ? "prefetch.dram_to_l2" : "prefetch.l2_to_l1",
      v.detected ? 1.0 : 0.0,
      "bool",
      conf,
      std::string("whether a line 1 stride past a pattern of 16 dependent loads is already ") +
          (v.level == "dram" ? "in the L2" : "in the L1") + " when first loaded, " +
          level_words(v.level) +
          ": most of 12 trials of some stride faster than the threshold between hits and "
          "untouched controls",
      json::object()};
  f.extra["threshold_cycles"] = v.threshold;
  f.extra["nearest_probes_agreeing"] = v.agreeing;
  f.extra["nearest_probes"] = v.probes;
  if (v.detected) {
    f.extra["max_stride_bytes"] = v.max_stride_bytes;
    f.extra["max_distance_strides"] = v.max_distance;
  }
  return f;
}

void Prefetch::analyze(ExperimentResult& r) const {
  const auto strides = typed_samples(r);
  Curve table{"evidence",
              {"level", "stride_bytes", "distance_strides", "fraction_there", "median_cycles"},
              {}};
  Curve references{"references",
                   {"level", "stride_bytes", "hit_median_cycles", "control_median_cycles",
                    "trained_late_fraction_there"},
                   {}};
  json statistics = json::object();
  for (const std::string level : {"dram", "l2"}) {
    std::vector<pf::StrideSamples> of_level;
    for (const auto& s : strides)
      if (s.level == level) of_level.push_back(s);
    if (of_level.empty()) continue;
    const auto v = pf::judge_level(of_level);
    r.findings.push_back(verdict_finding(v));
    for (std::size_t i = 0; i < of_level.size(); ++i) {
      const auto& s = of_level[i];
      for (std::size_t k = 0; k < std::size(pf::kDistances); ++k)
        table.rows.push_back({level, s.stride_bytes, pf::kDistances[k],
                              v.fraction_there[i].second[k], v.median_cycles[i].second[k]});
      references.rows.push_back({level, s.stride_bytes, stats::median_or_zero(s.hits),
                                 stats::median_or_zero(s.controls),
                                 v.trained_late_there[i].second});
    }
    statistics[level] = {{"threshold_cycles", v.threshold}, {"separation", v.separation}};
  }
  table.hints = chart_hints("share of trials whose probe was fetched ahead, by stride",
                            "stride_bytes", "bytes", "fraction_there", "fraction", true)
                    .by({"distance_strides"})
                    .split_by({"level"});
  r.curves.push_back(table);
  references.hints = table_hints(
      "the references of each stride: hits, controls, and the share of "
      "the pattern's later loads that were fetched ahead");
  r.curves.push_back(references);
  r.statistics = statistics;
}

}  // namespace

void register_prefetch_experiments(Registry& registry) {
  registry.add(std::make_unique<Prefetch>());
}

}  // namespace gpuprobe::probes
