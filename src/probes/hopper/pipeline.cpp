// hopper.pipeline: a persistent TMA -> shared-memory ring -> wgmma tile pipeline on every SM
// (bf16 -> f32, tiles of BM x 256 x 64 per CTA per k-step, BM = 128 with two consumer
// warpgroups or 64 with one), 1..4 stages, 128-B swizzled TMA boxes, without and with B
// multicast to a cluster of 2, against the wgmma-only rate (operands resident in
// shared memory) and the copy-only rate (TMA loads, no math) of the same tiles. Every launch's
// last-work-item accumulators of every CTA are compared exactly with a host product; a
// configuration that fails is reported as an error, never as a number.
#include "probes/hopper/pipeline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "core/confidence.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/stats.hpp"
#include "device/device_buffer.hpp"
#include "measure/checks.hpp"
#include "measure/gpu.hpp"
#include "measure/replicates.hpp"
#include "probes/hopper/hopper.hpp"
#include "probes/hopper/pipeline_kernels.hpp"
#include "probes/hopper/pipeline_samples.hpp"

namespace gpuprobe::probes {
namespace {

using nlohmann::json;
namespace pipeline_kernels = pipeline;

constexpr std::uint32_t kMTotal = 512, kNTotal = 512, kKTotal = 1024;
constexpr std::uint32_t kItems = 192;  // work items per CTA: 192 x 16 = 3072 k-steps
constexpr int kKb = kKTotal / pipeline_kernels::kKStep;

const char* mode_name(pipeline_kernels::Mode m) {
  switch (m) {
    case pipeline_kernels::Mode::kPipeline:
      return "pipeline";
    case pipeline_kernels::Mode::kMathOnly:
      return "wgmma_only";
    case pipeline_kernels::Mode::kSyncOnly:
      return "sync_only";
    case pipeline_kernels::Mode::kCopyOnly:
      return "copy_only";
  }
  return "?";
}

std::string shape_name(int bm) { return std::to_string(bm) + "x256x64"; }

/// Operands as integers v in {+-1..+-6}; the bf16 value is v / 2 (exact). Host partial products
/// per k-block in units of 1/4: part[kb][m][n] = sum_{k in kb} vA[m][k] vB[n][k].
struct Problem {
  std::vector<int> a, b;           ///< m_total x k_total, n_total x k_total
  std::vector<std::int32_t> part;  ///< kKb x kMTotal x kNTotal
  std::vector<std::uint16_t> a_bits, b_bits;
};

/// The bf16 bits of v / 2 (exact: at most 3 significant bits).
std::uint16_t half_value_bf16(int v) {
  return hopper_layout::bf16_bits(static_cast<float>(v) * 0.5f);
}

Problem make_problem(std::uint64_t seed) {
  Problem p;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> mag(1, 6), sign(0, 1);
  auto draw = [&] { return sign(rng) ? mag(rng) : -mag(rng); };
  p.a.resize(static_cast<std::size_t>(kMTotal) * kKTotal);
  p.b.resize(static_cast<std::size_t>(kNTotal) * kKTotal);
  for (auto& x : p.a) x = draw();
  for (auto& x : p.b) x = draw();
  p.a_bits.resize(p.a.size());
  p.b_bits.resize(p.b.size());
  for (std::size_t i = 0; i < p.a.size(); ++i) p.a_bits[i] = half_value_bf16(p.a[i]);
  for (std::size_t i = 0; i < p.b.size(); ++i) p.b_bits[i] = half_value_bf16(p.b[i]);
  p.part.assign(static_cast<std::size_t>(kKb) * kMTotal * kNTotal, 0);
  // 2^28 multiply-adds: the rows of A spread over the host's cores (each writes its own rows).
  parallel::for_ranges(
      kMTotal,
      [&](unsigned, std::size_t m0, std::size_t m1) {
        for (std::size_t m = m0; m < m1; ++m)
          for (std::uint32_t n = 0; n < kNTotal; ++n) {
            const int* ar = &p.a[m * kKTotal];
            const int* br = &p.b[static_cast<std::size_t>(n) * kKTotal];
            for (int kb = 0; kb < kKb; ++kb) {
              std::int32_t s = 0;
              for (int k = kb * pipeline_kernels::kKStep; k < (kb + 1) * pipeline_kernels::kKStep;
                   ++k)
                s += ar[k] * br[k];
              p.part[(static_cast<std::size_t>(kb) * kMTotal + m) * kNTotal + n] = s;
            }
          }
      },
      16);
  return p;
}

/// The expected last-work-item accumulators (kMTotal x kNTotal, in units of 1/4) of a mode:
/// every k-block once (pipeline, copy-only), or stage (i % stages) = k-block (i % stages) for
/// the 16 k-steps of the item (wgmma-only).
std::vector<std::int64_t> expected(const Problem& p, pipeline_kernels::Mode mode, int stages) {
  std::vector<int> count(kKb, 0);
  if (mode == pipeline_kernels::Mode::kMathOnly) {
    const std::uint32_t first = (kItems - 1) * kKb;
    for (std::uint32_t i = first; i < first + kKb; ++i)
      ++count[i % static_cast<std::uint32_t>(stages)];
  } else {
    std::fill(count.begin(), count.end(), 1);
  }
  std::vector<std::int64_t> r(static_cast<std::size_t>(kMTotal) * kNTotal, 0);
  for (int kb = 0; kb < kKb; ++kb) {
    if (!count[kb]) continue;
    const std::int32_t* src = &p.part[static_cast<std::size_t>(kb) * kMTotal * kNTotal];
    for (std::size_t i = 0; i < r.size(); ++i)
      r[i] += static_cast<std::int64_t>(count[kb]) * src[i];
  }
  return r;
}

/// Compares every CTA's last-item accumulators with the reference; returns the number wrong.
/// The accumulators every CTA of launch `l` must write (the output layout of run_pipeline) for
/// the reference product `ref` of its last work item; exact in float (small multiples of 1/4).
std::vector<float> expected_image(const std::vector<std::int64_t>& ref,
                                  const pipeline_kernels::Launch& l) {
  const int wgs = l.bm / 64;
  std::vector<float> want(static_cast<std::size_t>(l.blocks) * wgs *
                          pipeline_kernels::kAccumulators * pipeline_kernels::kThreadsPerWarpgroup);
  // Each block's image is its own (blocks spread over the host's cores).
  auto blocks = [&](unsigned, std::size_t b0, std::size_t b1) {
    for (std::size_t blk = b0; blk < b1; ++blk) {
      std::uint32_t mb = 0, nb = 0;
      pipeline_kernels::tile_of(static_cast<std::uint32_t>(blk), kItems - 1,
                                static_cast<std::uint32_t>(l.blocks), l.m_blocks, l.tiles,
                                l.cluster, mb, nb);
      const std::uint32_t m0 = mb * static_cast<std::uint32_t>(l.bm),
                          n0 = nb * pipeline_kernels::kN;
      for (int wg = 0; wg < wgs; ++wg)
        for (int reg = 0; reg < pipeline_kernels::kAccumulators; ++reg)
          for (int th = 0; th < pipeline_kernels::kThreadsPerWarpgroup; ++th) {
            int row, col;
            hopper_layout::accumulator_position(th, reg, row, col);
            const std::size_t m = m0 + static_cast<std::uint32_t>(64 * wg + row),
                              n = n0 + static_cast<std::uint32_t>(col);
            want[((blk * wgs + static_cast<std::size_t>(wg)) * pipeline_kernels::kAccumulators +
                  reg) *
                     pipeline_kernels::kThreadsPerWarpgroup +
                 th] = static_cast<float>(static_cast<double>(ref[m * kNTotal + n]) * 0.25);
          }
    }
  };
  parallel::for_ranges(static_cast<std::size_t>(l.blocks), blocks, 4);
  return want;
}

/// Compares every CTA's last-item accumulators with the expected image; returns the number
/// wrong and describes the first in `first`. The comparison runs on the host's cores: a launch
/// writes up to 17 MB of accumulators, and one thread checking them took several times the
/// kernel's own time.
std::uint64_t check(const float* out, std::size_t n_out, const std::vector<float>& want, int bm,
                    std::string& first) {
  const std::size_t n = std::min(n_out, want.size());
  const auto mm = parallel::count_mismatches(out, want.data(), n);  // NaN (unwritten) never equal
  if (mm.count) {
    const std::size_t i = mm.first;
    const std::size_t th = i % pipeline_kernels::kThreadsPerWarpgroup,
                      reg = (i / pipeline_kernels::kThreadsPerWarpgroup) %
                            pipeline_kernels::kAccumulators,
                      wgblk =
                          i / (static_cast<std::size_t>(pipeline_kernels::kThreadsPerWarpgroup) *
                               pipeline_kernels::kAccumulators);
    first = "block " + std::to_string(wgblk / static_cast<std::size_t>(bm / 64)) + " warpgroup " +
            std::to_string(wgblk % static_cast<std::size_t>(bm / 64)) + " thread " +
            std::to_string(th) + " register " + std::to_string(reg) + " = " +
            std::to_string(out[i]) + ", expected " + std::to_string(want[i]);
  }
  return mm.count + (want.size() - n);
}

using hopper::PipelinePoint;

/// The copy/math overlap of one pipelined configuration (per shape, multicast, stages).
struct OverlapRow {
  std::string shape;
  bool multicast = false;
  int stages = 0;
  double t_copy_ns = 0, t_math_ns = 0, t_pipeline_ns = 0;
  double overlap = 0, overlap_standard_error = 0, pipeline_over_wgmma_only = 0;
  double confidence = 0;
};

/// Overlap rows from the verified points: per shape and stage count (check() holds the
/// measurements of every verified point).
std::vector<OverlapRow> overlap_rows(const std::vector<PipelinePoint>& points) {
  std::vector<OverlapRow> rows;
  for (const auto& pp : points) {
    if (pp.mode != "pipeline" || !pp.verified) continue;
    const PipelinePoint* copy = nullptr;
    const PipelinePoint* math = nullptr;
    for (const auto& q : points) {
      if (q.shape != pp.shape || !q.verified) continue;
      if (q.mode == "copy_only" && q.stages == pp.stages &&
          q.uses_multicast() == pp.uses_multicast())
        copy = &q;
      if (q.mode == "wgmma_only" && q.a_from() == pp.a_from()) math = &q;
    }
    if (!copy || !math || pp.a_from() != "shared") continue;
    const double tc = *copy->ns_per_kstep, tm = *math->ns_per_kstep, tp = *pp.ns_per_kstep;
    // The overlap is a difference of three times over the smaller one: their standard errors
    // add in quadrature (the denominator's own error is second order).
    auto se_of = [](const PipelinePoint& q) {
      const auto& m = *q.ns_per_kstep_summary;
      const double n = static_cast<double>(m.n.value_or(0));
      return n >= 2 ? 1.2533 * 1.4826 * m.mad.value_or(0.0) / std::sqrt(n) : 0.0;
    };
    const double se_overlap = std::sqrt(se_of(*copy) * se_of(*copy) + se_of(*math) * se_of(*math) +
                                        se_of(pp) * se_of(pp)) /
                              std::min(tc, tm);
    OverlapRow row;
    row.shape = pp.shape;
    row.multicast = pp.uses_multicast();
    row.stages = pp.stages;
    row.t_copy_ns = tc;
    row.t_math_ns = tm;
    row.t_pipeline_ns = tp;
    row.overlap = (tc + tm - tp) / std::min(tc, tm);
    row.overlap_standard_error = se_overlap;
    row.pipeline_over_wgmma_only = tm / tp;
    // A derived figure is as precise as its least precise input allows: the product of the
    // three times' precisions.
    row.confidence = confidence::combine({copy->ns_per_kstep_summary->precision(),
                                          math->ns_per_kstep_summary->precision(),
                                          pp.ns_per_kstep_summary->precision()});
    rows.push_back(row);
  }
  return rows;
}

/// Per (shape, multicast, stages): the sweep's overlap row and the summary of that overlap
/// over the sweep and its replicates (samples.overlap_replicates; results written before
/// replicates existed hold the sweep alone, one replicate).
std::vector<std::pair<OverlapRow, confidence::ReplicateSummary>> overlap_summaries(
    const hopper::PipelineSamples& samples) {
  std::vector<std::vector<OverlapRow>> lists{overlap_rows(samples.points)};
  if (samples.overlap_replicates)
    for (const auto& pass : *samples.overlap_replicates) lists.push_back(overlap_rows(pass));
  std::vector<std::pair<OverlapRow, confidence::ReplicateSummary>> out;
  for (const auto& row : lists.front()) {
    std::vector<double> values, ses;
    for (const auto& list : lists)
      for (const auto& o : list)
        if (o.shape == row.shape && o.multicast == row.multicast && o.stages == row.stages) {
          values.push_back(o.overlap);
          ses.push_back(o.overlap_standard_error);
        }
    out.emplace_back(row, confidence::summarize_replicates(values, ses));
  }
  return out;
}

/// The buffers, launch shapes and checks of one hopper.pipeline run: measures one
/// configuration at a time, every launch verified against the host product.
class PipelineRig {
 public:
  PipelineRig(const Gpu& gpu, std::uint64_t seed, const ProtocolOptions& protocol)
      : prob_(make_problem(seed)),
        a_(prob_.a_bits.size()),
        b_(prob_.b_bits.size()),
        blocks_(gpu.sm_count),
        smem_per_sm_(gpu.shared_per_sm),
        optin_(gpu.shared_per_block_optin),
        out_(static_cast<std::size_t>(gpu.sm_count) * 2 * pipeline_kernels::kAccumulators *
             pipeline_kernels::kThreadsPerWarpgroup),
        out_host_(out_.size()),
        times_(static_cast<std::size_t>(gpu.sm_count)),
        timeouts_(1),
        ref_full_(expected(prob_, pipeline_kernels::Mode::kPipeline, 1)),
        protocol_(&protocol) {
    a_.upload(prob_.a_bits);
    b_.upload(prob_.b_bits);
    std::uint32_t smem_max = 0;
    for (int bm : {64, 128})
      for (int s = 1; s <= pipeline_kernels::kMaxStages; ++s)
        smem_max = std::max(smem_max, smem_for(bm, s));
    pipeline_kernels::pipeline_prepare(
        smem_max);  // the largest dynamic size any launch below asks for
  }

  /// The protocol the next measurements run under.
  void use_protocol(const ProtocolOptions& protocol) { protocol_ = &protocol; }

  /// One configuration, measured under the protocol; a point that failed carries its error. A
  /// sticky CUDA error records `sweep_points` in r.samples and is rethrown.
  PipelinePoint measure(int bm, int stages, pipeline_kernels::Mode mode, int cluster, bool relaxed,
                        bool a_regs, ExperimentResult& r,
                        const std::vector<PipelinePoint>& sweep_points) {
    const int grid = grid_for(bm, cluster);
    auto l = make_launch(bm, stages, mode, cluster, grid);
    l.relaxed = relaxed || a_regs;
    l.a_regs = a_regs;
    const bool resident =
        mode == pipeline_kernels::Mode::kMathOnly || mode == pipeline_kernels::Mode::kSyncOnly;
    // The expected accumulators depend on the tile mapping (shape, cluster, grid) and, for
    // the resident modes, on the stage count: built once per distinct key.
    const auto key = std::make_tuple(bm, cluster, grid, resident ? stages : 0);
    auto it = images_.find(key);
    if (it == images_.end())
      it = images_
               .emplace(key,
                        expected_image(
                            resident ? expected(prob_, pipeline_kernels::Mode::kMathOnly, stages)
                                     : ref_full_,
                            l))
               .first;
    const std::vector<float>& want = it->second;
    PipelinePoint pt;
    pt.shape = shape_name(bm);
    pt.bm = bm;
    pt.mode = mode_name(mode);
    pt.stages = stages;
    pt.multicast = cluster == 2;
    pt.arrive = l.relaxed ? "relaxed" : "release";
    pt.a_operand = a_regs ? "registers" : "shared";
    pt.blocks = grid;
    pt.dynamic_smem_bytes = l.dynamic_smem;
    try {
      if (grid < 2) throw VerificationError("no cluster of 2 fits on this GPU");
      std::vector<double> mhz;
      auto once = [&](int) {
        std::string why;
        const double ns = launch_checked(l, want, why);
        if (ns <= 0) throw VerificationError(why);
        mhz.push_back(last_mhz_);
        return ns;
      };
      const auto m = repeat_until_stable(once, *protocol_);
      const double ns = m.summary.median;
      const double flop = 2.0 * bm * pipeline_kernels::kN * pipeline_kernels::kKStep;
      pt.verified = true;
      pt.ns_per_kstep = ns;
      pt.ns_per_kstep_summary = RecordedSummary::of(m);
      pt.sm_clock_mhz = stats::median_or_zero(mhz);
      // Shared-memory traffic per SM clock: TMA writes of a stage and the wgmma operand reads
      // (each warpgroup reads its 64 rows of A and all of B per k-step).
      const double writes =
          mode == pipeline_kernels::Mode::kCopyOnly || mode == pipeline_kernels::Mode::kPipeline
              ? static_cast<double>(pipeline_kernels::stage_bytes(bm))
              : 0.0;
      const double reads =
          mode == pipeline_kernels::Mode::kCopyOnly
              ? 0.0
              : (bm / 64) * (64.0 + pipeline_kernels::kN) * pipeline_kernels::kKStep * 2.0;
      const double clk = ns * stats::median_or_zero(mhz) * 1e-3;
      pt.smem_bytes_per_kstep = writes + reads;
      pt.smem_bytes_per_clk = clk > 0 ? (writes + reads) / clk : 0.0;
      pt.tiles_per_s = grid / ns * 1e9;
      pt.gb_s = static_cast<double>(pipeline_kernels::stage_bytes(bm)) * grid / ns;
      if (mode != pipeline_kernels::Mode::kCopyOnly) pt.tflops = flop * grid / ns * 1e-3;
    } catch (const CudaError& ex) {
      if (ex.sticky()) {
        r.samples = {{"points", sweep_points}};
        throw;
      }
      pt.verified = false;
      pt.error = ex.what();
    } catch (const std::exception& ex) {
      pt.verified = false;
      pt.error = ex.what();
    }
    return pt;
  }

 private:
  /// More than half of an SM's shared memory: one CTA per SM. The kernel's static shared memory
  /// (the mbarriers) counts against the opt-in limit too: stay 1 KiB below it.
  std::uint32_t smem_for(int bm, int stages) const {
    return std::min<std::uint32_t>(
        static_cast<std::uint32_t>(optin_) - 1024,
        std::max<std::uint32_t>(pipeline_kernels::smem_bytes(bm, stages),
                                static_cast<std::uint32_t>(smem_per_sm_) / 2 + 1024));
  }
  pipeline_kernels::Launch make_launch(int bm, int stages, pipeline_kernels::Mode mode, int cluster,
                                       int grid) const {
    const std::uint64_t desc =
        hopper_layout::descriptor_bits_swizzle128(1024);  // 8 rows x 128 B apart
    pipeline_kernels::Launch l;
    l.bm = bm;
    l.stages = stages;
    l.cluster = cluster;
    l.mode = mode;
    l.blocks = grid;
    l.items = kItems;
    l.m_blocks = kMTotal / static_cast<std::uint32_t>(bm);
    l.tiles = l.m_blocks * (kNTotal / pipeline_kernels::kN);
    l.k_total = kKTotal;
    l.dynamic_smem = smem_for(bm, stages);
    l.desc_a = desc;
    l.desc_b = desc;
    return l;
  }
  /// Grids: one CTA per SM; with multicast as many clusters of 2 as fit at once (at most
  /// SMs / 2), so that the persistent grid never waits for a second wave.
  int grid_for(int bm, int cluster) const {
    if (cluster == 1) return blocks_;
    const int fit =
        pipeline_kernels::pipeline_max_clusters(bm, 2, smem_for(bm, pipeline_kernels::kMaxStages));
    return 2 * std::min(fit, blocks_ / 2);
  }
  /// One launch, checked; returns ns per k-step per CTA (the span of all CTAs / k-steps) and
  /// leaves the median SM clock of the CTAs (%clock64 / %globaltimer) in last_mhz_; -1 with the
  /// reason in `why` when it failed.
  double launch_checked(const pipeline_kernels::Launch& l, const std::vector<float>& want,
                        std::string& why) {
    timeouts_.zero();
    GP_CUDA_CHECK(
        cudaMemset(out_.get(), 0xFF, out_.size() * sizeof(float)));  // NaN: unwritten is wrong
    pipeline_kernels::run_pipeline(l, a_.get(), kMTotal, b_.get(), kNTotal, out_.get(),
                                   times_.get(), timeouts_.get());
    const unsigned to = timeouts_.download()[0];
    if (to) {
      why = std::to_string(to) + " mbarrier waits timed out";
      return -1;
    }
    std::string first;
    const std::size_t n_out = std::min(want.size(), out_.size());
    out_.download_to(out_host_.data(), n_out);
    const auto wrong = check(out_host_.data(), n_out, want, l.bm, first);
    if (wrong) {
      why = std::to_string(wrong) + " wrong accumulators; first: " + first;
      return -1;
    }
    const auto t = times_.download(static_cast<std::size_t>(l.blocks));
    unsigned long long g0 = std::numeric_limits<unsigned long long>::max(), g1 = 0;
    std::vector<double> mhz;
    for (const auto& x : t) {
      g0 = std::min(g0, x.g0);
      g1 = std::max(g1, x.g1);
      if (x.g1 > x.g0 && x.c1 > x.c0)
        mhz.push_back(static_cast<double>(x.c1 - x.c0) * 1e3 / static_cast<double>(x.g1 - x.g0));
    }
    if (g1 <= g0) {
      why = "no %globaltimer span";
      return -1;
    }
    last_mhz_ = stats::median_or_zero(mhz);
    return static_cast<double>(g1 - g0) / (static_cast<double>(kItems) * kKb);
  }

  Problem prob_;
  device::DeviceArray<std::uint16_t> a_, b_;
  int blocks_ = 0, smem_per_sm_ = 0, optin_ = 0;
  device::DeviceArray<float> out_;
  device::PinnedArray<float> out_host_;  ///< every launch's accumulators land here
  device::DeviceArray<pipeline_kernels::Times> times_;
  device::DeviceArray<unsigned> timeouts_;
  std::vector<std::int64_t> ref_full_;
  const ProtocolOptions* protocol_;
  double last_mhz_ = 0;
  /// The expected accumulators per (shape, cluster, grid, resident stages).
  std::map<std::tuple<int, int, int, int>, std::vector<float>> images_;
};

/// What the run did, for the record.
json pipeline_parameters(std::uint64_t seed, int blocks, int sm_count) {
  return {
      {"tile_shapes", {"128x256x64 (2 consumer warpgroups)", "64x256x64 (1 consumer warpgroup)"}},
      {"instruction",
       "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16, 4 per k-step per "
       "warpgroup, A and B descriptors (K-major, 128-B swizzle, SBO 1024 B, start "
       "address + 32 B per k16 slice)"},
      {"copy",
       "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes "
       "with CU_TENSOR_MAP_SWIZZLE_128B: per stage one box {64 bf16 (128 B), BM} for A and one "
       "box {64, 256} for B; with multicast each CTA of a cluster of 2 loads its A and one "
       "box {64, 128} of the shared B with .multicast::cluster (mask 0b11)"},
      {"operands",
       "A 512 x 1024, B 512 x 1024 bf16, K contiguous, values v/2 with v in {+-1..+-6} "
       "(seed " +
           std::to_string(seed) + "); 1 MiB each: L2-resident after the first pass"},
      {"work", "per CTA " + std::to_string(kItems) +
                   " work items x 16 k-steps (one output tile over "
                   "K = 1024 each, accumulators restarted by scale-d 0)"},
      {"blocks", blocks},
      {"verification",
       "every launch: the last work item's accumulators of every CTA equal the "
       "host product exactly (wgmma_only: the product of the resident stages)"},
      {"timing",
       "ns per k-step = (last CTA end - first CTA start, %globaltimer) / k-steps per CTA"},
      {"copy_only_note",
       "the consumers run the wgmma of the last work item (16 of 3072 k-steps) "
       "to verify the copies; that time is included"},
      {"multicast",
       "cluster of 2 CTAs computing M-adjacent tiles of one N block share B: each "
       "loads half of it for both; a stage is refilled after both CTAs' consumers "
       "released it (remote mbarrier arrivals); grid = 2 x the clusters that fit at once"},
      {"sm_count", sm_count}};
}

/// The table of every sweep point, charted as TFLOP/s against stages.
Curve points_table(const std::vector<PipelinePoint>& points) {
  Curve cv{"table",
           {"shape", "mode", "stages", "multicast", "arrive", "a_operand", "blocks", "verified",
            "ns_per_kstep", "p5", "p95", "sm_clock_mhz", "smem_bytes_per_clk", "tflops",
            "tiles_per_s", "gb_s", "error"},
           {}};
  // Null where a point has no such value (not verified; tflops of copy_only).
  const auto cell = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  for (const auto& p : points) {
    const bool ok = p.verified;
    const auto& s = p.ns_per_kstep_summary;
    cv.rows.push_back(
        {p.shape, p.mode, p.stages, p.uses_multicast(), cell(p.arrive), cell(p.a_operand),
         cell(p.blocks), ok, ok ? cell(p.ns_per_kstep) : json(nullptr),
         ok && s ? json(s->p5_or_throw()) : json(nullptr),
         ok && s ? json(s->p95_or_throw()) : json(nullptr),
         ok ? cell(p.sm_clock_mhz) : json(nullptr), ok ? cell(p.smem_bytes_per_clk) : json(nullptr),
         ok ? cell(p.tflops) : json(nullptr), ok ? cell(p.tiles_per_s) : json(nullptr),
         ok ? cell(p.gb_s) : json(nullptr), ok ? json("") : json(p.error.value_or(""))});
  }
  cv.hints = chart_hints("TMA + wgmma pipeline: TFLOP/s against stages (best per shape)", "stages",
                         "", "tflops", "TFLOP/s")
                 .by({"shape"})
                 .best("max");
  return cv;
}

/// The overlap of copy and math per shape, multicast setting and stage count.
Curve overlap_table(const std::vector<PipelinePoint>& points) {
  Curve ov{"overlap",
           {"shape", "multicast", "stages", "t_copy_ns", "t_math_ns", "t_pipeline_ns", "overlap",
            "pipeline_over_wgmma_only"},
           {}};
  for (const auto& o : overlap_rows(points))
    ov.rows.push_back({o.shape, o.multicast, o.stages, o.t_copy_ns, o.t_math_ns, o.t_pipeline_ns,
                       o.overlap, o.pipeline_over_wgmma_only});
  ov.hints = chart_hints("pipeline overlap of copy and math against stages", "stages", "",
                         "overlap", "fraction")
                 .by({"shape", "multicast"});
  return ov;
}

class HopperPipeline : public Experiment {
 public:
  std::string id() const override { return "hopper.pipeline"; }
  int samples_version() const override { return hopper::PipelineSamples::kVersion; }
  std::string description() const override {
    return "persistent TMA (cp.async.bulk.tensor.2d, 128-B swizzle, B optionally multicast to a "
           "cluster of 2) "
           "-> shared-memory ring of 1..4 stages (full/empty mbarriers) -> wgmma m64n256k16 bf16 "
           "-> f32 on every SM, tiles 128x256x64 and 64x256x64 per CTA per "
           "k-step: TFLOP/s and tiles/s against the wgmma-only and copy-only rates, overlap of "
           "copy and math; "
           "accumulators of every CTA checked against a host product";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(string_axis("shape", {"128x256x64", "64x256x64"}, "tile M x N x K")),
            fixed(int_axis("stages", {1, 2, 3, 4}, "stages", "shared-memory pipeline stages")),
            fixed(bool_axis("multicast", {false, true}, "TMA multicast across a 2-block cluster")),
            fixed(string_axis("mode", {"pipeline", "wgmma_only", "copy_only", "sync_only"},
                              "what each iteration runs"))};
  }
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    return waive_unless_sm90a(info, kNeedsSm90a, kNeedsCudaGpu);
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const Gpu gpu = open_gpu(ctx.device);
    const int sm_count = gpu.sm_count;
    if (!pipeline_kernels::pipeline_compiled())
      throw VerificationError("hopper.pipeline: this binary holds no sm_90a pipeline code");
    PipelineRig rig(gpu, ctx.options.seed, ctx.options.protocol);
    r.parameters = pipeline_parameters(ctx.options.seed, sm_count, sm_count);
    // The sweep runs the full protocol: its best-of-configurations findings read lower and
    // moved between runs when it ran the replicates' share (issue 9 repeat). The overlap's
    // further replicates below run the share.
    const ProtocolOptions per_rep = gpuprobe::measure::per_replicate(ctx.options.protocol);
    std::vector<PipelinePoint> points;
    auto measure = [&](int bm, int stages, pipeline_kernels::Mode mode, int cluster, bool relaxed,
                       bool a_regs = false) {
      return rig.measure(bm, stages, mode, cluster, relaxed, a_regs, r, points);
    };
    auto ns_of = [](const PipelinePoint& pt) {
      return pt.verified ? pt.ns_per_kstep.value_or(std::numeric_limits<double>::infinity())
                         : std::numeric_limits<double>::infinity();
    };

    // 1. Stage release semantics, per shape and multicast setting, at the deepest ring: release
    //    arrivals (+ cluster-scope acquire with multicast) against relaxed arrivals; the faster
    //    verified one runs the sweep.
    std::vector<PipelinePoint> arrive_points;
    bool relaxed_for[2][2] = {{true, true}, {true, true}};  // [bm == 128][multicast]
    for (int bm : {128, 64})
      for (int cluster : {1, 2}) {
        const auto rel = measure(bm, pipeline_kernels::kMaxStages,
                                 pipeline_kernels::Mode::kPipeline, cluster, false);
        const auto rlx = measure(bm, pipeline_kernels::kMaxStages,
                                 pipeline_kernels::Mode::kPipeline, cluster, true);
        relaxed_for[bm == 128][cluster == 2] = !(ns_of(rel) < ns_of(rlx));
        arrive_points.push_back(rel);
        arrive_points.push_back(rlx);
      }

    // 2. The sweep: per shape, wgmma-only once, then copy-only and pipelined 1..4 stages,
    //    without and with multicast.
    int verified = 0;
    for (int bm : {128, 64}) {
      points.push_back(measure(bm, 1, pipeline_kernels::Mode::kMathOnly, 1, true));
      for (int cluster : {1, 2}) {
        const bool relaxed = relaxed_for[bm == 128][cluster == 2];
        for (pipeline_kernels::Mode mode :
             {pipeline_kernels::Mode::kCopyOnly, pipeline_kernels::Mode::kSyncOnly,
              pipeline_kernels::Mode::kPipeline})
          for (int st = 1; st <= pipeline_kernels::kMaxStages; ++st)
            points.push_back(measure(bm, st, mode, cluster, relaxed));
      }
      // A from registers (ldmatrix + register-A wgmma): the wgmmas then read only B from
      // shared memory.
      points.push_back(measure(bm, 1, pipeline_kernels::Mode::kMathOnly, 1, true, true));
      for (int cluster : {1, 2})
        points.push_back(measure(bm, pipeline_kernels::kMaxStages,
                                 pipeline_kernels::Mode::kPipeline, cluster, true, true));
    }
    // The overlap compares three times measured seconds apart; their ratio drifted between
    // runs far beyond the within-run noise (issue 9, "Run to run"). So the points it uses are
    // measured again as further independent replicates (fresh launches, the sweep's share of
    // repetitions each: measure::per_replicate), and the overlap's confidence comes from the
    // spread of the replicates' overlaps (overlap_summaries).
    std::vector<std::vector<PipelinePoint>> overlap_replicates;
    gpuprobe::measure::replicate(gpuprobe::measure::kReplicates - 1, [&](int) {
      rig.use_protocol(per_rep);
      std::vector<PipelinePoint> pass;
      for (int bm : {128, 64}) {
        pass.push_back(measure(bm, 1, pipeline_kernels::Mode::kMathOnly, 1, true));
        for (int cluster : {1, 2}) {
          const bool relaxed = relaxed_for[bm == 128][cluster == 2];
          for (pipeline_kernels::Mode mode :
               {pipeline_kernels::Mode::kCopyOnly, pipeline_kernels::Mode::kPipeline})
            for (int st = 1; st <= pipeline_kernels::kMaxStages; ++st)
              pass.push_back(measure(bm, st, mode, cluster, relaxed));
        }
      }
      overlap_replicates.push_back(pass);
      return 0;
    });
    rig.use_protocol(ctx.options.protocol);
    for (const auto& p : points) verified += p.verified ? 1 : 0;
    r.samples = hopper::PipelineSamples{points, arrive_points, overlap_replicates, sm_count};
    r.curves.push_back(points_table(points));
    r.curves.push_back(overlap_table(points));
    if (verified == 0)
      throw VerificationError("hopper.pipeline: no configuration passed verification");
  }
  void analyze(ExperimentResult& r) const override {
    const auto samples = samples_as<hopper::PipelineSamples>(r);
    const auto& points = samples.points;
    std::vector<FailedRow> failed;
    std::size_t rows = 0;
    const std::vector<PipelinePoint> none;
    std::vector<const std::vector<PipelinePoint>*> lists{
        &points, samples.arrive_check ? &*samples.arrive_check : &none};
    if (samples.overlap_replicates)
      for (const auto& pass : *samples.overlap_replicates) lists.push_back(&pass);
    for (const auto* list : lists) {
      for (const auto& p : *list) {
        ++rows;
        if (p.verified) continue;
        failed.push_back({p.shape + " " + p.mode + " stages " + std::to_string(p.stages) +
                              (p.uses_multicast() ? " multicast" : "") + " A from " + p.a_from() +
                              " arrive " + p.arrive.value_or("?"),
                          p.error.value_or("failed its check")});
      }
    }
    report_failed_rows(r, failed, rows);
    // A rate's relative precision is that of the time per k-step it is computed from (check()
    // holds every verified point's summary, and the TFLOP/s of all but copy_only).
    auto precision_of = [](const PipelinePoint& p) { return p.ns_per_kstep_summary->precision(); };
    const auto tflops = [](const PipelinePoint& p) { return *p.tflops; };
    for (const char* shape : {"128x256x64", "64x256x64"}) {
      const PipelinePoint* best = nullptr;
      const PipelinePoint* math = nullptr;
      const PipelinePoint* sync = nullptr;
      for (const auto& p : points) {
        if (p.shape != shape || !p.verified) continue;
        if (p.mode == "wgmma_only" && (!math || tflops(p) > tflops(*math)))
          math = &p;  // the faster A source is the yardstick
        if (p.mode == "sync_only" && (!sync || tflops(p) > tflops(*sync))) sync = &p;
        if (p.mode == "pipeline" && (!best || tflops(p) > tflops(*best))) best = &p;
      }
      const std::string tag = std::string("hopper.pipeline.") + shape;
      if (math)
        r.findings.push_back(
            Finding{tag + ".wgmma_only_tflops",
                    tflops(*math),
                    "TFLOP/s",
                    precision_of(*math),
                    "wgmma only, operands resident in shared memory, same loop and tile (the "
                    "faster of A from shared memory and A from registers); accumulators checked",
                    {{"tiles_per_s", *math->tiles_per_s}, {"a_operand", math->a_from()}}});
      if (sync)
        r.findings.push_back(
            Finding{tag + ".sync_only_tflops",
                    tflops(*sync),
                    "TFLOP/s",
                    precision_of(*sync),
                    "best stage count of the ring without data after its first fill (the "
                    "synchronization cost alone); accumulators checked",
                    {{"stages", sync->stages}, {"multicast", sync->uses_multicast()}}});
      if (!best) continue;
      Finding f{tag + ".best_pipeline_tflops",
                tflops(*best),
                "TFLOP/s",
                precision_of(*best),
                "best stage count, with or without multicast, of the TMA -> shared ring -> wgmma "
                "pipeline; "
                "accumulators checked",
                {{"stages", best->stages},
                 {"multicast", best->uses_multicast()},
                 {"tiles_per_s", *best->tiles_per_s}}};
      if (best->arrive) f.extra["arrive"] = *best->arrive;
      if (best->a_operand) f.extra["a_operand"] = *best->a_operand;
      if (best->sm_clock_mhz) f.extra["sm_clock_mhz"] = *best->sm_clock_mhz;
      if (best->smem_bytes_per_clk) f.extra["smem_bytes_per_clk"] = *best->smem_bytes_per_clk;
      if (math && math->sm_clock_mhz) f.extra["wgmma_only_sm_clock_mhz"] = *math->sm_clock_mhz;
      if (math && math->smem_bytes_per_clk)
        f.extra["wgmma_only_smem_bytes_per_clk"] = *math->smem_bytes_per_clk;
      if (math) {
        const double ratio = tflops(*best) / tflops(*math);
        f.extra["fraction_of_wgmma_only"] = ratio;
        // The same ratio per SM clock (the pipelined runs draw more power and may clock lower).
        const double cb = best->sm_clock_mhz.value_or(0.0), cm = math->sm_clock_mhz.value_or(0.0);
        if (cb > 0 && cm > 0) f.extra["fraction_of_wgmma_only_per_clock"] = ratio * cm / cb;
        f.extra["within_10_percent_of_wgmma_only"] = ratio >= 0.9;
      }
      r.findings.push_back(f);
    }
    // The copy-only runs without multicast read every landed byte from the L2 (the operands,
    // 1 MiB each, stay L2-resident): the best is a TMA L2 -> shared-memory read bandwidth.
    const PipelinePoint* copy = nullptr;
    for (const auto& p : points)
      if (p.mode == "copy_only" && !p.uses_multicast() && p.verified &&
          (!copy || *p.gb_s > *copy->gb_s))
        copy = &p;
    if (copy)
      r.findings.push_back(
          Finding{"l2.tma_read_bandwidth",
                  *copy->gb_s,
                  "GB/s",
                  precision_of(*copy),
                  "best copy-only run without multicast: every CTA streams its A "
                  "and B tiles (2 MiB of L2-resident operands, each tile read by "
                  "many SMs at about the same time) with 2-D TMA boxes into shared "
                  "memory; bytes landed per second, all SMs",
                  {{"shape", copy->shape}, {"stages", copy->stages}}});
    for (const auto& o : overlap_summaries(samples)) {
      const auto& rs = o.second;
      const OverlapRow& row = o.first;
      const bool replicated = rs.replicates >= 2;
      Finding f{"hopper.pipeline." + row.shape + (row.multicast ? ".multicast" : "") + ".stages" +
                    std::to_string(row.stages) + ".overlap",
                replicated ? rs.value : row.overlap,
                "fraction",
                replicated ? rs.precision : row.confidence,
                "(t_copy + t_math - t_pipeline) / min(t_copy, t_math), times per k-step of "
                "the copy-only, wgmma-only and pipelined runs" +
                    std::string(replicated ? "; median over independent replicates of the "
                                             "three runs, confidence from their spread"
                                           : ""),
                {{"t_copy_ns", row.t_copy_ns},
                 {"t_math_ns", row.t_math_ns},
                 {"t_pipeline_ns", row.t_pipeline_ns}}};
      if (replicated) f.extra["replicates"] = confidence::to_json(rs);
      r.findings.push_back(f);
    }
  }
};

}  // namespace

void register_pipeline_experiments(Registry& registry) {
  registry.add(std::make_unique<HopperPipeline>());
}

}  // namespace gpuprobe::probes
