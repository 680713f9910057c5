// cache.l2.partition: 512 lines (a pivot, its 14 single-bit neighbours over bits 7..20 and
// random lines in each of four 2 MiB pages). For every SM in turn: the L2 is flushed, a
// reference SM loads every line, and the SM times its first ld.global.cg of each line. The
// latencies split into near and far; SMs that find the same lines near form a group; a line is
// on side 1 when the SMs of the other group find it near; and that side is fitted as a
// GF(2)-linear function of the address bits inside a page (where virtual and physical bits
// agree), checked by how many lines it predicts.
#include "probes/cache/l2_partition.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "analysis/l2_partition.hpp"
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
#include "probes/cache/l2_partition_kernels.hpp"

namespace gpuprobe::probes {
namespace {

using cache_samples::L2PartitionSamples;
using nlohmann::json;

using units::kKiB;
using units::kMiB;
constexpr std::uint64_t kPage = 2 * kMiB;
constexpr int kPages = 4;
constexpr int kLinesPerPage = 128;
constexpr std::uint32_t kLineBytes = 128;

/// Offsets (from a 2 MiB-aligned base) of the probed lines.
std::vector<std::uint64_t> probe_offsets(std::uint64_t seed) {
  std::vector<std::uint64_t> out;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::uint64_t> line(1, kPage / kLineBytes - 1);
  for (int pg = 0; pg < kPages; ++pg) {
    std::set<std::uint64_t> in_page{0};
    for (int b = 7; b < 21; ++b) in_page.insert(std::uint64_t{1} << b);
    while (in_page.size() < static_cast<std::size_t>(kLinesPerPage)) {
      const std::uint64_t o = line(rng) * kLineBytes;
      if ((o & 0xFFFF) != 0xFF80) in_page.insert(o);  // the last line of a 64 KiB region warms
    }
    // pivot first, then the single-bit neighbours, then the random lines in address order
    out.push_back(pg * kPage);
    for (int b = 7; b < 21; ++b) out.push_back(pg * kPage + (std::uint64_t{1} << b));
    for (std::uint64_t o : in_page) {
      const bool single = o != 0 && (o & (o - 1)) == 0;
      if (o != 0 && !single) out.push_back(pg * kPage + o);
    }
  }
  return out;
}

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

class L2Partition : public Experiment {
 public:
  std::string id() const override { return "cache.l2.partition"; }
  std::string description() const override {
    return "per-SM L2 hit latency (dependent ld.global.cg) of 512 lines in four 2 MiB pages: near "
           "/ far "
           "partition of every line, the groups of SMs that share a near partition, and the "
           "partition as "
           "an XOR of address bits inside a page (fitted over GF(2), checked on every line)";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(int_axis("sm", {}, "", "every SM (one measuring block each)")),
            fixed(int_axis("lines", {}, "lines",
                           "4 pages x (pivot + 14 single-bit neighbours + 113 random lines)"))};
  }
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    return waive_on_model(info, kNeedsCudaGpu);
  }
  int samples_version() const override { return L2PartitionSamples::kVersion; }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto& info = ctx.device.info();
    const int sms = open_gpu(ctx.device).sm_count;
    const auto offsets = probe_offsets(ctx.options.seed);
    const std::uint32_t n = static_cast<std::uint32_t>(offsets.size());
    device::DeviceBuffer buf((kPages + 1) * kPage);
    GP_CUDA_CHECK(cudaMemset(buf.as<void>(), 0, buf.bytes()));
    const auto raw = reinterpret_cast<std::uint64_t>(buf.as<void>());
    const std::uint64_t base = units::round_up(raw, kPage);
    std::vector<std::uint64_t> lines(n);
    for (std::uint32_t i = 0; i < n; ++i) lines[i] = base + offsets[i];
    device::DeviceArray<std::uint64_t> d_lines(n);
    d_lines.upload(lines);
    // Flush buffer: 2 x L2, streamed before every round so that no line stays anywhere in it.
    const std::uint64_t flush_bytes = 2 * std::max<std::uint64_t>(info.l2_bytes, 4 * kMiB);
    if (flush_bytes + buf.bytes() + 64 * kMiB > ctx.device.free_memory())
      throw UsageError(id() + ": needs " + std::to_string(flush_bytes) + " B of free GPU memory");
    measure::L2Flush flush(flush_bytes, sms);
    r.protocol["l2_flush"] = flush.protocol() + " (before every SM's round)";
    device::DeviceArray<std::uint32_t> cycles(n), claims(2), ready(1), status(1), present(1024),
        wrong(2);
    l2part::Params p;
    p.lines = reinterpret_cast<const std::uint64_t* const*>(d_lines.get());
    p.n_lines = n;
    p.cycles = cycles.get();
    p.claims = claims.get();
    p.ready = ready.get();
    p.status = status.get();
    p.wrong = wrong.get();
    // The host writes every probed line's own address into it, and into the last line of its
    // 64 KiB region (never probed: the measured SM loads it first to warm the translation);
    // every load in every round is compared with what was written here.
    for (std::uint32_t i = 0; i < n; ++i)
      for (const std::uint64_t a : {lines[i], (lines[i] & ~std::uint64_t{0xFFFF}) | 0xFF80u})
        GP_CUDA_CHECK(cudaMemcpy(reinterpret_cast<void*>(a), &a, sizeof a, cudaMemcpyHostToDevice));
    // The SMs: every SM that runs a block of a wide launch.
    present.zero();
    l2part::list_sms(present.get(), static_cast<unsigned>(16 * sms));
    std::vector<std::uint32_t> smids;
    {
      const auto pr = present.download();
      for (std::uint32_t s = 0; s < pr.size(); ++s)
        if (pr[s]) smids.push_back(s);
    }
    if (smids.empty()) throw VerificationError(id() + ": no SM ran a block");
    const std::uint32_t reference = smids.front();
    // One round per SM, the reference SM first: flush, the reference loads every line, the SM
    // times its first load of each.
    L2PartitionSamples samples;
    samples.offsets = offsets;
    std::size_t retries = 0;
    for (std::uint32_t m : smids) {
      bool done = false;
      for (int attempt = 0; attempt < 4 && !done; ++attempt) {
        flush.flush();
        claims.zero();
        ready.zero();
        status.zero();
        wrong.zero();
        GP_CUDA_CHECK(cudaMemset(cycles.get(), 0xFF, n * sizeof(std::uint32_t)));
        p.reference_smid = reference;
        p.measured_smid = m;
        l2part::run_round(p, static_cast<unsigned>((4 << attempt) * sms));
        const std::uint32_t st = status.download()[0];
        done = (st & 3u) == 3u && !(st & 4u);
        if (!done) ++retries;
      }
      if (!done)
        throw VerificationError(id() + ": SM " + std::to_string(m) +
                                " or the reference SM got no block");
      const auto w = wrong.download();
      if (w[0] || w[1])
        throw VerificationError(id() + ": round of SM " + std::to_string(m) + ": " +
                                std::to_string(w[0]) + " loads of the reference SM and " +
                                std::to_string(w[1]) +
                                " of the measured SM did not return the address the host wrote");
      const auto c = cycles.download();
      if (std::any_of(c.begin(), c.end(),
                      [](std::uint32_t x) { return x == 0 || x == 0xffffffffu; }))
        throw VerificationError(id() + ": SM " + std::to_string(m) + " left a line unmeasured");
      samples.rows.push_back({m, c});
    }
    // Verification: every line still holds its own address (each load read what was meant).
    for (std::uint32_t i = 0; i < n; ++i) {
      std::uint64_t v = 0;
      GP_CUDA_CHECK(cudaMemcpy(&v, reinterpret_cast<const void*>(lines[i]), sizeof v,
                               cudaMemcpyDeviceToHost));
      if (v != lines[i])
        throw VerificationError(id() + ": line " + std::to_string(i) +
                                " does not hold its address");
    }
    r.parameters = {{"lines", n},
                    {"pages", kPages},
                    {"page_bytes", kPage},
                    {"reference_smid", reference},
                    {"protocol",
                     "per SM: stream 2 x L2 (flush); the reference SM loads every line "
                     "(ld.global.cg) and waits for all of them; then, for each probed line, the "
                     "SM loads the unprobed last line of the line's 64 KiB region (so that the "
                     "translation is cached) and times its first ld.global.cg of the line (one "
                     "load, its address already in a register, %clock64 around it, the clock "
                     "read held until the value arrives)"},
                    {"flush_bytes", flush_bytes},
                    {"sms", sms},
                    {"sms_measured", smids.size()},
                    {"rounds_retried", retries}};
    r.samples = samples;
  }
  void analyze(ExperimentResult& r) const override {
    const auto samples = samples_as<L2PartitionSamples>(r);
    analysis::PartitionInput in;
    in.offsets = samples.offsets;
    std::vector<std::uint32_t> smids;
    for (const auto& row : samples.rows) {
      in.latency.emplace_back(row.cycles.begin(), row.cycles.end());
      smids.push_back(row.smid);
    }
    const auto a = analysis::analyze_l2_partition(in);
    r.statistics = {{"split", a.split}, {"threshold_cycles", a.threshold}};
    std::vector<double> all, nears, fars;
    for (const auto& row : in.latency)
      for (double c : row) {
        all.push_back(c);
        (c < a.threshold ? nears : fars).push_back(c);
      }
    if (!a.split) {
      // Evidence of one class: the cells within the 20 % a far class would have to exceed.
      const double m = stats::median_or_zero(all);
      const auto within = static_cast<std::size_t>(std::count_if(
          all.begin(), all.end(), [m](double c) { return c < 1.2 * m && c > m / 1.2; }));
      r.findings.push_back(Finding{"l2.partition.count",
                                   1,
                                   "partitions",
                                   confidence::agreement(within, all.size()),
                                   "one latency class for every SM and line: no near/far partition",
                                   {{"median_cycles", a.near_cycles}}});
      return;
    }
    json groups = json::array({json::array(), json::array()});
    for (std::size_t i = 0; i < smids.size(); ++i) groups[a.row_group[i]].push_back(smids[i]);
    r.statistics["sm_groups"] = groups;
    r.statistics["line_partition"] = a.line_partition;
    // Cells (SM, line) that agree with their group's majority: the evidence for the grouping.
    const std::size_t cells = all.size();
    const auto agreeing = static_cast<std::size_t>(std::llround(a.consistency * cells));
    const double conf = confidence::agreement(agreeing, cells);
    r.findings.push_back(
        Finding{"l2.partition.near_latency",
                a.near_cycles,
                "cycles",
                confidence::combine({conf, confidence::precision(nears, a.near_cycles)}),
                "median L2 hit latency of the lines an SM finds near (two-means split)",
                {{"threshold_cycles", a.threshold}}});
    r.findings.push_back(
        Finding{"l2.partition.far_latency", a.far_cycles, "cycles",
                confidence::combine({conf, confidence::precision(fars, a.far_cycles)}),
                "median L2 hit latency of the lines an SM finds far", json::object()});
    r.findings.push_back(Finding{
        "l2.partition.sm_group_sizes",
        static_cast<double>(a.group_size[0]),
        "SMs",
        conf,
        "SMs that find the same lines near form a group; value: SMs in group 0 "
        "(the group of the first SM measured)",
        {{"group_sizes", {a.group_size[0], a.group_size[1]}}, {"consistency", a.consistency}}});
    // Which partition a line lands in depends on its physical page, a fresh draw with every
    // allocation: the fraction over one run's lines moved 5 % between runs while the per-cell
    // agreement stayed at 1 (issue 9, "Run to run"). The pages are the independent units: each
    // page's fraction is a replicate, and the spread between pages gives the precision.
    const std::uint64_t page = a.hash_found && a.page_bytes > 0
                                   ? a.page_bytes
                                   : r.parameters.value("page_bytes", std::uint64_t{0});
    std::map<std::uint64_t, std::pair<std::size_t, std::size_t>> per_page;  // lines, in 0
    for (std::size_t j = 0; j < in.offsets.size() && j < a.line_partition.size(); ++j) {
      auto& c = per_page[page > 0 ? in.offsets[j] / page : 0];
      ++c.first;
      c.second += a.line_partition[j] == 0 ? 1 : 0;
    }
    std::vector<double> fractions, ses;
    for (const auto& [pg, c] : per_page) {
      const double f = static_cast<double>(c.second) / static_cast<double>(c.first);
      fractions.push_back(f);
      // A page's own fraction is a proportion of its lines: binomial standard error.
      ses.push_back(std::sqrt(f * (1 - f) / static_cast<double>(c.first)));
    }
    auto pages = confidence::summarize_replicates(fractions, ses);
    const double page_precision = confidence::precision_at(pages, a.partition0_fraction);
    json page_extra = confidence::to_json(pages);
    page_extra["page_bytes"] = page;
    r.findings.push_back(Finding{
        "l2.partition.line_fraction",
        a.partition0_fraction,
        "fraction",
        confidence::combine({conf, page_precision}),
        "fraction of the probed lines in the partition near to group 0; confidence: agreement "
        "of the cells x precision from the spread of the per-page fractions (pages as "
        "replicates)",
        {{"pages", page_extra}}});
    if (a.hash_found) {
      json bits = json::array();
      for (int b = 0; b < 64; ++b)
        if (a.hash_mask >> b & 1u) bits.push_back(b);
      r.findings.push_back(Finding{
          "l2.partition.hash_mask",
          static_cast<double>(a.hash_mask),
          "mask",
          // Lines the function predicts, and bits the equations determine.
          confidence::combine({confidence::agreement(static_cast<std::size_t>(std::llround(
                                                         a.hash_accuracy * in.offsets.size())),
                                                     in.offsets.size()),
                               confidence::agreement(a.rank, a.bits)}),
          "partition(a) ^ partition(b) = parity(mask & (a ^ b)) for lines a, b in one "
          "page, solved over "
          "GF(2) from the single-bit neighbours and random lines of every page",
          {{"mask_hex", hex(a.hash_mask)},
           {"bits", bits},
           {"page_bytes", a.page_bytes},
           {"rank", a.rank},
           {"bits_considered", a.bits},
           {"lines_predicted", a.hash_accuracy}}});
    } else {
      r.statistics["hash_mask_not_found"] =
          "no GF(2)-linear function of the address bits inside a 2 MiB or 64 KiB page reproduces "
          "the partitions";
    }
    Curve cv{"sm_latency", {"smid", "group", "near_cycles_median", "far_cycles_median"}, {}};
    for (std::size_t i = 0; i < smids.size(); ++i) {
      std::vector<double> nearv, farv;
      for (std::size_t j = 0; j < in.offsets.size(); ++j)
        (in.latency[i][j] < a.threshold ? nearv : farv).push_back(in.latency[i][j]);
      cv.rows.push_back(
          {smids[i], a.row_group[i], stats::median_or_zero(nearv), stats::median_or_zero(farv)});
    }
    cv.hints = chart_hints("L2 partition map: each SM's latency to its near and far partition",
                           "smid", "", "near_cycles_median", "cycles")
                   .by({"group"})
                   .with_model({"far_cycles_median"})
                   .points();
    r.curves.push_back(cv);
  }
};

}  // namespace

void register_l2_partition_experiments(Registry& registry) {
  registry.add(std::make_unique<L2Partition>());
}

}  // namespace gpuprobe::probes
