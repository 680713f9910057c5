// cache.fetch_granularity: one thread loads the first word of a cold line (a miss), then times
// a load `offset` bytes further. While the offset stays inside what the miss fetched, the
// second load hits (L1 for ld.global.ca, L2 for ld.global.cg after an L2 flush); the first
// offset that misses again is the fetch granularity. 32 cold lines per offset and operator,
// each 64 KiB from the next, so no probe warms another.
#include "probes/cache/fetch_granularity.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "analysis/granularity.hpp"
#include "core/confidence.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/samples.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "device/device_buffer.hpp"
#include "measure/gpu.hpp"
#include "measure/l2_flush.hpp"
#include "probes/cache/cache_samples.hpp"
#include "probes/cache/fetch_kernels.hpp"

namespace gpuprobe::probes {
namespace {

using cache_samples::FetchGranularitySamples;
using nlohmann::json;

using units::kKiB;
using units::kMiB;
constexpr std::uint32_t kOffsets[] = {8, 16, 24, 32, 48, 64, 96, 128, 192, 256};
constexpr std::uint32_t kProbesPerOffset = 32;
constexpr std::uint64_t kLineSpacing = 64 * 1024;

struct Op {
  const char* name;
  int cg;
  const char* finding;
  const char* what;
};
constexpr Op kOps[] = {
    {"ld.global.ca", 0, "cache.l1.fetch_granularity",
     "bytes an L1 miss brings into the L1: the first offset from a missed word whose "
     "ld.global.ca misses the L1 again"},
    {"ld.global.cg", 1, "cache.l2.fill_granularity",
     "bytes a DRAM miss fills into the L2 (after a 2 x L2 flush): the first offset from a missed "
     "word whose ld.global.cg misses the L2 again"},
};

class FetchGranularity : public Experiment {
 public:
  std::string id() const override { return "cache.fetch_granularity"; }
  std::string description() const override {
    return "after a miss on a cold line's first word, the latency of a load 8..256 B further "
           "(ld.global.ca: L1 fetch granularity; ld.global.cg after an L2 flush: DRAM -> L2 fill "
           "granularity), 32 cold lines per offset, every load checked";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(string_axis("operator", {"ld.global.ca", "ld.global.cg"},
                              "load operator of the timed second load")),
            fixed(int_axis("offset_bytes", {8, 16, 24, 32, 48, 64, 96, 128, 192, 256}, "B",
                           "bytes from a cold line's first word to the timed load"))};
  }
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    return waive_on_model(info, kNeedsCudaGpu);
  }
  int samples_version() const override { return FetchGranularitySamples::kVersion; }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto& info = ctx.device.info();
    const int sms = open_gpu(ctx.device).sm_count;
    const std::uint64_t l2 = std::max<std::uint64_t>(info.l2_bytes, 4 * kMiB);
    const std::uint64_t n_off = sizeof kOffsets / sizeof kOffsets[0];
    const std::uint64_t per_op =
        n_off * kProbesPerOffset * kLineSpacing;  // bytes one operator spans
    const std::uint64_t region_bytes = 2 * per_op;
    const std::uint64_t flush_bytes = 2 * l2;
    if (region_bytes + flush_bytes + 64 * kMiB > ctx.device.free_memory())
      throw UsageError(id() + ": needs " + std::to_string(region_bytes + flush_bytes) +
                       " B of free GPU memory");
    device::DeviceArray<std::uint64_t> region(region_bytes / 8);
    measure::L2Flush flush(flush_bytes, sms);
    r.protocol["l2_flush"] = flush.protocol() + " (before each operator's probes)";
    fetch::prepare(region.get(), region.size());
    std::mt19937_64 rng(ctx.options.seed);
    std::uniform_int_distribution<std::uint64_t> sub(0, kLineSpacing / 1024 - 2);  // 1 KiB steps
    FetchGranularitySamples samples;
    for (std::size_t o = 0; o < 2; ++o) {
      // Probe k of offset d: line (o, d, k), its own 64 KiB slot, at a random 1 KiB step.
      std::vector<std::uint64_t> lines;
      std::vector<std::uint32_t> offs;
      for (std::uint64_t di = 0; di < n_off; ++di)
        for (std::uint32_t k = 0; k < kProbesPerOffset; ++k) {
          const std::uint64_t slot = o * per_op + (di * kProbesPerOffset + k) * kLineSpacing;
          lines.push_back(slot + sub(rng) * 1024);
          offs.push_back(kOffsets[di]);
        }
      device::DeviceArray<std::uint64_t> d_lines(lines.size());
      device::DeviceArray<std::uint32_t> d_offs(offs.size()), cycles(offs.size()), wrong(1);
      d_lines.upload(lines);
      d_offs.upload(offs);
      wrong.zero();
      flush.flush();
      fetch::Params p;
      p.region = region.get();
      p.region_words = region.size();
      p.line_offsets = d_lines.get();
      p.offsets = d_offs.get();
      p.probes = static_cast<std::uint32_t>(lines.size());
      p.cache_global = kOps[o].cg;
      p.cycles = cycles.get();
      p.wrong = wrong.get();
      fetch::run(p);
      if (const auto bad = wrong.download()[0])
        throw VerificationError(id() + ": " + std::to_string(bad) +
                                " loads did not return their own address");
      const auto c = cycles.download();
      for (std::uint64_t di = 0; di < n_off; ++di) {
        std::vector<std::uint32_t> v(
            c.begin() + static_cast<std::ptrdiff_t>(di * kProbesPerOffset),
            c.begin() + static_cast<std::ptrdiff_t>((di + 1) * kProbesPerOffset));
        samples.rows.push_back({kOps[o].name, kOffsets[di], std::move(v)});
      }
    }
    r.parameters = {{"probes_per_offset", kProbesPerOffset},
                    {"line_spacing_bytes", kLineSpacing},
                    {"flush_bytes", flush_bytes},
                    {"timing",
                     "%clock64 around the second load, held until its value arrives; the "
                     "first load (the miss) and both addresses are resolved before it"},
                    {"verification", "every word holds its own address; every load is compared"}};
    r.samples = samples;
  }
  void analyze(ExperimentResult& r) const override {
    const auto samples = samples_as<FetchGranularitySamples>(r);
    Curve cv{"latency", {"operator", "offset_bytes", "median_cycles", "p5", "p95"}, {}};
    json not_found = json::object();
    for (const auto& op : kOps) {
      std::vector<std::pair<std::uint32_t, double>> med;
      std::map<std::uint32_t, std::vector<double>> by_offset;
      json table = json::object();
      for (const auto& row : samples.rows) {
        if (row.op != op.name) continue;
        const std::vector<double> v(row.cycles.begin(), row.cycles.end());
        const double m = stats::median(v);
        med.emplace_back(row.offset_bytes, m);
        by_offset[row.offset_bytes] = v;
        table[std::to_string(row.offset_bytes)] = m;
        cv.rows.push_back(
            {op.name, row.offset_bytes, m, stats::quantile(v, 0.05), stats::quantile(v, 0.95)});
      }
      const auto g = analysis::fetch_granularity(med);
      if (!g) {
        not_found[op.finding] =
            "no clean step: no offset's median exceeds 1.5 x the smallest offset's, or a larger "
            "offset is fast again";
        continue;
      }
      // Evidence: how clearly the first slow offset's probes differ from the last fast one's
      // (separation), and how many single probes fall on the side of the 1.5 x threshold their
      // offset's class predicts (agreement).
      const double threshold = 1.5 * stats::median(by_offset.begin()->second);
      std::size_t agreeing = 0, probes = 0;
      const std::vector<double>* last_fast = nullptr;
      for (const auto& [offset, v] : by_offset) {
        const bool slow = offset >= *g;
        if (!slow) last_fast = &v;
        for (double c : v) agreeing += (c > threshold) == slow ? 1 : 0;
        probes += v.size();
      }
      const double sep =
          last_fast ? confidence::separation(confidence::separation_z(*last_fast, by_offset.at(*g)))
                    : 0.0;
      Finding f{op.finding, static_cast<double>(*g),
                "bytes",    confidence::combine({sep, confidence::agreement(agreeing, probes)}),
                op.what,    {{"median_cycles_by_offset", table}}};
      f.extra["probes_agreeing"] = agreeing;
      f.extra["probes"] = probes;
      r.findings.push_back(f);
    }
    r.statistics["not_found"] = not_found;
    cv.hints = chart_hints("second load's latency against its offset from the first",
                           "offset_bytes", "bytes", "median_cycles", "cycles")
                   .by({"operator"});
    r.curves.push_back(cv);
  }
};

}  // namespace

void register_fetch_granularity_experiments(Registry& registry) {
  registry.add(std::make_unique<FetchGranularity>());
}

}  // namespace gpuprobe::probes
