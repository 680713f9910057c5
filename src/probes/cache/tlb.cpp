// latency.tlb: TLB levels, entries, coverage and miss penalty from walks over one line per
// page-sized cell (measure::cache::infer_tlb), on the device's Sequencer.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/confidence.hpp"
#include "core/error.hpp"
#include "core/samples.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "probes/cache/cache_samples.hpp"
#include "probes/cache/cache_structure.hpp"
#include "probes/cache/sequence_session.hpp"

namespace gpuprobe::probes {
namespace {

using namespace cache_structure;
using cache_samples::TlbSamples;
using nlohmann::json;
using units::kMiB;

/// 64 GiB of 2 MiB pages (bounded by free memory): published Hopper measurements (Luo et al.,
/// "Benchmarking and Dissecting the Nvidia Hopper GPU Architecture", 2024) see TLB levels at
/// spans of GiB; the H200 walk up to 4 GiB, then up to 32 GiB, showed only one ~10-cycle step
/// (at 256 MiB, entries of 16 MiB), so a second level, if any, reaches further.
constexpr std::uint64_t kTlbMaxPages = 32768;

class TlbExperiment : public Experiment {
 public:
  std::string id() const override { return "latency.tlb"; }
  std::string description() const override {
    return "TLB levels, entries, coverage and miss penalty: one line per 2 MiB cell at a random "
           "offset, n = 1, 2, 4 ... cells walked cyclically (ld.global.cg, each line's own "
           "cache latency subtracted); every step up is a level, its entries the last n below "
           "the step (bisection); the bytes one entry translates from where that crossing "
           "stops moving as the stride grows (or shrinks) from 2 MiB";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(int_axis("page_stride_bytes", {4096, static_cast<std::int64_t>(2 * kMiB)}, "B",
                           "smallest and largest page-sized stride")),
            fixed(int_axis("max_pages", {static_cast<std::int64_t>(kTlbMaxPages)}, "pages",
                           "most pages one walk touches"))};
  }
  int samples_version() const override { return TlbSamples::kVersion; }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto& info = ctx.device.info();
    const std::uint64_t largest = 2 * kMiB;
    // The walk's lines (one per page) stay within a quarter of the L2's lines.
    const std::uint64_t l2_lines = std::max<std::uint64_t>(info.l2_bytes / 128, 64);
    std::uint64_t max_pages = std::min<std::uint64_t>(kTlbMaxPages, l2_lines / 4);
    const std::uint64_t room = ctx.device.free_memory() > 256 * kMiB
                                   ? (ctx.device.free_memory() - 256 * kMiB) / largest
                                   : 0;
    max_pages = std::min(max_pages, room);
    if (max_pages < 4) return waive(r, "not enough free memory for a TLB walk of 4 x 2 MiB pages");
    auto s = open_session(ctx, max_pages * largest, max_pages * largest);
    if (!s) return waive(r, kNoSequencer);
    const auto t = measure::cache::infer_tlb(s->probe, largest, max_pages);
    r.parameters = {{"largest_page_bytes", largest}, {"max_pages", t.max_pages_tried}};
    std::string note;
    if (t.levels.empty()) {
      double top = 0;
      for (const auto& c : t.curve) top = std::max(top, c["excess_cycles"].get<double>());
      note =
          "no latency step (above 2 % of the cache latency and clear of the noise, "
          "separation >= 0.9) up to " +
          std::to_string(t.max_pages_tried) + " pages; largest median excess " +
          std::to_string(top) + " cycles";
    } else if (t.page_bytes == 0) {
      note =
          "the first level's crossing still falls at the largest stride the buffer allows: "
          "an entry covers at least " +
          std::to_string(t.coverage_at_least) +
          " B; no coverage, reach or entries-at-coverage finding";
    }
    r.samples = TlbSamples{tlb_levels(t), t.page_bytes, t.coverage_at_least, t.curve,
                           t.page_curve,  note,         s->probe.accesses};
    Curve cv{"walk", {"pages", "stride_bytes", "excess_cycles"}, {}};
    for (const auto& c : t.curve)
      cv.rows.push_back({c["pages"], c["stride_bytes"], c["excess_cycles"]});
    r.curves.push_back(cv);
  }
  void analyze(ExperimentResult& r) const override {
    if (r.status != Status::kPassed) return;
    const auto samples = samples_as<TlbSamples>(r);
    const auto& levels = samples.levels;
    const std::uint64_t page = samples.page_bytes;
    double all_conf = 1;
    for (std::size_t i = 0; i < levels.size(); ++i) {
      const auto& below = levels[i].below;
      const auto& above = levels[i].above;
      const double sep = confidence::separation(confidence::separation_z(below, above));
      all_conf = std::min(all_conf, sep);
      const std::string n = "tlb.l" + std::to_string(i + 1);
      const auto entries = static_cast<double>(levels[i].entries);
      // The first level is counted at its coverage stride; without a coverage its count at
      // 2 MiB cells is a reach, not entries (cells share entries), and is not emitted.
      if (i > 0 || page)
        r.findings.push_back({n + ".entries",
                              entries,
                              "entries",
                              sep,
                              "last number of cells (one line each, at the entries' coverage "
                              "for the first level) walked cyclically without a latency step "
                              "(bisection)",
                              {}});
      // The penalty from its independent replicates (results written before them: the one
      // pair of walks, the precision of the samples past the level).
      const auto& reps = levels[i].miss_penalty_replicates;
      const auto& ses = levels[i].miss_penalty_standard_errors;
      if (!reps.empty() && reps.size() == ses.size()) {
        const auto rs = confidence::summarize_replicates(reps, ses);
        r.findings.push_back(
            {n + ".miss_penalty",
             rs.value,
             "cycles",
             confidence::combine({sep, rs.precision}),
             "median excess latency just past the level minus the plateau before it (each "
             "line's own cache latency subtracted), median over " +
                 std::to_string(rs.replicates) +
                 " independent pairs of walks (the detection's, then other cells at fresh offsets)",
             {{"standard_error", rs.standard_error}, {"replicates", confidence::to_json(rs)}}});
      } else {
        const double pen = levels[i].miss_penalty_cycles;
        r.findings.push_back(
            {n + ".miss_penalty",
             pen,
             "cycles",
             confidence::combine({sep, confidence::precision(above, stats::median(above))}),
             "median excess latency just past the level minus the plateau before "
             "it (each line's own cache latency subtracted)",
             {}});
      }
      if (page)
        r.findings.push_back({n + ".reach",
                              entries * static_cast<double>(page),
                              "bytes",
                              sep,
                              "entries x page size",
                              {}});
    }
    // What is not emitted, and why (a finding without evidence is not written).
    json st = json::object();
    const std::string& note = samples.note;
    if (levels.empty())
      st["not_reported"] = {{"findings",
                             "tlb.levels, tlb.l1.* (entries, miss_penalty, reach), "
                             "tlb.page_size"},
                            {"why", note}};
    else if (!page)
      st["not_reported"] = {{"findings", "tlb.l1.entries, tlb.l*.reach, tlb.page_size"},
                            {"why", note}};
    r.statistics = st;
    if (!levels.empty())
      r.findings.push_back({"tlb.levels",
                            static_cast<double>(levels.size()),
                            "levels",
                            all_conf,
                            "latency steps of a page walk up to " +
                                std::to_string(r.parameters.value("max_pages", 0)) + " pages",
                            {}});
    if (page)
      r.findings.push_back({"tlb.page_size",
                            static_cast<double>(page),
                            "bytes",
                            all_conf,
                            "bytes one first-level entry translates: the stride from which the "
                            "step's crossing (in cells) stays as the stride doubles (larger "
                            "strides) or from which 1.5 x the entries stop sharing entries "
                            "(smaller strides); an entry may cover several driver pages",
                            {{"page_curve", samples.page_curve}}});
  }
};

}  // namespace

std::unique_ptr<Experiment> make_tlb_experiment() { return std::make_unique<TlbExperiment>(); }

std::vector<cache_samples::TlbLevel> tlb_levels(const analysis::cache::TlbResult& t) {
  std::vector<cache_samples::TlbLevel> levels;
  for (const auto& l : t.levels)
    levels.push_back({l.entries, l.miss_penalty_cycles, l.penalty_replicates,
                      l.penalty_standard_errors, l.below, l.above});
  return levels;
}

}  // namespace gpuprobe::probes
