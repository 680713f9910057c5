// hopper.dsmem: distributed shared memory per cluster size, a dependent ld.shared::cluster
// chase (mapa) into block rank 1's shared memory and all blocks of a full wave reading their
// peer's shared memory; every number from launches whose end nodes or sums were checked.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/confidence.hpp"
#include "core/cuda_check.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "device/device_buffer.hpp"
#include "measure/checks.hpp"
#include "measure/gpu.hpp"
#include "probes/hopper/hopper_samples.hpp"
#include "probes/hopper/tma_common.hpp"
#include "probes/hopper/tma_kernels.hpp"

namespace gpuprobe::probes::tma_common {
namespace {

using device::DeviceBuffer;
using nlohmann::json;

constexpr std::uint32_t kChaseNodes = 4096;
constexpr std::uint32_t kChaseWarmup = 1024, kChaseSteps = 8192;
constexpr int kBwThreads = 512;
constexpr std::uint32_t kBwBytes = 32 * 1024, kBwReps = 512;

class Dsmem : public Experiment {
 public:
  std::string id() const override { return "hopper.dsmem"; }
  int samples_version() const override { return hopper::DsmemSamples::kVersion; }
  std::string description() const override {
    return "distributed shared memory: dependent ld.shared::cluster chase (mapa) in block rank 1's "
           "shared "
           "memory from rank 0 (and in its own, for reference), and all blocks of a full wave "
           "reading their "
           "peer's (rank + 1) shared memory with ld.shared::cluster.v4; cluster sizes 2, 4, 8, 16 "
           "(cudaLaunchKernelEx); end nodes and sums checked";
  }
  std::vector<Axis> typed_axes() const override {
    return {fixed(int_axis("cluster_size", {2, 4, 8, 16}, "blocks", "thread-block cluster size")),
            fixed(string_axis("target", {"peer", "self"},
                              "peer: rank 1's shared memory (mapa); self: rank 0's own"))};
  }
  std::optional<std::string> waiver(const device::DeviceInfo& info) const override {
    return hopper_waiver(info);
  }
  void run(Context& ctx, ExperimentResult& r) const override {
    const auto& info = ctx.device.info();
    GP_CUDA_CHECK(cudaSetDevice(info.ordinal));
    require_compiled(id());
    tma::dsmem_prepare();
    // A random single cycle (Sattolo) over the nodes; the host predicts where a walk ends.
    std::vector<std::uint32_t> order(kChaseNodes), next(kChaseNodes);
    std::iota(order.begin(), order.end(), 0u);
    std::mt19937_64 rng(ctx.options.seed);
    for (std::uint32_t i = kChaseNodes - 1; i > 0; --i) {
      std::uniform_int_distribution<std::uint32_t> pick(0, i - 1);
      std::swap(order[i], order[pick(rng)]);
    }
    for (std::uint32_t i = 0; i < kChaseNodes; ++i) next[order[i]] = order[(i + 1) % kChaseNodes];
    std::uint32_t end = 0;
    for (std::uint32_t i = 0; i < kChaseWarmup + kChaseSteps; ++i) end = next[end];
    DeviceBuffer dnext(kChaseNodes * 4), lat_out(sizeof(tma::DsmemLatencyOut));
    GP_CUDA_CHECK(
        cudaMemcpy(dnext.as<void>(), next.data(), kChaseNodes * 4, cudaMemcpyHostToDevice));
    // Expected per-block sum of the bandwidth kernel, by peer rank.
    std::uint32_t base_sum = 0;
    for (std::uint32_t j = 0; j < kBwBytes / 4; ++j) base_sum += tma::pattern(j);

    std::vector<hopper::DsmemRow> rows;
    for (int cs : {2, 4, 8, 16}) {
      hopper::DsmemRow row;
      row.cluster_size = cs;
      int clusters = 0;
      const int err = tma::dsmem_max_active_clusters(cs, kBwThreads, kBwBytes, &clusters);
      row.max_active_clusters = clusters;
      if (err != 0 || clusters <= 0) {
        row.launched = false;
        row.reason =
            err != 0
                ? std::string("cudaOccupancyMaxActiveClusters: ") +
                      cudaGetErrorName(static_cast<cudaError_t>(err))
                : std::string("cudaOccupancyMaxActiveClusters reports 0 clusters of this size");
        rows.push_back(row);
        continue;
      }
      row.launched = true;
      for (int target : {1, 0}) {
        std::uint64_t wrong = 0;
        auto once = [&](int) {
          tma::launch_dsmem_latency(cs, target, dnext.as<std::uint32_t>(), kChaseNodes,
                                    kChaseWarmup, kChaseSteps, lat_out.as<tma::DsmemLatencyOut>());
          tma::DsmemLatencyOut o{};
          GP_CUDA_CHECK(cudaMemcpy(&o, lat_out.as<void>(), sizeof o, cudaMemcpyDeviceToHost));
          if (o.end_index != end) ++wrong;
          return static_cast<double>(o.cycles) / kChaseSteps;
        };
        const auto m = repeat_until_stable(once, ctx.options.protocol);
        (target == 1 ? row.latency_peer : row.latency_self) =
            hopper::DsmemChase{RecordedSummary::of(m), wrong, wrong == 0};
      }
      {
        const int blocks = cs * clusters;
        DeviceBuffer sums(sizeof(unsigned) * blocks), g0(8 * blocks), g1(8 * blocks);
        std::uint64_t failures = 0;
        std::vector<double> event_gbs;
        const double bytes = static_cast<double>(blocks) * kBwReps * kBwBytes;
        auto once = [&](int rep) {
          GP_CUDA_CHECK(cudaMemset(sums.as<void>(), 0, sums.bytes()));
          const double ms = tma::run_dsmem_bandwidth(
              cs, clusters, kBwThreads, kBwBytes, kBwReps, sums.as<unsigned>(),
              g0.as<unsigned long long>(), g1.as<unsigned long long>());
          std::vector<unsigned> s(blocks);
          std::vector<unsigned long long> a(blocks), b(blocks);
          GP_CUDA_CHECK(
              cudaMemcpy(s.data(), sums.as<void>(), sums.bytes(), cudaMemcpyDeviceToHost));
          GP_CUDA_CHECK(cudaMemcpy(a.data(), g0.as<void>(), g0.bytes(), cudaMemcpyDeviceToHost));
          GP_CUDA_CHECK(cudaMemcpy(b.data(), g1.as<void>(), g1.bytes(), cudaMemcpyDeviceToHost));
          bool ok = true;
          for (int i = 0; i < blocks; ++i) {
            const std::uint32_t peer = static_cast<std::uint32_t>((i % cs + 1) % cs);
            const std::uint32_t want = kBwReps * (base_sum + peer * (kBwBytes / 4));
            ok = ok && s[i] == want;
          }
          if (!ok) ++failures;
          const auto t0 = *std::min_element(a.begin(), a.end());
          const auto t1 = *std::max_element(b.begin(), b.end());
          if (t1 <= t0) throw VerificationError(id() + ": no %globaltimer span");
          if (rep >= 0 && ms > 0) event_gbs.push_back(bytes / (ms * 1e-3) / 1e9);
          return bytes / static_cast<double>(t1 - t0);  // bytes per ns = GB/s
        };
        const auto m = repeat_until_stable(once, ctx.options.protocol);
        hopper::DsmemBandwidth bw;
        bw.blocks = blocks;
        bw.threads_per_block = kBwThreads;
        bw.bytes_per_block_buffer = kBwBytes;
        bw.reps = kBwReps;
        bw.gb_s = RecordedSummary::of(m);
        bw.gb_s_events_median = event_gbs.empty() ? 0.0 : stats::median(event_gbs);
        bw.launches_failing_verification = failures;
        bw.verified = failures == 0;
        row.bandwidth = bw;
      }
      rows.push_back(row);
    }
    r.protocol = to_json(ctx.options.protocol);
    r.parameters = {
        {"chase_nodes", kChaseNodes},
        {"chase_node_bytes", 4},
        {"chase_warmup_steps", kChaseWarmup},
        {"chase_timed_steps", kChaseSteps},
        {"chase", "thread 0 of rank 0: idx = ld.shared::cluster.u32 [mapa(table, target) + 4 idx]"},
        {"bandwidth_threads_per_block", kBwThreads},
        {"bandwidth_buffer_bytes", kBwBytes},
        {"bandwidth_reps", kBwReps},
        {"bandwidth_timing", "bytes / (%globaltimer: latest block end - earliest block start)"},
        {"launch",
         "cudaLaunchKernelEx + cudaLaunchAttributeClusterDimension; 16 with "
         "cudaFuncAttributeNonPortableClusterSizeAllowed"}};
    r.samples = hopper::DsmemSamples{rows};
    r.statistics = {{"cluster_sizes_launched",
                     std::count_if(rows.begin(), rows.end(),
                                   [](const hopper::DsmemRow& x) { return x.launched; })}};
    Curve c{
        "dsmem",
        {"cluster_size", "launched", "max_active_clusters", "latency_peer_cycles",
         "latency_self_cycles", "bandwidth_gb_s", "bandwidth_gb_s_events", "verified", "reason"},
        {}};
    for (const auto& x : rows) {
      const bool l = x.launched;
      const bool v =
          l && x.latency_peer->verified && x.latency_self->verified && x.bandwidth->verified;
      c.rows.push_back({x.cluster_size, l ? 1 : 0, x.max_active_clusters.value_or(0),
                        l ? json(x.latency_peer->cycles_per_load.median) : json(0),
                        l ? json(x.latency_self->cycles_per_load.median) : json(0),
                        l ? json(x.bandwidth->gb_s.median) : json(0),
                        l ? json(x.bandwidth->gb_s_events_median.value_or(0.0)) : json(0),
                        v ? 1 : 0, x.reason.value_or("")});
    }
    c.hints = chart_hints("distributed shared memory bandwidth against cluster size",
                          "cluster_size", "", "bandwidth_gb_s", "GB/s")
                  .only({{"launched", 1}});
    r.curves.push_back(c);
  }
  void analyze(ExperimentResult& r) const override {
    const auto samples = samples_as<hopper::DsmemSamples>(r);
    if (!samples.cluster_sizes) return;
    json lat_by = json::object(), self_by = json::object(), bw_by = json::object();
    std::optional<std::pair<int, RecordedSummary>> lat_first, bw_best;
    std::vector<FailedRow> failed;
    std::size_t rows = 0;
    for (const auto& x : *samples.cluster_sizes) {
      if (!x.launched) continue;
      const int cs = x.cluster_size;
      const auto key = std::to_string(cs);
      rows += 3;
      // check() holds every part of a launched row.
      const auto& peer = *x.latency_peer;
      const auto& self = *x.latency_self;
      const auto& bandwidth = *x.bandwidth;
      for (const auto* chase : {&peer, &self})
        if (!chase->verified)
          failed.push_back(
              {"cluster size " + key + " " + (chase == &peer ? "latency_peer" : "latency_self"),
               std::to_string(chase->wrong_end_nodes) + " chases ended on the wrong node"});
      if (!bandwidth.verified)
        failed.push_back({"cluster size " + key + " bandwidth",
                          std::to_string(bandwidth.launches_failing_verification) +
                              " launches with a wrong per-block sum"});
      if (peer.verified) {
        lat_by[key] = peer.cycles_per_load.median;
        if (!lat_first) lat_first = {cs, peer.cycles_per_load};
      }
      if (self.verified) self_by[key] = self.cycles_per_load.median;
      if (bandwidth.verified) {
        const auto& s = bandwidth.gb_s;
        bw_by[key] = s.median;
        if (!bw_best || s.median > bw_best->second.median) bw_best = {cs, s};
      }
    }
    report_failed_rows(r, failed, rows);
    auto conf = [](const RecordedSummary& s) { return s.precision(); };
    if (lat_first) {
      Finding f{"hopper.dsmem.latency",
                lat_first->second.median,
                "cycles",
                conf(lat_first->second),
                "median cycles per dependent ld.shared::cluster.u32 into block rank 1's shared "
                "memory (mapa), "
                "smallest cluster size launched; end node checked",
                json::object()};
      f.extra["cluster_size"] = lat_first->first;
      f.extra["cycles_by_cluster_size"] = lat_by;
      f.extra["self_cycles_by_cluster_size"] = self_by;
      r.findings.push_back(f);
    }
    if (bw_best) {
      Finding f{"hopper.dsmem.bandwidth",
                bw_best->second.median,
                "GB/s",
                conf(bw_best->second),
                "best median over cluster sizes of all blocks of a full wave reading their peer's "
                "shared memory "
                "(ld.shared::cluster.v4), bytes / %globaltimer span; sums checked",
                json::object()};
      f.extra["cluster_size"] = bw_best->first;
      f.extra["gb_s_by_cluster_size"] = bw_by;
      r.findings.push_back(f);
    }
  }
};

}  // namespace

std::unique_ptr<Experiment> make_dsmem_experiment() { return std::make_unique<Dsmem>(); }

}  // namespace gpuprobe::probes::tma_common
