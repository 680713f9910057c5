// Hopper asynchronous data movement: TMA copies (cp.async.bulk and cp.async.bulk.tensor) from
// global to shared memory completing on transaction-count mbarriers, their latency against a
// warp's plain loads and their steady-state bandwidth on every SM; bulk-group stores from shared
// to global; and distributed shared memory (ld.shared::cluster through mapa) per cluster size.
// Every number comes from launches whose data was checked (bytes, checksums or end nodes).
#include "probes/hopper/tma.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/confidence.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "core/stats.hpp"
#include "core/units.hpp"
#include "device/device_buffer.hpp"
#include "measure/checks.hpp"
#include "measure/gpu.hpp"
#include "measure/l2_flush.hpp"
#include "measure/replicates.hpp"
#include "probes/hopper/hopper_samples.hpp"
#include "probes/hopper/tma_common.hpp"
#include "probes/hopper/tma_kernels.hpp"

namespace gpuprobe::probes {
namespace {

/// The sum of tma::pattern(i) for i < words, mod 2^64, on the host's cores.
std::uint64_t host_pattern_sum(std::uint64_t words) {
  std::vector<std::uint64_t> part(parallel::parts_for(words), 0);
  parallel::for_ranges(words, [&](unsigned k, std::size_t a, std::size_t b) {
    std::uint64_t s = 0;
    for (std::uint64_t i = a; i < b; ++i) s += tma::pattern(i);
    part[k] = s;
  });
  return std::accumulate(part.begin(), part.end(), std::uint64_t{0});
}

using device::DeviceBuffer;
using nlohmann::json;

using tma_common::hopper_waiver;
using tma_common::require_compiled;
using units::kKiB;
using units::kMiB;

using device::dram_peak_gb_s;

// ---------------------------------------------------------------------------------------------

/// One latency point's replicates (the points of one copy, regime and size): from each
/// replicate's cycle samples when every point kept them (so that whole-cycle samples get the
/// half-cycle floor), else from the summaries (results written before the samples were kept;
/// one replicate: exactly the precision of its summary).
confidence::ReplicateSummary tma_latency_replicates(
    const std::vector<hopper::TmaLatencyPoint>& points) {
  bool samples = !points.empty();
  for (const auto& p : points) samples = samples && p.cycles_samples.has_value();
  if (samples) {
    std::vector<std::vector<double>> reps;
    for (const auto& p : points) reps.push_back(*p.cycles_samples);
    return confidence::summarize_replicate_samples(reps);
  }
  std::vector<json> summaries;
  for (const auto& p : points) summaries.push_back(p.cycles);
  return confidence::summarize_replicate_summaries(summaries);
}

/// Replicates of every latency point. From DRAM the smallest copy (one line) reads in two modes
/// apart by the far L2 partition's extra latency, and a replicate's median takes either: with
/// 3 replicates all three agree by chance 2 x 2^-3 = 25 % of the time at even odds, with 5
/// 2 x 2^-5 = 6 %, at the same cost (five replicates of 3 repetitions against three of 5).
constexpr int kTmaLatencyReplicates = 5;

/// {"points", "points_failing_verification"} of a TMA experiment's recorded points.
template <typename Point>
json points_statistics(const std::vector<Point>& points) {
  std::size_t bad = 0;
  for (const auto& p : points) bad += p.verified ? 0 : 1;
  return {{"points", points.size()}, {"points_failing_verification", bad}};
}

/// Each replicate's cycle samples of one point (empty when the result kept only summaries).
std::vector<std::vector<double>> tma_latency_samples(
    const std::vector<hopper::TmaLatencyPoint>& points) {
  std::vector<std::vector<double>> reps;
  for (const auto& p : points) {
    if (!p.cycles_samples) return {};
    reps.push_back(*p.cycles_samples);
  }
  return reps;
}

/// Two latency classes in one point's samples: the single TMA copy of one line from DRAM reads
/// either the far L2 partition's extra latency more or not, by the line's home L2 partition
/// (l2.partition's far and near hits), and a median over a mix of both
/// takes whichever class holds the majority, which differs between replicates and runs.
struct LatencyClasses {
  bool split = false;
  double threshold = 0;
  std::vector<double> low, high;                     ///< pooled over the replicates
  std::vector<std::vector<double>> low_by, high_by;  ///< per replicate
  /// A class that itself splits the same way: more than two classes (a ladder of equal steps),
  /// which no two-class split describes, so none is made.
  bool more_than_two = false;
  std::size_t outliers = 0;  ///< samples above 1.5 x the median, in neither class
};

/// Splits the pooled samples where the within-class squared deviation is least, and keeps the
/// split only when it is real: each class holds 3 samples or more, the gap between them (5th
/// percentile of the upper, 95th of the lower) exceeds 3 robust sigmas of each class added,
/// and the classes' medians differ by more than the tolerance a finding's precision is judged
/// on (so that whole-cycle jitter of one class is never two).
LatencyClasses latency_classes(const std::vector<std::vector<double>>& replicates) {
  LatencyClasses c;
  std::vector<double> all;
  for (const auto& r : replicates) all.insert(all.end(), r.begin(), r.end());
  if (all.empty()) return c;  // a result that kept only summaries
  // Samples above 1.5 x the median (a translation miss on top of the copy) belong to no
  // class; as outliers of a few they would otherwise
  // become the upper "class" of a two-means split and hide the real one.
  auto [v, cutoff] = stats::at_most_median_multiple(all, 1.5);
  c.outliers = all.size() - v.size();
  const auto splits = [](const stats::TwoMeans& t) {
    return stats::classes_apart(t, 3) && stats::median(t.high) - stats::median(t.low) >
                                             confidence::kDefaultTolerance * stats::median(t.low);
  };
  const auto sp = stats::two_means(std::move(v), 3);
  if (!splits(sp)) return c;
  // Each class must be one class: a class of 6 samples or more that splits again means a
  // ladder of classes, of which a two-class split would call an arbitrary pair near and far.
  for (const auto* cls : {&sp.low, &sp.high})
    if (cls->size() >= 6 && splits(stats::two_means(*cls, 3))) {
      c.more_than_two = true;
      return c;
    }
  c.split = true;
  c.threshold = sp.threshold;
  c.low = sp.low;
  c.high = sp.high;
  for (const auto& r : replicates) {
    c.low_by.emplace_back();
    c.high_by.emplace_back();
    for (double x : r)
      if (x <= cutoff) (x < c.threshold ? c.low_by.back() : c.high_by.back()).push_back(x);
  }
  return c;
}

class TmaLatency : public Experiment {
 public:
  std::string id() const override { return "hopper.tma.latency"; }
  int samples_version() const override { return hopper::TmaLatencySamples::kVersion; }
  std::string description() const override {
    return "one TMA copy global -> shared (cp.async.bulk, and cp.async.bulk.tensor.2d through a "
           "CUtensorMap) completing on an mbarrier transaction count, clock64 from issue to "
           "completion, 128 B .. 16 KiB, L2-hot and from DRAM (L2 flushed), next to one warp's "
           "ld.global of the same bytes; copied bytes checked on the host";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(string_axis("copy", {"bulk", "tensor", "warp_load"}, "how the bytes are copied")),
            fixed(int_axis("bytes", {128, 256, 512, 1024, 2048, 4096, 8192, 16384}, "B",
                           "bytes per copy")),
            fixed(string_axis("regime", {"l2", "dram"}, "L2-hot or from DRAM (L2 flushed)"))};
  }
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    return hopper_waiver(info);
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto& info = ctx.device.info();
    const Gpu gpu = open_gpu(ctx.device);
    require_compiled(id());
    const int sm_count = gpu.sm_count;
    const std::uint64_t src_bytes = 16 * kMiB;
    const std::uint64_t flush_bytes = 2 * std::max<std::uint64_t>(info.l2_bytes, 8 * kMiB);
    measure::L2Flush flush(flush_bytes, sm_count);
    const std::vector<std::uint32_t> sizes{128, 256, 512, 1024, 2048, 4096, 8192, 16384};
    // Each replicate copies from its own source (fresh pages, fresh translations, another
    // placement in the memory channels), all held at once (measure::replicate_fresh), and
    // times every point afresh: a latency from DRAM that depends on where its bytes lie shows
    // its spread within one run (issue 9, "Run to run").
    struct Replica {
      explicit Replica(std::uint64_t bytes, const std::vector<std::uint32_t>& sizes)
          : src(bytes), copy(16 * kKiB), out(sizeof(tma::LatencyOut)) {
        tma::fill_pattern(src.as<std::uint32_t>(), bytes / 4);
        for (auto s : sizes)
          maps.push_back(tma::encode_rows_map(src.as<void>(), bytes / 128, s / 128));
      }
      DeviceBuffer src, copy, out;
      std::vector<tma::TensorMap> maps;
    };
    const ProtocolOptions protocol =
        measure::per_replicate(ctx.options.protocol, kTmaLatencyReplicates);
    std::vector<hopper::TmaLatencyPoint> points;
    measure::replicate_fresh(
        kTmaLatencyReplicates, [&](int) { return std::make_unique<Replica>(src_bytes, sizes); },
        [&](int replicate, Replica& rb) {
          measure_replicate(replicate, rb.src, rb.copy, rb.out, rb.maps, sizes, src_bytes, flush,
                            protocol, points);
          return 0;
        });
    r.protocol = to_json(ctx.options.protocol);
    r.protocol["l2_flush"] = flush.protocol() + " (dram regime, before every call)";
    r.protocol["replicates"] =
        std::to_string(kTmaLatencyReplicates) +
        " independent replicates of every point (each its own source buffer, tensor maps and "
        "output), the repetitions shared among them; findings: median of the replicate medians, "
        "confidence from the spread between them (Student's t)";
    r.parameters = {
        {"source_bytes", src_bytes},
        {"l2_flush_bytes", flush_bytes},
        {"block", "1 block of 32 threads; thread 0 issues and waits (TMA)"},
        {"bulk", "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"},
        {"tensor",
         "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes; "
         "uint32 tensor of 128-B rows, box 32 x bytes/128, no swizzle (cuTensorMapEncodeTiled "
         "via cudaGetDriverEntryPointByVersion)"},
        {"warp_load", "ld.global.v4.u32 by every lane with data, st.shared, __syncwarp"},
        {"timing",
         "clock64 before mbarrier.arrive.expect_tx (or the first load) to after "
         "mbarrier.test_wait.parity, spun on, succeeds (or __syncwarp); "
         "not try_wait, which may suspend the thread before it tests again"},
        {"l2_regime", "an identical untimed launch first (the L1 is invalidated per launch)"},
        {"dram_regime", "L2 flushed by streaming 2 x L2 before the timed launch"}};
    r.samples = hopper::TmaLatencySamples{points};
    r.statistics = points_statistics(points);
    // One row per (copy, regime, size): the replicates' median of medians, their extremes, the
    // samples in all, and whether every replicate's copies checked out.
    Curve c{"latency",
            {"copy", "regime", "bytes", "cycles_median", "cycles_min", "cycles_p5", "cycles_p95",
             "n", "replicates", "verified"},
            {}};
    std::vector<std::string> order;
    std::map<std::string, std::vector<hopper::TmaLatencyPoint>> rows;
    for (const auto& p : points) {
      const std::string key = p.copy + "/" + p.regime + "/" + std::to_string(p.bytes);
      if (!rows.count(key)) order.push_back(key);
      rows[key].push_back(p);
    }
    for (const auto& key : order) {
      const auto& reps = rows[key];
      double lo = std::numeric_limits<double>::infinity(), p5 = lo, p95 = 0, n = 0;
      bool verified = true;
      for (const auto& p : reps) {
        const auto& s = p.cycles;
        lo = std::min(lo, s.required(s.min, "min"));
        p5 = std::min(p5, s.p5_or_throw());
        p95 = std::max(p95, s.p95_or_throw());
        n += static_cast<double>(s.required_n());
        verified = verified && p.verified;
      }
      const auto& first = reps.front();
      c.rows.push_back({first.copy, first.regime, first.bytes, tma_latency_replicates(reps).value,
                        lo, p5, p95, n, reps.size(), verified ? 1 : 0});
    }
    c.hints = chart_hints("TMA copy latency against bytes", "bytes", "bytes", "cycles_median",
                          "cycles", true)
                  .by({"copy", "regime"});
    r.curves.push_back(c);
  }
  void analyze(ExperimentResult& r) const override {
    const auto samples = samples_as<hopper::TmaLatencySamples>(r);
    if (!samples.points) return;
    const auto& points = *samples.points;
    std::vector<FailedRow> failed;
    for (const auto& p : points)
      if (!p.verified)
        failed.push_back(
            {p.copy + " " + p.regime + " " + std::to_string(p.bytes) + " B" +
                 (p.replicate ? " replicate " + std::to_string(*p.replicate) : std::string()),
             std::to_string(p.words_wrong.value_or(0)) + " of " +
                 std::to_string(p.words_checked.value_or(0)) +
                 " copied words wrong (first: " + p.first_wrong.value_or("?") + ")"});
    report_failed_rows(r, failed, points.size());
    const std::pair<const char*, const char*> names[] = {
        {"bulk", "hopper.tma.bulk_latency"},
        {"tensor", "hopper.tma.tensor_latency"},
        {"warp_load", "hopper.tma.warp_load_latency"}};
    for (const auto& [copy, name] : names)
      for (const char* regime : {"l2", "dram"}) {
        // Per size, every replicate's point; a size with a failed replicate gives no finding.
        std::map<int, std::vector<hopper::TmaLatencyPoint>> by_size;
        std::set<int> failed_sizes;
        for (const auto& p : points) {
          if (p.copy != copy || p.regime != regime) continue;
          const int bytes = p.bytes;
          if (!p.verified) failed_sizes.insert(bytes);
          by_size[bytes].push_back(p);
        }
        for (int b : failed_sizes) by_size.erase(b);
        if (by_size.empty()) continue;
        json by_bytes = json::object();
        for (const auto& [bytes, reps] : by_size)
          by_bytes[std::to_string(bytes)] = tma_latency_replicates(reps).value;
        const auto& [bytes, reps] = *by_size.begin();
        const auto all = tma_latency_replicates(reps);
        const std::string base = std::string(name) + (std::string(regime) == "dram" ? "_dram" : "");
        const std::string what = std::string("clock64 from issue to completion of one ") + copy +
                                 " copy of the smallest size (" +
                                 (std::string(regime) == "dram" ? "L2 flushed" : "L2-hot") + ")";
        const auto classes = latency_classes(tma_latency_samples(reps));
        auto finding = [&](const std::string& fname, const confidence::ReplicateSummary& rs,
                           double factor, const std::string& method) {
          Finding f{fname,  rs.value,      "cycles", confidence::combine({rs.precision, factor}),
                    method, json::object()};
          f.extra["bytes"] = bytes;
          f.extra["regime"] = regime;
          f.extra["cycles_by_bytes"] = by_bytes;
          f.extra["standard_error"] = rs.standard_error;
          f.extra["replicates"] = confidence::to_json(rs);
          return f;
        };
        if (!classes.split) {
          auto f = finding(
              base, all, 1.0,
              what + ": median over " + std::to_string(all.replicates) +
                  " replicates (each its own source buffer) of the median over "
                  "repetitions; copied bytes checked" +
                  (classes.more_than_two ? " (the samples fall into more than two latency classes, "
                                           "so no near / far split is reported)"
                                         : ""));
          if (classes.more_than_two) f.extra["latency_classes"] = {{"more_than_two", true}};
          r.findings.push_back(f);
          continue;
        }
        // Two classes: each its own finding, from its own samples in every replicate, times how
        // clearly the classes differ; the lower keeps the name.
        const double sep =
            confidence::separation(confidence::separation_z(classes.low, classes.high));
        const auto lo = confidence::summarize_replicate_samples(classes.low_by);
        const auto hi = confidence::summarize_replicate_samples(classes.high_by);
        json split = {{"threshold_cycles", classes.threshold},
                      {"outliers_above_1_5_median", classes.outliers},
                      {"lower_samples", classes.low.size()},
                      {"upper_samples", classes.high.size()},
                      {"all_samples_cycles", all.value},
                      {"all_samples_replicates", confidence::to_json(all)}};
        auto low_f = finding(base, lo, sep,
                             what +
                                 ", the lower of two latency classes (two-means split of every "
                                 "replicate's samples): median over replicates of the median "
                                 "of the class; copied bytes checked");
        low_f.extra["latency_classes"] = split;
        low_f.extra["upper_class_cycles"] = hi.value;
        r.findings.push_back(low_f);
        auto high_f = finding(
            base + "_far", hi, sep,
            what +
                ", the upper of two latency classes, about one far L2 partition hop above "
                "the lower (a line homed in the other partition than the SM's): median over "
                "replicates of the median of the class; copied bytes checked");
        high_f.extra["latency_classes"] = split;
        high_f.extra["lower_class_cycles"] = lo.value;
        r.findings.push_back(high_f);
      }
  }

 private:
  /// One replicate: every (regime, copy, size) from this replicate's own buffers.
  void measure_replicate(int replicate, const DeviceBuffer& src, const DeviceBuffer& copy,
                         const DeviceBuffer& out, const std::vector<tma::TensorMap>& maps,
                         const std::vector<std::uint32_t>& sizes, std::uint64_t src_bytes,
                         measure::L2Flush& flush, const ProtocolOptions& protocol,
                         std::vector<hopper::TmaLatencyPoint>& points) const {
    std::uint64_t cursor = 0;
    for (const char* regime : {"l2", "dram"}) {
      const bool cold = std::string(regime) == "dram";
      for (auto kind : {tma::CopyKind::kBulk, tma::CopyKind::kTensor, tma::CopyKind::kWarpLoad}) {
        for (std::size_t si = 0; si < sizes.size(); ++si) {
          const std::uint32_t bytes = sizes[si];
          std::uint64_t wrong = 0, checked = 0;
          std::vector<double> smids;
          std::vector<std::uint64_t> offsets;
          std::string first_wrong;
          auto once = [&](int rep) {
            // A different 16 KiB-aligned region every call: nothing left over from the last one.
            const std::uint64_t off = (cursor++ * 16 * kKiB) % (src_bytes - 16 * kKiB);
            if (rep >= 0) offsets.push_back(off);
            const std::uint8_t* p = src.as<std::uint8_t>() + off;
            const auto row = static_cast<std::uint32_t>(off / 128);
            if (cold) {
              flush.flush();
            } else {
              tma::launch_latency(kind, p, bytes, row, maps[si], copy.as<std::uint8_t>(),
                                  out.as<tma::LatencyOut>());  // brings the bytes into L2
            }
            GP_CUDA_CHECK(cudaMemset(copy.as<void>(), 0, bytes));
            tma::launch_latency(kind, p, bytes, row, maps[si], copy.as<std::uint8_t>(),
                                out.as<tma::LatencyOut>());
            tma::LatencyOut o{};
            GP_CUDA_CHECK(cudaMemcpy(&o, out.as<void>(), sizeof o, cudaMemcpyDeviceToHost));
            if (o.timeouts)
              throw VerificationError(id() + ": " + tma::copy_name(kind) + " copy of " +
                                      std::to_string(bytes) +
                                      " B never completed its mbarrier phase");
            std::vector<std::uint32_t> got(bytes / 4);
            GP_CUDA_CHECK(cudaMemcpy(got.data(), copy.as<void>(), bytes, cudaMemcpyDeviceToHost));
            for (std::size_t i = 0; i < got.size(); ++i) {
              ++checked;
              if (got[i] != tma::pattern(off / 4 + i)) {
                if (!wrong)
                  first_wrong = "word " + std::to_string(i) + " at offset " + std::to_string(off);
                ++wrong;
              }
            }
            if (rep >= 0) smids.push_back(o.smid);
            return static_cast<double>(o.cycles);
          };
          const auto m = repeat_until_stable(once, protocol);
          hopper::TmaLatencyPoint point;
          point.replicate = replicate;
          point.copy = tma::copy_name(kind);
          point.regime = regime;
          point.bytes = static_cast<int>(bytes);
          point.cycles = RecordedSummary::of(m);
          point.cycles_samples = m.values;
          // Where each sample's bytes lay and which SM timed them: the latencies fall in two
          // modes (l2.partition's far - near latency apart), which these let an analysis tie
          // to the line's home partition.
          point.sample_offsets = offsets;
          point.sample_smids = smids;
          point.words_checked = checked;
          point.words_wrong = wrong;
          point.first_wrong = first_wrong;
          point.verified = wrong == 0;
          point.smid = smids.empty() ? -1.0 : smids.back();
          points.push_back(point);
        }
      }
    }
  }
};

// ---------------------------------------------------------------------------------------------

/// Passes per launch over the L2-resident region of hopper.tma.bandwidth.
constexpr std::uint32_t kL2Passes = 128;

class TmaBandwidth : public Experiment {
 public:
  std::string id() const override { return "hopper.tma.bandwidth"; }
  int samples_version() const override { return hopper::TmaBandwidthSamples::kVersion; }
  std::string description() const override {
    return "steady-state TMA global -> shared (cp.async.bulk into a ring of 1-4 stages, one full "
           "and one "
           "empty mbarrier each) and shared -> global (cp.async.bulk bulk_group, wait_group.read "
           "to reuse a "
           "stage, wait_group 0 at the end) on every SM over >= 16 x L2, tiles 4-32 KiB; GB/s "
           "against "
           "the DRAM peak; plus loads from an L2-resident quarter of the L2; loads checked by "
           "checksum, "
           "stores word by word";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(string_axis("direction", {"load", "store"}, "copy direction")),
            fixed(string_axis("source", {"dram", "l2"}, "where loads come from")),
            fixed(int_axis("tile_bytes", {4096, 8192, 16384, 32768}, "B", "bytes per TMA tile")),
            fixed(int_axis("stages", {1, 2, 3, 4}, "stages", "tiles in flight per block")),
            fixed(int_axis("array_bytes", {}, "B", "16 x L2 (--array-size)"))};
  }
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    return hopper_waiver(info);
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto& info = ctx.device.info();
    const Gpu gpu = open_gpu(ctx.device);
    require_compiled(id());
    const int sm_count = gpu.sm_count, smem_per_sm = gpu.shared_per_sm,
              optin = gpu.shared_per_block_optin;
    const std::vector<std::uint32_t> tiles{4096, 8192, 16384, 32768};
    const std::uint64_t want = ctx.options.array_bytes
                                   ? ctx.options.array_bytes
                                   : 16 * std::max<std::uint64_t>(info.l2_bytes, 4 * kMiB);
    const std::uint64_t array_bytes = std::max<std::uint64_t>(want / (32 * kKiB), 1) * 32 * kKiB;
    if (array_bytes + 256 * kMiB > ctx.device.free_memory())
      throw UsageError(id() + ": array of " + std::to_string(array_bytes) +
                       " B does not fit in free GPU memory");
    // More than half an SM's shared memory per block: exactly one block per SM.
    const std::uint32_t need = tma::bandwidth_smem_bytes(32768, 4);
    const std::uint32_t smem = std::min<std::uint32_t>(
        static_cast<std::uint32_t>(optin), std::max<std::uint32_t>(need, smem_per_sm / 2 + 1024));
    if (smem < need)
      throw VerificationError(id() + ": needs " + std::to_string(need) +
                              " B of shared memory per block");
    tma::bandwidth_prepare(smem);
    const std::uint64_t words = array_bytes / 4;
    DeviceBuffer buf(array_bytes);
    DeviceBuffer sums(sizeof(unsigned long long) * sm_count), timeouts(sizeof(unsigned));
    tma::fill_pattern(buf.as<std::uint32_t>(), words);
    // Sum of every word of the array, mod 2^64 (up to a GiB of words: on the host's cores).
    const std::uint64_t expected = host_pattern_sum(words);
    const std::uint32_t passes = 2;
    const double peak = dram_peak_gb_s(info);

    std::vector<hopper::TmaBandwidthPoint> points;
    // One point: `bytes` of the array (its start), `passes` passes per launch.
    auto measure = [&](const char* dir, const char* source, std::uint64_t bytes, std::uint32_t tile,
                       int stages, std::uint32_t passes, std::uint64_t sum_of_bytes) {
      const bool load = std::string(dir) == "load";
      const std::uint64_t ntiles = bytes / tile;
      const double moved = static_cast<double>(ntiles) * tile * passes;
      std::uint64_t failures = 0, runs = 0;
      std::string first_failure;
      auto once = [&](int) {
        double ms = 0;
        ++runs;
        if (load) {
          GP_CUDA_CHECK(cudaMemset(sums.as<void>(), 0, sums.bytes()));
          GP_CUDA_CHECK(cudaMemset(timeouts.as<void>(), 0, timeouts.bytes()));
          ms = tma::run_load_bandwidth(buf.as<std::uint8_t>(), ntiles, tile, stages, passes,
                                       sm_count, smem, sums.as<unsigned long long>(),
                                       timeouts.as<unsigned>());
          std::vector<unsigned long long> s(sm_count);
          unsigned t = 0;
          GP_CUDA_CHECK(
              cudaMemcpy(s.data(), sums.as<void>(), sums.bytes(), cudaMemcpyDeviceToHost));
          GP_CUDA_CHECK(cudaMemcpy(&t, timeouts.as<void>(), sizeof t, cudaMemcpyDeviceToHost));
          const std::uint64_t got = std::accumulate(s.begin(), s.end(), std::uint64_t{0});
          if (t || got != sum_of_bytes * passes) {
            if (!failures)
              first_failure = "checksum " + std::to_string(got) + ", expected " +
                              std::to_string(sum_of_bytes * passes) + ", " + std::to_string(t) +
                              " mbarrier timeouts";
            ++failures;
          }
        } else {
          GP_CUDA_CHECK(cudaMemset(buf.as<void>(), 0, array_bytes));
          ms = tma::run_store_bandwidth(buf.as<std::uint32_t>(), ntiles, tile, stages, passes,
                                        sm_count, smem);
          const auto bad = tma::count_mismatches(buf.as<std::uint32_t>(), words);
          if (bad) {
            if (!failures) first_failure = std::to_string(bad) + " words differ from the pattern";
            ++failures;
          }
        }
        if (ms <= 0) throw VerificationError(id() + ": no elapsed time");
        return moved / (ms * 1e-3) / 1e9;
      };
      const auto m = repeat_until_stable(once, ctx.options.protocol);
      hopper::TmaBandwidthPoint point;
      point.direction = dir;
      point.source = source;
      point.source_bytes = bytes;
      point.tile_bytes = static_cast<int>(tile);
      point.stages = stages;
      point.passes_per_launch = passes;
      point.bytes_per_launch = moved;
      point.gb_s = RecordedSummary::of(m);
      point.percent_of_peak_median = peak > 0 ? m.summary.median / peak * 100 : 0.0;
      point.launches = runs;
      point.launches_failing_verification = failures;
      point.first_failure = first_failure;
      point.verified = failures == 0;
      points.push_back(point);
    };
    // Loads first (they read the pattern); the stores overwrite it with the same pattern.
    for (auto tile : tiles)
      for (int stages = 1; stages <= 4; ++stages)
        measure("load", "dram", array_bytes, tile, stages, passes, expected);
    // L2-resident loads: the first quarter of the L2 (at most 16 MiB), read by all SMs once per
    // pass (each tile by one SM), many passes per launch: TMA bulk reads served by the L2.
    const std::uint64_t l2_src =
        std::max<std::uint64_t>(std::min<std::uint64_t>(info.l2_bytes / 4, 16 * kMiB) / (32 * kKiB),
                                1) *
        32 * kKiB;
    const std::uint64_t expected_l2 = host_pattern_sum(l2_src / 4);
    for (std::uint32_t tile : {16384u, 32768u})
      for (int stages : {2, 4}) measure("load", "l2", l2_src, tile, stages, kL2Passes, expected_l2);
    for (auto tile : tiles)
      for (int stages = 1; stages <= 4; ++stages)
        measure("store", "dram", array_bytes, tile, stages, passes, 0);
    r.protocol = to_json(ctx.options.protocol);
    r.parameters = {
        {"array_bytes", array_bytes},
        {"passes_per_launch", passes},
        {"l2_source_bytes", l2_src},
        {"l2_passes_per_launch", kL2Passes},
        {"blocks", sm_count},
        {"dynamic_smem_bytes", smem},
        {"load_block", "160 threads: lane 0 of warp 0 issues, 4 consumer warps sum and release"},
        {"store_block", "128 threads write the tile pattern, fence.proxy.async, thread 0 issues"},
        {"timing", "CUDA events around one launch; GB/s = 1e9 bytes / s"},
        {"peak_gb_s", peak},
        {"peak_formula", "memory clock " + std::to_string(info.mem_clock_max_mhz) + " MHz x 2 x " +
                             std::to_string(info.mem_bus_width_bits) + " bit / 8"},
        {"expected_checksum", expected}};
    r.samples = hopper::TmaBandwidthSamples{points};
    r.statistics = points_statistics(points);
    Curve c{"bandwidth",
            {"direction", "source", "tile_bytes", "stages", "gb_s_median", "gb_s_min", "gb_s_max",
             "n", "percent_of_peak", "verified"},
            {}};
    for (const auto& p : points) {
      const auto& s = p.gb_s;
      c.rows.push_back({p.direction, p.source.value_or("dram"), p.tile_bytes, p.stages, s.median,
                        s.required(s.min, "min"), s.required(s.max, "max"), s.required_n(),
                        p.percent_of_peak_median.value_or(0.0), p.verified ? 1 : 0});
    }
    c.hints = chart_hints("TMA bandwidth against tile size (best stage count)", "tile_bytes",
                          "bytes", "gb_s_median", "GB/s", true)
                  .by({"direction", "source"})
                  .best("max");
    r.curves.push_back(c);
  }
  void analyze(ExperimentResult& r) const override {
    const auto samples = samples_as<hopper::TmaBandwidthSamples>(r);
    if (!samples.points) return;
    const auto& points = *samples.points;
    const double peak = r.parameters.value("peak_gb_s", 0.0);
    std::vector<FailedRow> failed;
    for (const auto& p : points)
      if (!p.verified)
        failed.push_back({p.direction + " " + p.source.value_or("dram") + " tile " +
                              std::to_string(p.tile_bytes) + " B stages " +
                              std::to_string(p.stages),
                          std::to_string(p.launches_failing_verification.value_or(0)) + " of " +
                              std::to_string(p.launches.value_or(0)) +
                              " launches failed (first: " + p.first_failure.value_or("?") + ")"});
    report_failed_rows(r, failed, points.size());
    // One finding per (direction, source): its name, what it measured, whether the DRAM peak
    // applies.
    struct Kind {
      const char* direction;
      const char* source;
      const char* name;
      const char* what;
      bool dram;
    };
    for (const Kind k :
         {Kind{"load", "dram", "hopper.tma.load_bandwidth",
               "TMA global -> shared (mbarrier complete_tx)", true},
          Kind{"store", "dram", "hopper.tma.store_bandwidth",
               "bulk shared -> global (bulk_group, wait_group 0 at the end)", true},
          Kind{"load", "l2", "l2.tma_bulk_read_bandwidth",
               "TMA bulk L2 -> shared (an L2-resident region, each tile read by one SM "
               "per pass, many passes)",
               false}}) {
      const hopper::TmaBandwidthPoint* best = nullptr;
      for (const auto& p : points) {
        if (p.direction != k.direction || p.source.value_or("dram") != k.source || !p.verified)
          continue;
        if (!best || p.gb_s.median > best->gb_s.median) best = &p;
      }
      if (!best) continue;
      const auto& s = best->gb_s;
      const double med = s.median;
      Finding f{k.name,
                med,
                "GB/s",
                s.precision(),
                std::string("best median over tile sizes and stages of ") + k.what +
                    ", every SM, data verified",
                json::object()};
      f.extra["tile_bytes"] = best->tile_bytes;
      f.extra["stages"] = best->stages;
      if (k.dram) {
        f.extra["peak_gb_s"] = peak;
        f.extra["percent_of_peak"] = peak > 0 ? med / peak * 100 : 0.0;
      }
      r.findings.push_back(f);
    }
  }
};

}  // namespace

namespace tma_common {

namespace {
constexpr const char* kNeedsHopper =
    "needs sm_90a (Hopper): TMA and thread-block clusters need sm_90, and this binary holds them "
    "for "
    "sm_90a (compute capability 9.0) only";
}  // namespace

std::optional<std::string> hopper_waiver(const device::DeviceInfo& info) {
  return waive_unless_sm90a(info, kNeedsHopper, kNeedsCudaGpu);
}

void require_compiled(const std::string& id) {
  if (!tma::tma_compiled())
    throw VerificationError(id + ": this binary holds no sm_90 TMA / cluster code for this device");
}

}  // namespace tma_common

void register_tma_experiments(Registry& registry) {
  registry.add(std::make_unique<TmaLatency>());
  registry.add(std::make_unique<TmaBandwidth>());
  registry.add(tma_common::make_dsmem_experiment());
}

}  // namespace gpuprobe::probes
